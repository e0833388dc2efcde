"""VolumeBinding's per-node answer, vectorised over table rows (upstream's FindPodVolumes).

For one pod, :func:`find_pod_volumes` computes over the selected rows what upstream's
binder computes node by node (``binder.go``), in the same order:

1. bound claims, in the pod's order: the first whose PV is missing sets
   ``PV_NOT_EXIST`` (and stops the check), the first whose PV's node affinity the node
   does not satisfy sets ``NODE_CONFLICT``;
2. unbound WaitForFirstConsumer claims: a claim already carrying the selected-node
   annotation for another node sets ``BIND_CONFLICT`` and ends the node's check; the
   others are matched to static PVs, smallest request first, each taking the smallest
   fitting PV not taken by an earlier claim on that node (a PV pre-bound to the claim
   wins; if its affinity does not fit the node the claim matches nothing there);
3. the claims left (the annotated ones, then the unmatched ones) must be provisionable,
   checked in that order, the first failure deciding: a class without a usable
   provisioner or whose ``allowedTopologies`` the node does not satisfy sets
   ``BIND_CONFLICT``; a CSI driver with ``storageCapacity: true`` and no accessible
   CSIStorageCapacity of the class with room for the request sets ``NOT_ENOUGH_SPACE``.

Static matching is where the work is. Per claim, the PVs of its class that fit
everything but the node (capacity, volume mode, access modes, selector, free) are a
boolean over the class's PV slots (:mod:`asched.cluster.pv_index`); per node, the
candidates are the fitting PVs listed under the node's value of each label key, plus
those of each other placement whose node mask holds the node. With ``k`` claims of one
class, the ``k`` smallest candidate ranks per node are enough (each earlier claim
takes at most one), so each claim costs a top-``k`` per label value (array work over
the PVs), a gather by label id, and a ``k``-wide merge over the rows. No Python loop
runs over nodes.

Node affinity of a PV is checked as upstream's ``CheckNodeAffinity`` checks it: against
the node's labels only, so a ``matchFields`` requirement sees an empty node name.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.labelselector import LabelSelector
from asched.cluster.pv_index import ANY, ClassPVs, Placement, PVIndex, access_bits, placement_of
from asched.cluster.records import NodeAffinity, NodeSelectorTerm
from asched.cluster.table import NodeTable
from asched.cluster.volumes import (
    BLOCK,
    SELECTED_NODE_ANNOTATION,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeCatalog,
)
from asched.framework.interface import BoolMask
from asched.framework.selectors import name_in

NODE_CONFLICT: Final = 1
BIND_CONFLICT: Final = 2
NOT_ENOUGH_SPACE: Final = 4
PV_NOT_EXIST: Final = 8
#: reason bit -> upstream's text, in the order upstream appends them
REASONS: Final = (
    (NODE_CONFLICT, "node(s) had volume node affinity conflict"),
    (BIND_CONFLICT, "node(s) didn't find available persistent volumes to bind"),
    (NOT_ENOUGH_SPACE, "node(s) did not have enough free storage"),
    (PV_NOT_EXIST, "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"),
)
#: the provisioner name of classes that cannot provision (upstream's NotSupportedProvisioner)
NO_PROVISIONER: Final = "kubernetes.io/no-provisioner"
NONE: Final = np.iinfo(np.int64).max

Ranks = npt.NDArray[np.int64]


class VolumeBindingError(Exception):
    """An error upstream's FindPodVolumes returns (the pod's attempt fails with it)."""


def reasons_of(bits: int) -> tuple[str, ...]:
    """Upstream's reasons for a reason bitmask, in upstream's order."""
    return tuple(text for bit, text in REASONS if bits & bit)


@dataclass(frozen=True, slots=True)
class PodClaims:
    """A pod's claims as PreFilter sorted them (upstream's PodVolumeClaims).

    ``selected``: unbound WaitForFirstConsumer claims that carry the selected-node
    annotation (pod order); ``to_match``: the other unbound WaitForFirstConsumer claims,
    by increasing request (stable).
    """

    bound: tuple[PersistentVolumeClaim, ...]
    selected: tuple[PersistentVolumeClaim, ...]
    to_match: tuple[PersistentVolumeClaim, ...]

    @property
    def all_bound(self) -> bool:
        return not self.selected and not self.to_match


def split_unbound(
    delay: list[PersistentVolumeClaim],
) -> tuple[tuple[PersistentVolumeClaim, ...], tuple[PersistentVolumeClaim, ...]]:
    """(selected, to_match) of the unbound WaitForFirstConsumer claims."""
    selected = tuple(c for c in delay if SELECTED_NODE_ANNOTATION in c.annotations)
    rest = [c for c in delay if SELECTED_NODE_ANNOTATION not in c.annotations]
    return selected, tuple(sorted(rest, key=lambda c: c.request))


# ----------------------------------------------------------------------------- masks
def _term_mask(table: NodeTable, term: NodeSelectorTerm, rows: Rows) -> BoolMask:
    if term.empty or term.invalid:
        return np.zeros(size_of(rows), dtype=np.bool_)
    nameless = {"metadata.name": ""}
    if not all(field.matches(nameless) for field in term.match_fields):
        return np.zeros(size_of(rows), dtype=np.bool_)
    match = np.ones(size_of(rows), dtype=np.bool_)
    for req in term.match_expressions:
        match &= table.labels.requirement(req.key, req.operator, req.values, rows)
    return match


def affinity_mask(table: NodeTable, affinity: NodeAffinity | None, rows: Rows) -> BoolMask:
    """Rows whose labels satisfy a PV's node affinity (``CheckNodeAffinity``)."""
    if affinity is None or affinity.required is None:
        return np.ones(size_of(rows), dtype=np.bool_)
    match = np.zeros(size_of(rows), dtype=np.bool_)
    for term in affinity.required:
        match |= _term_mask(table, term, rows)
    return match


