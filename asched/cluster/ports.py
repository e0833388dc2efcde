"""Host ports used on each node, as count columns for vectorised conflict checks.

One ``int32`` column per distinct (ip, protocol, port) in use anywhere, counting the
pods on each row that hold it. A wanted port conflicts with a row when (upstream:
pkg/scheduler/framework/types.go, HostPortInfo.CheckConflict):

* it asks for ``0.0.0.0``: any column with the same (protocol, port) is non-zero there;
* it asks for a specific ip: the ``0.0.0.0`` column or the same-ip column is non-zero.

Distinct host ports are few in real clusters, so the columns are few.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, grown, new_column, size_of
from asched.cluster.records import HostPort

WILDCARD = "0.0.0.0"


class PortColumns:
    """Host-port use counts per row. Only :class:`~asched.cluster.table.NodeTable` writes."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.columns: dict[HostPort, npt.NDArray[np.int32]] = {}
        self._by_port: dict[tuple[str, int], list[HostPort]] = {}

    def grow(self, capacity: int) -> None:
        self.columns = {key: grown(col, capacity, 0) for key, col in self.columns.items()}
        self.capacity = capacity

    def add(self, row: int, ports: tuple[HostPort, ...], delta: int) -> None:
        """Count ``ports`` in (delta=+1) or out of (delta=-1) ``row``."""
        for port in ports:
            column = self.columns.get(port)
            if column is None:
                column = self.columns[port] = new_column(self.capacity, np.int32, 0)
                self._by_port.setdefault((port.protocol, port.port), []).append(port)
            column[row] += delta

    def clear_row(self, row: int) -> None:
        for column in self.columns.values():
            column[row] = 0

    def conflicts(self, wanted: tuple[HostPort, ...], rows: Rows) -> npt.NDArray[np.bool_]:
        """Rows where any wanted port conflicts with one already in use."""
        hit = np.zeros(size_of(rows), dtype=np.bool_)
        for port in wanted:
            for used in self._by_port.get((port.protocol, port.port), ()):
                if port.ip == WILDCARD or used.ip in (WILDCARD, port.ip):
                    hit |= self.columns[used][rows] > 0
        return hit

    def used_on(self, row: int) -> list[HostPort]:
        """The ports in use on one row (cold path, for explanations)."""
        return [port for port, column in self.columns.items() if column[row] > 0]
