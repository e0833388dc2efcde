"""The vectorised PodTopologySpread behind the reference's function signatures.

Builds a NodeTable from the reference's inputs (nodes, pods by node, the raw extras)
and runs the engine's plugin, so upstream's tables check both implementations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from asched.cluster.records import NodeInfo, PodInfo
from asched.config.types import PodTopologySpreadArgs
from asched.framework.builtin import pod_topology_spread
from asched.framework.builtin.pod_topology_spread import PodTopologySpread
from asched.framework.cycle_state import SCORED_ROWS, CycleState
from asched.framework.status import Code, Status
from asched.tools.reference.crosspod import FilterResult, ScoreResult
from tests.builders import engine_table

Extras = Mapping[str, Sequence[Mapping[str, Any]]]


@dataclass(frozen=True, slots=True)
class PreFilterView:
    """The engine's PreFilter state in the reference's terms (``PreFilterState``)."""

    pair_counts: Mapping[tuple[str, str], int]
    domains: Mapping[str, int]
    global_min: Mapping[str, int]


def pre_filter(
    nodes: Sequence[NodeInfo],
    pods_by_node: Mapping[str, Sequence[PodInfo]],
    pod: PodInfo,
    args: PodTopologySpreadArgs,
    extras: Extras,
) -> tuple[Status, PreFilterView | None]:
    table = engine_table(nodes, pods_by_node, extras)
    state = CycleState()
    status = PodTopologySpread(args).pre_filter(state, pod, table).status
    if not status.ok:
        return status.with_plugin(""), None
    pairs = pod_topology_spread.pair_counts(state)
    summary = pod_topology_spread.domain_summary(state)  # the engine's own, not derived here
    domains = {key: n for key, (n, _) in summary.items()}
    global_min = {key: lowest for key, (_, lowest) in summary.items()}
    return status, PreFilterView(pairs, domains, global_min)


def filter_nodes(
    nodes: Sequence[NodeInfo],
    pods_by_node: Mapping[str, Sequence[PodInfo]],
    pod: PodInfo,
    args: PodTopologySpreadArgs,
    extras: Extras,
) -> FilterResult:
    table = engine_table(nodes, pods_by_node, extras)
    plugin = PodTopologySpread(args)
    state = CycleState()
    pre = plugin.pre_filter(state, pod, table).status.with_plugin("")
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
    pod: PodInfo,
    args: PodTopologySpreadArgs,
    extras: Extras,
    feasible: Sequence[str] | None = None,
) -> ScoreResult:
    table = engine_table(nodes, pods_by_node, extras)
    plugin = PodTopologySpread(args)
    state = CycleState()
    names = [node.name for node in nodes] if feasible is None else list(feasible)
    if not names:
        return ScoreResult(Status.skip())
    status = plugin.pre_score(state, pod, table).with_plugin("")
    if not status.ok:
        return ScoreResult(status)
    rows = [table.row_of(name) for name in names]
    taking_part = np.zeros(table.size, dtype=np.bool_)
    taking_part[rows] = True
    state.write(SCORED_ROWS, taking_part)
    raw = plugin.score(state, pod, table, table.rows)
    normalized = plugin.normalize(state, raw, taking_part)
    return ScoreResult(
        status,
        {name: int(raw[row]) for name, row in zip(names, rows, strict=True)},
        {name: int(normalized[row]) for name, row in zip(names, rows, strict=True)},
    )
