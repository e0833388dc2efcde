"""What the pods counted on each row attach and mount: the volume plugins' columns.

Kept by the node table (``table.attachments``) beside its other columns, updated when a
pod is added or removed (assume, forget, watch events) so that removing a pod subtracts
exactly what adding it added:

* ``counts[driver]``: ``int64[cap]``, the number of distinct volumes of that CSI driver
  attached on each row (:mod:`asched.cluster.csi_volumes` says what counts);
  ``users[unique]``: row -> how many counted pods there use that volume (a volume used
  by two pods of a node is attached once);
* ``limits[driver]``: ``int64[cap]``, the row's CSINode ``allocatable.count`` for the
  driver, ``-1`` when none is given; ``has_csi_node``: ``bool[cap]``;
* ``claim_refs[namespace/claim]``: how many ``persistentVolumeClaim`` volumes of counted
  pods name the claim (ReadWriteOncePod: "is the claim in use");
* ``disks[(kind, id)]``: row -> ``[read-write users, read-only users]`` of the in-tree
  disks VolumeRestrictions compares (GCE PD, AWS EBS, iSCSI by iqn, RBD by
  ``pool/image@monitor``, one entry per monitor).

What a pod attaches depends on claims, PVs and classes that may change after it was
counted: :meth:`Attachments.storage_changed` recounts exactly the pods that depend on
the changed object (a claim's pods; the pods of the claims a PV or class is used by;
every pod of a row whose CSINode changed), so the columns always equal a recount
from scratch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import grown, new_column
from asched.cluster.csi_volumes import attachable_volumes
from asched.cluster.records import PodInfo
from asched.cluster.volumes import PodVolume, VolumeCatalog

#: in-tree disk kinds VolumeRestrictions compares
DISK_KINDS: Final = frozenset({"gce-pd", "aws-ebs", "iscsi", "rbd"})

DiskKey = tuple[str, str]


def disk_keys(volume: PodVolume) -> tuple[DiskKey, ...]:
    """The keys an in-tree disk volume is indexed under (one per RBD monitor)."""
    if volume.kind == "rbd":
        return tuple(("rbd", f"{volume.handle}@{m}") for m in sorted(volume.monitors))
    if volume.kind in DISK_KINDS:
        return ((volume.kind, volume.handle),)
    return ()


@dataclass(slots=True)
class _Counted:
    """One pod's contribution, as added (what removing it subtracts)."""

    pod: PodInfo
    row: int
    attached: dict[str, str] = field(default_factory=dict)
    claims: tuple[str, ...] = ()
    disks: tuple[tuple[DiskKey, bool], ...] = ()
    #: the storage objects its ``attached`` depends on: ("claim"|"pv"|"class", key)
    depends: frozenset[tuple[str, str]] = frozenset()


