"""Preemption's candidate search over the NodeTable.

Upstream: pkg/scheduler/framework/preemption/preemption.go, DryRunPreemption and
pickOneNodeForPreemption; SelectVictimsOnNode in
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go.

Two ways to find, per potential node, the fewest lower-priority victims that let the
preemptor fit, with the same answers:

* :func:`search_resources`, vectorised over every potential node at once. It applies
  when only the resource-fit filter (:class:`~asched.framework.interface.ResourceFit`,
  NodeResourcesFit by default) among the active filters depends on the pods of a node
  (the pod asks for no host port, and every active cross-row filter sees other pods
  only through their volumes:
  :data:`~asched.framework.interface.READS_ONLY_POD_VOLUMES`), which is the common
  case: the victims' requests are summed per node with one pass over the pod columns,
  PDB violations ranked per node with cumulative sums, and the reprieve (add victims
  back, most important first, keep those that still let the pod fit) runs one rank at
  a time for all nodes together. The volume filters are asked once per node; the few
  nodes where a what-if moves a pod with volumes (a victim with volumes, a nominated
  pod with volumes) are answered by :func:`exact_rows` instead (``forced``).
* :func:`search_exact`, for everything else (inter-pod affinity, spreading, host
  ports, an out-of-tree cross-row filter): node by node in visiting order, the victims are removed from the table and
  added back one at a time, with the profile's whole filter chain deciding. The table
  is restored exactly before it returns. The changes and the fit checks go through a
  :class:`Trial` (:mod:`asched.framework.preemption_trial`), which either runs PreFilter
  afresh for every check or once per preemptor, updated by the plugins' PreFilter hooks
  for each pod removed or added back.

Both visit the potential nodes from ``offset`` as upstream's dry run does and stop at
the same point (a candidate without PDB violations found and ``num_candidates``
candidates in all); :func:`pick_one` then applies pickOneNodeForPreemption's criteria.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from asched.cluster.budgets import DisruptionBudget
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework.resource_fit import ResourceNeed
from asched.framework.status import Status

if TYPE_CHECKING:
    from asched.framework.cycle_state import CycleState
    from asched.framework.interface import FilterRunner, PostFilterResult

IntArray = npt.NDArray[np.int64]
RowArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

REASON_NO_VICTIMS: Final = "No preemption victims found for incoming pod"
_PRIORITY_OFFSET: Final = 2**31  # math.MaxInt32 + 1: every priority non-negative


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where preemption lets the pod fit; victims most important first."""

    row: int
    victims: tuple[PodInfo, ...]
    num_pdb_violations: int


@dataclass(slots=True)
class Search:
    """Candidates in list order (clean, then violating) and visited non-candidates.

    ``statuses`` maps a visited node row that is not a candidate to why; it is filled
    only when no candidate was found (the failure message needs it).
    """

    candidates: list[Candidate]
    statuses: dict[int, Status]


