"""Node taints as bitsets, for vectorised toleration checks.

Every distinct taint (key, value, effect) gets a bit; a node row holds the bits of its
taints in ``uint64`` words (one column per 64 distinct taints). A pod's tolerations are
turned, once per distinct toleration list, into a mask of the bits it does *not*
tolerate, so "has an untolerated NoSchedule taint" is an AND and a compare per word,
and "how many untolerated PreferNoSchedule taints" is an AND and a popcount.

The ordered taint list of each row is kept too: the filter's reason names the first
untolerated taint in the node's own order (a cold-path question).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, grown, new_column, size_of
from asched.cluster.records import Taint, Toleration, tolerates

WordMasks = tuple[int, ...]


class TaintColumns:
    """Taint bitsets per row. Only :class:`~asched.cluster.table.NodeTable` writes."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.ids: dict[Taint, int] = {}
        self.taints: list[Taint] = []
        self.words: list[npt.NDArray[np.uint64]] = []
        self.row_taints: dict[int, tuple[Taint, ...]] = {}
        self._masks = lru_cache(maxsize=256)(self._compute_masks)

    def grow(self, capacity: int) -> None:
        self.words = [grown(word, capacity, 0) for word in self.words]
        self.capacity = capacity

    def _bit(self, taint: Taint) -> int:
        found = self.ids.get(taint)
        if found is None:
            found = len(self.taints)
            self.ids[taint] = found
            self.taints.append(taint)
            if found // 64 >= len(self.words):
                self.words.append(new_column(self.capacity, np.uint64, 0))
            self._masks.cache_clear()
        return found

    def set_row(self, row: int, taints: tuple[Taint, ...]) -> None:
        self.clear_row(row)
        for taint in taints:
            bit = self._bit(taint)
            self.words[bit // 64][row] |= np.uint64(1 << (bit % 64))
        if taints:
            self.row_taints[row] = taints

    def clear_row(self, row: int) -> None:
        if self.row_taints.pop(row, None) is not None:
            for word in self.words:
                word[row] = 0

    def untolerated(
        self, tolerations: tuple[Toleration, ...], effects: frozenset[str]
    ) -> WordMasks:
        """Per word, the bits of taints with one of ``effects`` that no toleration tolerates."""
        return self._masks(tolerations, effects, len(self.taints))

    def _compute_masks(
        self, tolerations: tuple[Toleration, ...], effects: frozenset[str], _known: int
    ) -> WordMasks:
        masks = [0] * len(self.words)
        for bit, taint in enumerate(self.taints):
            if taint.effect in effects and not tolerates(tolerations, taint):
                masks[bit // 64] |= 1 << (bit % 64)
        return tuple(masks)

    def any_of(self, masks: WordMasks, rows: Rows) -> npt.NDArray[np.bool_]:
        """Rows carrying at least one taint in ``masks``."""
        hit = np.zeros(size_of(rows), dtype=np.bool_)
        for word, mask in zip(self.words, masks, strict=True):
            if mask:
                hit |= (word[rows] & np.uint64(mask)) != 0
        return hit

    def count_of(self, masks: WordMasks, rows: Rows) -> npt.NDArray[np.int64]:
        """How many taints in ``masks`` each row carries."""
        count = np.zeros(size_of(rows), dtype=np.int64)
        for word, mask in zip(self.words, masks, strict=True):
            if mask:
                count += np.bitwise_count(word[rows] & np.uint64(mask))
        return count
