"""The NodeTable: one row per node, NumPy columns, O(1) updates.

Why columns: every filter and score plugin is a handful of whole-column operations, so
one scheduling decision costs a few dozen NumPy calls whatever the node count.

Layout (``cap`` = capacity, doubled when full; rows of deleted nodes go to a free list):

* ``alive``, ``unschedulable``: ``bool[cap]``
* per resource axis ``r`` (``axes``; cpu in millicores, memory/storage in bytes, pods a
  count, extended resources in units): ``allocatable[r]``, ``requested[r]`` and
  ``free[r] = allocatable[r] - requested[r]``, each ``int64[cap]``. ``requested`` of the
  ``pods`` axis is the number of pods on the node.
* ``nonzero_cpu``, ``nonzero_memory``: ``int64[cap]``, the scoring requests (100m / 200Mi
  when unset)
* ``zone``: ``int32[cap]`` zone id; ``seq``: ``int64[cap]`` insertion order within its zone
  (the zones themselves and the node order they give in :mod:`node_tree`)
* labels, taints, host ports and images in :mod:`labels`, :mod:`taints`, :mod:`ports`,
  :mod:`images`; the counted pods themselves as rows of :mod:`pods` (for inter-pod
  questions); the objects that select pods in :mod:`workloads` (for default spread
  constraints).

Invariants:

* Single writer. Only the ingest path (watch events) and the scheduler's ledger
  (assume/forget) call the mutators; plugins read. Python's asyncio runs one thing at a
  time, so a scheduling cycle with no ``await`` sees a consistent table and needs no
  snapshot copy. A decision's what-ifs (the nominated pods counted, preemption's victims
  taken off) go through :meth:`NodeTable.what_if` (:mod:`what_if`): its deltas are taken
  back exactly when it closes, and while one is open they move neither ``generation``,
  ``shared_generation`` nor the change log, and the mutators refuse to run.
* Removing a pod subtracts exactly what adding it added (kept per pod), so assume +
  forget returns a row to its previous values bit for bit.
* ``changes`` logs every row touched; ``epoch`` bumps on structural changes (rows added
  or removed, capacity, new resource axes). Caches keyed by (epoch, change position)
  recompute only the rows touched since.
* A second log holds the rows whose *node* changed (added, updated, removed; pods
  counted on a row do not count): :meth:`NodeTable.annotation_values` keeps one column
  per annotation key asked for and refreshes only the rows this log names since (both in
  :mod:`annotation_columns`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.annotation_columns import AnnotationColumns
from asched.cluster.attachments import Attachments
from asched.cluster.budgets import DisruptionBudget
from asched.cluster.columns import Rows, grown, new_column
from asched.cluster.images import ImageIndex
from asched.cluster.labels import LabelColumns
from asched.cluster.names import NodeName
from asched.cluster.node_tree import NodeTree, zone_key
from asched.cluster.nominations import Nominations
from asched.cluster.pods import PodColumns
from asched.cluster.ports import PortColumns
from asched.cluster.records import HostPort, NodeInfo, PodInfo
from asched.cluster.resources import BASE_RESOURCES, PODS
from asched.cluster.taints import TaintColumns
from asched.cluster.volumes import VolumeCatalog
from asched.cluster.what_if import WhatIf
from asched.cluster.workloads import SelectorSources

_INITIAL_CAPACITY: Final = 64
_LOG_LIMIT_FACTOR: Final = 4


@dataclass(frozen=True, slots=True)
class PlacedPod:
    """A pod counted on a row, with exactly what it added (to subtract it back)."""

    info: PodInfo
    row: int
    deltas: tuple[tuple[int, int], ...]
    nonzero_cpu: int
    nonzero_memory: int
    ports: tuple[HostPort, ...]


def _plain(pod: PodInfo) -> bool:
    """A pod without affinity terms and volumes: counting it changes no other pod's
    PreFilter or PreScore answers but those of plugins that follow the pods on the nodes
    (:attr:`NodeTable.shared_generation`)."""
    return (pod.affinity is None or pod.affinity.empty) and not pod.volumes


class NodeTable:
    """Columnar node state. See the module docstring for layout and invariants."""

    def __init__(self, capacity: int = _INITIAL_CAPACITY) -> None:
        cap = max(1, capacity)
        self.capacity = cap
        self.size = 0  # high-water mark: rows [0, size) have been used
        self.alive: npt.NDArray[np.bool_] = new_column(cap, np.bool_, fill=False)
        self.unschedulable: npt.NDArray[np.bool_] = new_column(cap, np.bool_, fill=False)
        self.zone: npt.NDArray[np.int32] = new_column(cap, np.int32, -1)
        self.seq: npt.NDArray[np.int64] = new_column(cap, np.int64, 0)
        self.nonzero_cpu: npt.NDArray[np.int64] = new_column(cap, np.int64, 0)
        self.nonzero_memory: npt.NDArray[np.int64] = new_column(cap, np.int64, 0)
        self.axes: list[str] = []
        self.axis_index: dict[str, int] = {}
        self.allocatable: list[npt.NDArray[np.int64]] = []
        self.requested: list[npt.NDArray[np.int64]] = []
        self.free: list[npt.NDArray[np.int64]] = []
        self.labels = LabelColumns(cap)
        self.taints = TaintColumns(cap)
        self.ports = PortColumns(cap)
        self.images = ImageIndex()
        #: row -> node name (None: a free row)
        self.names: list[NodeName | None] = [None] * cap
        self.nodes: list[NodeInfo | None] = [None] * cap
        #: node name -> row; keyed by ``str`` so that any name (a pod's ``spec.nodeName``,
        #: an extender's answer) is looked up as it comes (see :mod:`asched.cluster.names`)
        self.index: dict[str, int] = {}
        self._free_rows: list[int] = []
        self.pods: dict[str, PlacedPod] = {}
        self.pod_columns = PodColumns()
        #: preemptors waiting for their victims to go, by pod and by node
        self.nominations = Nominations()
        #: PodDisruptionBudgets by ``namespace/name``, for preemption
        self.budgets: dict[str, DisruptionBudget] = {}
        #: namespace name -> its labels (for namespace selectors of affinity terms)
        self.namespace_labels: dict[str, Mapping[str, str]] = {}
        #: Services, controllers and sets (for PodTopologySpread's default constraints)
        self.workloads = SelectorSources()
        #: what the counted pods attach and mount, per row (:mod:`attachments`)
        self.attachments = Attachments(cap)
        self._volumes = VolumeCatalog()
        self._volumes.listeners.append(self._storage_changed)
        self.row_pods: list[dict[str, PlacedPod]] = [{} for _ in range(cap)]
        self.orphans: dict[str, dict[str, PodInfo]] = {}
        #: the zones, for :meth:`order`
        self._tree = NodeTree()
        self._order: npt.NDArray[np.intp] | None = None
        self.epoch = 0
        self.generation = 0
        #: bumps on every change but a plain pod counted or taken off (see
        #: :meth:`shared_changed`)
        self.shared_generation = 0
        self.changes: list[int] = []
        self.changes_base = 0
        #: what-ifs open (:meth:`what_if`); nested ones count each
        self.what_ifs_open = 0
        #: the rows whose node changed, and the annotation columns refreshed from them
        self._annotation_columns = AnnotationColumns()
        for name in BASE_RESOURCES:
            self.ensure_axis(name)

    @property
    def volumes(self) -> VolumeCatalog:
        """PVs, claims, storage classes and CSI objects (the volume plugins read them).

        Assigning another catalog recounts :attr:`attachments` against it.
        """
        return self._volumes

    @volumes.setter
    def volumes(self, catalog: VolumeCatalog) -> None:
        if self._storage_changed in self._volumes.listeners:
            self._volumes.listeners.remove(self._storage_changed)
        self._volumes = catalog
        catalog.listeners.append(self._storage_changed)
        self.attachments.rebuild(catalog, self.index)

    def shared_changed(self) -> None:
        """Note a change other than a *plain* pod (no affinity terms, no volumes) counted
        on a node or taken off: a node (added, updated, removed), a resource axis, a pod
        with affinity terms or volumes, the storage objects, and, noted by whoever changes
        them, the namespaces' labels and the workloads. A decision's PreFilter and
        PreScore state may be reused while it holds still
        (:mod:`asched.framework.pre_state`)."""
        self.shared_generation += 1

    def _storage_changed(self, resource: str, key: str) -> None:
        self.shared_changed()
        if resource == "csinodes":
            row = self.index.get(key)
            if row is not None:
                self.attachments.csi_node_changed(row, key, self._volumes)
                self._touch(row)
            return
        for row in self.attachments.storage_changed(resource, key, self._volumes):
            self._touch(row)

    @property
    def n_nodes(self) -> int:
        """Live nodes."""
        return len(self.index)

    @property
    def rows(self) -> slice:
        """All rows ever used, ``[0, size)``; dead rows have ``alive`` False."""
        return slice(0, self.size)

    def ensure_axis(self, name: str) -> int:
        """The column index of resource ``name``, adding a zero column if it is new."""
        found = self.axis_index.get(name)
        if found is None:
            found = len(self.axes)
            self.axes.append(name)
            self.axis_index[name] = found
            self.allocatable.append(new_column(self.capacity, np.int64, 0))
            self.requested.append(new_column(self.capacity, np.int64, 0))
            self.free.append(new_column(self.capacity, np.int64, 0))
            self._structural()
        return found

    def _grow(self) -> None:
        cap = self.capacity * 2
        for attr, fill in (
            ("alive", False),
            ("unschedulable", False),
            ("zone", -1),
            ("seq", 0),
            ("nonzero_cpu", 0),
            ("nonzero_memory", 0),
        ):
            setattr(self, attr, grown(getattr(self, attr), cap, fill))
        self.allocatable = [grown(c, cap, 0) for c in self.allocatable]
        self.requested = [grown(c, cap, 0) for c in self.requested]
        self.free = [grown(c, cap, 0) for c in self.free]
        self.labels.grow(cap)
        self.taints.grow(cap)
        self.ports.grow(cap)
        self.attachments.grow(cap)
        self.names.extend([None] * (cap - self.capacity))
        self.nodes.extend([None] * (cap - self.capacity))
        self.row_pods.extend({} for _ in range(cap - self.capacity))
        self.capacity = cap
        self._structural()

    def _structural(self) -> None:
        self.shared_changed()
        self.epoch += 1
        self.generation += 1
        self._order = None

    def _touch(self, row: int) -> None:
        self.generation += 1
        self.changes.append(row)
        if len(self.changes) > _LOG_LIMIT_FACTOR * max(self.size, 64):
            drop = len(self.changes) // 2
            del self.changes[:drop]
            self.changes_base += drop

    def _node_changed(self, row: int) -> None:
        self._annotation_columns.node_changed(row, _LOG_LIMIT_FACTOR * max(self.size, 64))

    def changed_rows_since(self, mark: int) -> list[int] | None:
        """Rows touched since change position ``mark``, or None if the log no longer reaches."""
        if mark < self.changes_base:
            return None
        return self.changes[mark - self.changes_base :]

    @property
    def change_mark(self) -> int:
        """The current position in the change log."""
        return self.changes_base + len(self.changes)

    def what_if(self) -> WhatIf:
        """A what-if over this table (a context manager): pods counted or taken off
        through it are taken back exactly when it closes (:mod:`asched.cluster.what_if`)."""
        return WhatIf(self)

    def _writable(self) -> None:
        if self.what_ifs_open:
            raise RuntimeError("the node table is changed while a what-if is open")

    def upsert_node(self, node: NodeInfo) -> int:
        """Add ``node`` or update its row in place; return its row."""
        self._writable()
        row = self.index.get(node.name)
        if row is None:
            return self._add_node(node)
        old = self.nodes[row]
        self._write_node(row, node, old)
        self._touch(row)
        self._node_changed(row)
        self.shared_changed()
        return row

    def _add_node(self, node: NodeInfo) -> int:
        if self._free_rows:
            row = self._free_rows.pop()
        else:
            if self.size == self.capacity:
                self._grow()
            row = self.size
            self.size += 1
        self.index[node.name] = row
        self.names[row] = NodeName(node.name)
        self.alive[row] = True
        self._write_node(row, node, None)
        self.attachments.set_csi_node(row, node.name, self._volumes)
        self._node_changed(row)
        self._structural()
        for pod in self.orphans.pop(node.name, {}).values():
            self._count(pod, node.name)
        return row

    def _write_node(self, row: int, node: NodeInfo, old: NodeInfo | None) -> None:
        for name in node.allocatable:
            self.ensure_axis(name)
        for axis, name in enumerate(self.axes):
            amount = node.allocatable.get(name, 0)
            self.allocatable[axis][row] = amount
            self.free[axis][row] = amount - self.requested[axis][row]
        self.unschedulable[row] = node.unschedulable
        if old is None or old.labels != node.labels:
            self.labels.set_row(row, node.labels)
            if self._tree.set_zone(
                self.zone, self.seq, row, zone_key(node.labels), moved=old is not None
            ):
                self._order = None
        if old is None or old.taints != node.taints:
            self.taints.set_row(row, node.taints)
        if old is None or old.images != node.images:
            self.images.set_row(row, node.images)
            self._structural()  # image spread is global to ImageLocality
        self.nodes[row] = node

    def remove_node(self, name: str) -> None:
        """Delete a node's row; its pods wait as orphans in case the node comes back."""
        self._writable()
        row = self.index.pop(name, None)
        if row is None:
            return
        for key, placed in list(self.row_pods[row].items()):
            self._uncount(key)
            self.orphans.setdefault(name, {})[key] = placed.info
        self._tree.leave_zone(int(self.zone[row]))
        self.alive[row] = False
        self.unschedulable[row] = False
        self.zone[row] = -1
        for axis in range(len(self.axes)):
            self.allocatable[axis][row] = 0
            self.requested[axis][row] = 0
            self.free[axis][row] = 0
        self.nonzero_cpu[row] = 0
        self.nonzero_memory[row] = 0
        self.labels.clear_row(row)
        self.taints.clear_row(row)
        self.ports.clear_row(row)
        self.images.clear_row(row)
        self.attachments.clear_row(row)
        self.names[row] = None
        self.nodes[row] = None
        self._free_rows.append(row)
        self._node_changed(row)
        self._structural()

    def order(self) -> npt.NDArray[np.intp]:
        """Live rows in upstream's zone-interleaved node-tree order (upstream:
        pkg/scheduler/backend/cache/node_tree.go, nodeTree.list)."""
        if self._order is None:
            live = np.flatnonzero(self.alive[: self.size])
            self._order = self._tree.order(live, self.zone[live], self.seq[live])
        return self._order

    def add_pod(self, pod: PodInfo, node_name: str) -> bool:
        """Count ``pod`` on ``node_name``; False (kept as an orphan) if the node is unknown."""
        self._writable()
        return self._count(pod, node_name)

    def remove_pod(self, key: str) -> PodInfo | None:
        """Subtract a pod exactly as it was added; return it (None if not counted)."""
        self._writable()
        return self._uncount(key)

    def _count(self, pod: PodInfo, node_name: str) -> bool:
        """:meth:`add_pod` without the what-if guard: for this table and its what-ifs."""
        if pod.key in self.pods:
            self._uncount(pod.key)
        row = self.index.get(node_name)
        if row is None:
            self.orphans.setdefault(node_name, {})[pod.key] = pod
            return False
        deltas = [(self.ensure_axis(name), amount) for name, amount in pod.requests.items()]
        deltas.append((self.axis_index[PODS], 1))
        placed = PlacedPod(
            pod, row, tuple(deltas), pod.nonzero_cpu, pod.nonzero_memory, pod.host_ports
        )
        self._apply(placed, +1)
        if not _plain(pod) and not self.what_ifs_open:
            self.shared_changed()
        self.pods[pod.key] = placed
        self.pod_columns.add(pod, row, deltas)
        self.row_pods[row][pod.key] = placed
        self.attachments.add(pod, row, self._volumes)
        return True

    def _uncount(self, key: str) -> PodInfo | None:
        """:meth:`remove_pod` without the what-if guard: for this table and its what-ifs."""
        placed = self.pods.pop(key, None)
        if placed is None:
            for orphans in self.orphans.values():
                if key in orphans:
                    return orphans.pop(key)
            return None
        del self.row_pods[placed.row][key]
        self.pod_columns.remove(key)
        self.attachments.remove(key)
        self._apply(placed, -1)
        if not _plain(placed.info) and not self.what_ifs_open:
            self.shared_changed()
        return placed.info

    def _apply(self, placed: PlacedPod, sign: int) -> None:
        row = placed.row
        for axis, amount in placed.deltas:
            self.requested[axis][row] += sign * amount
            self.free[axis][row] -= sign * amount
        self.nonzero_cpu[row] += sign * placed.nonzero_cpu
        self.nonzero_memory[row] += sign * placed.nonzero_memory
        if placed.ports:
            self.ports.add(row, placed.ports, sign)
        if not self.what_ifs_open:
            self._touch(row)

    def _column_of(
        self, columns: list[npt.NDArray[np.int64]], resource: str
    ) -> npt.NDArray[np.int64]:
        axis = self.axis_index.get(resource)
        view = np.zeros(self.size, np.int64) if axis is None else columns[axis][: self.size]
        view.flags.writeable = False
        return view

    def allocatable_of(self, resource: str) -> npt.NDArray[np.int64]:
        """``int64[size]``, read-only: each row's allocatable ``resource`` in canonical units
        (cpu millicores, memory and storage bytes, ``pods`` a count); 0 where unknown."""
        return self._column_of(self.allocatable, resource)

    def requested_of(self, resource: str) -> npt.NDArray[np.int64]:
        """``int64[size]``, read-only: what the pods counted on each row request."""
        return self._column_of(self.requested, resource)

    def free_of(self, resource: str) -> npt.NDArray[np.int64]:
        """``int64[size]``, read-only: allocatable minus requested."""
        return self._column_of(self.free, resource)

    def label_codes(self, key: str) -> tuple[npt.NDArray[np.int32], tuple[str, ...]]:
        """Label ``key`` dictionary-encoded: ``int32[size]`` (read-only) holding each row's
        index into the returned values, ``-1`` where the node lacks the key. Work per
        distinct value, then gather: ``parsed[codes]``."""
        found = self.labels.keys.get(key)
        if found is None:
            codes = np.full(self.size, -1, np.int32)
            return codes, ()
        codes = found.column[: self.size]
        codes.flags.writeable = False
        return codes, tuple(found.values)

    def label_matches(
        self, key: str, operator: str, values: tuple[str, ...], rows: Rows
    ) -> npt.NDArray[np.bool_]:
        """A node-selector requirement (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``,
        ``Gt``, ``Lt``) over ``rows``: ``bool[len(rows)]``."""
        return self.labels.requirement(key, operator, values, rows)

    def annotation_values(self, key: str) -> npt.NDArray[np.object_]:
        """Annotation ``key`` of every row: ``object[size]`` (read-only), the value's
        ``str`` or None where the node lacks it (and on dead rows). Empty annotations
        (None everywhere) unless an enabled plugin declares ``reads_annotations``.

        One column per key, kept: a call refreshes only the rows whose node changed since
        the last call for that key (pods counted on a node change nothing here), so
        asking for it in every cycle costs the node changes, not the nodes
        (:mod:`asched.cluster.annotation_columns`)."""
        return self._annotation_columns.values(key, self.nodes, self.size, self.capacity)

    def row_of(self, name: str) -> int | None:
        return self.index.get(name)

    def name_of(self, row: int) -> str:
        name = self.names[row]
        if name is None:
            raise KeyError(f"row {row} holds no node")
        return name

    def node_at(self, row: int) -> NodeInfo:
        node = self.nodes[row]
        if node is None:
            raise KeyError(f"row {row} holds no node")
        return node
