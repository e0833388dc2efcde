"""Node labels, dictionary-encoded per key for vectorised selector matching.

For every label key seen on any node there is one ``int32`` column over the table's
rows holding the id of that node's value for the key, or ``-1`` when the node lacks the
key. Values get ids in first-seen order and are never forgotten (a handful of bytes per
distinct value), so ids stay stable while nodes come and go.

A selector requirement then becomes a comparison or a lookup-table gather over one
column; numeric ``Gt``/``Lt`` use a per-key table of parsed int64 values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, grown, new_column, size_of
from asched.cluster.records import parse_int64

ABSENT: Final = -1
BoolMask = npt.NDArray[np.bool_]


class LabelKey:
    """One key's value dictionary and its column."""

    __slots__ = ("_num_valid", "_numbers", "column", "ids", "values")

    def __init__(self, capacity: int) -> None:
        self.ids: dict[str, int] = {}
        self.values: list[str] = []
        self.column: npt.NDArray[np.int32] = new_column(capacity, np.int32, ABSENT)
        self._numbers: npt.NDArray[np.int64] | None = None
        self._num_valid: npt.NDArray[np.bool_] | None = None

    def id_of(self, value: str) -> int:
        found = self.ids.get(value)
        if found is None:
            found = len(self.values)
            self.ids[value] = found
            self.values.append(value)
            self._numbers = None
        return found

    def lookup(self, wanted: set[int]) -> npt.NDArray[np.bool_]:
        """A lookup table indexed by ``id + 1`` (slot 0 = absent) that is True for ``wanted``."""
        table = np.zeros(len(self.values) + 1, dtype=np.bool_)
        if wanted:
            table[np.fromiter(wanted, dtype=np.int64) + 1] = True
        return table

    def numeric(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """Per ``id + 1``: the value parsed as int64, and whether it parsed."""
        if self._numbers is None or self._num_valid is None:
            parsed = [parse_int64(v) for v in self.values]
            self._numbers = np.array([0] + [p or 0 for p in parsed], dtype=np.int64)
            self._num_valid = np.array([False] + [p is not None for p in parsed], dtype=np.bool_)
        return self._numbers, self._num_valid


class LabelColumns:
    """All label keys of the table. Only :class:`~asched.cluster.table.NodeTable` writes."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.keys: dict[str, LabelKey] = {}
        self._row_keys: dict[int, tuple[str, ...]] = {}

    def grow(self, capacity: int) -> None:
        for key in self.keys.values():
            key.column = grown(key.column, capacity, ABSENT)
        self.capacity = capacity

    def set_row(self, row: int, labels: Mapping[str, str]) -> None:
        """Write ``labels`` into ``row``, clearing keys the row no longer has."""
        for name in self._row_keys.get(row, ()):
            if name not in labels:
                self.keys[name].column[row] = ABSENT
        for name, value in labels.items():
            key = self.keys.get(name)
            if key is None:
                key = self.keys[name] = LabelKey(self.capacity)
            key.column[row] = key.id_of(value)
        self._row_keys[row] = tuple(labels)

    def clear_row(self, row: int) -> None:
        for name in self._row_keys.pop(row, ()):
            self.keys[name].column[row] = ABSENT

    def column(self, name: str) -> npt.NDArray[np.int32] | None:
        """The id column of ``name``, or None when no node has ever had the key."""
        key = self.keys.get(name)
        return None if key is None else key.column

    def equals(self, name: str, value: str, rows: Rows) -> BoolMask:
        """Rows whose label ``name`` equals ``value``."""
        key = self.keys.get(name)
        if key is None or value not in key.ids:
            return np.zeros(size_of(rows), dtype=np.bool_)
        same: BoolMask = key.column[rows] == key.ids[value]
        return same

    def requirement(
        self, name: str, operator: str, values: tuple[str, ...], rows: Rows
    ) -> BoolMask:
        """Node-selector operator semantics over ``rows``."""
        size = size_of(rows)
        key = self.keys.get(name)
        if key is None:
            present_nowhere = operator in ("NotIn", "DoesNotExist")
            return np.full(size, present_nowhere, dtype=np.bool_)
        column: npt.NDArray[np.int32] = key.column[rows]
        if operator in ("In", "NotIn"):
            wanted = {key.ids[v] for v in values if v in key.ids}
            if len(wanted) == 1:
                found = column == next(iter(wanted))
            elif not wanted:
                found = np.zeros(size, dtype=np.bool_)
            else:
                found = key.lookup(wanted)[column + 1]
            matched: BoolMask = found if operator == "In" else ~found
            return matched
        if operator in ("Exists", "DoesNotExist"):
            present: BoolMask = column != ABSENT
            return present if operator == "Exists" else ~present
        if operator in ("Gt", "Lt") and len(values) == 1:
            bound = parse_int64(values[0])
            if bound is None:
                return np.zeros(size, dtype=np.bool_)
            numbers, valid = key.numeric()
            mine = numbers[column + 1]
            compared = mine > bound if operator == "Gt" else mine < bound
            numeric_match: BoolMask = valid[column + 1] & compared
            return numeric_match
        return np.zeros(size, dtype=np.bool_)