def selector_mask(table: NodeTable, selector: LabelSelector | None, rows: Rows) -> BoolMask:
    """Rows whose labels match a label selector (None, the nil selector: none)."""
    if selector is None or selector.nothing:
        return np.zeros(size_of(rows), dtype=np.bool_)
    match = np.ones(size_of(rows), dtype=np.bool_)
    for req in selector.column_requirements:
        match &= table.labels.requirement(req.key, req.operator, req.values, rows)
    return match


class MaskCache:
    """Node masks of the distinct general PV affinities, and label ids of PV listings.

    A mask is ``bool[table.size]``, kept current: rebuilt when the table's structure
    changes (``epoch``), else recomputed on the rows changed since it was made
    (:meth:`~asched.cluster.table.NodeTable.changed_rows_since`).
    """

    def __init__(self) -> None:
        self._table: weakref.ref[NodeTable] | None = None
        self._masks: dict[NodeAffinity, tuple[BoolMask, int, int]] = {}
        self._codes: dict[tuple[int, str], tuple[int, int, int, npt.NDArray[np.int64]]] = {}
        self._orders: dict[
            tuple[int, str],
            tuple[
                tuple[int, int, int],
                tuple[npt.NDArray[np.intp], npt.NDArray[np.int64], npt.NDArray[np.int64]],
            ],
        ] = {}

    def _for(self, table: NodeTable) -> None:
        if self._table is None or self._table() is not table:
            self._table = weakref.ref(table)
            self._masks.clear()
            self._codes.clear()
            self._orders.clear()

    def affinity(self, table: NodeTable, affinity: NodeAffinity) -> BoolMask:
        """``bool[table.size]``: the rows satisfying ``affinity``."""
        self._for(table)
        found = self._masks.get(affinity)
        mark = table.change_mark
        if found is not None and found[1] == table.epoch and len(found[0]) == table.size:
            mask, _, since = found
            if since != mark:
                changed = table.changed_rows_since(since)
                if changed is None:
                    mask = affinity_mask(table, affinity, table.rows)
                elif changed:
                    touched = np.unique(np.array(changed, dtype=np.intp))
                    mask[touched] = affinity_mask(table, affinity, touched)
                self._masks[affinity] = (mask, table.epoch, mark)
            return mask
        mask = affinity_mask(table, affinity, table.rows)
        self._masks[affinity] = (mask, table.epoch, mark)
        return mask

    def placement(self, table: NodeTable, placement: Placement, rows: Rows) -> BoolMask:
        """The rows among ``rows`` a PV of ``placement`` may be used on."""
        if placement.kind == "any":
            return np.ones(size_of(rows), dtype=np.bool_)
        if placement.kind == "label":
            return table.labels.requirement(placement.key, "In", placement.values, rows)
        assert placement.affinity is not None
        selected: BoolMask = self.affinity(table, placement.affinity)[rows]
        return selected

    def listing_order(
        self,
        table: NodeTable,
        pvs: ClassPVs,
        key: str,
        slots: npt.NDArray[np.intp],
        codes: npt.NDArray[np.int64],
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The listings under ``key`` sorted by (label id, rank): their slots, label ids
        and ranks (kept until the listings, the ids or the ranks change)."""
        stamp = (pvs.entries_version, pvs.order_version, id(codes))
        found = self._orders.get((id(pvs), key))
        if found is not None and found[0] == stamp:
            return found[1]
        ranks = pvs.rank[slots]
        order = np.lexsort((ranks, codes))
        sorted_ = (slots[order], codes[order], ranks[order])
        self._orders[id(pvs), key] = (stamp, sorted_)
        return sorted_

    def codes(
        self, table: NodeTable, pvs: ClassPVs, key: str, values: tuple[str, ...]
    ) -> npt.NDArray[np.int64]:
        """The table's label id of each listed value (``-1``: no node has it)."""
        self._for(table)
        column = table.labels.keys.get(key)
        known = 0 if column is None else len(column.values)
        stamp = (pvs.entries_rebuilt, id(column), known)
        found = self._codes.get((id(pvs), key))
        ids = {} if column is None else column.ids
        if found is not None and found[:3] == stamp:
            codes = found[3]
            if len(codes) == len(values):
                return codes
            # listings were appended since: look up the new ones only
            added = np.array([ids.get(v, -1) for v in values[len(codes) :]], dtype=np.int64)
            codes = np.concatenate((codes, added))
        else:
            codes = np.array([ids.get(v, -1) for v in values], dtype=np.int64)
        self._codes[id(pvs), key] = (*stamp, codes)
        return codes


# ----------------------------------------------------------------------------- static
def fitting_slots(pvs: ClassPVs, claim: PersistentVolumeClaim) -> BoolMask:
    """``bool[pvs.size]``: free PVs of the class that fit ``claim`` on some node."""
    size = pvs.size
    need = access_bits(claim.access_modes)
    mode = 1 if claim.volume_mode == BLOCK else 0
    fit: BoolMask = (
        pvs.free[:size]
        & (pvs.capacity[:size] >= claim.request)
        & (pvs.mode[:size] == mode)
        & ((pvs.access[:size] & need) == need)
    )
    if claim.selector is not None and fit.any():
        selector = claim.selector
        for slot in np.flatnonzero(fit).tolist():
            pv = pvs.pvs[slot]
            if pv is None or not selector.matches(pv.labels):
                fit[slot] = False
    return fit


def prebound_slot(pvs: ClassPVs, claim: PersistentVolumeClaim) -> int | None:
    """The PV pre-bound to ``claim`` upstream's walk would return (smallest rank of
    those that fit its size and mode and are not being deleted), or None."""
    best: tuple[int, int] | None = None
    rank = pvs.rank
    for slot in pvs.prebound.get(claim.key, ()):
        pv = pvs.pvs[slot]
        if pv is None or pv.claim_ref is None:
            continue
        if pv.claim_ref.uid and pv.claim_ref.uid != claim.uid:
            continue
        if pv.capacity < claim.request or pv.volume_mode != claim.volume_mode or pv.deleting:
            continue
        if best is None or int(rank[slot]) < best[0]:
            best = (int(rank[slot]), slot)
    return None if best is None else best[1]


def smallest_ranks(
    pvs: ClassPVs, fit: BoolMask, k: int, table: NodeTable, rows: Rows, masks: MaskCache
) -> npt.NDArray[np.int64]:
    """``int64[len(rows), k]``: per row, the ``k`` smallest ranks of fitting PVs the row
    may use, ascending, padded with :data:`NONE`."""
    n = size_of(rows)
    rank = pvs.rank
    parts: list[npt.NDArray[np.int64]] = []
    for key, (slots, values) in pvs.label_entries().items():
        codes = masks.codes(table, pvs, key, values)
        listed, sorted_code, sorted_rank = masks.listing_order(table, pvs, key, slots, codes)
        chosen = fit[listed] & (sorted_code >= 0)
        if not chosen.any():
            continue
        column = table.labels.keys[key]
        width = len(column.values) + 1
        code, ranked = sorted_code[chosen], sorted_rank[chosen]
        change = np.ones(len(code), dtype=np.bool_)
        change[1:] = code[1:] != code[:-1]
        if k == 1:
            best = np.full(width, NONE, dtype=np.int64)
            best[code[change] + 1] = ranked[change]
            parts.append(best[column.column[rows] + 1][:, None])
            continue
        index = np.arange(len(code))
        position = index - np.maximum.accumulate(np.where(change, index, 0))
        keep = position < k
        top = np.full((width, k), NONE, dtype=np.int64)
        top[code[keep] + 1, position[keep]] = ranked[keep]
        parts.append(top[column.column[rows] + 1])
    groups = pvs.group[: pvs.size]
    grouped = fit & (groups >= 0)
    if grouped.any():
        slots = np.flatnonzero(grouped)
        for gid in np.unique(groups[slots]).tolist():
            ranked = np.sort(rank[slots[groups[slots] == gid]])[:k]
            vector = np.full(k, NONE, dtype=np.int64)
            vector[: len(ranked)] = ranked
            placement = pvs.groups[gid]
            if placement is ANY or placement.kind == "any":
                parts.append(np.broadcast_to(vector, (n, k)))
            else:
                allowed = masks.placement(table, placement, rows)
                parts.append(np.where(allowed[:, None], vector[None, :], NONE))
    if not parts:
        return np.full((n, k), NONE, dtype=np.int64)
    merged = np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]
    if merged.shape[1] == k:
        return np.ascontiguousarray(merged)
    if k == 1:
        smallest: npt.NDArray[np.int64] = merged.min(axis=1, keepdims=True)
        return smallest
    return np.sort(merged, axis=1)[:, :k]


