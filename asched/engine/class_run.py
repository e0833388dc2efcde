"""Runs of one pod class: the totals and the best rows kept from one choice to the next.

A Deployment's replicas arrive together, and the scheduler decides them one after the
other. Their class entry (:mod:`asched.engine.equivalence`) already keeps every
row-local answer up to date by recomputing the few rows each decision changed; what was
left per pod was the pass over the whole table that adds the normalized scores to the
totals and finds the best rows among them. A :class:`Run` keeps that too: the totals of the
last choice, the normalized scores they were made of, and the rows sharing the best total.
The next pod of the class then costs only the rows changed since (usually the one that
took the previous pod), however big the table.

The results are the pass's exactly, tie-break draws included:

- the totals of a row that did not change are what the pass would compute: its fixed
  total (the entry's, unchanged there) plus its normalized scores, which depend only on the
  raw scores and on the rows taking part (a row-local plugin's NormalizeScore sees nothing
  else), both unchanged unless a changed row's raw score or feasibility moved;
- when a changed row's feasibility or a normalizing plugin's raw score moved, the
  normalization may move everywhere, and the run is rebuilt by the pass;
- the best rows are kept sorted in row order, as the pass's ``flatnonzero`` lists them, so
  the random draw among them is the same draw
  (:func:`~asched.engine.selection.pick`); a changed row whose total now exceeds the
  best, or a best set left empty, has them found again among the kept totals (one look,
  not the pass that makes the totals).

``tests/unit/framework/test_class_run.py`` holds decisions with and without runs equal over
random streams of pods, tables and cluster changes.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.engine.equivalence import ClassEntry
from asched.engine.row_recompute import wrapped_int64
from asched.engine.selection import best_rows
from asched.framework.interface import ScorePlugin

#: A run brings at most this many changed rows up to date, one by one in Python (about
#: 1.5 µs a row); beyond, the vectorised pass is cheaper and rebuilds it.
RUN_ROWS: Final = 32

Int64Array = npt.NDArray[np.int64]
BoolMask = npt.NDArray[np.bool_]


@dataclass(slots=True)
class Normalized:
    """One normalizing plugin's part of a run's totals (arrays over all table rows)."""

    plugin: ScorePlugin
    weight: int
    #: the raw scores the normalization was computed from (a copy of the entry's)
    raw: Int64Array
    #: the normalized scores (before the weight)
    scores: Int64Array


@dataclass(slots=True)
class Run:
    """The last choice of one class entry, valid at the table's change ``mark``.

    ``mask``: the rows that took part (the entry's feasible rows, bool ``(table.size,)``);
    ``totals``: weighted totals over all rows (int64); ``best``: the best total among
    ``mask``; ``top``: the rows of ``mask`` with that total, ascending (a list: one row
    leaves or joins it in place, in a bisection and a ``memmove``)."""

    entry: ClassEntry
    epoch: int
    mark: int
    mask: BoolMask
    totals: Int64Array
    parts: list[Normalized]
    best: int
    top: list[int]

    def advance(self, mask: BoolMask, changed: list[int]) -> bool:
        """Bring the run to ``mask`` (the entry's feasible rows now) after the ``changed``
        rows were recomputed in the entry; False when only the pass can (a changed row's
        feasibility or a normalizing plugin's raw score moved: the normalization may move
        everywhere). On False the run is stale and must be rebuilt."""
        if not changed:
            return True
        entry = self.entry
        rows = sorted(set(changed))
        if len(rows) > RUN_ROWS:  # the vectorised pass is cheaper than a Python loop
            return False
        for row in rows:
            if mask[row] != self.mask[row]:
                if self.parts:  # the normalization's rows taking part moved
                    return False
                self.mask[row] = mask[row]
            for part in self.parts:
                if entry.raw[part.plugin.name][row] != part.raw[row]:
                    return False
        totals = self.totals
        top = self.top  # (changed in place)
        again = False  # the best rows must be found again among the totals
        for row in rows:
            total = int(entry.fixed_total[row])
            for part in self.parts:
                total += int(part.scores[row]) * part.weight
            # int64 as the pass's NumPy sum gives it (a score off the rows taking part is
            # unchecked and may be anything: the pass wraps, so does this)
            totals[row] = total = wrapped_int64(total)
            if again:
                continue
            at = bisect.bisect_left(top, row)
            present = at < len(top) and top[at] == row
            if mask[row] and total > self.best:
                again = True  # a new best
            elif present and (not mask[row] or total < self.best):
                del top[at]
            elif not present and mask[row] and total == self.best:
                top.insert(at, row)
        if again or not top:
            # one look over the kept totals (they are exact), not the pass that makes them
            found = best_rows(totals, self.mask)
            best = int(totals[found[0]])
            if best < 0:  # (best_rows' masked fallback: left to the pass)
                return False
            self.best, self.top = best, found.tolist()
        return True
