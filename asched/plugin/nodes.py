"""``Nodes``: the read-only view of the node table a plugin may use (what is promised).

The object a plugin receives is the scheduler's own table (no copy: a vectorised
plugin costs what an in-tree one costs); this protocol is the part of it the plugin API
promises. Everything else on the table may change between releases. Arrays are over
the table's rows ``[0, size)``; ``rows`` (a slice or an index array) selects the ones a
call must answer for. Dead rows (``alive`` False) may hold anything.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows
from asched.cluster.records import NodeInfo


class Nodes(Protocol):
    """A read-only view of the node table (see the module docstring)."""

    @property
    def size(self) -> int:
        """Rows ever used; arrays have this length."""

    @property
    def rows(self) -> slice:
        """All rows, ``slice(0, size)``."""

    @property
    def n_nodes(self) -> int:
        """Live nodes."""

    @property
    def alive(self) -> npt.NDArray[np.bool_]:
        """``bool``: the row holds a node (index it with ``rows``; do not write)."""

    @property
    def unschedulable(self) -> npt.NDArray[np.bool_]:
        """``bool``: ``spec.unschedulable`` (do not write)."""

    def name_of(self, row: int) -> str:
        """The node name of ``row``."""

    def row_of(self, name: str) -> int | None:
        """The row of node ``name``, or None."""

    def node_at(self, row: int) -> NodeInfo:
        """The decoded node of ``row``: name, labels, taints, allocatable, images,
        annotations (when the plugin declares ``reads_annotations``)."""

    def allocatable_of(self, resource: str) -> npt.NDArray[np.int64]:
        """``int64[size]``: allocatable ``resource`` (cpu millicores, bytes, counts)."""

    def requested_of(self, resource: str) -> npt.NDArray[np.int64]:
        """``int64[size]``: what the counted pods request (assumed ones included)."""

    def free_of(self, resource: str) -> npt.NDArray[np.int64]:
        """``int64[size]``: allocatable minus requested."""

    def label_codes(self, key: str) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
        """``(codes, values)``: ``int32[size]`` indices into ``values``, -1 where absent."""

    def label_matches(
        self, key: str, operator: str, values: tuple[str, ...], rows: Rows
    ) -> npt.NDArray[np.bool_]:
        """A node-selector requirement over ``rows``."""

    def annotation_values(self, key: str) -> npt.NDArray[np.object_]:
        """``object[size]``: annotation ``key`` of each row (its ``str``), None where the
        node lacks it. Kept per key and refreshed only where a node changed: call it in
        every cycle. Annotations are decoded only when the plugin declares
        ``reads_annotations=True`` (otherwise: None everywhere)."""