def _first_untaken(candidates: Ranks, taken: list[Ranks]) -> Ranks:
    """Per row, the first candidate rank not in ``taken`` (:data:`NONE` if none)."""
    pick = np.full(candidates.shape[0], NONE, dtype=np.int64)
    open_rows = np.ones(candidates.shape[0], dtype=np.bool_)
    for column in range(candidates.shape[1]):
        value = candidates[:, column]
        ok = open_rows & (value != NONE)
        for earlier in taken:
            ok &= value != earlier
        pick[ok] = value[ok]
        open_rows &= ~ok
    return pick


@dataclass(frozen=True, slots=True)
class Match:
    """Per row (``int64[len(rows)]``), the rank of the PV chosen for one claim, or NONE."""

    claim: PersistentVolumeClaim
    pvs: ClassPVs | None
    ranks: Ranks


def match_static(
    claims: tuple[PersistentVolumeClaim, ...],
    index: PVIndex,
    table: NodeTable,
    rows: Rows,
    masks: MaskCache,
) -> list[Match]:
    """Upstream's findMatchingVolumes over ``rows`` for ``claims`` (sorted by request)."""
    n = size_of(rows)
    per_class: dict[str, int] = {}
    for claim in claims:
        per_class[claim.storage_class or ""] = per_class.get(claim.storage_class or "", 0) + 1
    taken: dict[str, list[Ranks]] = {}
    out: list[Match] = []
    for claim in claims:
        name = claim.storage_class or ""
        pvs = index.of_class(name)
        if pvs is None:
            out.append(Match(claim, None, np.full(n, NONE, dtype=np.int64)))
            continue
        prebound = prebound_slot(pvs, claim)
        if prebound is not None:
            allowed = masks.placement(table, pvs.placements[prebound], rows)
            ranks = np.where(allowed, int(pvs.rank[prebound]), NONE).astype(np.int64)
        else:
            earlier = taken.setdefault(name, [])
            fit = fitting_slots(pvs, claim)
            k = per_class[name]
            candidates = smallest_ranks(pvs, fit, k, table, rows, masks)
            ranks = _first_untaken(candidates, earlier) if earlier else candidates[:, 0].copy()
        taken.setdefault(name, []).append(ranks)
        out.append(Match(claim, pvs, ranks))
    return out