class Attachments:
    """The columns of the module docstring, for a table of ``capacity`` rows."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.counts: dict[str, npt.NDArray[np.int64]] = {}
        self.limits: dict[str, npt.NDArray[np.int64]] = {}
        self.has_csi_node: npt.NDArray[np.bool_] = new_column(capacity, np.bool_, fill=False)
        self.users: dict[str, dict[int, int]] = {}
        self.claim_refs: dict[str, int] = {}
        self.disks: dict[DiskKey, dict[int, list[int]]] = {}
        self._counted: dict[str, _Counted] = {}
        self._row_counted: dict[int, set[str]] = {}
        self._dependents: dict[tuple[str, str], set[str]] = {}
        self._row_limits: dict[int, tuple[str, ...]] = {}

    def grow(self, capacity: int) -> None:
        self.counts = {d: grown(c, capacity, 0) for d, c in self.counts.items()}
        self.limits = {d: grown(c, capacity, -1) for d, c in self.limits.items()}
        self.has_csi_node = grown(self.has_csi_node, capacity, fill=False)
        self.capacity = capacity

    def _count_column(self, driver: str) -> npt.NDArray[np.int64]:
        column = self.counts.get(driver)
        if column is None:
            column = self.counts[driver] = new_column(self.capacity, np.int64, 0)
        return column

    def count_of(self, driver: str, size: int) -> npt.NDArray[np.int64]:
        """``int64[size]``: distinct attached volumes of ``driver`` per row (0 if none)."""
        column = self.counts.get(driver)
        return np.zeros(size, np.int64) if column is None else column[:size]

    def limit_of(self, driver: str, size: int) -> npt.NDArray[np.int64]:
        """``int64[size]``: each row's attach limit for ``driver``; -1 where none."""
        column = self.limits.get(driver)
        return np.full(size, -1, np.int64) if column is None else column[:size]

    def set_csi_node(self, row: int, name: str, catalog: VolumeCatalog) -> None:
        """Write the row's limit columns from the CSINode named ``name`` (if any)."""
        for driver in self._row_limits.pop(row, ()):
            self.limits[driver][row] = -1
        csi_node = catalog.csi_nodes.get(name)
        self.has_csi_node[row] = csi_node is not None
        if csi_node is None:
            return
        written = []
        for driver, count in csi_node.limits.items():
            if count is None:
                continue
            column = self.limits.get(driver)
            if column is None:
                column = self.limits[driver] = new_column(self.capacity, np.int64, -1)
            column[row] = count
            written.append(driver)
        self._row_limits[row] = tuple(written)

    def clear_row(self, row: int) -> None:
        """A node left the row (its pods were removed first)."""
        for driver in self._row_limits.pop(row, ()):
            self.limits[driver][row] = -1
        self.has_csi_node[row] = False

    def add(self, pod: PodInfo, row: int, catalog: VolumeCatalog) -> None:
        """Count ``pod`` on ``row`` (it must not be counted already)."""
        if not pod.volumes:
            return
        claims = tuple(f"{pod.namespace}/{v.claim}" for v in pod.volumes if v.kind == "claim")
        disks = tuple((key, v.read_only) for v in pod.volumes for key in disk_keys(v))
        counted = _Counted(pod, row, claims=claims, disks=disks)
        self._counted[pod.key] = counted
        self._row_counted.setdefault(row, set()).add(pod.key)
        for claim in claims:
            self.claim_refs[claim] = self.claim_refs.get(claim, 0) + 1
        for key, read_only in disks:
            entry = self.disks.setdefault(key, {}).setdefault(row, [0, 0])
            entry[1 if read_only else 0] += 1
        self._attach(counted, catalog)

    def remove(self, key: str) -> None:
        """Subtract a counted pod exactly as it was added (no-op if not counted)."""
        counted = self._counted.pop(key, None)
        if counted is None:
            return
        row = counted.row
        self._row_counted[row].discard(key)
        if not self._row_counted[row]:
            del self._row_counted[row]
        for claim in counted.claims:
            self.claim_refs[claim] -= 1
            if not self.claim_refs[claim]:
                del self.claim_refs[claim]
        for disk, read_only in counted.disks:
            entry = self.disks[disk][row]
            entry[1 if read_only else 0] -= 1
            if entry == [0, 0]:
                del self.disks[disk][row]
                if not self.disks[disk]:
                    del self.disks[disk]
        self._detach(counted)

    def _attach(self, counted: _Counted, catalog: VolumeCatalog) -> None:
        pod, row = counted.pod, counted.row
        migrated = bool(self.has_csi_node[row])
        counted.attached = attachable_volumes(pod, catalog, migrated=migrated, new_pod=False)
        counted.depends = _dependencies(pod, catalog)
        for dependency in counted.depends:
            self._dependents.setdefault(dependency, set()).add(pod.key)
        for unique, driver in counted.attached.items():
            rows = self.users.setdefault(unique, {})
            rows[row] = rows.get(row, 0) + 1
            if rows[row] == 1:
                self._count_column(driver)[row] += 1

    def _detach(self, counted: _Counted) -> None:
        row = counted.row
        for dependency in counted.depends:
            dependents = self._dependents[dependency]
            dependents.discard(counted.pod.key)
            if not dependents:
                del self._dependents[dependency]
        for unique, driver in counted.attached.items():
            rows = self.users[unique]
            rows[row] -= 1
            if not rows[row]:
                del rows[row]
                self.counts[driver][row] -= 1
                if not rows:
                    del self.users[unique]
        counted.attached = {}
        counted.depends = frozenset()

    def _recount(self, keys: Iterable[str], catalog: VolumeCatalog) -> list[int]:
        rows = []
        for key in list(keys):
            counted = self._counted.get(key)
            if counted is not None:
                self._detach(counted)
                self._attach(counted, catalog)
                rows.append(counted.row)
        return rows

    def storage_changed(self, resource: str, key: str, catalog: VolumeCatalog) -> list[int]:
        """Recount the pods that depend on a changed storage object; the rows touched."""
        kind = {
            "persistentvolumeclaims": "claim",
            "persistentvolumes": "pv",
            "storageclasses": "class",
        }.get(resource)
        if kind is None:
            return []
        return self._recount(tuple(self._dependents.get((kind, key), ())), catalog)

    def csi_node_changed(self, row: int, name: str, catalog: VolumeCatalog) -> None:
        """A CSINode of the node at ``row`` was added, changed or removed."""
        self.set_csi_node(row, name, catalog)
        self._recount(tuple(self._row_counted.get(row, ())), catalog)

    def rebuild(self, catalog: VolumeCatalog, names: dict[str, int]) -> None:
        """Recount everything against a new catalog (``names``: node name -> row)."""
        for name, row in names.items():
            self.set_csi_node(row, name, catalog)
        self._recount(tuple(self._counted), catalog)


def _dependencies(pod: PodInfo, catalog: VolumeCatalog) -> frozenset[tuple[str, str]]:
    """The storage objects what ``pod`` attaches is read from."""
    out: set[tuple[str, str]] = set()
    for volume in pod.volumes:
        if volume.kind not in ("claim", "ephemeral") or not volume.claim:
            continue
        key = f"{pod.namespace}/{volume.claim}"
        out.add(("claim", key))
        claim = catalog.claims.get(key)
        if claim is None:
            continue
        if claim.volume_name:
            out.add(("pv", claim.volume_name))
        if claim.storage_class:
            out.add(("class", claim.storage_class))
    return frozenset(out)
