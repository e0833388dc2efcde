"""NodeResourcesFit (PreFilter, Filter, PreScore, Score): requests must fit free capacity.

Filter (section 6.2): ``pods + 1 <= allocatable pods``, and for every resource the pod
requests (> 0), ``request <= allocatable - requested``; extended resources listed in
``ignoredResources`` / ``ignoredResourceGroups`` are not checked. Reasons are reported
in upstream order: pods, cpu, memory, ephemeral-storage, then scalar resources (sorted
by name; upstream's order there is Go map order). Score (6.3): the configured strategy
(LeastAllocated by default), weight 1, no normalization.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, group_of, is_extended
from asched.cluster.table import NodeTable
from asched.config.types import NodeResourcesFitArgs, PluginArgs
from asched.framework import resource_scoring as scoring
from asched.framework.cycle_state import CycleState
from asched.framework.diagnosis import TOO_MANY_PODS
from asched.framework.events import ClusterEvent
from asched.framework.interface import BoolMask, Handle, PreFilterResult, ScoreArray
from asched.framework.status import Status

NAME: Final = "NodeResourcesFit"
_CHECK_KEY: Final = f"{NAME}/prefilter"
_SCORE_KEY: Final = f"{NAME}/prescore"
_FIRST: Final = (CPU, MEMORY, EPHEMERAL_STORAGE)


@dataclass(frozen=True, slots=True)
class Check:
    """One resource the filter compares: its column (None: no node has it) and the request."""

    resource: str
    axis: int | None
    request: int


class NodeResourcesFit:
    name: Final = NAME
    #: the cluster events that may undo its rejection (upstream's EventsToRegister)
    events: Final = frozenset(
        {ClusterEvent.NODE_ADD, ClusterEvent.NODE_ALLOCATABLE, ClusterEvent.ASSIGNED_POD_DELETE}
    )
    row_local: Final = True
    normalizes: Final = False

    def __init__(self, args: NodeResourcesFitArgs) -> None:
        self._ignored = frozenset(args.ignored_resources)
        self._ignored_groups = frozenset(args.ignored_resource_groups)
        self._strategy = args.scoring_strategy

    def _ignores(self, resource: str) -> bool:
        return is_extended(resource) and (
            resource in self._ignored or group_of(resource) in self._ignored_groups
        )

    def checks(self, pod: PodInfo, table: NodeTable) -> tuple[Check, ...]:
        """The resources to compare, in reason order (cpu, memory, storage, sorted scalars)."""
        wanted = [r for r in _FIRST if pod.requests.get(r, 0) > 0]
        wanted += sorted(
            r
            for r, amount in pod.requests.items()
            if r not in _FIRST and r != PODS and amount > 0 and not self._ignores(r)
        )
        return tuple(Check(r, table.axis_index.get(r), pod.requests[r]) for r in wanted)

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        state.write(_CHECK_KEY, self.checks(pod, table))
        return PreFilterResult(Status.success())

    def _checks(self, state: CycleState, pod: PodInfo, table: NodeTable) -> tuple[Check, ...]:
        found: tuple[Check, ...] | None = state.get(_CHECK_KEY)
        return found if found is not None else self.checks(pod, table)

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        fits: BoolMask = table.free[table.axis_index[PODS]][rows] >= 1
        for check in self._checks(state, pod, table):
            if check.axis is None:
                return np.zeros(size_of(rows), dtype=np.bool_)
            fits &= table.free[check.axis][rows] >= check.request
        return fits

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        reasons = []
        if table.free[table.axis_index[PODS]][row] < 1:
            reasons.append(TOO_MANY_PODS)
        reasons.extend(
            f"Insufficient {check.resource}"
            for check in self._checks(state, pod, table)
            if check.axis is None or table.free[check.axis][row] < check.request
        )
        return Status.unschedulable(*reasons, plugin=NAME) if reasons else Status.success()

    def explain_rows(
        self, state: CycleState, pod: PodInfo, table: NodeTable, rows: npt.NDArray[np.intp]
    ) -> list[Status]:
        """:meth:`explain` for many rejected rows at once: rows short of the same resources
        share one Status (a full cluster makes thousands of them on every failed attempt)."""
        checks = self._checks(state, pod, table)
        pattern = (table.free[table.axis_index[PODS]][rows] < 1).astype(np.int64)
        for bit, check in enumerate(checks, start=1):
            if check.axis is None:
                lacking = np.ones(len(rows), dtype=np.bool_)
            else:
                lacking = table.free[check.axis][rows] < check.request
            pattern |= lacking.astype(np.int64) << bit
        shared: dict[int, Status] = {}
        out = []
        for index, code in enumerate(pattern.tolist()):
            status = shared.get(code)
            if status is None:
                status = shared[code] = self.explain(state, pod, table, int(rows[index]))
            out.append(status)
        return out

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Status:
        terms = scoring.resource_terms(table, pod, self._strategy.resources, use_requested=False)
        state.write(_SCORE_KEY, terms)
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> ScoreArray:
        if state.get(_SCORE_KEY) is None:  # PreScore not enabled: compute it here, as upstream
            self.pre_score(state, pod, table)
        terms = state.read(_SCORE_KEY)
        n = size_of(rows)
        kind = self._strategy.type
        if kind == "LeastAllocated":
            return scoring.least_allocated(table, terms, rows, n)
        if kind == "MostAllocated":
            return scoring.most_allocated(table, terms, rows, n)
        return scoring.requested_to_capacity_ratio(table, terms, rows, n, self._strategy.shape)

    def normalize(self, state: CycleState, scores: ScoreArray, taking_part: BoolMask) -> ScoreArray:
        return scores


def factory(args: PluginArgs | None, handle: Handle | None) -> NodeResourcesFit:
    return NodeResourcesFit(
        args if isinstance(args, NodeResourcesFitArgs) else NodeResourcesFitArgs()
    )