# ----------------------------------------------------------------------------- provisioning
def _capacity_mask(
    catalog: VolumeCatalog, class_name: str, request: int, table: NodeTable, rows: Rows
) -> BoolMask:
    """Rows with an accessible CSIStorageCapacity of the class with room for ``request``."""
    ok = np.zeros(size_of(rows), dtype=np.bool_)
    for capacity in catalog.capacities.values():
        if capacity.storage_class != class_name:
            continue
        limit = (
            capacity.maximum_volume_size
            if capacity.maximum_volume_size is not None
            else capacity.capacity
        )
        if limit is None or limit < request:
            continue
        ok |= selector_mask(table, capacity.node_topology, rows)
    return ok


def check_provisions(
    provisions: list[tuple[PersistentVolumeClaim, BoolMask]],
    pending: BoolMask,
    catalog: VolumeCatalog,
    table: NodeTable,
    rows: Rows,
) -> npt.NDArray[np.int8]:
    """Upstream's checkVolumeProvisions per row: ``(claim, present)`` in its order,
    ``present`` the rows where the claim is to be provisioned; ``pending`` the rows still
    being checked (modified). Returns the reason bits per row."""
    reasons = np.zeros(size_of(rows), dtype=np.int8)
    for claim, present in provisions:
        here = pending & present
        if not here.any():
            continue
        name = claim.storage_class or ""
        if not name:
            raise VolumeBindingError(f'no class for claim "{claim.key}"')
        storage_class = catalog.classes.get(name)
        if storage_class is None:
            raise VolumeBindingError(f'failed to find storage class "{name}"')
        provisioner = storage_class.provisioner
        if not provisioner or provisioner == NO_PROVISIONER:
            reasons[here] |= BIND_CONFLICT
            pending &= ~here
            continue
        if storage_class.allowed_topologies:
            allowed = np.zeros(size_of(rows), dtype=np.bool_)
            for term in storage_class.allowed_topologies:
                allowed |= _term_mask(table, term, rows)
            denied = here & ~allowed
            reasons[denied] |= BIND_CONFLICT
            pending &= ~denied
            here &= allowed
        driver = catalog.csi_drivers.get(provisioner)
        if claim.request > 0 and driver is not None and driver.storage_capacity:
            short = here & ~_capacity_mask(catalog, name, claim.request, table, rows)
            reasons[short] |= NOT_ENOUGH_SPACE
            pending &= ~short
    return reasons


