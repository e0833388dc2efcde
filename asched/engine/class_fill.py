"""Filling a pod class's cached row-local answers (:class:`~asched.engine.equivalence.ClassEntry`)
from the row-local Filters and Scores: over every row, or over the rows changed since the
entry was last brought up to date.

It is separate from :mod:`asched.engine.algorithm`, which decides when an entry is
reused, refreshed or computed afresh: this module only computes, vectorised over the
selected rows, or in Python through the scalar forms of
:mod:`asched.engine.row_recompute` when the changed rows are few.
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.engine import row_recompute
from asched.engine.equivalence import ClassEntry
from asched.framework.cycle_state import CycleState
from asched.framework.runtime import Framework
from asched.framework.score_runs import check_range, weighted
from asched.framework.status import Status


def _selection(changed: list[int]) -> Rows:
    """The changed rows as a slice when contiguous (views, no gathers), else an index array."""
    low, high = min(changed), max(changed)
    if high - low + 1 == len(changed) or len(set(changed)) == high - low + 1:
        return slice(low, high + 1)
    return np.unique(np.asarray(changed, dtype=np.intp))


def refresh(
    framework: Framework,
    table: NodeTable,
    state: CycleState,
    pod: PodInfo,
    entry: ClassEntry,
    changed: list[int],
) -> None:
    """Recompute ``entry`` on the ``changed`` rows: in Python when they are few and
    every row-local plugin has a scalar form (:mod:`asched.engine.row_recompute`),
    else vectorised."""
    rows = set(changed)
    if len(rows) <= row_recompute.SCALAR_ROWS:
        forms = row_recompute.forms(framework, state, pod, table)
        if forms is not None:
            filters, scores = forms
            started = time.perf_counter()
            feasible = row_recompute.refilter(table, entry, sorted(rows), filters)
            framework.timed("Filter", Status.success(), started)
            started = time.perf_counter()
            row_recompute.rescore(entry, feasible, scores)
            framework.timed("Score", Status.success(), started)
            return
    compute(framework, table, state, pod, entry, _selection(changed))


def compute(
    framework: Framework,
    table: NodeTable,
    state: CycleState,
    pod: PodInfo,
    entry: ClassEntry,
    rows: Rows | None,
) -> None:
    """Fill ``entry`` for ``rows`` (None: every row, replacing its arrays) from the
    row-local plugins."""
    selected = table.rows if rows is None else rows
    started = time.perf_counter()
    # a fresh array over the selection (filter_mask never returns a view)
    feasible = framework.filter_mask(state, pod, table, selected, framework.local_filters(state))
    if rows is None:
        entry.feasible = feasible
    else:
        entry.feasible[rows] = feasible
    framework.timed("Filter", Status.success(), started)
    started = time.perf_counter()
    fixed: npt.NDArray[np.int64] | None = None
    for plugin, weight in framework.local_scores(state):
        raw = framework.run_score(plugin, state, pod, table, selected)
        if rows is None:
            entry.raw[plugin.name] = raw
        else:
            entry.raw[plugin.name][rows] = raw
        if not plugin.normalizes:  # its raw score is final: checked once per fill
            check_range(plugin, raw, feasible)
            if fixed is None:
                fixed = raw * weight  # a copy even for weight 1: raw is kept above
            else:
                fixed += weighted(raw, weight)
    if fixed is None:
        fixed = np.zeros(size_of(selected), dtype=np.int64)
    if rows is None:
        entry.fixed_total = fixed
    else:
        entry.fixed_total[rows] = fixed
    framework.timed("Score", Status.success(), started)
