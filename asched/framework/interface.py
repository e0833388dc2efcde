"""What a plugin is, per extension point, and the array contract.

Upstream: pkg/scheduler/framework/interface.go.

A Filter returns a boolean mask over the selected rows; a Score returns raw ``int64``
scores over the selected rows; NormalizeScore maps raw scores of the rows taking part
to 0..MAX_SCORE. ``rows`` is a :data:`~asched.cluster.columns.Rows` selection: the
runtime passes ``table.rows`` (all rows, no copy) or an index array of the rows that
changed since a cached result. Plugins never mutate the table and never loop over rows
in Python; reasons for a rejection are computed on the cold path (``explain``).

``row_local`` declares that a plugin's answer for a row depends only on that row and
the pod (and on the table's structure, tracked by ``table.epoch``), which lets the
runtime reuse results across pods of the same shape and recompute only changed rows.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Final, Protocol, TypeAlias, runtime_checkable

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.hosts import GangHost, VolumeHost
from asched.framework.resource_fit import Check
from asched.framework.status import Status

MAX_SCORE: Final = 100
MIN_SCORE: Final = 0

BoolMask: TypeAlias = npt.NDArray[np.bool_]
"""Shape ``(n_selected_rows,)``: True where the row passes."""
ScoreArray: TypeAlias = npt.NDArray[np.int64]
"""Shape ``(n_selected_rows,)``: one score per row."""


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """A PreFilter outcome; ``node_names`` (when not None) restricts the candidate nodes."""

    status: Status
    node_names: Set[str] | None = None


#: The two commonest PreFilter answers, shared (a result is immutable): one less object per
#: plugin per decision.
PRE_FILTER_SUCCESS: Final = PreFilterResult(Status.success())
PRE_FILTER_SKIP: Final = PreFilterResult(Status.skip())


class Plugin(Protocol):
    @property
    def name(self) -> str: ...


@runtime_checkable
class EnqueueExtensions(Protocol):
    """A plugin that rejects pods declares the cluster events that may turn its rejection
    into a fit (upstream's ``EventsToRegister``); a pod it rejected is moved back to the
    queue only by one of them (or by its own update, or the 5-minute flush)."""

    @property
    def events(self) -> frozenset[ClusterEvent]: ...


QueueingHint: TypeAlias = "Callable[[ClusterEvent, PodInfo, object], bool]"
"""``(event, pod, changed) -> may it help`` (:meth:`QueueingHints.queueing_hint`)."""


@runtime_checkable
class QueueingHints(Protocol):
    """A plugin's queueing hint (upstream's QueueingHintFn): for an event it declared,
    whether it may make a pod this plugin rejected schedulable. False leaves the pod
    parked; a plugin without a hint, or a hint that raises, moves it."""

    def queueing_hint(self, event: ClusterEvent, pod: PodInfo, changed: object) -> bool:
        """``changed``: the new NodeInfo of a node event, the PodInfo of a pod event."""


class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        """Prepare per-pod state; Skip means this plugin's Filter does not run."""


@runtime_checkable
class PreFilterExtensions(Plugin, Protocol):
    """A PreFilter whose state follows one pod added to or removed from one row (upstream's
    PreFilterExtensions ``AddPod``/``RemovePod``), so that preemption's exact search runs
    PreFilter once per preemptor instead of once per what-if.

    Each hook is called after the table changed (``added`` is counted on ``row``, or
    ``removed`` no longer is), with the state the plugin's PreFilter wrote for ``pod``
    (possibly nothing, when it skipped) and updated by earlier hooks, on a copy the caller
    owns (:func:`~asched.framework.cycle_state.copy_state`). It must leave the state such
    that the plugin's Filter and ``explain`` answer, on every row, what they would after a
    fresh PreFilter on the table as it now is, and return what that PreFilter would:
    Success, or Skip (the runtime updates the skip set). Anything else, or an exception,
    makes the caller run PreFilter afresh instead.

    A hooked plugin's PreFilter may fail, or restrict the node names, only on the pod and
    the table's nodes and catalogues, never on the pods counted on the nodes.
    """

    def pre_filter_add_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, added: PodInfo, row: int
    ) -> Status:
        """``added`` now counts on ``row``: update the state, Success or Skip."""

    def pre_filter_remove_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, removed: PodInfo, row: int
    ) -> Status:
        """``removed`` no longer counts on ``row``: update the state, Success or Skip."""


class FollowsPods:
    """:class:`PreFilterExtensions` from one method: a plugin (in-tree) implements
    :meth:`follow_pod`, ``sign`` +1 for a pod added to ``row``, -1 for one removed."""

    def pre_filter_add_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, added: PodInfo, row: int
    ) -> Status:
        return self.follow_pod(state, pod, table, added, row, +1)

    def pre_filter_remove_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, removed: PodInfo, row: int
    ) -> Status:
        return self.follow_pod(state, pod, table, removed, row, -1)

    def follow_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, other: PodInfo, row: int, sign: int
    ) -> Status:
        """The state follows ``other`` counted on ``row`` (``sign`` +1) or no longer (-1)."""
        raise NotImplementedError


