"""DefaultPreemption (PostFilter): evict lower-priority pods so a pod that fits nowhere fits.

Upstream: pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go and
pkg/scheduler/framework/preemption/preemption.go. In upstream order: eligibility
(``preemptionPolicy: Never``; a pod already nominated to a node where one of its victims
is still terminating waits); the potential nodes (Filter status exactly Unschedulable, in
the table's zone-interleaved order); the dry run from a random offset over
``max(n * minCandidateNodesPercentage / 100, minCandidateNodesAbsolute)`` candidates
(:mod:`asched.framework.preemption`, vectorised when only the resources of a node depend
on its pods, or its pods' volumes on the few nodes answered one by one, else node by node with PreFilter run once and followed by the plugins' hooks
where they allow it, :mod:`asched.framework.preemption_trial`); pickOneNodeForPreemption;
and the lower-priority nominations to the chosen node, which end.

The plugin decides; the scheduler acts (patches the victims' DisruptionTarget condition,
deletes them with their own grace period, emits Preempted events, sets the preemptor's
``status.nominatedNodeName``). Messages carry upstream's ``preemption: `` prefix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np

from asched.cluster.nominations import PODS_HELD
from asched.cluster.records import PodInfo
from asched.cluster.resources import PODS
from asched.cluster.table import NodeTable
from asched.config.args import IN_TREE_ARGS
from asched.config.types import DefaultPreemptionArgs
from asched.framework import diagnosis, pod_reads
from asched.framework.cycle_state import CycleState
from asched.framework.interface import (
    FilterPlugin,
    FilterRunner,
    Handle,
    PostFilterResult,
    PreFilterOutcome,
    ResourceFit,
)
from asched.framework.preemption import (
    Candidate,
    Search,
    candidate_count,
    exact_rows,
    pick_one,
    search_exact,
)
from asched.framework.preemption_resources import search_resources
from asched.framework.preemption_trial import FreshTrial, IncrementalTrial, trial_for
from asched.framework.resource_fit import ResourceNeed
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Code, Status

NAME: Final = "DefaultPreemption"
PREFIX: Final = "preemption: "
REASON_NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
NOT_ELIGIBLE_NEVER: Final = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING: Final = "not eligible due to a terminating pod on the nominated node."
NO_NODES: Final = "no nodes available"
_PORTS: Final = "NodePorts"


def _unschedulable(message: str, nominated: str | None = None) -> PostFilterResult:
    return PostFilterResult(Status.unschedulable(PREFIX + message, plugin=NAME), nominated)


class DefaultPreemption:
    name: Final = NAME

    def __init__(self, args: DefaultPreemptionArgs, seed: int | None = None) -> None:
        self._args = args
        self._rng = np.random.default_rng(seed)
        #: how the last search ran ("resources" or "exact"), for tests and explain
        self.last_search = ""
        #: use the vectorised search when it applies (False: always the exact one)
        self.vectorise = True
        #: the exact search's PreFilter: once per preemptor, kept up to date by the
        #: plugins' hooks, when they allow it (False: afresh for every fit check)
        self.incremental = True
        #: which trial the last exact search ran with ("incremental" or "fresh")
        self.last_trial = ""

    def eligible(
        self, pod: PodInfo, table: NodeTable, statuses: Mapping[int, Status]
    ) -> tuple[bool, str]:
        """Upstream's PodEligibleToPreemptOthers: ``(eligible, why not)``."""
        if pod.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nominated = table.nominations.node_of(pod.key) or pod.nominated_node_name
        row = table.row_of(nominated) if nominated else None
        if row is None:
            return True, ""
        status = statuses.get(row)
        if status is None or status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""
        for placed in table.row_pods[row].values():
            other = placed.info
            if other.priority < pod.priority and other.deleting and other.preempted:
                return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    def post_filter(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        statuses: Mapping[int, Status],
        framework: FilterRunner,
        *,
        offset: int | None = None,
    ) -> PostFilterResult:
        found = self.find_candidates(state, pod, table, statuses, framework, offset=offset)
        if isinstance(found, PostFilterResult):
            return found
        return self.select_candidate(pod, table, found)

    def find_candidates(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        statuses: Mapping[int, Status],
        framework: FilterRunner,
        *,
        offset: int | None = None,
    ) -> PostFilterResult | list[Candidate]:
        """Upstream's Preempt up to its candidates (eligibility, the dry run): the
        candidates, or the final result when there are none."""
        eligible, why = self.eligible(pod, table, statuses)
        if not eligible:
            return _unschedulable(why)
        order = [int(r) for r in table.order()]
        if not order:
            return PostFilterResult(Status.error(PREFIX + NO_NODES, plugin=NAME))
        potential = [
            r for r in order if (s := statuses.get(r)) is not None and s.code == Code.UNSCHEDULABLE
        ]
        search = Search([], {})
        if potential:
            start = int(self._rng.integers(len(potential))) if offset is None else offset
            start %= len(potential)
            visit = potential[start:] + potential[:start]
            wanted = candidate_count(
                len(potential),
                self._args.min_candidate_nodes_percentage,
                self._args.min_candidate_nodes_absolute,
            )
            search = self.search(state, pod, table, framework, visit, wanted)
        if search.candidates:
            return search.candidates
        errors = [s.message for s in search.statuses.values() if s.code == Code.ERROR]
        if errors:
            text = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            return PostFilterResult(Status.error(PREFIX + text, plugin=NAME))
        reasons = [
            reason
            for r in order
            for reason in (
                search.statuses[r].reasons if r in search.statuses else (REASON_NOT_HELPFUL,)
            )
        ]
        return _unschedulable(diagnosis.fit_error_message(len(order), reasons), "")

    def select_candidate(
        self, pod: PodInfo, table: NodeTable, candidates: Sequence[Candidate]
    ) -> PostFilterResult:
        """Upstream's SelectCandidate and what follows: the node to nominate, its victims,
        and the lower-priority nominations there that end. ``candidates`` is not empty
        (what the preempting extenders left of :meth:`find_candidates`'s)."""
        pods = table.pod_columns  # start times are parsed once, when a pod is counted
        best = pick_one(candidates, lambda p: float(pods.start[pods.index[p.key]]))
        node = table.name_of(best.row)
        cleared = tuple(
            p.key
            for p in table.nominations.on_node(node)
            if p.priority < pod.priority and p.key != pod.key
        )
        return PostFilterResult(
            Status.success(), node, best.victims, cleared, best.num_pdb_violations
        )

    def search(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        framework: FilterRunner,
        visit: list[int],
        wanted: int,
    ) -> Search:
        budgets = list(table.budgets.values())
        state = CycleState()  # complete PreFilter state even if the attempt stopped early
        outcome = framework.run_pre_filter(state, pod, table)
        active = framework.active_filters(state)
        fit = framework.active_resource_fit(state)
        cross = framework.cycle_filters(state)
        # cross-row filters the what-ifs cannot change, or change only where a pod with
        # volumes moves (:mod:`asched.framework.pod_reads`)
        moved_matter = bool(cross) and pod_reads.pods_matter(cross, state, pod, table)
        simple = (
            self.vectorise
            and outcome.status.ok
            and (not moved_matter or pod_reads.only_pod_volumes(cross))
            and (not pod.host_ports or _PORTS in state.skip_filter)
        )
        if not simple or fit is None:
            self.last_search = "exact"
            # ``state`` is the base the incremental trial copies per row: only read below
            trial = self._trial(framework, pod, table, state, outcome)
            return search_exact(table, pod, visit, trial, budgets, wanted)
        self.last_search = "resources"
        need = ResourceNeed.of(table, fit.resource_checks(pod, table))
        rows = np.asarray(visit, dtype=np.intp)
        # the volume filters' answers hold under every what-if except on the nodes where
        # a pod with volumes would be taken off or counted: those go node by node
        forced: dict[int, Candidate | Status] = {}
        if moved_matter:
            changing = _volume_what_ifs(pod, table, rows)
            if changing.size:
                self.last_search = "resources+exact"
                trial = self._trial(framework, pod, table, state, outcome)
                answers = exact_rows(table, pod, rows[changing].tolist(), trial, budgets)
                forced = {int(at): answers[int(rows[at])] for at in changing}
        others = [p for p in active if p is not fit]
        others_pass = framework.filter_mask(state, pod, table, rows, others)
        allowed = framework.allowed_mask(table, outcome)
        if allowed is not None:
            others_pass &= allowed[rows]
        reserved = _reserved(pod, table, rows, need)
        found, free_alone = search_resources(
            table, pod, need, rows, others_pass, reserved, budgets, wanted, forced
        )
        if not found.candidates:
            _explain_visited(
                state, pod, table, framework, active, fit, need, rows, free_alone, found
            )
        return found

    def _trial(
        self,
        framework: FilterRunner,
        pod: PodInfo,
        table: NodeTable,
        state: CycleState,
        outcome: PreFilterOutcome,
    ) -> FreshTrial | IncrementalTrial:
        trial = trial_for(framework, pod, table, state, outcome, incremental=self.incremental)
        self.last_trial = "incremental" if isinstance(trial, IncrementalTrial) else "fresh"
        return trial