def candidate_count(n_potential: int, percentage: int, absolute: int) -> int:
    """``max(n * percentage // 100, absolute)``, capped at ``n``."""
    return min(max(n_potential * percentage // 100, absolute), n_potential)


def _stop_prefix(clean: BoolArray, violating: BoolArray, wanted: int) -> int:
    """How many visited positions upstream's dry run examines before it stops."""
    n_clean = np.minimum(np.cumsum(clean), wanted)
    n_violating = np.minimum(np.cumsum(violating), wanted)
    done = np.flatnonzero((n_clean >= 1) & (n_clean + n_violating >= wanted))
    return int(done[0]) + 1 if done.size else len(clean)


def importance_order(pods: Sequence[PodInfo], starts: Sequence[float]) -> list[int]:
    """Indices of ``pods`` most important first: higher priority, earlier start; stable."""
    return sorted(range(len(pods)), key=lambda i: (-pods[i].priority, starts[i]))


# --- the vectorised search -------------------------------------------------------------


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
        :func:`exact_rows`: nodes where a what-if changes an answer ``others_pass``
        cannot follow); those positions take it instead of the vectorised one.

    Returns
    -------
    The search, and per checked axis the free amount at each visiting position once
    every lower-priority pod is gone (for the failure statuses).
    """
    pods = table.pod_columns
    n_visit = visit.size
    pod_rows, groups, violating = _ordered_victims(table, pod, visit, budgets)
    has_victims = np.bincount(groups, minlength=n_visit) > 0
    free = []
    for axis in need.axes:
        column = table.free[axis][visit].copy()
        if axis < len(pods.requests):
            np.add.at(column, groups, pods.requests[axis][pod_rows])
        held = reserved.get(axis)
        if held is not None:
            column -= held
        free.append(column)

    free_alone = {axis: column.copy() for axis, column in zip(need.axes, free, strict=True)}
    fits_alone = need.fits(free_alone, n_visit)
    ready = fits_alone & others_pass & has_victims
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
        return Search(found, {}), free_alone
    statuses = _no_candidate(table, visit[:stop], ready[:stop], has_victims[:stop], forced)
    return Search(found, statuses), free_alone


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


# --- the exact search ------------------------------------------------------------------


class Trial(Protocol):
    """How the exact search changes the live table and asks whether the pod fits there.

    For each visited row: :meth:`start`, then any number of :meth:`remove` and :meth:`add`
    of pods counted on that row (each applied to the table at once) and :meth:`fits`
    checks, then :meth:`restore` puts the table back as it was.
    """

    def start(self, row: int) -> None:
        """A new row is visited; the table is as it was before the search."""

    def remove(self, victim: PodInfo, row: int) -> None:
        """Take ``victim`` (counted on ``row``) off the table."""

    def add(self, victim: PodInfo, row: int) -> None:
        """Count ``victim`` on ``row`` again."""

    def fits(self, row: int) -> Status:
        """Does the pod pass every Filter on ``row`` of the table as it is now?"""

    def restore(self, victims: Sequence[PodInfo], row: int) -> None:
        """Count ``victims`` on ``row`` again: the row's checks are over."""


def search_exact(
    table: NodeTable,
    pod: PodInfo,
    visit: Sequence[int],
    trial: Trial,
    budgets: Sequence[DisruptionBudget],
    wanted: int,
) -> Search:
    """Node by node with the whole filter chain (``trial.fits(row)`` on the current table)."""
    clean: list[Candidate] = []
    violating: list[Candidate] = []
    statuses: dict[int, Status] = {}
    for row in visit:
        trial.start(row)
        found = _victims_on_row(table, pod, row, trial, budgets)
        if isinstance(found, Status):
            statuses[row] = found
            continue
        target = clean if found.num_pdb_violations == 0 else violating
        if len(target) < wanted:
            target.append(found)
        if clean and len(clean) + len(violating) >= wanted:
            break
    return Search(clean + violating, statuses)


def exact_rows(
    table: NodeTable,
    pod: PodInfo,
    rows: Sequence[int],
    trial: Trial,
    budgets: Sequence[DisruptionBudget],
) -> dict[int, Candidate | Status]:
    """Each of ``rows``' answer by the whole filter chain, as :func:`search_exact` finds
    it (for the few nodes the vectorised search cannot follow; see its ``forced``)."""
    answers: dict[int, Candidate | Status] = {}
    for row in rows:
        trial.start(row)
        answers[row] = _victims_on_row(table, pod, row, trial, budgets)
    return answers


def _split_by_budget(
    ordered: Sequence[PodInfo], budgets: Sequence[DisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    allowed = [b.disruptions_allowed for b in budgets]
    violating: list[PodInfo] = []
    other: list[PodInfo] = []
    for victim in ordered:
        hit = False
        if victim.labels:
            for index, budget in enumerate(budgets):
                if budget.namespace != victim.namespace or budget.selects_nothing:
                    continue
                if victim.name in budget.disrupted_pods or not budget.selector.matches(
                    victim.labels
                ):
                    continue
                allowed[index] -= 1
                hit |= allowed[index] < 0
        (violating if hit else other).append(victim)
    return violating, other


def _victims_on_row(
    table: NodeTable, pod: PodInfo, row: int, trial: Trial, budgets: Sequence[DisruptionBudget]
) -> Candidate | Status:
    node = table.name_of(row)
    lower = [p.info for p in table.row_pods[row].values() if p.info.priority < pod.priority]
    if not lower:
        return Status.unresolvable(REASON_NO_VICTIMS)
    starts = {p.key: float(table.pod_columns.start[table.pod_columns.index[p.key]]) for p in lower}
    gone: list[PodInfo] = []
    try:
        for victim in lower:
            trial.remove(victim, row)
            gone.append(victim)
        status = trial.fits(row)
        if not status.ok:
            return status
        ordered = [lower[i] for i in importance_order(lower, [starts[p.key] for p in lower])]
        violating, other = _split_by_budget(ordered, budgets)
        victims: list[PodInfo] = []
        violations = 0
        for part, counts in ((violating, True), (other, False)):
            for candidate in part:
                trial.add(candidate, row)
                gone.remove(candidate)
                if trial.fits(row).ok:
                    continue
                trial.remove(candidate, row)
                gone.append(candidate)
                victims.append(candidate)
                violations += counts
        if not victims:
            return Status.error(f"expected at least one victim pod on node {node!r}")
        order = importance_order(victims, [starts[p.key] for p in victims])
        return Candidate(row, tuple(victims[i] for i in order), violations)
    finally:
        trial.restore(gone, row)


# --- choosing ----------------------------------------------------------------------------


def pick_one(candidates: Sequence[Candidate], starts: Callable[[PodInfo], float]) -> Candidate:
    """pickOneNodeForPreemption: the lexicographic best; the first one on a full tie."""
    if len(candidates) == 1:
        return candidates[0]
    violations = np.array([c.num_pdb_violations for c in candidates], dtype=np.int64)
    highest = np.array([max(p.priority for p in c.victims) for c in candidates], dtype=np.int64)
    total = np.array(
        [sum(p.priority + _PRIORITY_OFFSET for p in c.victims) for c in candidates], dtype=np.int64
    )
    count = np.array([len(c.victims) for c in candidates], dtype=np.int64)
    earliest = np.array(
        [
            min(starts(p) for p in c.victims if p.priority == top)
            for c, top in zip(candidates, highest.tolist(), strict=True)
        ],
        dtype=np.float64,
    )
    position = np.arange(len(candidates))
    best = np.lexsort((position, -earliest, count, total, highest, violations))[0]
    return candidates[int(best)]


@runtime_checkable
class CandidateSelector(Protocol):
    """A PostFilter plugin that preempts in two halves (DefaultPreemption does), so that
    preempting extenders can narrow its candidates between them, outside the cycle."""

    def find_candidates(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        statuses: Mapping[int, Status],
        framework: FilterRunner,
    ) -> PostFilterResult | list[Candidate]:
        """The candidates, or the final result when there are none."""
        ...

    def select_candidate(
        self, pod: PodInfo, table: NodeTable, candidates: Sequence[Candidate]
    ) -> PostFilterResult:
        """The nomination among ``candidates`` (not empty)."""
        ...
