"""The PersistentVolume index: what VolumeBinding matches unbound claims against.

Upstream's binder lists the PVs of the claim's storage class and, for every node, walks
them (``FindMatchingVolume``). Here the PVs of each class are columns, so a claim's
node-independent conditions are a few array operations over the class's PVs, and the
node-dependent one (the PV's node affinity) is answered per *distinct placement*:

* ``any``: no node affinity (every node);
* ``label``: one term with one ``key In [values]`` expression (local PVs:
  ``kubernetes.io/hostname``): the PV is listed under each of its values, and a node
  sees the PVs listed under its own value of ``key`` (a lookup by label id);
* ``general``: any other affinity: one node mask per distinct affinity, cached by
  the matcher (:mod:`asched.framework.builtin.volume_binding.match`).

Layout per class (:class:`ClassPVs`), one *slot* per PV name ever seen in the class:
``capacity`` (bytes, ``int64``), ``mode`` (0 Filesystem, 1 Block), ``access`` (bit per
access mode), ``free`` (unclaimed, phase Available, not being deleted), ``live``
(present), ``group`` (the placement's id; ``-1`` for ``label``), and ``rank``: the
slot's position in (capacity, name) order, the order in which the smallest fitting PV
is chosen (upstream keeps the first of equal sizes in its cache's order, which is
unspecified; asched breaks ties by name). PVs with a ``claimRef`` are listed by claim
(``prebound``): only that claim may take them.

Kept current incrementally: the index listens to the catalog, and a changed PV updates
its slot (O(1)); ``rank`` and the label listings are rebuilt only when PVs are added
or their capacity or affinity changes (``order_version`` / ``entries_version``).
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import grown
from asched.cluster.records import NodeAffinity
from asched.cluster.volumes import ACCESS_MODES, BLOCK, PersistentVolume, VolumeCatalog

AVAILABLE: Final = "Available"
#: access mode -> its bit in ``ClassPVs.access``
ACCESS_BITS: Final = {mode: 1 << index for index, mode in enumerate(ACCESS_MODES)}
_INITIAL: Final = 16


def access_bits(modes: tuple[str, ...]) -> int:
    """The bitmask of ``modes``."""
    bits = 0
    for mode in modes:
        bits |= ACCESS_BITS.get(mode, 0)
    return bits


@dataclass(frozen=True, slots=True)
class Placement:
    """How a PV's node affinity is evaluated (see the module docstring)."""

    kind: str  # "any" | "label" | "general"
    key: str = ""
    values: tuple[str, ...] = ()
    affinity: NodeAffinity | None = None


ANY: Final = Placement("any")


def placement_of(affinity: NodeAffinity | None) -> Placement:
    """The placement of a PV with node affinity ``affinity``."""
    if affinity is None or affinity.required is None:
        return ANY
    terms = affinity.required
    if len(terms) == 1 and not terms[0].invalid and not terms[0].match_fields:
        expressions = terms[0].match_expressions
        if len(expressions) == 1 and expressions[0].operator == "In":
            values = tuple(sorted(set(expressions[0].values)))
            return Placement("label", expressions[0].key, values)
    return Placement("general", affinity=affinity)


