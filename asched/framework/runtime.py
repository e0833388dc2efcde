"""The framework runtime: builds a profile's plugins and runs its extension points.

It enforces the array contract (docs/plugins.md, "The extension points") on every call: a
Filter must return ``bool`` of the selected rows' shape, a Score ``int64`` of that shape,
and a normalized score must lie in ``[0, MAX_SCORE]`` on the rows taking part. A violation
raises :class:`~asched.errors.PluginContractError`; these checks are O(n) and always on.

PreFilter follows upstream's RunPreFilterPlugins
(pkg/scheduler/framework/runtime/framework.go): Skip disables the plugin's Filter for the
pod; UnschedulableAndUnresolvable stops at once; Unschedulable is remembered while the
others still run; node-name results are intersected.

Every extension point runs here, the decision's (PreFilter, Filter, PreScore, Score,
driven by :class:`~asched.engine.algorithm.Algorithm`) and the rest: PreEnqueue,
PostFilter, Reserve and Unreserve, Permit, PreBind, Bind and PostBind. Each answer is
tagged with its plugin and each exception contained as an Error status by one helper
(:func:`asched.framework.contain.failed`, called from an inline ``try``, which costs
nothing until something raises), and each point is timed through :attr:`Framework.observe`
(``asched_framework_extension_point_duration_seconds``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Final, cast

import numpy as np
import numpy.typing as npt

from asched import metrics
from asched.cluster.bounds import OUT_OF_RANGE_PLUGIN
from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import Profile
from asched.errors import PluginContractError
from asched.framework.contain import PluginFailure, explained, explained_rows, failed, tagged
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.interface import (
    MAX_SCORE,
    READS_PODS,
    BindPlugin,
    BoolMask,
    EnqueueExtensions,
    ExplainsRows,
    FilterPlugin,
    FiltersCandidates,
    FiltersRow,
    Handle,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterOutcome,
    PreFilterPlugin,
    PreScorePlugin,
    QueueingHint,
    QueueingHints,
    QueueSortPlugin,
    ReservePlugin,
    ResourceFit,
    ScoreArray,
    ScorePlugin,
    ScoresRow,
    SignPlugin,
)
from asched.framework.pre_state import PreStateScope
from asched.framework.registry import Registry, installed
from asched.framework.selectors import name_in
from asched.framework.status import Code, Status

_Scores = list[tuple[ScorePlugin, int]]
_Hook = Callable[[CycleState, PodInfo, NodeTable, PodInfo, int], Status]
#: At most this many skip sets keep their split plugin lists (a skip set is a subset of
#: the profile's plugins, so a handful occur; the bound only guards memory).
_SKIP_SETS: Final = 256


class Framework:
    """One profile's plugins, instantiated once and shared across extension points."""

    def __init__(
        self,
        profile: Profile,
        *,
        handle: Handle | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.profile = profile
        resolved = profile.resolved
        specs = installed() if registry is None else registry
        self.plugins: dict[str, Any] = {
            name: specs[name](profile.args(name), handle) for name in resolved.all_names()
        }
        #: a plugin of the profile declares ``reads_annotations``: pods and nodes must be
        #: decoded with their annotations
        self.reads_annotations = any(specs[name].reads_annotations for name in self.plugins)
        get = self.plugins.__getitem__
        self.pre_enqueue = [cast(PreEnqueuePlugin, get(n)) for n in resolved.pre_enqueue]
        self.queue_sort = [cast(QueueSortPlugin, get(n)) for n in resolved.queue_sort]
        self.pre_filter = [cast(PreFilterPlugin, get(n)) for n in resolved.pre_filter]
        self.filter = [cast(FilterPlugin, get(n)) for n in resolved.filter]
        self.post_filter = [cast(PostFilterPlugin, get(n)) for n in resolved.post_filter]
        self.pre_score = [cast(PreScorePlugin, get(n)) for n in resolved.pre_score]
        self.score = [(cast(ScorePlugin, get(n)), w) for n, w in resolved.score]
        self.reserve = [cast(ReservePlugin, get(n)) for n in resolved.reserve]
        self.permit = [cast(PermitPlugin, get(n)) for n in resolved.permit]
        self.pre_bind = [cast(PreBindPlugin, get(n)) for n in resolved.pre_bind]
        self.bind = [cast(BindPlugin, get(n)) for n in resolved.bind]
        self.post_bind = [cast(PostBindPlugin, get(n)) for n in resolved.post_bind]
        self.weights: dict[str, int] = dict(resolved.score)
        #: plugin name -> the cluster events that may undo its rejection (its declaration)
        self.interests: dict[str, frozenset[ClusterEvent]] = {
            name: plugin.events
            for name, plugin in self.plugins.items()
            if isinstance(plugin, EnqueueExtensions)
        }
        #: plugin name -> its queueing hint (declared with its events)
        self.hints: dict[str, QueueingHint] = {
            name: plugin.queueing_hint
            for name, plugin in self.plugins.items()
            if isinstance(plugin, QueueingHints)
        }
        #: Filter plugins that answer only on the rows still in play (the per-node form)
        self._candidate_filters: dict[str, FiltersCandidates] = {
            p.name: p for p in self.filter if isinstance(p, FiltersCandidates)
        }
        #: the signers of the pod's scheduling signature: every row-local Filter and Score
        #: plugin's ``sign``, or None when one of them does not sign (no pod is batched)
        local: dict[str, object] = {p.name: p for p in self.filter if p.row_local}
        local.update((p.name, p) for p, _ in self.score if p.row_local)
        self._signers: list[tuple[str, Callable[[PodInfo], Hashable | None]]] | None = (
            [(name, p.sign) for name, p in local.items() if isinstance(p, SignPlugin)]
            if all(isinstance(p, SignPlugin) for p in local.values())
            else None
        )
        #: the row-local plugins' scalar forms (:mod:`asched.engine.row_recompute`)
        self.row_filters: dict[str, FiltersRow] = {
            p.name: p for p in self.filter if p.row_local and isinstance(p, FiltersRow)
        }
        self.row_scores: dict[str, ScoresRow] = {
            p.name: p for p, _ in self.score if p.row_local and isinstance(p, ScoresRow)
        }
        #: the first Filter plugin declaring the resource-fit capability, if any
        self.resource_fit: ResourceFit | None = next(
            (p for p in self.filter if isinstance(p, ResourceFit)), None
        )
        #: the PreFilter plugins with hooks (:class:`PreFilterExtensions`)
        hooked = [p for p in self.pre_filter if isinstance(p, PreFilterExtensions)]
        #: every other PreFilter declares it never reads the pods (:meth:`pre_filter_extensible`)
        self._extensible = all(
            getattr(p, READS_PODS, True) is False for p in self.pre_filter if p not in hooked
        )
        #: each PreFilter and PreScore plugin's word on what it reads
        #: (:mod:`asched.framework.pre_state`); None when one has none: never reused
        scoped = list(dict.fromkeys([*self.pre_filter, *self.pre_score]))
        self._pre_state_scopes: list[Callable[[CycleState, PodInfo], bool]] | None = (
            [p.pre_state_follows_pods for p in scoped]  # type: ignore[attr-defined]
            if all(isinstance(p, PreStateScope) for p in scoped)
            else None
        )
        #: ``(name, hook)`` per hooked plugin, bound once (a search calls them per change)
        self._add_hooks: list[tuple[str, _Hook]] = [(p.name, p.pre_filter_add_pod) for p in hooked]
        self._remove_hooks: list[tuple[str, _Hook]] = [
            (p.name, p.pre_filter_remove_pod) for p in hooked
        ]
        #: the plugin lists per skip set (:meth:`_filters_for`, :meth:`_scores_for`)
        self._filter_lists: dict[
            frozenset[str], tuple[list[FilterPlugin], list[FilterPlugin], list[FilterPlugin]]
        ] = {}
        self._score_lists: dict[frozenset[str], tuple[_Scores, _Scores, _Scores]] = {}
        #: ``observe(extension_point, status, seconds)`` for metrics; None = not timed.
        self.observe: Callable[[str, str, float], None] | None = None

    def timed(self, point: str, status: Status, started: float) -> None:
        """Record one run of ``point`` that began at ``started`` (``perf_counter``)."""
        if self.observe is not None:
            self.observe(point, status.code.upstream_name, time.perf_counter() - started)

    @property
    def name(self) -> str:
        return self.profile.scheduler_name

    def signature(self, state: CycleState, pod: PodInfo) -> Hashable | None:
        """The pod's scheduling signature for this cycle (which PreFilter and PreScore
        skips included), or None when the pod is unbatchable (an unsigned row-local
        plugin, or a None fragment)."""
        if self._signers is None:
            return None
        fragments: list[Hashable] = []
        for name, sign in self._signers:
            try:
                fragment = sign(pod)
            except Exception as exc:
                raise PluginFailure("Sign", name, exc) from exc
            if fragment is None:
                return None
            fragments.append(fragment)
        return tuple(fragments), frozenset(state.skip_filter), frozenset(state.skip_score)

    def run_pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterOutcome:
        """PreFilter in profile order, after the pod-level range gate: a pod whose requests
        are beyond what asched schedules (:mod:`asched.cluster.bounds`) is rejected
        everywhere before any plugin sees its clamped amounts."""
        if pod.out_of_range:
            return PreFilterOutcome(
                Status.unresolvable(pod.out_of_range, plugin=OUT_OF_RANGE_PLUGIN)
            )
        remembered: Status | None = None
        allowed: frozenset[str] | None = None
        restricted_by: list[str] = []
        for plugin in self.pre_filter:
            try:  # inline: a try costs nothing until it raises (this runs every decision)
                result = plugin.pre_filter(state, pod, table)
            except Exception as exc:
                return PreFilterOutcome(failed(pod, "PreFilter", exc, plugin.name))
            status = result.status
            if status.code == Code.SKIP:
                state.skip_filter.add(plugin.name)
                continue
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return PreFilterOutcome(status.with_plugin(plugin.name))
            if status.code == Code.UNSCHEDULABLE:
                remembered = status.with_plugin(plugin.name)
            elif not status.ok:
                return PreFilterOutcome(Status(Code.ERROR, status.reasons, plugin.name))
            if result.node_names is not None:
                names = frozenset(result.node_names)
                allowed = names if allowed is None else allowed & names
                restricted_by.append(plugin.name)
                if not allowed:
                    outcome = PreFilterOutcome(Status(), frozenset(), tuple(restricted_by))
                    reason = outcome.absent_reason
                    return PreFilterOutcome(Status.unresolvable(reason, plugin=plugin.name))
        if remembered is not None:
            return PreFilterOutcome(remembered)
        return PreFilterOutcome(Status.success(), allowed, tuple(restricted_by))

    def pre_state_reusable(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether ``state`` (as PreFilter and PreScore left it for ``pod``) may stand for
        a fresh run while the table's ``shared_generation`` and ``epoch`` hold: every
        PreFilter and PreScore plugin says its answers for ``pod`` do not follow the
        plain pods on the nodes (:mod:`asched.framework.pre_state`)."""
        scopes = self._pre_state_scopes
        if scopes is None:
            return False
        try:
            return not any(follows(state, pod) for follows in scopes)
        except Exception:  # a plugin's word that cannot be had: run them afresh
            return False

    def pre_filter_extensible(self) -> bool:
        """Whether every PreFilter plugin either has hooks (:class:`PreFilterExtensions`)
        or declares that it never reads the pods on the nodes (:data:`READS_PODS`)."""
        return self._extensible

    def run_pre_filter_add_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, added: PodInfo, row: int
    ) -> Status:
        """Upstream's RunPreFilterExtensionAddPod, every hooked plugin (skipped ones too:
        a pod added may end their Skip), keeping the skip set; the first answer neither
        Success nor Skip (an exception: Error) stops it and is returned."""
        return self._run_hooks(
            self._add_hooks, "PreFilterExtensionAddPod", state, pod, table, added, row
        )

    def run_pre_filter_remove_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, removed: PodInfo, row: int
    ) -> Status:
        """Upstream's RunPreFilterExtensionRemovePod; as :meth:`run_pre_filter_add_pod`."""
        return self._run_hooks(
            self._remove_hooks, "PreFilterExtensionRemovePod", state, pod, table, removed, row
        )

    @staticmethod
    def _run_hooks(
        hooks: list[tuple[str, _Hook]],
        point: str,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        changed: PodInfo,
        row: int,
    ) -> Status:
        skipped = state.skip_filter
        for name, hook in hooks:
            try:
                status = hook(state, pod, table, changed, row)
            except Exception as exc:
                return failed(pod, point, exc, name)
            code = status.code
            if code == Code.SKIP:
                skipped.add(name)
            elif code == Code.SUCCESS:
                skipped.discard(name)
            else:
                return status.with_plugin(name)
        return Status.success()

    def allowed_mask(self, table: NodeTable, outcome: PreFilterOutcome) -> BoolMask | None:
        """Rows a PreFilter node-name result leaves in play, or None for all."""
        if outcome.allowed is None:
            return None
        return name_in(table, tuple(outcome.allowed), table.rows)

    def _filters_for(
        self, state: CycleState
    ) -> tuple[list[FilterPlugin], list[FilterPlugin], list[FilterPlugin]]:
        """(active, row-local, cross-row) Filter plugins for the cycle's PreFilter skips:
        a few skip sets recur, so each is split once (the public methods hand out copies)."""
        key = frozenset(state.skip_filter)
        found = self._filter_lists.get(key)
        if found is None:
            active = [p for p in self.filter if p.name not in key]
            found = (
                active,
                [p for p in active if p.row_local],
                [p for p in active if not p.row_local],
            )
            if len(self._filter_lists) < _SKIP_SETS:
                self._filter_lists[key] = found
        return found

    def active_filters(self, state: CycleState) -> list[FilterPlugin]:
        return list(self._filters_for(state)[0])

    def active_resource_fit(self, state: CycleState) -> ResourceFit | None:
        """:attr:`resource_fit`, unless its PreFilter skipped its Filter for this pod."""
        fit = self.resource_fit
        return None if fit is None or fit.name in state.skip_filter else fit

    def local_filters(self, state: CycleState) -> list[FilterPlugin]:
        """Active filters whose answer for a row depends on that row only (cacheable)."""
        return list(self._filters_for(state)[1])

    def cycle_filters(self, state: CycleState) -> list[FilterPlugin]:
        """Active filters that look across rows (computed afresh every cycle)."""
        return list(self._filters_for(state)[2])

    def run_filter(
        self,
        plugin: FilterPlugin,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        rows: Rows,
        candidates: BoolMask | None = None,
    ) -> BoolMask:
        """``plugin``'s mask over ``rows``, checked. ``candidates`` (over ``rows``): the rows
        still in play; a plugin that only answers there (the per-node form) is asked only
        about them, any other plugin about every row."""
        try:
            narrow = self._candidate_filters.get(plugin.name)
            if candidates is not None and narrow is not None:
                mask = narrow.filter_candidates(state, pod, table, rows, candidates)
            else:
                mask = plugin.filter(state, pod, table, rows)
        except Exception as exc:
            raise PluginFailure("Filter", plugin.name, exc) from exc
        if mask.dtype != np.bool_ or mask.shape != (size_of(rows),):
            raise PluginContractError(
                plugin.name,
                f"returned a {mask.dtype} mask of shape {mask.shape}, "
                f"expected bool of shape ({size_of(rows)},)",
            )
        return mask

    def filter_mask(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        rows: Rows,
        plugins: list[FilterPlugin],
        start: BoolMask | None = None,
    ) -> BoolMask:
        """Live rows among ``rows`` (and in ``start``, when given) that pass every plugin
        in ``plugins``."""
        passing: BoolMask = table.alive[rows] if start is None else table.alive[rows] & start
        if start is None:
            passing = passing.copy()
        for plugin in plugins:
            passing &= self.run_filter(plugin, state, pod, table, rows, passing)
        return passing

    def explain_rejection(
        self, plugin: FilterPlugin, state: CycleState, pod: PodInfo, table: NodeTable, row: int
    ) -> Status:
        """Why ``plugin`` rejects row ``row``: its ``explain``, checked and tagged with its
        name. A plugin that raises is a :class:`PluginFailure` naming it (the decision's
        guard reports it as that plugin's error, not the caller's)."""
        try:
            answer = plugin.explain(state, pod, table, row)
        except Exception as exc:
            raise PluginFailure("Filter", plugin.name, exc) from exc
        return explained(plugin.name, answer)

    def first_failure(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        row: int,
        plugins: Sequence[FilterPlugin] | None = None,
    ) -> Status:
        """The one rule for "which filter rejects row ``row``, and why": the first of
        ``plugins`` (default: the active filters, in order) that rejects it, explained
        (:meth:`explain_rejection`); success when none does."""
        selected = np.array([row], dtype=np.intp)
        for plugin in self.active_filters(state) if plugins is None else plugins:
            if not self.run_filter(plugin, state, pod, table, selected)[0]:
                return self.explain_rejection(plugin, state, pod, table, row)
        return Status.success()

    def first_failures(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        outcome: PreFilterOutcome,
        within: BoolMask | None = None,
    ) -> dict[int, Status]:
        """Cold path: for every live row that fails, the first failing plugin's status.

        ``within`` (bool, ``(table.size,)``): only these rows (what a sampled decision
        examined); the others are not explained."""
        live = table.alive[table.rows].copy()
        if within is not None:
            live &= within
        failures: dict[int, Status] = {}
        allowed = self.allowed_mask(table, outcome)
        if allowed is not None:
            absent = Status.unresolvable(outcome.absent_reason, plugin=outcome.restricted_by[-1])
            for row in np.flatnonzero(live & ~allowed):
                failures[int(row)] = absent
            live &= allowed
        for plugin in self.active_filters(state):
            rejected = live & ~self.run_filter(plugin, state, pod, table, table.rows, live)
            rows = np.flatnonzero(rejected)
            many = len(rows) > 1 and isinstance(plugin, ExplainsRows)
            try:
                if many:
                    statuses = cast(ExplainsRows, plugin).explain_rows(state, pod, table, rows)
                else:
                    statuses = [plugin.explain(state, pod, table, int(r)) for r in rows]
            except Exception as exc:
                raise PluginFailure("Filter", plugin.name, exc) from exc
            if many:  # (explain's answers are checked one by one below)
                statuses = explained_rows(plugin.name, statuses, len(rows))
            tagged: dict[int, Status] = {}
            for index, status in zip(rows.tolist(), statuses, strict=True):
                same = tagged.get(id(status))
                if same is None:
                    same = tagged[id(status)] = explained(plugin.name, status)
                failures[index] = same
            live &= ~rejected
        return failures

    def run_pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Status:
        for plugin in self.pre_score:
            try:
                status = plugin.pre_score(state, pod, table)
            except Exception as exc:
                status = failed(pod, "PreScore", exc, plugin.name)
            if status.code == Code.SKIP:
                state.skip_score.add(plugin.name)
            elif not status.ok:
                return Status(Code.ERROR, status.reasons, plugin.name)
        return Status.success()

    def _scores_for(self, state: CycleState) -> tuple[_Scores, _Scores, _Scores]:
        """(active, row-local, cross-row) Score plugins with weights, as
        :meth:`_filters_for` for the PreScore skips."""
        key = frozenset(state.skip_score)
        found = self._score_lists.get(key)
        if found is None:
            active = [(p, w) for p, w in self.score if p.name not in key]
            found = (
                active,
                [(p, w) for p, w in active if p.row_local],
                [(p, w) for p, w in active if not p.row_local],
            )
            if len(self._score_lists) < _SKIP_SETS:
                self._score_lists[key] = found
        return found

    def active_scores(self, state: CycleState) -> list[tuple[ScorePlugin, int]]:
        return list(self._scores_for(state)[0])

    def local_scores(self, state: CycleState) -> list[tuple[ScorePlugin, int]]:
        return list(self._scores_for(state)[1])

    def cycle_scores(self, state: CycleState) -> list[tuple[ScorePlugin, int]]:
        return list(self._scores_for(state)[2])

    def run_score(
        self, plugin: ScorePlugin, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows
    ) -> ScoreArray:
        try:
            scores = plugin.score(state, pod, table, rows)
        except Exception as exc:
            raise PluginFailure("Score", plugin.name, exc) from exc
        if scores.dtype != np.int64 or scores.shape != (size_of(rows),):
            raise PluginContractError(
                plugin.name,
                f"returned {scores.dtype} scores of shape {scores.shape}, "
                f"expected int64 of shape ({size_of(rows)},)",
            )
        return scores

    def normalized(
        self, plugin: ScorePlugin, state: CycleState, raw: ScoreArray, taking_part: BoolMask
    ) -> ScoreArray:
        """NormalizeScore (when the plugin has one) and the 0..100 range check."""
        try:
            scores = plugin.normalize(state, raw, taking_part) if plugin.normalizes else raw
        except Exception as exc:
            raise PluginFailure("NormalizeScore", plugin.name, exc) from exc
        check_range(plugin, scores, taking_part)
        return scores

    def run_pre_enqueue(self, pod: PodInfo) -> Status:
        """The first non-success of the PreEnqueue plugins (the pod stays gated), else success."""
        for plugin in self.pre_enqueue:
            try:
                status = plugin.pre_enqueue(pod)
            except Exception as exc:
                status = failed(pod, "PreEnqueue", exc, plugin.name)
            if not status.ok:
                return tagged(status, plugin.name)
        return Status.success()

    def run_post_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable, statuses: Mapping[int, Status]
    ) -> PostFilterResult:
        """PostFilter plugins in order until one succeeds or ends it (Unresolvable, Error)."""
        started = time.perf_counter()
        result = PostFilterResult(Status.unschedulable(plugin=""))
        for plugin in self.post_filter:
            metrics.count_preemption_attempt()
            try:
                result = plugin.post_filter(state, pod, table, statuses, self)
            except Exception as exc:
                result = PostFilterResult(failed(pod, "PostFilter", exc, plugin.name))
            if result.status.ok or result.status.code in (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                Code.ERROR,
            ):
                break
        self.timed("PostFilter", result.status, started)
        return result

    def run_reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        """Reserve in order; the first failure (tagged with its plugin) stops it."""
        started = time.perf_counter()
        status = Status.success()
        for plugin in self.reserve:
            try:
                answer = plugin.reserve(state, pod, node)
            except Exception as exc:
                answer = failed(pod, "Reserve", exc, plugin.name)
            if not answer.ok:
                status = tagged(answer, plugin.name)
                break
        self.timed("Reserve", status, started)
        return status

    def run_unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        """Unreserve in reverse order; every plugin runs, whatever the others do."""
        started = time.perf_counter()
        for plugin in reversed(self.reserve):
            try:
                plugin.unreserve(state, pod, node)
            except Exception as exc:  # the others still run: the rollback must complete
                failed(pod, "Unreserve", exc, plugin.name)
        self.timed("Unreserve", Status.success(), started)

    def run_permit(
        self, state: CycleState, pod: PodInfo, node: str
    ) -> tuple[Status, dict[str, float]]:
        """Permit: a rejection (tagged) ends it; Wait answers collect ``plugin -> timeout``."""
        started = time.perf_counter()
        waits: dict[str, float] = {}
        status = Status.success()
        for plugin in self.permit:
            try:
                verdict, timeout = plugin.permit(state, pod, node)
            except Exception as exc:
                verdict, timeout = failed(pod, "Permit", exc, plugin.name), 0.0
            if verdict.code == Code.WAIT:
                waits[plugin.name] = timeout
            elif not verdict.ok:
                status, waits = tagged(verdict, plugin.name), {}
                break
        self.timed("Permit", Status.wait() if waits else status, started)
        return status, waits

    async def run_pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        """PreBind in order (awaited in the binding task); the first failure stops it."""
        started = time.perf_counter()
        status = Status.success()
        for plugin in self.pre_bind:
            try:
                answer = await plugin.pre_bind(state, pod, node)
            except Exception as exc:
                answer = failed(pod, "PreBind", exc, plugin.name)
            if not answer.ok:
                status = tagged(answer, plugin.name)
                break
        self.timed("PreBind", status, started)
        return status

    async def run_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        """Bind plugins in order until one does not Skip; an error if all skip."""
        started = time.perf_counter()
        for plugin in self.bind:
            try:
                answer = await plugin.bind(state, pod, node)
            except Exception as exc:
                answer = failed(pod, "Bind", exc, plugin.name)
            if answer.code != Code.SKIP:
                status = tagged(answer, plugin.name)
                break
        else:  # (built only then: this runs for every bound pod)
            status = Status.error("no bind plugin bound the pod")
        self.timed("Bind", status, started)
        return status

    def run_post_bind(self, state: CycleState, pod: PodInfo, node: str) -> None:
        """PostBind: informational; a failure is contained and changes nothing."""
        started = time.perf_counter()
        for plugin in self.post_bind:
            try:
                plugin.post_bind(state, pod, node)
            except Exception as exc:  # informational: contained, changes nothing
                failed(pod, "PostBind", exc, plugin.name)
        self.timed("PostBind", Status.success(), started)


def check_range(plugin: ScorePlugin, scores: ScoreArray, taking_part: BoolMask) -> None:
    """A plugin's final scores must lie in ``[0, MAX_SCORE]`` on the rows taking part.

    One unmasked pass settles the usual case: viewed as ``uint64`` a negative score is
    above ``2**63``, so ``max <= MAX_SCORE`` of the view is ``0 <= scores <= MAX_SCORE``.
    The masked look runs only when some row, taking part or not, is out of range."""
    if not scores.size:
        return
    if scores.dtype == np.int64:
        if int(scores.view(np.uint64).max()) <= MAX_SCORE:
            return
    elif int(scores.min()) >= 0 and int(scores.max()) <= MAX_SCORE:
        return
    taking = scores[taking_part]
    if taking.size:
        low, high = int(taking.min()), int(taking.max())
        if low < 0 or high > MAX_SCORE:
            raise PluginContractError(
                plugin.name, f"returned scores in [{low}, {high}], expected [0, {MAX_SCORE}]"
            )


def weighted(scores: ScoreArray, weight: int) -> npt.NDArray[np.int64]:
    """``scores * weight`` without a copy when the weight is 1."""
    return scores if weight == 1 else scores * weight
