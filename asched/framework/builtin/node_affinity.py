"""NodeAffinity (PreFilter, Filter, PreScore, Score): nodeSelector and node affinity.

Upstream: pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go. The
scheduler-enforced ``addedAffinity`` is checked first; then the pod's ``nodeSelector`` AND
its required terms (OR over terms). Terms that pin ``metadata.name`` narrow the candidate
nodes at PreFilter. Score: the sum of the weights of matching preferred terms (the pod's
and addedAffinity's), normalized, weight 2.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

import numpy as np

from asched.cluster.columns import Rows
from asched.cluster.records import NodeAffinity as Affinity, NodeInfo, PodInfo
from asched.cluster.table import NodeTable
from asched.config.args import IN_TREE_ARGS
from asched.config.types import NodeAffinityArgs
from asched.framework import selectors
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.interface import (
    PRE_FILTER_SKIP,
    BoolMask,
    Handle,
    PreFilterResult,
    ScoreArray,
)
from asched.framework.normalize import default_normalize
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "NodeAffinity"
REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
REASON_CONFLICT: Final = "pod affinity terms conflict"


def pinned_names(affinity: Affinity | None) -> set[str] | None:
    """Union over required terms of the names each pins with ``metadata.name In``.

    None when some term pins no name (every node stays a candidate).
    """
    if affinity is None or not affinity.required:
        return None
    union: set[str] = set()
    for term in affinity.required:
        names: set[str] | None = None
        for req in term.match_fields:
            if req.key == "metadata.name" and req.operator == "In":
                names = set(req.values) if names is None else names & set(req.values)
        if names is None:
            return None
        union |= names
    return union


class NodeAffinity:
    name: Final = NAME
    #: the cluster events that may undo its rejection (upstream's EventsToRegister)
    events: Final = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_LABEL})
    row_local: Final = True
    #: its PreFilter reads the pod (and the plugin's args) only: no pod on a node changes it (no
    #: PreFilter hooks needed)
    pre_filter_reads_pods: Final = False
    normalizes: Final = True

    def sign(self, pod: PodInfo) -> Hashable:
        return tuple(sorted(pod.node_selector.items())), pod.node_affinity

    def __init__(self, args: NodeAffinityArgs) -> None:
        self._added = args.added_affinity

    def queueing_hint(self, event: ClusterEvent, pod: PodInfo, changed: object) -> bool:
        """A new or relabelled node helps only if it now matches everything the Filter
        asks: the pod's nodeSelector, its required affinity and the added affinity."""
        if not isinstance(changed, NodeInfo):
            return True
        labels, name = changed.labels, changed.name
        selector = all(labels.get(key) == value for key, value in pod.node_selector.items())
        required = pod.node_affinity is None or pod.node_affinity.required_matches(name, labels)
        added = self._added is None or self._added.required_matches(name, labels)
        return selector and required and added

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): the pod's node affinity and selector, and the args."""
        return False

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        required = pod.node_affinity.required if pod.node_affinity is not None else None
        if required is None and self._added is None and not pod.node_selector:
            return PRE_FILTER_SKIP
        names = pinned_names(pod.node_affinity)
        if names is not None and not names:
            return PreFilterResult(Status.unresolvable(REASON_CONFLICT, plugin=NAME))
        return PreFilterResult(Status.success(), names)

    def _added_mask(self, table: NodeTable, rows: Rows) -> BoolMask:
        return selectors.affinity_mask(table, self._added, rows)

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        match = self._added_mask(table, rows)
        match &= selectors.selector_mask(table, pod.node_selector, rows)
        match &= selectors.affinity_mask(table, pod.node_affinity, rows)
        return match

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        one = np.array([row], dtype=np.intp)
        if not self._added_mask(table, one)[0]:
            return Status.unresolvable(REASON_ENFORCED, plugin=NAME)
        return Status.unresolvable(REASON_POD, plugin=NAME)

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Status:
        pod_preferred = pod.node_affinity.preferred if pod.node_affinity is not None else ()
        added_preferred = self._added.preferred if self._added is not None else ()
        if not pod_preferred and not added_preferred:
            return Status.skip()
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> ScoreArray:
        total: ScoreArray = selectors.preferred_weights(table, self._added, rows)
        total += selectors.preferred_weights(table, pod.node_affinity, rows)
        return total

    def normalize(self, state: CycleState, scores: ScoreArray, taking_part: BoolMask) -> ScoreArray:
        return default_normalize(scores, taking_part, reverse=False)


def factory(args: object | None, handle: Handle | None) -> NodeAffinity:
    return NodeAffinity(args if isinstance(args, NodeAffinityArgs) else NodeAffinityArgs())


SPEC: Final = declare(
    NodeAffinity, api_version=API_VERSION, factory=factory, args=IN_TREE_ARGS[NAME]
)