class ClassPVs:
    """The PVs of one storage class as columns (see the module docstring)."""

    def __init__(self) -> None:
        self.pvs: list[PersistentVolume | None] = []
        self.slot_of: dict[str, int] = {}
        self.capacity: npt.NDArray[np.int64] = np.zeros(_INITIAL, np.int64)
        self.mode: npt.NDArray[np.int8] = np.zeros(_INITIAL, np.int8)
        self.access: npt.NDArray[np.int64] = np.zeros(_INITIAL, np.int64)
        self.free: npt.NDArray[np.bool_] = np.zeros(_INITIAL, np.bool_)
        self.live: npt.NDArray[np.bool_] = np.zeros(_INITIAL, np.bool_)
        self.group: npt.NDArray[np.int32] = np.full(_INITIAL, -1, np.int32)
        self.placements: list[Placement] = []
        #: distinct non-label placement -> its group id (the index into ``groups``)
        self.group_ids: dict[Hashable, int] = {}
        self.groups: list[Placement] = []
        #: claim key (``namespace/name``) -> slots whose PV's claimRef names it
        self.prebound: dict[str, set[int]] = {}
        self._rank: npt.NDArray[np.int64] | None = None
        self._by_rank: npt.NDArray[np.intp] | None = None
        self._entries: dict[str, tuple[npt.NDArray[np.intp], tuple[str, ...]]] | None = None
        #: (capacity, name, slot) of every slot, sorted: kept by insertion
        self._order: list[tuple[int, str, int]] = []
        #: per label key, the listings (slot, value) in the order they were added
        self._listed_slots: dict[str, list[int]] = {}
        self._listed_values: dict[str, list[str]] = {}
        self.order_version = 0
        #: bumps when listings change; ``entries_rebuilt`` only when listings were removed
        #: or reordered (otherwise new listings were appended at the end)
        self.entries_version = 0
        self.entries_rebuilt = 0

    @property
    def size(self) -> int:
        return len(self.pvs)

    def _slot(self, name: str) -> int:
        slot = self.slot_of.get(name)
        if slot is None:
            slot = len(self.pvs)
            if slot == len(self.capacity):
                cap = 2 * slot
                self.capacity = grown(self.capacity, cap, 0)
                self.mode = grown(self.mode, cap, 0)
                self.access = grown(self.access, cap, 0)
                self.free = grown(self.free, cap, fill=False)
                self.live = grown(self.live, cap, fill=False)
                self.group = grown(self.group, cap, -1)
            self.pvs.append(None)
            self.placements.append(ANY)
            self.slot_of[name] = slot
        return slot

    def put(self, pv: PersistentVolume) -> None:
        slot = self._slot(pv.name)
        old = self.pvs[slot]
        self._unlist(slot, old)
        self.pvs[slot] = pv
        self.live[slot] = True
        self.free[slot] = pv.claim_ref is None and pv.phase == AVAILABLE and not pv.deleting
        self.mode[slot] = 1 if pv.volume_mode == BLOCK else 0
        self.access[slot] = access_bits(pv.access_modes)
        if old is None or old.capacity != pv.capacity:
            self._reorder(slot, pv, old)
        if old is None or old.node_affinity != pv.node_affinity:
            placement = placement_of(pv.node_affinity)
            self._relist(slot, self.placements[slot] if old is not None else None, placement)
            self.placements[slot] = placement
            if placement.kind == "label":
                self.group[slot] = -1
            else:
                marker: Hashable = placement.affinity if placement.kind == "general" else ()
                gid = self.group_ids.get(marker)
                if gid is None:
                    gid = self.group_ids[marker] = len(self.groups)
                    self.groups.append(placement)
                self.group[slot] = gid
        if pv.claim_ref is not None:
            self.prebound.setdefault(pv.claim_ref.key, set()).add(slot)

    def remove(self, name: str) -> None:
        slot = self.slot_of.get(name)
        if slot is None or self.pvs[slot] is None:
            return
        self._unlist(slot, self.pvs[slot])
        self.pvs[slot] = None
        self.live[slot] = False
        self.free[slot] = False

    def _unlist(self, slot: int, old: PersistentVolume | None) -> None:
        if old is not None and old.claim_ref is not None:
            listed = self.prebound.get(old.claim_ref.key)
            if listed is not None:
                listed.discard(slot)
                if not listed:
                    del self.prebound[old.claim_ref.key]

    def _reorder(self, slot: int, pv: PersistentVolume, old: PersistentVolume | None) -> None:
        """Move the slot to its (capacity, name) place (a removed PV keeps its place)."""
        if old is not None or slot < len(self._order):
            previous = (int(self.capacity[slot]), pv.name, slot)
            at = bisect.bisect_left(self._order, previous)
            if at < len(self._order) and self._order[at] == previous:
                del self._order[at]
        self.capacity[slot] = pv.capacity
        bisect.insort(self._order, (pv.capacity, pv.name, slot))
        self._rank = None
        self._by_rank = None
        self.order_version += 1

    def _relist(self, slot: int, before: Placement | None, after: Placement) -> None:
        """Update the label listings for a slot whose placement changes."""
        if before is not None and before.kind == "label":
            self.entries_rebuilt += 1
            key = before.key
            pairs = [
                (s, v)
                for s, v in zip(self._listed_slots[key], self._listed_values[key], strict=True)
                if s != slot
            ]
            self._listed_slots[key] = [s for s, _ in pairs]
            self._listed_values[key] = [v for _, v in pairs]
        if after.kind == "label":
            self._listed_slots.setdefault(after.key, []).extend([slot] * len(after.values))
            self._listed_values.setdefault(after.key, []).extend(after.values)
        if (before is not None and before.kind == "label") or after.kind == "label":
            self._entries = None
            self.entries_version += 1

    @property
    def rank(self) -> npt.NDArray[np.int64]:
        """``int64[size]``: each slot's position in (capacity, name) order."""
        if self._rank is None:
            by_rank = np.fromiter(
                (slot for _, _, slot in self._order), dtype=np.intp, count=len(self._order)
            )
            rank = np.empty(self.size, dtype=np.int64)
            rank[by_rank] = np.arange(self.size, dtype=np.int64)
            self._rank, self._by_rank = rank, by_rank
        return self._rank

    @property
    def by_rank(self) -> npt.NDArray[np.intp]:
        """``intp[size]``: the slot at each rank (the inverse of :attr:`rank`)."""
        self.rank  # noqa: B018 - builds both
        assert self._by_rank is not None
        return self._by_rank

    def label_entries(self) -> dict[str, tuple[npt.NDArray[np.intp], tuple[str, ...]]]:
        """Per label key: the slots listed under it and the value of each listing
        (a PV of ``key In [a, b]`` is listed twice), over every slot ever seen; new
        listings come last unless ``entries_rebuilt`` changed."""
        if self._entries is None:
            self._entries = {
                key: (np.array(slots, dtype=np.intp), tuple(self._listed_values[key]))
                for key, slots in self._listed_slots.items()
                if slots
            }
        return self._entries


