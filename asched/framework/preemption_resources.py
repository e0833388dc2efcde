"""Preemption's candidate search vectorised over every potential node at once
(:func:`search_resources`), for the common case where only the resource fit depends on
the pods of a node.

It applies when only the resource-fit filter
(:class:`~asched.framework.interface.ResourceFit`, NodeResourcesFit by default) among the
active filters depends on the pods of a node (the pod asks for no host port, and every
active cross-row filter sees other pods only through their volumes:
:data:`~asched.framework.interface.READS_ONLY_POD_VOLUMES`): the victims' requests are
summed per node with one pass over the pod columns, PDB violations ranked per node with
cumulative sums, and the reprieve (add victims back, most important first, keep those
that still let the pod fit) runs one rank at a time for all nodes together. The volume
filters are asked once per node; the few nodes where a what-if moves a pod with volumes
(a victim with volumes, a nominated pod with volumes) are answered by
:func:`~asched.framework.preemption.exact_rows` instead (``forced``).

It is separate from :mod:`asched.framework.preemption` (the candidates, the exact search
node by node, and the choice among candidates) because it is a second implementation of
the same dry run, with the same answers, written over arrays rather than pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from asched.cluster.budgets import DisruptionBudget
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework.preemption import REASON_NO_VICTIMS, Candidate, Search, importance_order
from asched.framework.resource_fit import ResourceNeed
from asched.framework.status import Status

IntArray = npt.NDArray[np.int64]
RowArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]


def _stop_prefix(clean: BoolArray, violating: BoolArray, wanted: int) -> int:
    """How many visited positions upstream's dry run examines before it stops."""
    n_clean = np.minimum(np.cumsum(clean), wanted)
    n_violating = np.minimum(np.cumsum(violating), wanted)
    done = np.flatnonzero((n_clean >= 1) & (n_clean + n_violating >= wanted))
    return int(done[0]) + 1 if done.size else len(clean)


def _group_starts(groups: RowArray) -> RowArray:
    if groups.size == 0:
        return np.zeros(0, dtype=np.intp)
    edge = np.ones(groups.size, dtype=np.bool_)
    edge[1:] = groups[1:] != groups[:-1]
    starts: RowArray = np.flatnonzero(edge)
    return starts


def _rank_in_group(groups: RowArray, flags: BoolArray) -> IntArray:
    """For each entry, how many flagged entries of its group come before it."""
    counted = np.cumsum(flags, dtype=np.int64)
    before = counted - flags
    starts = _group_starts(groups)
    sizes = np.diff(np.append(starts, groups.size))
    base = np.repeat(before[starts], sizes)
    ranks: IntArray = before - base
    return ranks


def _violating(
    table: NodeTable, pod_rows: RowArray, groups: RowArray, budgets: Sequence[DisruptionBudget]
) -> BoolArray:
    """Per victim (in per-node importance order), whether it takes a budget below 0."""
    pods = table.pod_columns
    out = np.zeros(pod_rows.size, dtype=np.bool_)
    for budget in budgets:
        if budget.selects_nothing:
            continue
        selector = budget.selector
        selected = pods.matching({}, selector.column_requirements, (budget.namespace,))
        for name in budget.disrupted_pods:
            row = pods.index.get(f"{budget.namespace}/{name}")
            if row is not None:
                selected[row] = False
        if selector.matches({}):
            # a selector that matches empty label sets: upstream skips unlabelled pods
            for index in np.flatnonzero(selected).tolist():
                info = pods.infos[index]
                if info is None or not info.labels:
                    selected[index] = False
        hits = selected[pod_rows]
        ranks = _rank_in_group(groups, hits)
        out |= hits & (ranks + 1 > budget.disruptions_allowed)
    return out


