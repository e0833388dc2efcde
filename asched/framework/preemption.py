"""Preemption's candidate search over the NodeTable.

Upstream: pkg/scheduler/framework/preemption/preemption.go, DryRunPreemption and
pickOneNodeForPreemption; SelectVictimsOnNode in
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go.

Two ways to find, per potential node, the fewest lower-priority victims that let the
preemptor fit, with the same answers:

* :func:`~asched.framework.preemption_resources.search_resources`, vectorised over
  every potential node at once (:mod:`asched.framework.preemption_resources`). It
  applies when only the resource-fit filter among the active filters depends on the
  pods of a node, which is the common case; the few nodes where a what-if moves a pod
  with volumes are answered by :func:`exact_rows` instead.
* :func:`search_exact`, for everything else (inter-pod affinity, spreading, host
  ports, an out-of-tree cross-row filter): node by node in visiting order, the victims
  are removed from the table and added back one at a time, with the profile's whole
  filter chain deciding. The table is restored exactly before it returns. The changes
  and the fit checks go through a :class:`Trial` (:mod:`asched.framework.preemption_trial`),
  which either runs PreFilter afresh for every check or once per preemptor, updated by
  the plugins' PreFilter hooks for each pod removed or added back.

Both visit the potential nodes from ``offset`` as upstream's dry run does and stop at
the same point (a candidate without PDB violations found and ``num_candidates``
candidates in all); :func:`pick_one` then applies pickOneNodeForPreemption's criteria.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

import numpy as np

from asched.cluster.budgets import DisruptionBudget
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework.status import Status

if TYPE_CHECKING:
    from asched.framework.cycle_state import CycleState
    from asched.framework.interface import FilterRunner, PostFilterResult

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


def importance_order(pods: Sequence[PodInfo], starts: Sequence[float]) -> list[int]:
    """Indices of ``pods`` most important first: higher priority, earlier start; stable."""
    return sorted(range(len(pods)), key=lambda i: (-pods[i].priority, starts[i]))


class Trial(Protocol):
    """How the exact search changes the table in a what-if and asks whether the pod fits.

    For each visited row: :meth:`start`, then any number of :meth:`remove` and :meth:`add`
    of pods counted on that row (each seen by the filters at once) and :meth:`fits`
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

    def restore(self, row: int) -> None:
        """The row's checks are over: every pod removed or added is back as it was."""


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
    try:
        for victim in lower:
            trial.remove(victim, row)
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
                if trial.fits(row).ok:
                    continue
                trial.remove(candidate, row)
                victims.append(candidate)
                violations += counts
        if not victims:
            return Status.error(f"expected at least one victim pod on node {node!r}")
        order = importance_order(victims, [starts[p.key] for p in victims])
        return Candidate(row, tuple(victims[i] for i in order), violations)
    finally:
        trial.restore(row)


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
