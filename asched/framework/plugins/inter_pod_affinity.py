"""InterPodAffinity (PreFilter, Filter, PreScore, Score): pods attract and repel pods.

Section 12, counted per topology domain with vectorised passes over the pod columns:
a term's matching pods are a column mask, their domains the node label ids of their
nodes, and the count per domain one ``bincount``. Existing pods' terms are looked up per
distinct term (a Deployment's replicas share one), never per pod.

Not row-local: a pod placed anywhere in a domain changes every node of that domain, so
the runtime computes this plugin afresh each cycle (PreFilter/PreScore do the counting;
Filter/Score gather per node).

Filter, in order: the pod's required affinity (UnschedulableAndUnresolvable), its
required anti-affinity (Unschedulable), existing pods' required anti-affinity matching
it (Unschedulable). Score: preferred terms of the pod and of existing pods, existing
pods' required affinity times hardPodAffinityWeight; min-max normalized; weight 2.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.affinity import AffinityTerm
from asched.cluster.columns import Rows
from asched.cluster.pods import PREFERRED, REQUIRED_AFFINITY, REQUIRED_ANTI
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.args import IN_TREE_ARGS
from asched.config.types import InterPodAffinityArgs
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.interface import (
    MAX_SCORE,
    PRE_FILTER_SKIP,
    PRE_FILTER_SUCCESS,
    BoolMask,
    Handle,
    PreFilterResult,
    ScoreArray,
)
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "InterPodAffinity"
REASON_AFFINITY: Final = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY: Final = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY: Final = "node(s) didn't satisfy existing pods anti-affinity rules"
_FILTER_KEY: Final = f"{NAME}/prefilter"
_SCORE_KEY: Final = f"{NAME}/prescore"
Int64Array = npt.NDArray[np.int64]


def _namespaces(term: AffinityTerm, table: NodeTable) -> Collection[str] | None:
    """The incoming pod's term's namespaces, its selector resolved (None: every namespace)."""
    selector = term.namespace_selector
    if selector is None:
        return term.namespaces
    if selector.empty:
        return None
    selected = {n for n, labels in table.namespace_labels.items() if selector.matches(labels)}
    return (term.namespaces or frozenset()) | selected


def _matching_pods(term: AffinityTerm, table: NodeTable) -> BoolMask:
    pods = table.pod_columns
    if term.selector.nothing:
        return np.zeros(pods.size, dtype=np.bool_)
    return pods.matching({}, term.selector.column_requirements, _namespaces(term, table))


def _matches_itself(term: AffinityTerm, pod: PodInfo, table: NodeTable) -> bool:
    namespaces = _namespaces(term, table)
    in_namespace = namespaces is None or pod.namespace in namespaces
    return in_namespace and term.selector.matches(pod.labels)


def _per_node(
    table: NodeTable, key: str, pod_rows: npt.NDArray[np.intp] | BoolMask
) -> tuple[Int64Array, int]:
    """Matching pods counted per node row through its domain of ``key``; and their total."""
    label = table.labels.keys.get(key)
    column = None if label is None else label.column
    n_values = 0 if label is None else len(label.values)
    return table.pod_columns.per_node_counts(pod_rows, column, n_values, table.size)


def _has_key(table: NodeTable, key: str) -> BoolMask:
    column = table.labels.column(key)
    if column is None:
        return np.zeros(table.size, dtype=np.bool_)
    present: BoolMask = column[: table.size] >= 0
    return present


@dataclass(slots=True)
class _Checks:
    """Per node row, which of the three filter checks fails."""

    affinity_fails: BoolMask
    anti_fails: BoolMask
    existing_fails: BoolMask
    passes: BoolMask = field(init=False)

    def __post_init__(self) -> None:
        self.passes = ~(self.affinity_fails | self.anti_fails | self.existing_fails)


class InterPodAffinity:
    name: Final = NAME
    #: the cluster events that may undo its rejection (upstream's EventsToRegister)
    events: Final = frozenset(
        {
            ClusterEvent.ASSIGNED_POD_ADD,
            ClusterEvent.ASSIGNED_POD_DELETE,
            ClusterEvent.NODE_ADD,
            ClusterEvent.NODE_LABEL,
        }
    )
    row_local: Final = False
    normalizes: Final = True

    def __init__(self, args: InterPodAffinityArgs) -> None:
        self._hard_weight = args.hard_pod_affinity_weight
        self._ignore_existing_preferred = args.ignore_preferred_terms_of_existing_pods

    # ------------------------------------------------------------------ filter
    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        if pod.affinity is not None and pod.affinity.errors:
            reason = f"parsing pod: {pod.affinity.error_message}"
            return PreFilterResult(Status.unresolvable(reason, plugin=NAME))
        size = table.size
        own_ns = table.namespace_labels.get(pod.namespace, {})
        existing_fails = np.zeros(size, dtype=np.bool_)
        existing_counted = False
        for term, _ in table.pod_columns.term_groups[REQUIRED_ANTI]:
            if not term.matches(pod.labels, pod.namespace, own_ns):
                continue
            rows = table.pod_columns.group_rows(REQUIRED_ANTI, term, 0)
            per_node, counted = _per_node(table, term.topology_key, rows)
            existing_counted |= counted > 0
            existing_fails |= per_node > 0
        affinity = pod.affinity
        required = affinity.required if affinity is not None else ()
        required_anti = affinity.required_anti if affinity is not None else ()
        if not existing_counted and not required and not required_anti:
            return PRE_FILTER_SKIP
        affinity_fails = np.zeros(size, dtype=np.bool_)
        if required:
            match_all = np.ones(table.pod_columns.size, dtype=np.bool_)
            for term in required:
                match_all &= _matching_pods(term, table)
            missing_key = np.zeros(size, dtype=np.bool_)
            lacking_pods = np.zeros(size, dtype=np.bool_)
            any_counted = False
            for term in required:
                missing_key |= ~_has_key(table, term.topology_key)
                per_node, counted = _per_node(table, term.topology_key, match_all)
                any_counted |= counted > 0
                lacking_pods |= per_node <= 0
            first_of_group = not any_counted and all(
                _matches_itself(t, pod, table) for t in required
            )
            affinity_fails = missing_key | (lacking_pods & (not first_of_group))
        anti_fails = np.zeros(size, dtype=np.bool_)
        for term in required_anti:
            per_node, _ = _per_node(table, term.topology_key, _matching_pods(term, table))
            anti_fails |= per_node > 0
        state.write(_FILTER_KEY, _Checks(affinity_fails, anti_fails, existing_fails))
        return PRE_FILTER_SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        checks: _Checks = state.read(_FILTER_KEY)
        passes: BoolMask = checks.passes[rows]
        return passes

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        checks: _Checks = state.read(_FILTER_KEY)
        if checks.affinity_fails[row]:
            return Status.unresolvable(REASON_AFFINITY, plugin=NAME)
        if checks.anti_fails[row]:
            return Status.unschedulable(REASON_ANTI_AFFINITY, plugin=NAME)
        if checks.existing_fails[row]:
            return Status.unschedulable(REASON_EXISTING_ANTI_AFFINITY, plugin=NAME)
        return Status.success()

    # ------------------------------------------------------------------ score
    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Status:
        affinity = pod.affinity
        has_preferred = affinity is not None and bool(affinity.preferred or affinity.preferred_anti)
        if self._ignore_existing_preferred and not has_preferred:
            return Status.skip()
        if affinity is not None and affinity.errors:
            return Status.error(f"failed to parse pod: {affinity.error_message}", plugin=NAME)
        own_ns = table.namespace_labels.get(pod.namespace, {})
        raw = np.zeros(table.size, dtype=np.int64)
        contributed = False
        if affinity is not None:
            weighted = [(w.term, w.weight) for w in affinity.preferred]
            weighted += [(w.term, -w.weight) for w in affinity.preferred_anti]
            for term, weight in weighted:
                per_node, counted = _per_node(table, term.topology_key, _matching_pods(term, table))
                raw += weight * per_node
                contributed |= counted > 0
        pods = table.pod_columns
        existing: list[tuple[str, AffinityTerm, int, int]] = []
        if self._hard_weight > 0:
            existing += [
                (REQUIRED_AFFINITY, t, w, self._hard_weight)
                for t, w in pods.term_groups[REQUIRED_AFFINITY]
            ]
        if not self._ignore_existing_preferred:
            existing += [(PREFERRED, t, w, w) for t, w in pods.term_groups[PREFERRED]]
        for kind, term, group_weight, weight in existing:
            if not term.matches(pod.labels, pod.namespace, own_ns):
                continue
            per_node, counted = _per_node(
                table, term.topology_key, pods.group_rows(kind, term, group_weight)
            )
            raw += weight * per_node
            contributed |= counted > 0
        if not contributed:
            return Status.skip()
        state.write(_SCORE_KEY, raw)
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> ScoreArray:
        raw: ScoreArray = state.read(_SCORE_KEY)[rows]
        return raw

    def normalize(self, state: CycleState, scores: ScoreArray, taking_part: BoolMask) -> ScoreArray:
        if not taking_part.any():
            return scores
        low = int(scores.min(where=taking_part, initial=np.iinfo(np.int64).max))
        high = int(scores.max(where=taking_part, initial=np.iinfo(np.int64).min))
        if high <= low:
            return np.zeros_like(scores)
        scaled: ScoreArray = (MAX_SCORE * ((scores - low) / (high - low))).astype(np.int64)
        return np.where(taking_part, scaled, 0)


def factory(args: object | None, handle: Handle | None) -> InterPodAffinity:
    return InterPodAffinity(
        args if isinstance(args, InterPodAffinityArgs) else InterPodAffinityArgs()
    )


SPEC: Final = declare(
    InterPodAffinity, api_version=API_VERSION, factory=factory, args=IN_TREE_ARGS[NAME]
)