def search_resources(
    table: NodeTable,
    pod: PodInfo,
    need: ResourceNeed,
    visit: RowArray,
    others_pass: BoolArray,
    reserved: dict[int, IntArray],
    budgets: Sequence[DisruptionBudget],
    wanted: int,
    forced: Mapping[int, Candidate | Status] | None = None,
) -> tuple[Search, dict[int, IntArray]]:
    """The vectorised dry run; see the module docstring.

    Parameters
    ----------
    visit : intp array, shape (n_visit,)
        Potential node rows in visiting order (already rotated by the offset).
    others_pass : bool array, shape (n_visit,)
        Whether every active filter other than the resource-fit one passes there.
    reserved : axis -> int64 array, shape (n_visit,)
        What nominated pods (priority at least the preemptor's) hold on each node, per
        checked axis, in the table's units.
    wanted : the number of candidates to find.
    forced : visiting position -> that node's answer, found otherwise (by
        :func:`~asched.framework.preemption.exact_rows`: nodes where a what-if changes an answer ``others_pass``
        cannot follow); those positions take it instead of the vectorised one.

    Returns
    -------
    The search, and per checked axis the free amount at each visiting position once
    every lower-priority pod is gone (for the failure statuses).
    """
    n_visit = visit.size
    pod_rows, groups, violating = _ordered_victims(table, pod, visit, budgets)
    has_victims = np.bincount(groups, minlength=n_visit) > 0
    free = _free_without_victims(table, need, visit, pod_rows, groups, reserved)

    free_alone = {axis: column.copy() for axis, column in zip(need.axes, free, strict=True)}
    fits_alone = need.fits(free_alone, n_visit)
    ready = fits_alone & others_pass & has_victims
    is_victim = _reprieve(table, need, free, pod_rows, groups, ready)
    search = _outcome(
        table, visit, pod_rows, groups, violating, is_victim, ready, has_victims, wanted, forced
    )
    return search, free_alone


def _free_without_victims(
    table: NodeTable,
    need: ResourceNeed,
    visit: RowArray,
    pod_rows: RowArray,
    groups: RowArray,
    reserved: dict[int, IntArray],
) -> list[IntArray]:
    """Per checked axis (in ``need.axes`` order), the free amount at each visiting
    position (int64, shape ``(n_visit,)``, the table's units) once every lower-priority
    pod (``pod_rows``, on the visiting positions ``groups``) is gone, less what the
    nominated pods hold there (``reserved``)."""
    pods = table.pod_columns
    free = []
    for axis in need.axes:
        column = table.free[axis][visit].copy()
        if axis < len(pods.requests):
            np.add.at(column, groups, pods.requests[axis][pod_rows])
        held = reserved.get(axis)
        if held is not None:
            column -= held
        free.append(column)
    return free


def _reprieve(
    table: NodeTable,
    need: ResourceNeed,
    free: list[IntArray],
    pod_rows: RowArray,
    groups: RowArray,
    ready: BoolArray,
) -> BoolArray:
    """Which of the lower-priority pods (in reprieve order) stay victims on the ``ready``
    nodes: they are added back one rank at a time for all nodes together, and each one
    the pod still fits with is kept (its requests taken from ``free``, in place)."""
    pods = table.pod_columns
    is_victim = np.zeros(pod_rows.size, dtype=np.bool_)
    ranks = _rank_in_group(groups, np.ones(pod_rows.size, dtype=np.bool_))
    live = ready[groups]
    for rank in range(int(ranks.max()) + 1 if ranks.size else 0):
        entries = np.flatnonzero(live & (ranks == rank))
        if entries.size == 0:
            continue
        at = groups[entries]
        trial = []
        for axis, column in zip(need.axes, free, strict=True):
            back = pods.requests[axis][pod_rows[entries]] if axis < len(pods.requests) else 0
            trial.append(column[at] - back)
        keep = need.fits(dict(zip(need.axes, trial, strict=True)), entries.size)
        for column, values in zip(free, trial, strict=True):
            column[at[keep]] = values[keep]
        is_victim[entries[~keep]] = True
    return is_victim


