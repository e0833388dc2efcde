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
the node's labels only, so a ``matchFields`` requirement sees an empty node name
(:mod:`asched.framework.builtin.volume_binding.masks`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.pv_index import ANY, ClassPVs, PVIndex, access_bits, placement_of
from asched.cluster.table import NodeTable
from asched.cluster.volumes import (
    BLOCK,
    SELECTED_NODE_ANNOTATION,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeCatalog,
)
from asched.framework.builtin.volume_binding.masks import MaskCache, selector_mask, term_mask
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


def _capacity_mask(
    catalog: VolumeCatalog, class_name: str, request: int, table: NodeTable, rows: Rows
) -> BoolMask:
    """Rows with an accessible CSIStorageCapacity of the class with room for ``request``.

    Capacities whose topology is one ``key = value`` label (per-node or per-zone pools,
    the usual shape) are answered with one label lookup per key for all their values;
    any other topology gets its own selector mask."""
    ok = np.zeros(size_of(rows), dtype=np.bool_)
    by_key: dict[str, set[str]] = {}
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
        topology = capacity.node_topology
        single = () if topology is None else topology.column_requirements
        if len(single) == 1 and single[0].operator == "In" and len(single[0].values) == 1:
            by_key.setdefault(single[0].key, set()).add(single[0].values[0])
            continue
        ok |= selector_mask(table, topology, rows)
    for key, values in by_key.items():
        ok |= table.labels.requirement(key, "In", tuple(values), rows)
    return ok


def check_provisions(
    provisions: list[tuple[PersistentVolumeClaim, BoolMask]],
    pending: BoolMask,
    catalog: VolumeCatalog,
    index: PVIndex,
    table: NodeTable,
    rows: Rows,
    masks: MaskCache,
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
                allowed |= term_mask(table, term, rows)
            denied = here & ~allowed
            reasons[denied] |= BIND_CONFLICT
            pending &= ~denied
            here &= allowed
        driver = catalog.csi_drivers.get(provisioner)
        if claim.request > 0 and driver is not None and driver.storage_capacity:
            key = ("capacity", name, claim.request, index.capacity_version)
            compute = functools.partial(_capacity_mask, catalog, name, claim.request, table)
            room = masks.kept(table, key, compute)
            short = here & ~room[rows]
            reasons[short] |= NOT_ENOUGH_SPACE
            pending &= ~short
    return reasons


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
    reasons |= check_provisions(provisions, active.copy(), catalog, index, table, rows, masks)
    return PodVolumes(reasons, matches)


def pv_mask(pv: PersistentVolume, table: NodeTable, rows: Rows, masks: MaskCache) -> BoolMask:
    """Rows a PV's node affinity allows."""
    return masks.placement(table, placement_of(pv.node_affinity), rows)
