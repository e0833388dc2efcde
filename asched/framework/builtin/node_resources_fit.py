"""NodeResourcesFit (PreFilter, Filter, PreScore, Score): requests must fit free capacity.

Filter (upstream: fitsRequest in noderesources/fit.go): ``pods + 1 <= allocatable pods``,
and for every resource the pod requests (> 0), ``request <= allocatable - requested``;
extended resources listed in ``ignoredResources`` / ``ignoredResourceGroups`` are not
checked. Reasons are reported in upstream order: pods, cpu, memory, ephemeral-storage,
then scalar resources (sorted by name; upstream's order there is Go map order). Score: the
configured strategy (LeastAllocated by default), weight 1, no normalization.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.resources import group_of, is_extended
from asched.cluster.table import NodeTable
from asched.config.args import IN_TREE_ARGS
from asched.config.types import NodeResourcesFitArgs
from asched.framework import resource_scoring as scoring
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.interface import (
    PRE_FILTER_SUCCESS,
    BoolMask,
    Handle,
    PreFilterResult,
    RowFilter,
    RowScore,
    ScoreArray,
)
from asched.framework.resource_fit import Check, ResourceNeed, resource_checks
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "NodeResourcesFit"
_CHECK_KEY: Final = f"{NAME}/prefilter"
_SCORE_KEY: Final = f"{NAME}/prescore"
#: At most this many pod classes keep their ResourceNeed (then the memo starts over).
_NEEDS_KEPT: Final = 1024


class NodeResourcesFit:
    """Declares :class:`~asched.framework.interface.ResourceFit` and
    :class:`~asched.framework.interface.ExplainsRows`; the arithmetic is
    :class:`~asched.framework.resource_fit.ResourceNeed`'s."""

    name: Final = NAME
    #: the cluster events that may undo its rejection (upstream's EventsToRegister)
    events: Final = frozenset(
        {ClusterEvent.NODE_ADD, ClusterEvent.NODE_ALLOCATABLE, ClusterEvent.ASSIGNED_POD_DELETE}
    )
    row_local: Final = True
    #: its PreFilter reads the pod and the table's axes only: no pod on a node changes it (no
    #: PreFilter hooks needed)
    pre_filter_reads_pods: Final = False
    normalizes: Final = False

    def sign(self, pod: PodInfo) -> Hashable:
        """Requests (the fit) and the non-zero scoring requests (the score)."""
        return tuple(sorted(pod.requests.items())), pod.nonzero_cpu, pod.nonzero_memory

    def __init__(self, args: NodeResourcesFitArgs) -> None:
        self._ignored = frozenset(args.ignored_resources)
        self._ignored_groups = frozenset(args.ignored_resource_groups)
        self._strategy = args.scoring_strategy
        #: the need per pod class: (its requests, the table's axes) -> ResourceNeed
        self._needs: dict[Hashable, ResourceNeed] = {}

    def _ignores(self, resource: str) -> bool:
        return is_extended(resource) and (
            resource in self._ignored or group_of(resource) in self._ignored_groups
        )

    def resource_checks(self, pod: PodInfo, table: NodeTable) -> tuple[Check, ...]:
        """The resources to compare, in reason order (cpu, memory, storage, sorted scalars)."""
        return resource_checks(pod, table, self._ignores)

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): the pod's requests and the table's resource axes."""
        return False

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        state.write(_CHECK_KEY, self._need_of(pod, table))
        return PRE_FILTER_SUCCESS

    def _need_of(self, pod: PodInfo, table: NodeTable) -> ResourceNeed:
        """The pod's :class:`ResourceNeed`, kept per pod class: it is a function of the
        pod's requests and the table's axes (names in column order) alone, and immutable."""
        key = (tuple(sorted(pod.requests.items())), tuple(table.axes))
        need = self._needs.get(key)
        if need is None:
            if len(self._needs) >= _NEEDS_KEPT:
                self._needs.clear()
            need = self._needs[key] = ResourceNeed.of(table, self.resource_checks(pod, table))
        return need

    def _need(self, state: CycleState, pod: PodInfo, table: NodeTable) -> ResourceNeed:
        found: ResourceNeed | None = state.get(_CHECK_KEY)
        return (
            found if found is not None else ResourceNeed.of(table, self.resource_checks(pod, table))
        )

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        return self._need(state, pod, table).fits(table.free, size_of(rows), rows)

    def row_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> RowFilter:
        """:meth:`filter` for one row."""
        need = self._need(state, pod, table)
        if need.impossible:
            return lambda row: False
        free = table.free
        wanted = tuple(zip(need.axes, need.requests, strict=True))
        return lambda row: all(free[axis][row] >= amount for axis, amount in wanted)

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        reasons = self._need(state, pod, table).reasons(table.free, row)
        return Status.unschedulable(*reasons, plugin=NAME) if reasons else Status.success()

    def explain_rows(
        self, state: CycleState, pod: PodInfo, table: NodeTable, rows: npt.NDArray[np.intp]
    ) -> list[Status]:
        """:meth:`explain` for many rejected rows at once: rows short of the same resources
        share one Status (a full cluster makes thousands of them on every failed attempt)."""
        need = self._need(state, pod, table)
        return need.statuses(need.pattern(table.free, len(rows), rows), NAME)

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

    def row_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> RowScore:
        """:meth:`score` for one row."""
        if state.get(_SCORE_KEY) is None:  # PreScore not enabled: compute it here, as upstream
            self.pre_score(state, pod, table)
        terms = state.read(_SCORE_KEY)
        kind = self._strategy.type
        if kind == "LeastAllocated":
            return lambda row: scoring.least_allocated_row(table, terms, row)
        if kind == "MostAllocated":
            return lambda row: scoring.most_allocated_row(table, terms, row)
        shape = self._strategy.shape
        return lambda row: scoring.requested_to_capacity_ratio_row(table, terms, row, shape)

    def normalize(self, state: CycleState, scores: ScoreArray, taking_part: BoolMask) -> ScoreArray:
        return scores


def factory(args: object | None, handle: Handle | None) -> NodeResourcesFit:
    return NodeResourcesFit(
        args if isinstance(args, NodeResourcesFitArgs) else NodeResourcesFitArgs()
    )


SPEC: Final = declare(
    NodeResourcesFit, api_version=API_VERSION, factory=factory, args=IN_TREE_ARGS[NAME]
)
