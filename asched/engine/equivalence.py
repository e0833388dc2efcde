"""Reusing filter and score results across pods of the same shape.

Most pending pods come from a few templates (a Deployment's replicas are identical to
the scheduler). For pods with the same *scheduling signature* (the fragments the
row-local plugins sign, :class:`~asched.framework.interface.SignPlugin`, gathered by
:meth:`~asched.framework.runtime.Framework.signature`) every row-local plugin gives the
same answer on a row until that row changes, so a class entry keeps, over all table rows:

* ``feasible``: live rows passing every row-local Filter (``bool``);
* ``raw``: each row-local Score plugin's raw scores (``int64``);
* ``fixed_total``: the weighted sum of the row-local scores that need no normalization
  (``int64``), so a cycle adds only the normalized ones.

On reuse only the rows in the table's change log since the entry was last brought up to
date are recomputed (an index-array call into the same vectorised plugins, so results
are identical to a full pass; for one to three rows, the plugins' scalar forms in
Python when they all have one, held equal to the vectorised forms by property tests:
:mod:`asched.engine.row_recompute`); a structural change (``table.epoch``) rebuilds it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt


@dataclass(slots=True)
class ClassEntry:
    """Cached per-row results for one signature, valid at (``epoch``, ``mark``)."""

    epoch: int
    mark: int
    feasible: npt.NDArray[np.bool_]
    raw: dict[str, npt.NDArray[np.int64]] = field(default_factory=dict)
    fixed_total: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))


class ClassCache:
    """A small LRU of class entries (each holds a few arrays over all rows)."""

    def __init__(self, max_entries: int = 8) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, ClassEntry] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> ClassEntry | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def put(self, key: Hashable, entry: ClassEntry) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()

    def nbytes(self) -> int:
        total = 0
        for entry in self._entries.values():
            total += entry.feasible.nbytes + entry.fixed_total.nbytes
            total += sum(a.nbytes for a in entry.raw.values())
        return total