class PVIndex:
    """The PVs of a catalog by storage class, kept current through its listeners."""

    def __init__(self, catalog: VolumeCatalog) -> None:
        self.catalog = catalog
        self.classes: dict[str, ClassPVs] = {}
        self._class_of: dict[str, str] = {}
        self._dirty: set[str] = set(catalog.pvs)
        #: bumps whenever a CSIStorageCapacity changes (masks derived from them are stale)
        self.capacity_version = 0
        catalog.listeners.append(self._heard)

    def _heard(self, resource: str, key: str) -> None:
        if resource == "persistentvolumes":
            self._dirty.add(key)
        elif resource == "csistoragecapacities":
            self.capacity_version += 1

    def sync(self) -> None:
        """Apply the PV changes heard since the last call."""
        if not self._dirty:
            return
        dirty, self._dirty = self._dirty, set()
        for name in dirty:
            pv = self.catalog.pvs.get(name)
            before = self._class_of.get(name)
            if before is not None and (pv is None or pv.storage_class != before):
                self.classes[before].remove(name)
                del self._class_of[name]
            if pv is not None:
                target = self.classes.get(pv.storage_class)
                if target is None:
                    target = self.classes[pv.storage_class] = ClassPVs()
                target.put(pv)
                self._class_of[name] = pv.storage_class

    def of_class(self, name: str) -> ClassPVs | None:
        """The current PVs of storage class ``name`` (None when it has none)."""
        self.sync()
        return self.classes.get(name)


def index_of(catalog: VolumeCatalog) -> PVIndex:
    """The catalog's PV index, made on first use and kept on the catalog."""
    found = getattr(catalog, "pv_index", None)
    if isinstance(found, PVIndex):
        return found
    index = PVIndex(catalog)
    catalog.pv_index = index
    return index


def node_affinity_matches(affinity: NodeAffinity | None, labels: Mapping[str, str]) -> bool:
    """Upstream's ``CheckNodeAffinity`` for one node: a PV's required terms against the
    node's labels only (the node name it sees is empty, so ``matchFields`` ``In`` never
    holds and ``NotIn`` always does)."""
    if affinity is None or affinity.required is None:
        return True
    return affinity.required_matches("", labels)
