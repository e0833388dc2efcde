"""A what-if over the node table: pods counted or taken off to ask the filters a question,
and taken back exactly when the question is answered.

Upstream asks these questions of a copy: ``nodeInfo.Snapshot()`` and ``state.Clone()``
(pkg/scheduler/framework/preemption/preemption.go, and RunFilterPluginsWithNominatedPods
in pkg/scheduler/framework/runtime/framework.go). Our filters read whole columns of the
one table, so the few rows a question touches are changed in place instead, under three
rules that keep the table's single writer true:

* Exact undo. Each pod touched is put back as it was when the what-if opened (counted on
  its node with exactly the same deltas, or not counted), whatever happened in between.
* No trace. While a what-if is open, its changes move neither the table's ``generation``,
  ``shared_generation`` nor its change log: the engine's caches, keyed on those, see a
  table that never changed, which after the undo is true. A cache must not be read or
  filled while a what-if is open (:attr:`~asched.cluster.table.NodeTable.what_ifs_open`);
  the engine's are used only outside the what-ifs.
* One writer at a time. While a what-if is open, the table's mutators (ingest's and the
  ledger's) raise. The what-ifs run inside one synchronous decision (no ``await``), so
  the guard fires only on a bug.

What-ifs nest (preemption's trial counts the nominated pods within its own what-if): each
undoes its own changes. One exception to "no trace": a pod requesting a resource no node
or pod had before adds that (zero) column, a structural change that stays.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from asched.cluster.records import PodInfo

if TYPE_CHECKING:
    from asched.cluster.table import NodeTable


class WhatIf:
    """Changes to ``table`` taken back when the context closes (see the module docstring).

    ``table.what_if()`` makes one; use it as ``with table.what_if() as scratch: ...``.
    """

    __slots__ = ("_first", "_open", "_table")

    def __init__(self, table: NodeTable) -> None:
        self._table = table
        #: pod key -> (the pod, its node) as counted when first touched, None if not counted
        self._first: dict[str, tuple[PodInfo, str] | None] = {}
        self._open = False

    def __enter__(self) -> WhatIf:
        if self._open:
            raise RuntimeError("a what-if is opened twice")
        self._open = True
        self._table.what_ifs_open += 1
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def open(self) -> bool:
        return self._open

    def add_pod(self, pod: PodInfo, node_name: str) -> bool:
        """Count ``pod`` on ``node_name`` (replacing where it is counted); False, and
        nothing changed, if the node is unknown."""
        self._live()
        table = self._table
        if node_name not in table.index:
            return False
        self._remember(pod.key)
        return table._count(pod, node_name)

    def remove_pod(self, key: str) -> PodInfo | None:
        """Take the pod ``key`` off its node; None, and nothing changed, if not counted."""
        self._live()
        if key not in self._table.pods:
            return None
        self._remember(key)
        return self._table._uncount(key)

    def close(self) -> None:
        """Put every pod touched back as it was when the what-if opened (idempotent)."""
        if not self._open:
            return
        table = self._table
        try:
            for key, was in self._first.items():
                now = table.pods.get(key)
                if (
                    was is not None
                    and now is not None
                    and now.info is was[0]
                    and table.names[now.row] == was[1]
                ):
                    continue  # taken off and put back already: as it was
                table._uncount(key)
                if was is not None:
                    table._count(*was)
        finally:
            self._first.clear()
            self._open = False
            table.what_ifs_open -= 1

    def _live(self) -> None:
        if not self._open:
            raise RuntimeError("a what-if is used outside its context")

    def _remember(self, key: str) -> None:
        if key in self._first:
            return
        placed = self._table.pods.get(key)
        self._first[key] = (
            None if placed is None else (placed.info, self._table.name_of(placed.row))
        )
