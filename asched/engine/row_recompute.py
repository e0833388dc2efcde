"""A cached class's few changed rows, recomputed in Python instead of NumPy.

After a decision of a Deployment's replicas only the row that took the pod changed, and
bringing the pod class's cached answers up to date (:mod:`asched.engine.equivalence`)
costs some forty NumPy calls on one-element selections: their per-call overhead, not the
arithmetic. When every row-local plugin of the cycle has a scalar form
(:class:`~asched.framework.interface.FiltersRow`, :class:`~asched.framework.interface.ScoresRow`)
and at most :data:`SCALAR_ROWS` rows changed, the rows are recomputed one by one with the
same formulas in Python ints and floats. The results are the vectorised path's exactly:
``tests/unit/framework/test_row_recompute.py`` holds the two equal over random tables and
pods, dead rows included. Failures are the vectorised path's too: a raising plugin is a
:class:`~asched.framework.contain.PluginFailure` at its point, a final score outside
``[0, MAX_SCORE]`` on a feasible row a :class:`~asched.errors.PluginContractError`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import numpy as np

from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.engine.equivalence import ClassEntry
from asched.errors import PluginContractError
from asched.framework.contain import PluginFailure
from asched.framework.cycle_state import CycleState
from asched.framework.interface import MAX_SCORE, RowFilter, RowScore, ScorePlugin
from asched.framework.runtime import Framework

#: Recompute in Python when at most this many rows changed (a row costs ~10 us in Python
#: with the default plugins, a vectorised recompute of a few rows ~100 us).
SCALAR_ROWS: Final = 3


Forms = tuple[list[tuple[str, RowFilter]], list[tuple[ScorePlugin, int, RowScore]]]


def forms(framework: Framework, state: CycleState, pod: PodInfo, table: NodeTable) -> Forms | None:
    """The scalar forms of this cycle's row-local Filters (``(name, form)``) and Scores
    (``(plugin, weight, form)``), in profile order; None when one of them has none."""
    filters: list[tuple[str, RowFilter]] = []
    for plugin in framework.local_filters(state):
        owner = framework.row_filters.get(plugin.name)
        if owner is None:
            return None
        try:
            passes = owner.row_filter(state, pod, table)
        except Exception as exc:
            raise PluginFailure("Filter", plugin.name, exc) from exc
        if passes is None:
            return None
        filters.append((plugin.name, passes))
    scores: list[tuple[ScorePlugin, int, RowScore]] = []
    for scorer, weight in framework.local_scores(state):
        source = framework.row_scores.get(scorer.name)
        if source is None:
            return None
        try:
            score = source.row_score(state, pod, table)
        except Exception as exc:
            raise PluginFailure("Score", scorer.name, exc) from exc
        if score is None:
            return None
        scores.append((scorer, weight, score))
    return filters, scores


def refilter(
    table: NodeTable, entry: ClassEntry, rows: Iterable[int], filters: list[tuple[str, RowFilter]]
) -> dict[int, bool]:
    """Bring ``entry.feasible`` up to date on ``rows`` (distinct table rows) from the
    row-local Filters' scalar forms (``(plugin name, form)`` in profile order); returns
    each row's answer."""
    alive = table.alive
    feasible: dict[int, bool] = {}
    for row in rows:
        fits = bool(alive[row])
        if fits:  # dead rows are never asked (the vectorised filters mask them out)
            for name, passes in filters:
                try:
                    answer = bool(passes(row))
                except Exception as exc:
                    raise PluginFailure("Filter", name, exc) from exc
                fits = fits and answer
        entry.feasible[row] = feasible[row] = fits
    return feasible


def rescore(
    entry: ClassEntry, feasible: dict[int, bool], scores: list[tuple[ScorePlugin, int, RowScore]]
) -> None:
    """Bring ``entry.raw`` and ``entry.fixed_total`` up to date on the rows of ``feasible``
    (:func:`refilter`'s answer) from the row-local Scores' scalar forms (``(plugin,
    weight, form)`` in profile order)."""
    rows = list(feasible)
    fixed = [0] * len(rows)
    for plugin, weight, score in scores:
        raw = entry.raw[plugin.name]
        try:
            values = [score(row) for row in rows]
        except Exception as exc:
            raise PluginFailure("Score", plugin.name, exc) from exc
        _check_int64(plugin.name, values)
        for row, value in zip(rows, values, strict=True):
            raw[row] = value
        if plugin.normalizes:
            continue
        # final as it is: checked on the feasible rows, then summed (the runtime's rule)
        taking = [value for row, value in zip(rows, values, strict=True) if feasible[row]]
        if taking and (min(taking) < 0 or max(taking) > MAX_SCORE):
            low, high = min(taking), max(taking)
            raise PluginContractError(
                plugin.name, f"returned scores in [{low}, {high}], expected [0, {MAX_SCORE}]"
            )
        fixed = [total + value * weight for total, value in zip(fixed, values, strict=True)]
    for row, total in zip(rows, fixed, strict=True):
        entry.fixed_total[row] = wrapped_int64(total)


_INT64: Final = 2**63


def _check_int64(plugin: str, values: list[Any]) -> None:
    """The runtime's rule for a Score's answer (int64 scores), for a scalar form's ints: a
    float, a bool or an amount beyond int64 breaks the contract here as it does there."""
    for value in values:
        if type(value) is bool or not isinstance(value, int | np.integer):
            raise PluginContractError(plugin, f"returned a {type(value).__name__} score")
        if not -_INT64 <= value < _INT64:
            raise PluginContractError(plugin, f"returned {value}, beyond int64")


def wrapped_int64(total: int) -> int:
    """``total`` as the int64 sum of the vectorised path gives it (wrapping on overflow:
    only rows no Filter passes can get there, and their totals are never read)."""
    return (total + _INT64) % (2 * _INT64) - _INT64