def _volume_what_ifs(pod: PodInfo, table: NodeTable, rows: np.ndarray) -> np.ndarray:
    """Visiting positions (into ``rows``) of the nodes where a what-if moves a pod with
    volumes: a lower-priority pod with volumes on it (a victim to take off), or a pod of
    at least ``pod``'s priority with volumes nominated there and not counted yet (the
    nominated pass counts it). Elsewhere the volume filters answer as they do now."""
    pods = table.pod_columns
    size = pods.size
    movable = pods.alive[:size] & pods.has_volumes[:size] & (pods.priority[:size] < pod.priority)
    touched = np.zeros(table.size, dtype=np.bool_)
    touched[pods.node_row[:size][movable]] = True
    for node, nominated in table.nominations.blocking(pod).items():
        row = table.index.get(node)
        if row is not None and any(p.volumes and p.key not in table.pods for p in nominated):
            touched[row] = True
    changing: np.ndarray = np.flatnonzero(touched[rows])
    return changing


def _reserved(
    pod: PodInfo, table: NodeTable, rows: np.ndarray, need: ResourceNeed
) -> dict[int, np.ndarray]:
    """Per checked axis, what nominated pods of at least ``pod``'s priority hold per row."""
    held = table.nominations.held(pod)
    if not held:
        return {}
    position = np.full(table.size, -1, dtype=np.intp)
    position[rows] = np.arange(rows.size, dtype=np.intp)
    found = [
        (int(position[row]), amounts)
        for node, amounts in held.items()
        if (row := table.index.get(node)) is not None and position[row] >= 0
    ]
    out = {axis: np.zeros(rows.size, dtype=np.int64) for axis in need.axes}
    if not found:
        return out
    at = np.fromiter((where for where, _ in found), dtype=np.intp, count=len(found))
    for axis in need.axes:
        name = table.axes[axis]
        key = PODS_HELD if name == PODS else name
        out[axis][at] = np.fromiter((a.get(key, 0) for _, a in found), np.int64, len(found))
    return out


