"""Node annotations as columns: one per key asked for, kept current from a node-change log.

:meth:`NodeTable.annotation_values <asched.cluster.table.NodeTable.annotation_values>`
answers from here. The log names the rows whose *node* was added, updated or removed
(pods counted on a row do not count), so a column is refreshed at the cost of the node
changes since it was last asked for, not of the nodes. Apart from the table because
nothing else reads this log, and the pod path never touches it.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import grown
from asched.cluster.records import NodeInfo

#: At most this many annotation keys keep a column (:meth:`AnnotationColumns.values`);
#: past it the columns start over (only a plugin asking for ever new keys gets there).
_ANNOTATION_KEYS: Final = 64


class AnnotationColumns:
    """The node-change log and the annotation columns refreshed from it."""

    def __init__(self) -> None:
        #: rows whose node was added, updated or removed, from position ``_node_base``
        self._node_changes: list[int] = []
        self._node_base = 0
        #: annotation key -> (node-change position it is current at, its column)
        self._annotations: dict[str, tuple[int, npt.NDArray[np.object_]]] = {}

    def node_changed(self, row: int, limit: int) -> None:
        """Log that ``row``'s node changed; past ``limit`` entries the older half goes (a
        column current at a position no longer logged is rebuilt)."""
        self._node_changes.append(row)
        if len(self._node_changes) > limit:
            drop = len(self._node_changes) // 2
            del self._node_changes[:drop]
            self._node_base += drop

    def values(
        self, key: str, nodes: list[NodeInfo | None], size: int, capacity: int
    ) -> npt.NDArray[np.object_]:
        """Annotation ``key`` of the rows ``[0, size)`` of ``nodes`` (the table's row ->
        node, ``capacity`` long): ``object[size]`` (read-only), the value's ``str`` or None
        where the row holds no node or the node lacks the key."""
        mark = self._node_base + len(self._node_changes)
        cached = self._annotations.get(key)
        if cached is not None and cached[0] >= self._node_base:
            since, values = cached
            if len(values) < size:
                values = grown(values, capacity, None)
            for row in dict.fromkeys(self._node_changes[since - self._node_base :]):
                node = nodes[row]
                values[row] = None if node is None else node.annotations.get(key)
        else:
            if len(self._annotations) >= _ANNOTATION_KEYS:
                self._annotations.clear()
            values = np.full(capacity, None, dtype=np.object_)
            values[:size] = [
                None if node is None else node.annotations.get(key) for node in nodes[:size]
            ]
        self._annotations[key] = (mark, values)
        view = values[:size]
        view.flags.writeable = False
        return view
