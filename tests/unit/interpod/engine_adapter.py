"""The vectorised InterPodAffinity behind the reference's function signatures.

Builds a NodeTable from the reference's inputs (nodes, pods by node, namespace labels)
and runs the engine's plugin, so upstream's tables check both implementations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from asched.cluster.records import NodeInfo, PodInfo
from asched.config.types import InterPodAffinityArgs
from asched.framework.builtin.inter_pod_affinity import InterPodAffinity
from asched.framework.cycle_state import CycleState
from asched.framework.status import Code, Status
from asched.tools.reference.crosspod import FilterResult, ScoreResult
from tests.builders import engine_table


def filter_nodes(
    nodes: Sequence[NodeInfo],
    pods_by_node: Mapping[str, Sequence[PodInfo]],
    namespace_labels: Mapping[str, Mapping[str, str]],
    pod: PodInfo,
) -> FilterResult:
    table = engine_table(nodes, pods_by_node, namespace_labels=namespace_labels)
    plugin = InterPodAffinity(InterPodAffinityArgs())
    state = CycleState()
    pre = plugin.pre_filter(state, pod, table).status
    if pre.code == Code.SKIP:
        return FilterResult(pre, {node.name: Status.success() for node in nodes})
    if not pre.ok:
        return FilterResult(pre, {node.name: pre for node in nodes})
    passes = plugin.filter(state, pod, table, table.rows)
    statuses = {}
    for node in nodes:
        row = table.row_of(node.name)
        assert row is not None
        ok = bool(passes[row])
        statuses[node.name] = (
            Status.success() if ok else plugin.explain(state, pod, table, row).with_plugin("")
        )
    return FilterResult(pre, statuses)


def score_nodes(
    nodes: Sequence[NodeInfo],
    pods_by_node: Mapping[str, Sequence[PodInfo]],
    namespace_labels: Mapping[str, Mapping[str, str]],
    pod: PodInfo,
    args: InterPodAffinityArgs,
    feasible: Sequence[str] | None = None,
) -> ScoreResult:
    table = engine_table(nodes, pods_by_node, namespace_labels=namespace_labels)
    plugin = InterPodAffinity(args)
    state = CycleState()
    names = [node.name for node in nodes] if feasible is None else list(feasible)
    if not names:
        return ScoreResult(Status.skip())
    status = plugin.pre_score(state, pod, table)
    if not status.ok:
        return ScoreResult(status)
    raw = plugin.score(state, pod, table, table.rows)
    taking_part = np.zeros(table.size, dtype=np.bool_)
    rows = [table.row_of(name) for name in names]
    taking_part[rows] = True
    normalized = plugin.normalize(state, raw, taking_part)
    return ScoreResult(
        status,
        {name: int(raw[row]) for name, row in zip(names, rows, strict=True)},
        {name: int(normalized[row]) for name, row in zip(names, rows, strict=True)},
    )
