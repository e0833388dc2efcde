"""PodTopologySpread, scalar reference: PreFilter, Filter, PreScore, Score.

Upstream: pkg/scheduler/framework/plugins/podtopologyspread/{filtering.go,scoring.go}.

Wired into :func:`asched.tools.reference.evaluate` by
:mod:`asched.tools.reference.plugins.pod_topology_spread`; the table tests call these
functions directly, and the vectorised twin
(:mod:`asched.framework.builtin.pod_topology_spread`) is run behind the same signatures.

Constraints are decoded by :mod:`asched.cluster.spread`, shared with the engine: the pod's
own, else the default constraints with the selector of the Services,
ReplicationControllers, ReplicaSets and StatefulSets selecting the pod
(:func:`default_selector`, computed here from the raw ``extras``).

Counting: only pods of the incoming pod's namespace that are not being deleted and
match the selector; a match-everything selector (``labelSelector: {}``) counts nothing,
as upstream's ``countPodsMatchSelector`` does. A node is counted for a constraint only
when it carries every constraint's topology key and passes the constraint's node
inclusion policies (the pod's nodeSelector and required node affinity; its
NoSchedule/NoExecute taints).

Reasons: UnschedulableAndUnresolvable :data:`REASON_MISSING_LABEL` for a node without a
constraint's key, Unschedulable :data:`REASON_SKEW` when ``matching + self - minimum >
maxSkew``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from asched.cluster import spread
from asched.cluster.records import NodeInfo, PodInfo
from asched.cluster.spread import (
    DO_NOT_SCHEDULE,
    HONOR,
    HOSTNAME,
    IGNORE,
    REASON_MISSING_LABEL,
    REASON_SKEW,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    ZONE,
    Extras,
    SpreadConstraint,
    decode_constraints,
    default_selector,
)
from asched.config.types import PodTopologySpreadArgs
from asched.errors import DecodeError
from asched.framework.status import Code, Status
from asched.tools.reference.crosspod import (
    FilterResult,
    PodsByNode,
    ScoreResult,
    TopologyPair,
    matches_required_node_affinity,
    tolerates_hard_taints,
)
from asched.tools.reference.gomath import go_div, go_round
from asched.tools.reference.labelselector import LabelSelector
from asched.tools.reference.normalize import MAX_NODE_SCORE

NAME: Final = "PodTopologySpread"

__all__ = [
    "DO_NOT_SCHEDULE",
    "HONOR",
    "HOSTNAME",
    "IGNORE",
    "NAME",
    "REASON_MISSING_LABEL",
    "REASON_SKEW",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "ZONE",
    "Extras",
    "PreFilterState",
    "PreScoreState",
    "SpreadConstraint",
    "constraints_for",
    "count_matching",
    "decode_constraints",
    "default_selector",
    "filter_node",
    "filter_nodes",
    "includes",
    "normalize",
    "normalizing_weight",
    "pre_filter",
    "pre_score",
    "score_node",
    "score_nodes",
]


# Constraints.


def includes(constraint: SpreadConstraint, pod: PodInfo, node: NodeInfo) -> bool:
    """The node inclusion policies (``matchNodeInclusionPolicies``)."""
    if constraint.node_affinity_policy == HONOR and not matches_required_node_affinity(pod, node):
        return False
    return not (constraint.node_taints_policy == HONOR and not tolerates_hard_taints(pod, node))


def constraints_for(
    pod: PodInfo, action: str, args: PodTopologySpreadArgs, extras: Extras
) -> tuple[SpreadConstraint, ...]:
    """The pod's constraints for ``action`` (its own, else the defaults from ``extras``).

    Raises
    ------
    DecodeError
        When a constraint does not decode.
    """
    return spread.constraints_for(pod, action, args, lambda: default_selector(pod, extras))


def count_matching(pods: Sequence[PodInfo], selector: LabelSelector, namespace: str) -> int:
    """Pods of ``namespace``, not being deleted, that ``selector`` matches (0 if it is empty)."""
    if selector.empty:
        return 0
    return sum(
        1
        for p in pods
        if not p.deleting and p.namespace == namespace and selector.matches(p.labels)
    )


def _has_all_keys(node: NodeInfo, constraints: Sequence[SpreadConstraint]) -> bool:
    return all(c.topology_key in node.labels for c in constraints)


# PreFilter / Filter.


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """Matching pods per domain, domains per key, global minimum per key (upstream:
    filtering.go, calPreFilterState).

    ``pair_counts`` has an entry (possibly 0) for every domain of a counted node;
    ``domains`` and ``global_min`` only have keys with at least one such domain.
    """

    constraints: tuple[SpreadConstraint, ...]
    pair_counts: Mapping[TopologyPair, int]
    domains: Mapping[str, int]
    global_min: Mapping[str, int]


def pre_filter(
    nodes: Sequence[NodeInfo],
    pods_by_node: PodsByNode,
    pod: PodInfo,
    args: PodTopologySpreadArgs,
    extras: Extras,
) -> tuple[Status, PreFilterState | None]:
    """Run PreFilter: ``(status, state)``; the state is None unless the status is Success.

    Skip when the pod has no DoNotSchedule constraint (own or default); Error when a
    constraint does not decode.
    """
    try:
        constraints = constraints_for(pod, DO_NOT_SCHEDULE, args, extras)
    except DecodeError as exc:
        return Status.error(spread.hard_constraints_error(pod, exc)), None
    if not constraints:
        return Status.skip(), None
    pair_counts: dict[TopologyPair, int] = {}
    for node in nodes:
        if not _has_all_keys(node, constraints):
            continue
        # One entry per domain of this node: a later constraint on the same key
        # overwrites an earlier one's count, as upstream's per-node map does.
        on_node: dict[TopologyPair, int] = {}
        for c in constraints:
            if not includes(c, pod, node):
                continue
            pair = (c.topology_key, node.labels[c.topology_key])
            on_node[pair] = count_matching(
                pods_by_node.get(node.name, ()), c.selector, pod.namespace
            )
        for pair, count in on_node.items():
            pair_counts[pair] = pair_counts.get(pair, 0) + count
    domains: dict[str, int] = {}
    global_min: dict[str, int] = {}
    for (key, _value), count in pair_counts.items():
        domains[key] = domains.get(key, 0) + 1
        global_min[key] = min(global_min.get(key, count), count)
    return Status.success(), PreFilterState(constraints, pair_counts, domains, global_min)


def filter_node(state: PreFilterState, pod: PodInfo, node: NodeInfo) -> Status:
    """Filter one node with a Success PreFilter state."""
    for c in state.constraints:
        key = c.topology_key
        if key not in node.labels:
            return Status.unresolvable(REASON_MISSING_LABEL)
        if key not in state.domains:
            continue  # no counted domain for this key: upstream skips the constraint
        minimum = state.global_min[key] if state.domains[key] >= c.min_domains else 0
        self_match = 1 if c.selector.matches(pod.labels) else 0
        matching = state.pair_counts.get((key, node.labels[key]), 0)
        if matching + self_match - minimum > c.max_skew:
            return Status.unschedulable(REASON_SKEW)
    return Status.success()


def filter_nodes(
    nodes: Sequence[NodeInfo],
    pods_by_node: PodsByNode,
    pod: PodInfo,
    args: PodTopologySpreadArgs,
    extras: Extras,
) -> FilterResult:
    """PreFilter once, then Filter every node (Skip: all Success; Error: everywhere)."""
    status, state = pre_filter(nodes, pods_by_node, pod, args, extras)
    if state is None:
        everywhere = Status.success() if status.code == Code.SKIP else status
        return FilterResult(status, {node.name: everywhere for node in nodes})
    return FilterResult(status, {node.name: filter_node(state, pod, node) for node in nodes})


# PreScore / Score / NormalizeScore.


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """Soft constraints, ignored nodes, domain counts and weights (upstream: scoring.go,
    initPreScoreState).

    ``weights[i]`` is ``ln(size_i + 2)`` for constraint ``i``; ``pair_counts`` has the
    domains of the non-hostname constraints seen on scored, non-ignored nodes.
    """

    constraints: tuple[SpreadConstraint, ...]
    ignored: frozenset[str]
    pair_counts: Mapping[TopologyPair, int]
    weights: tuple[float, ...]


def normalizing_weight(size: int) -> float:
    """``ln(size + 2)``: more domains, more weight per matching pod."""
    return math.log(size + 2)


def pre_score(
    nodes: Sequence[NodeInfo],
    pods_by_node: PodsByNode,
    pod: PodInfo,
    args: PodTopologySpreadArgs,
    extras: Extras,
    feasible: Sequence[str],
) -> tuple[Status, PreScoreState | None]:
    """Run PreScore: ``(status, state)``; the state is None unless the status is Success.

    Skip when there is nothing to score or no ScheduleAnyway constraint; Error when a
    constraint does not decode.
    """
    if not feasible or not nodes:
        return Status.skip(), None
    try:
        constraints = constraints_for(pod, SCHEDULE_ANYWAY, args, extras)
    except DecodeError as exc:
        return Status.error(spread.soft_constraints_error(exc)), None
    if not constraints:
        return Status.skip(), None
    # Nodes without every key are ignored, except under the system defaults, so that a
    # node without a zone still gets hostname spreading.
    require_all = spread.requires_all_keys(pod, args)
    by_name = {node.name: node for node in nodes}
    ignored: set[str] = set()
    pair_counts: dict[TopologyPair, int] = {}
    sizes = [0 for _ in constraints]
    for name in feasible:
        node = by_name[name]
        if require_all and not _has_all_keys(node, constraints):
            ignored.add(name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key == HOSTNAME:
                continue  # counted per node at Score
            pair = (c.topology_key, node.labels.get(c.topology_key, ""))
            if pair not in pair_counts:
                pair_counts[pair] = 0
                sizes[i] += 1
    weights = tuple(
        normalizing_weight(len(feasible) - len(ignored) if c.topology_key == HOSTNAME else sizes[i])
        for i, c in enumerate(constraints)
    )
    for node in nodes:
        if require_all and not _has_all_keys(node, constraints):
            continue
        for c in constraints:
            if not includes(c, pod, node):
                continue
            pair = (c.topology_key, node.labels.get(c.topology_key, ""))
            if pair not in pair_counts:
                continue  # no scored node in this domain (or a hostname constraint)
            pair_counts[pair] += count_matching(
                pods_by_node.get(node.name, ()), c.selector, pod.namespace
            )
    return Status.success(), PreScoreState(constraints, frozenset(ignored), pair_counts, weights)


def score_node(
    state: PreScoreState, pod: PodInfo, node: NodeInfo, pods_on_node: Sequence[PodInfo]
) -> int:
    """The raw score: ``round(sum(count * weight + maxSkew - 1))`` over the node's keys."""
    if node.name in state.ignored:
        return 0
    total = 0.0
    for c, weight in zip(state.constraints, state.weights, strict=True):
        value = node.labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == HOSTNAME:
            count = count_matching(pods_on_node, c.selector, pod.namespace)
        else:
            count = state.pair_counts.get((c.topology_key, value), 0)
        total += count * weight + float(c.max_skew - 1)
    return go_round(total)


