"""The framework runtime: builds a profile's plugins and runs its extension points.

:class:`Framework` is what the engine, the queue and the cycle hold for a profile. Its
runners come from one mixin per concern: :mod:`~asched.framework.prefilter_runs`
(PreFilter, its extensions, the reuse of its state), :mod:`~asched.framework.filter_runs`
(Filter and the explanations of its rejections), :mod:`~asched.framework.score_runs`
(PreScore, Score, NormalizeScore) and :mod:`~asched.framework.bind_phase` (Reserve to
PostBind). The lists they read are built once, here, by
:mod:`~asched.framework.plugin_lists`. A mixin's method is found on the class like any
other (the lookup is cached per type), so the split costs nothing per call.

The runners enforce the array contract (docs/plugins.md, "The extension points") on every
call: a Filter must return ``bool`` of the selected rows' shape, a Score ``int64`` of that
shape, and a normalized score must lie in ``[0, MAX_SCORE]`` on the rows taking part. A
violation raises :class:`~asched.errors.PluginContractError`; these checks are O(n) and
always on.

Every extension point runs in a :class:`Framework`, the decision's (PreFilter, Filter,
PreScore, Score, driven by :class:`~asched.engine.algorithm.Algorithm`) and the rest:
PreEnqueue and PostFilter (here: PostFilter is handed the framework itself), Reserve and
Unreserve, Permit, PreBind, Bind and PostBind. Each answer is tagged with its plugin and
each exception contained as an Error status by one helper
(:func:`asched.framework.contain.failed`, called from an inline ``try``, which costs
nothing until something raises), and each point is timed through :attr:`Framework.observe`
(``asched_framework_extension_point_duration_seconds``).
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping
from typing import Any

from asched import metrics
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import Profile
from asched.framework.bind_phase import BindPhaseRuns
from asched.framework.contain import PluginFailure, failed, tagged
from asched.framework.cycle_state import CycleState
from asched.framework.filter_runs import FilterRuns
from asched.framework.interface import Handle, PostFilterResult, ResourceFit
from asched.framework.plugin_lists import (
    candidate_filters,
    declared_events,
    declared_hints,
    extension_points,
    pre_filter_hooks,
    pre_state_scopes,
    row_forms,
    signers,
)
from asched.framework.prefilter_runs import PreFilterRuns
from asched.framework.registry import Registry, installed
from asched.framework.score_runs import ScoreRuns
from asched.framework.status import Code, Status


class Framework(PreFilterRuns, FilterRuns, ScoreRuns, BindPhaseRuns):
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
        points = extension_points(resolved, self.plugins)
        self.pre_enqueue = points.pre_enqueue
        self.queue_sort = points.queue_sort
        self.pre_filter = points.pre_filter
        self.filter = points.filter
        self.post_filter = points.post_filter
        self.pre_score = points.pre_score
        self.score = points.score
        self.reserve = points.reserve
        self.permit = points.permit
        self.pre_bind = points.pre_bind
        self.bind = points.bind
        self.post_bind = points.post_bind
        self.weights: dict[str, int] = dict(resolved.score)
        #: plugin name -> the cluster events that may undo its rejection (its declaration)
        self.interests = declared_events(self.plugins)
        #: plugin name -> its queueing hint (declared with its events)
        self.hints = declared_hints(self.plugins)
        self._candidate_filters = candidate_filters(self.filter)
        #: the signers of the pod's scheduling signature (:meth:`signature`)
        self._signers = signers(self.filter, self.score)
        #: the row-local plugins' scalar forms (:mod:`asched.engine.row_recompute`)
        self.row_filters, self.row_scores = row_forms(self.filter, self.score)
        self.resource_fit = next((p for p in self.filter if isinstance(p, ResourceFit)), None)
        self._extensible, self._add_hooks, self._remove_hooks = pre_filter_hooks(self.pre_filter)
        self._pre_state_scopes = pre_state_scopes(self.pre_filter, self.pre_score)
        self._filter_lists = {}
        self._score_lists = {}
        self.observe = None

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
