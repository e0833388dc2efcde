"""The vectorised DefaultPreemption behind the reference's inputs and outputs.

A NodeTable is built from the case's nodes, pods and PodDisruptionBudgets (raw), the
engine plugin runs over it with the case's profile, and its answer is converted to the
reference's result types, so upstream's tables check both implementations. Cases whose
``fits`` callback is a hand-made stand-in (a fake filter) have no profile and are not
run against the engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from asched.cluster.records import NodeInfo, PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import DefaultPreemptionArgs, Profile
from asched.framework.builtin.default_preemption import DefaultPreemption
from asched.framework.cycle_state import CycleState
from asched.framework.preemption import Search
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.tools.reference import preemption
from tests.builders import engine_table


def _candidates(table: NodeTable, found: Search) -> preemption.DryRun:
    return preemption.DryRun(
        tuple(
            preemption.Candidate(table.name_of(c.row), c.victims, c.num_pdb_violations)
            for c in found.candidates
        ),
        {table.name_of(row): status.with_plugin("") for row, status in found.statuses.items()},
    )


def _marks(table: NodeTable) -> tuple[int, int, int, int, int]:
    """What the table's caches key on, and how many pods it counts."""
    return (
        table.generation,
        table.shared_generation,
        table.change_mark,
        table.epoch,
        len(table.pods),
    )


def dry_run(
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    pods_by_node: Mapping[str, Sequence[PodInfo]],
    profile: Profile,
    extras: Mapping[str, Sequence[Mapping[str, Any]]],
    offset: int,
    num_candidates: int,
) -> tuple[preemption.DryRun, str]:
    """Visit every node from ``offset``; also says which search ran."""
    table = engine_table(nodes, pods_by_node, extras)
    plugin = DefaultPreemption(DefaultPreemptionArgs())
    rows = [table.row_of(n.name) for n in nodes]
    visit = [r for r in rows if r is not None]
    visit = visit[offset:] + visit[:offset]
    marks = _marks(table)
    found = plugin.search(CycleState(), pod, table, Framework(profile), visit, num_candidates)
    assert _marks(table) == marks, "the search's what-ifs left a trace in the table"
    return _candidates(table, found), plugin.last_search


def preempt(
    nodes: Sequence[NodeInfo],
    pods_by_node: Mapping[str, Sequence[PodInfo]],
    pod: PodInfo,
    node_statuses: Mapping[str, Status],
    profile: Profile,
    *,
    extras: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    args: DefaultPreemptionArgs | None = None,
    offset: int = 0,
    nominated_pods: Sequence[PodInfo] = (),
) -> preemption.PreemptionResult:
    table = engine_table(nodes, pods_by_node, extras, nominated=nominated_pods)
    plugin = DefaultPreemption(args or DefaultPreemptionArgs())
    statuses = {}
    for name, status in node_statuses.items():
        row = table.row_of(name)
        if row is not None:
            statuses[row] = status
    marks = _marks(table)
    result = plugin.post_filter(
        CycleState(), pod, table, statuses, Framework(profile), offset=offset
    )
    assert _marks(table) == marks, "preemption's what-ifs left a trace in the table"
    return preemption.PreemptionResult(
        result.status.with_plugin(""), result.nominated_node, result.victims, result.cleared
    )
