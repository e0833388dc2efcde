"""Small helpers for growable NumPy columns (capacity doubling, fill values)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt


def grown(column: npt.NDArray[Any], capacity: int, fill: Any) -> npt.NDArray[Any]:
    """Return ``column`` copied into a new array of length ``capacity`` padded with ``fill``."""
    out = np.full(capacity, fill, dtype=column.dtype)
    out[: len(column)] = column
    return out


def new_column(capacity: int, dtype: Any, fill: Any) -> npt.NDArray[Any]:
    """A fresh column of ``capacity`` rows filled with ``fill``."""
    return np.full(capacity, fill, dtype=dtype)


#: A selection of table rows: a contiguous slice (all rows: no copy) or an index array.
Rows = slice | npt.NDArray[np.intp]


def size_of(rows: Rows) -> int:
    """How many rows a selection holds (slices are always normalised ``start:stop``)."""
    if isinstance(rows, slice):
        return int(rows.stop) - int(rows.start)
    return len(rows)