# ----------------------------------------------------------------------------- all of it
@dataclass(frozen=True, slots=True)
class PodVolumes:
    """The outcome over ``rows``: reason bits per row and the static matches."""

    reasons: npt.NDArray[np.int8]
    matches: list[Match]


def find_pod_volumes(
    claims: PodClaims,
    catalog: VolumeCatalog,
    index: PVIndex,
    table: NodeTable,
    rows: Rows,
    masks: MaskCache,
) -> PodVolumes:
    """Upstream's FindPodVolumes over ``rows`` (see the module docstring)."""
    n = size_of(rows)
    reasons = np.zeros(n, dtype=np.int8)
    pending = np.ones(n, dtype=np.bool_)
    for claim in claims.bound:
        pv = catalog.pvs.get(claim.volume_name)
        if pv is None:
            reasons[pending] |= PV_NOT_EXIST
            break
        fits = pv_mask(pv, table, rows, masks)
        reasons[pending & ~fits] |= NODE_CONFLICT
        pending &= fits
    if claims.all_bound:
        return PodVolumes(reasons, [])
    active = np.ones(n, dtype=np.bool_)
    for claim in claims.selected:
        active &= name_in(table, (claim.selected_node,), rows)
    reasons[~active] |= BIND_CONFLICT
    matches = match_static(claims.to_match, index, table, rows, masks)
    provisions = [(claim, active) for claim in claims.selected]
    provisions += [(m.claim, active & (m.ranks == NONE)) for m in matches]
    reasons |= check_provisions(provisions, active.copy(), catalog, table, rows)
    return PodVolumes(reasons, matches)


def pv_mask(pv: PersistentVolume, table: NodeTable, rows: Rows, masks: MaskCache) -> BoolMask:
    """Rows a PV's node affinity allows."""
    return masks.placement(table, placement_of(pv.node_affinity), rows)
