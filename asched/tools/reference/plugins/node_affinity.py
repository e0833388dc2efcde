"""NodeAffinity: nodeSelector, required and preferred node affinity.

Upstream: pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go.

PreFilter skips pods with nothing required (and no scheduler-enforced required
affinity). When every required term pins ``metadata.name In [...]``, only the union of
those names (intersected within a term) is worth filtering; an empty union rejects the
pod outright. Filter checks the scheduler-enforced ``addedAffinity`` first, then the
pod's nodeSelector and required terms. Score sums the weights of the matching
preferred terms (pod's and added), normalized by the maximum.
"""

from __future__ import annotations

from typing import Final

from asched.cluster.records import NodeAffinity as Affinity, NodeSelectorTerm, PreferredTerm
from asched.config.types import NodeAffinityArgs
from asched.framework.status import Status
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins.base import SKIP, SUCCESS, Plugin, PreFilterOutcome

NAME: Final = "NodeAffinity"
REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
REASON_CONFLICT: Final = "pod affinity terms conflict"


def _pinned_names(term: NodeSelectorTerm) -> frozenset[str] | None:
    """Names allowed by the term's ``metadata.name In`` fields (ANDed), None if none."""
    names: frozenset[str] | None = None
    for field in term.match_fields:
        if field.key == "metadata.name" and field.operator == "In":
            values = frozenset(field.values)
            names = values if names is None else names & values
    return names


def _preferred_weight(terms: tuple[PreferredTerm, ...], node: NodeState) -> int:
    return sum(t.weight for t in terms if t.weight and t.term.matches(node.name, node.info.labels))


class NodeAffinity(Plugin):
    """PreFilter, Filter, PreScore, Score (DefaultNormalizeScore)."""

    name = NAME
    normalization = "default"

    @staticmethod
    def _added(cycle: Cycle) -> Affinity | None:
        return cycle.args(NAME, NodeAffinityArgs).added_affinity

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        pod = cycle.pod
        added = self._added(cycle)
        required = pod.node_affinity.required if pod.node_affinity is not None else None
        added_required = added.required if added is not None else None
        if not pod.node_selector and required is None and added_required is None:
            return SKIP
        if not required:
            return SUCCESS
        union: set[str] = set()
        for term in required:
            names = _pinned_names(term)
            if names is None:
                return SUCCESS  # this term may match any node: no restriction
            union |= names
        if not union:
            return PreFilterOutcome(Status.unresolvable(REASON_CONFLICT))
        return PreFilterOutcome(Status.success(), frozenset(union))

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        labels = node.info.labels
        added = self._added(cycle)
        if added is not None and not added.required_matches(node.name, labels):
            return Status.unresolvable(REASON_ENFORCED)
        pod = cycle.pod
        selector_ok = all(labels.get(k) == v for k, v in pod.node_selector.items())
        affinity_ok = pod.node_affinity is None or pod.node_affinity.required_matches(
            node.name, labels
        )
        if not (selector_ok and affinity_ok):
            return Status.unresolvable(REASON_POD)
        return Status.success()

    def pre_score(self, cycle: Cycle) -> bool:
        added = self._added(cycle)
        pod_preferred = cycle.pod.node_affinity.preferred if cycle.pod.node_affinity else ()
        added_preferred = added.preferred if added is not None else ()
        return bool(pod_preferred or added_preferred)

    def score(self, cycle: Cycle, node: NodeState) -> int:
        added = self._added(cycle)
        total = _preferred_weight(added.preferred, node) if added is not None else 0
        if cycle.pod.node_affinity is not None:
            total += _preferred_weight(cycle.pod.node_affinity.preferred, node)
        return total