def normalize(names: Sequence[str], raw: Sequence[int], ignored: frozenset[str]) -> list[int]:
    """Fewer matching pods, higher score: ``100 * (max + min - s) // max`` over valid nodes.

    Ignored nodes get 0; when the maximum is 0 every valid node gets 100.
    """
    valid = [s for name, s in zip(names, raw, strict=True) if name not in ignored]
    lowest = min(valid, default=0)
    highest = max([0, *valid])
    out = []
    for name, score in zip(names, raw, strict=True):
        if name in ignored:
            out.append(0)
        elif highest == 0:
            out.append(MAX_NODE_SCORE)
        else:
            out.append(go_div(MAX_NODE_SCORE * (highest + lowest - score), highest))
    return out


def score_nodes(
    nodes: Sequence[NodeInfo],
    pods_by_node: PodsByNode,
    pod: PodInfo,
    args: PodTopologySpreadArgs,
    extras: Extras,
    feasible: Sequence[str] | None = None,
) -> ScoreResult:
    """PreScore, Score and NormalizeScore over the feasible nodes (default: all nodes)."""
    names = [node.name for node in nodes] if feasible is None else list(feasible)
    status, state = pre_score(nodes, pods_by_node, pod, args, extras, names)
    if state is None:
        return ScoreResult(status)
    by_name = {node.name: node for node in nodes}
    raw = [score_node(state, pod, by_name[n], pods_by_node.get(n, ())) for n in names]
    normalized = normalize(names, raw, state.ignored)
    return ScoreResult(
        status, dict(zip(names, raw, strict=True)), dict(zip(names, normalized, strict=True))
    )