def _explain_visited(
    state: CycleState,
    pod: PodInfo,
    table: NodeTable,
    framework: FilterRunner,
    active: list[FilterPlugin],
    fit: ResourceFit,
    need: ResourceNeed,
    rows: np.ndarray,
    free_alone: dict[int, np.ndarray],
    found: Search,
) -> None:
    """Cold path: why each visited node is no candidate (the failure message needs it).

    The first failing filter decides, as in the dry run; the resource-fit filter's reasons
    come from the free amounts once every lower-priority pod is gone. Rows with the same
    reasons share one Status; only rows another filter rejects are explained one by one.
    """
    undecided = np.ones(rows.size, dtype=np.bool_)
    for at, row in enumerate(rows.tolist()):
        if row in found.statuses:
            undecided[at] = False
    for plugin in active:
        if not undecided.any():
            return
        if plugin is fit:
            codes = need.pattern(free_alone, rows.size)
            hit = undecided & (codes != 0)
            short = np.flatnonzero(hit)
            statuses = need.statuses(codes[short], fit.name)
            for where, status in zip(short.tolist(), statuses, strict=True):
                found.statuses[int(rows[where])] = status
        else:
            hit = undecided & ~framework.run_filter(plugin, state, pod, table, rows)
            for at in np.flatnonzero(hit).tolist():
                row = int(rows[at])
                found.statuses[row] = framework.explain_rejection(plugin, state, pod, table, row)
        undecided &= ~hit


def factory(args: object | None, handle: Handle | None) -> DefaultPreemption:
    return DefaultPreemption(
        args if isinstance(args, DefaultPreemptionArgs) else DefaultPreemptionArgs()
    )


SPEC: Final = declare(
    DefaultPreemption, api_version=API_VERSION, factory=factory, args=IN_TREE_ARGS[NAME]
)


__all__ = ["NAME", "Candidate", "DefaultPreemption", "SPEC", "factory"]