#: The attribute a PreFilter plugin sets to False when its PreFilter (its status, node
#: names, Skip and state) never depends on the pods counted on the nodes: a pod added or
#: removed leaves it as it was, so it needs no :class:`PreFilterExtensions`. Unset means
#: it may depend on them.
READS_PODS: Final = "pre_filter_reads_pods"

#: The attribute a Filter plugin that is not ``row_local`` sets to True when its answer
#: for a row depends on the pods in the cluster only through their volumes
#: (``PodInfo.volumes``: claims, disks, attachments), as the volume plugins' do: taking
#: off or adding pods without volumes leaves its answer as it was. Preemption's
#: vectorised search then evaluates it once per node instead of once per what-if. Unset
#: means it may read anything of the pods.
READS_ONLY_POD_VOLUMES: Final = "filter_reads_only_pod_volumes"

#: The optional method ``filter_pods_matter(state, pod, table) -> bool`` of a Filter that
#: is not ``row_local``: False when, for this pod (its PreFilter having written
#: ``state``), no pod counted on or taken off any node changes the Filter's answer on
#: any row (VolumeZone never reads pods; NodeVolumeLimits does only for a driver some
#: node limits). The nominated-pods pass and preemption's what-ifs then need not ask it
#: again. Unset means pods may matter.
PODS_MATTER: Final = "filter_pods_matter"


class FilterPlugin(Plugin, Protocol):
    row_local: bool

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        """True for every selected row that can host ``pod``. Must not mutate ``table``."""

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        """Cold path: the rejection status for one row this plugin's filter rejected."""


@runtime_checkable
class SignPlugin(Protocol):
    """A row-local plugin's part of the pod's scheduling signature (upstream's SignPlugin).

    ``sign`` returns a hashable fragment holding everything of the pod that its row-local
    Filter and Score read (two pods with equal fragments get equal answers on every row),
    or None when it cannot tell. Pods whose fragments are all equal share cached rows
    (:mod:`asched.engine.equivalence`); a row-local plugin that does not sign, or a
    None, makes the pod unbatchable: it is computed afresh, never answered wrongly.
    """

    def sign(self, pod: PodInfo) -> Hashable | None: ...


@runtime_checkable
class FiltersCandidates(Protocol):
    """A Filter that needs to answer only on the rows still in play (the per-node form,
    :class:`~asched.framework.per_node.PerNode`): rows outside ``candidates`` may get any
    answer, since other filters already decided them."""

    def filter_candidates(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        rows: Rows,
        candidates: BoolMask,
    ) -> BoolMask: ...


RowFilter: TypeAlias = "Callable[[int], bool]"
"""``row -> passes``: a row-local Filter's answer for one row (its scalar form)."""
RowScore: TypeAlias = "Callable[[int], int]"
"""``row -> raw score``: a row-local Score's answer for one row (its scalar form)."""


@runtime_checkable
class FiltersRow(Protocol):
    """A row-local Filter's optional scalar form, for the few rows a cached class
    recomputes after a decision (one NumPy call costs more than a row's Python).

    ``row_filter`` returns, for this cycle, a function answering exactly what ``filter``
    answers on a live row, or None when it has none for this pod. It is asked only
    about live rows.
    """

    def row_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> RowFilter | None:
        """The per-row answer of this cycle, or None."""


@runtime_checkable
class ScoresRow(Protocol):
    """A row-local Score's optional scalar form (see :class:`FiltersRow`): the function
    ``row_score`` returns gives exactly the raw score ``score`` gives on any row, live or
    not (Python ints, the same formulas), or None when it has none for this pod."""

    def row_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> RowScore | None:
        """The per-row raw score of this cycle, or None."""


@runtime_checkable
class ExplainsRows(Protocol):
    """A Filter plugin's optional vectorised explain (the cold path of a failed attempt)."""

    def explain_rows(
        self, state: CycleState, pod: PodInfo, table: NodeTable, rows: npt.NDArray[np.intp]
    ) -> list[Status]:
        """``explain`` for each of ``rows`` (all rejected by this plugin's filter), in order."""


@runtime_checkable
class ResourceFit(FilterPlugin, Protocol):
    """A Filter whose verdict on a row is exactly NodeResourcesFit's (upstream:
    fitsRequest): room for one more pod and, per check, ``request <= free`` on the check's
    axis, with :class:`~asched.framework.resource_fit.ResourceNeed`'s reasons.

    Declaring it lets the engine compute the verdict from free amounts it adjusts itself
    (what nominated pods hold; what preemption's victims free) without touching the
    table; the framework uses the first enabled Filter plugin that declares it.
    """

    def resource_checks(self, pod: PodInfo, table: NodeTable) -> tuple[Check, ...]:
        """The resources this filter compares for ``pod``, in reason order (not ``pods``)."""


