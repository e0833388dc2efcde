"""The PreScore and Score runners of :class:`~asched.framework.runtime.Framework` (a mixin).

They enforce the array contract (docs/plugins.md, "The extension points") on every call:
a Score must return ``int64`` of the selected rows' shape, and a normalized score must lie
in ``[0, MAX_SCORE]`` on the rows taking part (:func:`check_range`); a violation raises
:class:`~asched.errors.PluginContractError` (these checks are O(n) and always on).
:func:`weighted` is the one way a score meets its weight. The engine adds the weighted
scores up (:class:`~asched.engine.algorithm.Algorithm`); this module runs one plugin at
a time.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.errors import PluginContractError
from asched.framework.contain import PluginFailure, failed
from asched.framework.cycle_state import CycleState
from asched.framework.interface import (
    MAX_SCORE,
    BoolMask,
    PreScorePlugin,
    ScoreArray,
    ScorePlugin,
)
from asched.framework.plugin_lists import SKIP_SETS, WeightedScores
from asched.framework.status import Code, Status

#: (active, row-local, cross-row) Score plugins with weights for one skip set
ScoreSplit = tuple[WeightedScores, WeightedScores, WeightedScores]


class ScoreRuns:
    """PreScore, Score and NormalizeScore, over the attributes declared here (the
    Framework builds them, :mod:`asched.framework.plugin_lists`)."""

    pre_score: list[PreScorePlugin]
    score: WeightedScores
    #: the plugin lists per skip set (:meth:`_scores_for`)
    _score_lists: dict[frozenset[str], ScoreSplit]

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

    def _scores_for(self, state: CycleState) -> ScoreSplit:
        """(active, row-local, cross-row) Score plugins with weights, as
        :meth:`~asched.framework.filter_runs.FilterRuns._filters_for` for the PreScore skips."""
        key = frozenset(state.skip_score)
        found = self._score_lists.get(key)
        if found is None:
            active = [(p, w) for p, w in self.score if p.name not in key]
            found = (
                active,
                [(p, w) for p, w in active if p.row_local],
                [(p, w) for p, w in active if not p.row_local],
            )
            if len(self._score_lists) < SKIP_SETS:
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