def _outcome(
    table: NodeTable,
    visit: RowArray,
    pod_rows: RowArray,
    groups: RowArray,
    violating: BoolArray,
    is_victim: BoolArray,
    ready: BoolArray,
    has_victims: BoolArray,
    wanted: int,
    forced: Mapping[int, Candidate | Status] | None,
) -> Search:
    """The candidates the dry run finds once the reprieve chose the victims, clean ones
    first, in visiting order, up to where upstream's dry run stops (``forced`` positions
    take their answer), or, when there is none, why each visited node is none."""
    pods = table.pod_columns
    n_visit = visit.size
    victims_per = np.bincount(groups[is_victim], minlength=n_visit)
    violations_per = np.bincount(groups[is_victim & violating], minlength=n_visit)
    candidate = ready & (victims_per > 0)
    clean = candidate & (violations_per == 0)
    forced = forced or {}
    for place, answer in forced.items():
        candidate[place] = isinstance(answer, Candidate)
        clean[place] = isinstance(answer, Candidate) and answer.num_pdb_violations == 0
    stop = _stop_prefix(clean, candidate & ~clean, wanted)
    found: list[Candidate] = []
    victim_entries = np.flatnonzero(is_victim)
    victim_groups = groups[victim_entries]  # ascending: entries are grouped by node
    for want_clean in (True, False):
        chosen = np.flatnonzero((clean if want_clean else candidate & ~clean)[:stop])[:wanted]
        low = np.searchsorted(victim_groups, chosen, side="left")
        high = np.searchsorted(victim_groups, chosen, side="right")
        for at, start, end in zip(chosen.tolist(), low.tolist(), high.tolist(), strict=True):
            decided = forced.get(at)
            if isinstance(decided, Candidate):
                found.append(decided)
                continue
            entries = victim_entries[start:end]
            infos = [pods.infos[int(r)] for r in pod_rows[entries]]
            victims = [p for p in infos if p is not None]
            starts = [float(pods.start[int(r)]) for r in pod_rows[entries]]
            ordered = tuple(victims[i] for i in importance_order(victims, starts))
            found.append(Candidate(int(visit[at]), ordered, int(violations_per[at])))
    if found:
        return Search(found, {})
    statuses = _no_candidate(table, visit[:stop], ready[:stop], has_victims[:stop], forced)
    return Search(found, statuses)


def _ordered_victims(
    table: NodeTable, pod: PodInfo, visit: RowArray, budgets: Sequence[DisruptionBudget]
) -> tuple[RowArray, RowArray, BoolArray]:
    """The lower-priority pods on the visited nodes, in reprieve order: pod-column rows,
    their node's visiting position (grouped, ascending), and whether each takes a budget
    below 0; per node the violating ones first, each part most important first."""
    pods = table.pod_columns
    position = np.full(table.size, -1, dtype=np.intp)
    position[visit] = np.arange(visit.size, dtype=np.intp)
    size = pods.size
    node_rows = pods.node_row[:size]
    lower = pods.alive[:size] & (pods.priority[:size] < pod.priority) & (node_rows >= 0)
    lower_rows = np.flatnonzero(lower)
    lower_rows = lower_rows[position[node_rows[lower_rows]] >= 0]
    groups_unsorted = position[node_rows[lower_rows]]
    by_importance = np.lexsort(
        (lower_rows, pods.start[lower_rows], -pods.priority[lower_rows], groups_unsorted)
    )
    pod_rows = lower_rows[by_importance]
    groups = groups_unsorted[by_importance]
    violating = _violating(table, pod_rows, groups, budgets)
    reprieve = np.lexsort((np.arange(pod_rows.size), ~violating, groups))
    return pod_rows[reprieve], groups[reprieve], violating[reprieve]


def _no_candidate(
    table: NodeTable,
    visited: RowArray,
    ready: BoolArray,
    has_victims: BoolArray,
    forced: Mapping[int, Candidate | Status],
) -> dict[int, Status]:
    """Why each visited node (up to where the dry run stopped) is no candidate, when none
    is: a node answered otherwise keeps its answer; a node where the pod fits with every
    victim gone but every victim was reprieved is upstream's error; a node with no victim
    says so. The others are explained by the caller (the first failing filter)."""
    statuses: dict[int, Status] = {}
    for place, answer in forced.items():
        if place < visited.size and isinstance(answer, Status):
            statuses[int(visited[place])] = answer
    for where in np.flatnonzero(ready).tolist():  # all reprieved: upstream errs
        if where not in forced:
            node_row = int(visited[where])
            statuses[node_row] = Status.error(
                f"expected at least one victim pod on node {table.name_of(node_row)!r}"
            )
    for where in np.flatnonzero(~has_victims).tolist():
        if where not in forced:
            statuses[int(visited[where])] = Status.unresolvable(REASON_NO_VICTIMS)
    return statuses