class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Status:
        """Prepare scoring; Skip means this plugin's Score does not run for the pod."""


class ScorePlugin(Plugin, Protocol):
    row_local: bool
    normalizes: bool

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> ScoreArray:
        """Raw ``int64`` scores for the selected rows."""

    def normalize(self, state: CycleState, scores: ScoreArray, taking_part: BoolMask) -> ScoreArray:
        """Map raw scores (all rows) to 0..MAX_SCORE using only rows ``taking_part``."""


class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        """Idempotent; may run even when ``reserve`` did not (upstream's contract)."""


class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: PodInfo, node: str) -> tuple[Status, float]:
        """Success, Wait with a timeout in seconds, or a rejection."""


class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status: ...


class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        """Bind, or Skip to let the next Bind plugin do it."""


class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: PodInfo, node: str) -> None: ...


class QueueSortPlugin(Plugin, Protocol):
    def sort_key(self, pod: PodInfo, timestamp: float) -> tuple[float, ...]:
        """Smaller keys pop first."""


class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: PodInfo) -> Status: ...


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """What a PostFilter decided for a pod that fits nowhere.

    ``nominated_node``: the node to nominate the pod to; ``""`` clears its nomination;
    None leaves it as it is. ``victims``: pods to evict, most important first.
    ``cleared``: keys of lower-priority pods whose nomination to that node ends.
    """

    status: Status
    nominated_node: str | None = None
    victims: tuple[PodInfo, ...] = ()
    cleared: tuple[str, ...] = ()
    num_pdb_violations: int = 0


@dataclass(frozen=True, slots=True)
class PreFilterOutcome:
    """The combined PreFilter result: a status and the allowed node names (None = all)."""

    status: Status
    allowed: frozenset[str] | None = None
    restricted_by: tuple[str, ...] = ()

    @property
    def absent_reason(self) -> str:
        """The reason recorded for nodes outside ``allowed`` (upstream:
        pkg/scheduler/schedule_one.go, findNodesThatFitPod)."""
        if len(self.restricted_by) == 1:
            return f"node(s) didn't satisfy plugin {self.restricted_by[0]}"
        return f"node(s) didn't satisfy plugin(s) [{' '.join(self.restricted_by)}] simultaneously"


class FilterRunner(Protocol):
    """What a PostFilter may ask of its framework: the profile's filters, run on demand."""

    def run_pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> PreFilterOutcome: ...

    def allowed_mask(self, table: NodeTable, outcome: PreFilterOutcome) -> BoolMask | None: ...

    def active_filters(self, state: CycleState) -> list[FilterPlugin]: ...

    def active_resource_fit(self, state: CycleState) -> ResourceFit | None: ...

    def cycle_filters(self, state: CycleState) -> list[FilterPlugin]: ...

    def run_filter(
        self, plugin: FilterPlugin, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows
    ) -> BoolMask: ...

    def explain_rejection(
        self, plugin: FilterPlugin, state: CycleState, pod: PodInfo, table: NodeTable, row: int
    ) -> Status: ...

    def first_failure(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        row: int,
        plugins: Sequence[FilterPlugin] | None = None,
    ) -> Status: ...

    def filter_mask(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        rows: Rows,
        plugins: list[FilterPlugin],
    ) -> BoolMask: ...


@runtime_checkable
class PreFilterExtensionRunner(Protocol):
    """What preemption's exact search asks of a framework that runs the PreFilter hooks
    (:class:`PreFilterExtensions`); a :class:`FilterRunner` without them is served by
    running PreFilter afresh for every what-if."""

    def pre_filter_extensible(self) -> bool:
        """Whether every PreFilter that reads the pods on the nodes has hooks."""
        ...

    def run_pre_filter_add_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, added: PodInfo, row: int
    ) -> Status:
        """Every hooked PreFilter's ``pre_filter_add_pod``; not ok: run PreFilter afresh."""
        ...

    def run_pre_filter_remove_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, removed: PodInfo, row: int
    ) -> Status:
        """Every hooked PreFilter's ``pre_filter_remove_pod``; not ok: run it afresh."""
        ...


class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        statuses: Mapping[int, Status],
        framework: FilterRunner,
    ) -> PostFilterResult:
        """Try to make the pod schedulable (preemption).

        ``statuses`` holds every live row's Filter status from the failed attempt;
        ``framework`` runs the profile's filters for what-if questions.
        """


class Handle(Protocol):
    """What plugins may use from the scheduler that runs them: the API binder (for
    DefaultBinder) and the typed hosts of :mod:`asched.framework.hosts` (None where there
    is no live scheduler)."""

    async def bind(self, pod: PodInfo, node: str) -> Status: ...

    @property
    def gang_host(self) -> GangHost | None:
        """The gang engine (Coscheduling's host) when a profile enables Coscheduling."""

    @property
    def volume_host(self) -> VolumeHost | None:
        """The API writes and watch view VolumeBinding's PreBind needs."""
