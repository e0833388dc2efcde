"""The framework runtime: builds a profile's plugins and runs its extension points.

It enforces the array contract on every call (section 4.4; STYLE 3.5): a Filter must
return ``bool`` of the selected rows' shape, a Score ``int64`` of that shape, and a
normalized score must lie in ``[0, MAX_SCORE]`` on the rows taking part. A violation
raises :class:`~asched.errors.PluginContractError`; these checks are O(n) and always on.

PreFilter follows section 4.1: Skip disables the plugin's Filter for the pod;
UnschedulableAndUnresolvable stops at once; Unschedulable is remembered while the
others still run; node-name results are intersected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from asched.cluster.bounds import OUT_OF_RANGE_PLUGIN
from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import Profile
from asched.errors import PluginContractError
from asched.framework.cycle_state import CycleState
from asched.framework.interface import (
    MAX_SCORE,
    BindPlugin,
    BoolMask,
    FilterPlugin,
    Handle,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterOutcome,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreArray,
    ScorePlugin,
)
from asched.framework.registry import REGISTRY, Factory
from asched.framework.selectors import name_in
from asched.framework.status import Code, Status


class Framework:
    """One profile's plugins, instantiated once and shared across extension points."""

    def __init__(
        self,
        profile: Profile,
        *,
        handle: Handle | None = None,
        registry: Mapping[str, Factory] = REGISTRY,
    ) -> None:
        self.profile = profile
        resolved = profile.resolved
        self.plugins: dict[str, Any] = {
            name: registry[name](profile.args(name), handle) for name in resolved.all_names()
        }
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

    @property
    def name(self) -> str:
        return self.profile.scheduler_name

    # ------------------------------------------------------------- PreFilter
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
            result = plugin.pre_filter(state, pod, table)
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

    def allowed_mask(self, table: NodeTable, outcome: PreFilterOutcome) -> BoolMask | None:
        """Rows a PreFilter node-name result leaves in play, or None for all."""
        if outcome.allowed is None:
            return None
        return name_in(table, tuple(outcome.allowed), table.rows)

    # ------------------------------------------------------------- Filter
    def active_filters(self, state: CycleState) -> list[FilterPlugin]:
        return [p for p in self.filter if p.name not in state.skip_filter]

    def local_filters(self, state: CycleState) -> list[FilterPlugin]:
        """Active filters whose answer for a row depends on that row only (cacheable)."""
        return [p for p in self.active_filters(state) if p.row_local]

    def cycle_filters(self, state: CycleState) -> list[FilterPlugin]:
        """Active filters that look across rows (computed afresh every cycle)."""
        return [p for p in self.active_filters(state) if not p.row_local]

    def run_filter(
        self, plugin: FilterPlugin, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows
    ) -> BoolMask:
        mask = plugin.filter(state, pod, table, rows)
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
    ) -> BoolMask:
        """Live rows among ``rows`` that pass every plugin in ``plugins``."""
        passing: BoolMask = table.alive[rows].copy()
        for plugin in plugins:
            passing &= self.run_filter(plugin, state, pod, table, rows)
        return passing

    def first_failures(
        self, state: CycleState, pod: PodInfo, table: NodeTable, outcome: PreFilterOutcome
    ) -> dict[int, Status]:
        """Cold path: for every live row that fails, the first failing plugin's status."""
        live = table.alive[table.rows].copy()
        failures: dict[int, Status] = {}
        allowed = self.allowed_mask(table, outcome)
        if allowed is not None:
            absent = Status.unresolvable(outcome.absent_reason, plugin=outcome.restricted_by[-1])
            for row in np.flatnonzero(live & ~allowed):
                failures[int(row)] = absent
            live &= allowed
        for plugin in self.active_filters(state):
            rejected = live & ~self.run_filter(plugin, state, pod, table, table.rows)
            rows = np.flatnonzero(rejected)
            many = getattr(plugin, "explain_rows", None)  # a vectorised explain, optional
            if many is not None and len(rows) > 1:
                statuses = many(state, pod, table, rows)
            else:
                statuses = [plugin.explain(state, pod, table, int(r)) for r in rows]
            tagged: dict[int, Status] = {}
            for index, status in zip(rows.tolist(), statuses, strict=True):
                same = tagged.get(id(status))
                if same is None:
                    same = tagged[id(status)] = status.with_plugin(plugin.name)
                failures[index] = same
            live &= ~rejected
        return failures

    # ------------------------------------------------------------- Score
    def run_pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Status:
        for plugin in self.pre_score:
            status = plugin.pre_score(state, pod, table)
            if status.code == Code.SKIP:
                state.skip_score.add(plugin.name)
            elif not status.ok:
                return Status(Code.ERROR, status.reasons, plugin.name)
        return Status.success()

    def active_scores(self, state: CycleState) -> list[tuple[ScorePlugin, int]]:
        return [(p, w) for p, w in self.score if p.name not in state.skip_score]

    def local_scores(self, state: CycleState) -> list[tuple[ScorePlugin, int]]:
        return [(p, w) for p, w in self.active_scores(state) if p.row_local]

    def cycle_scores(self, state: CycleState) -> list[tuple[ScorePlugin, int]]:
        return [(p, w) for p, w in self.active_scores(state) if not p.row_local]

    def run_score(
        self, plugin: ScorePlugin, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows
    ) -> ScoreArray:
        scores = plugin.score(state, pod, table, rows)
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
        scores = plugin.normalize(state, raw, taking_part) if plugin.normalizes else raw
        if taking_part.any():
            low = int(scores.min(where=taking_part, initial=MAX_SCORE))
            high = int(scores.max(where=taking_part, initial=0))
            if low < 0 or high > MAX_SCORE:
                raise PluginContractError(
                    plugin.name, f"returned scores in [{low}, {high}], expected [0, {MAX_SCORE}]"
                )
        return scores


def weighted(scores: ScoreArray, weight: int) -> npt.NDArray[np.int64]:
    """``scores * weight`` without a copy when the weight is 1."""
    return scores if weight == 1 else scores * weight
