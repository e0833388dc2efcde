"""Node masks for VolumeBinding: PV node affinity, label selectors, and their cache.

``affinity_mask`` is upstream's ``CheckNodeAffinity`` over table rows: a PV's required
terms against the nodes' labels only (the node name it sees is empty, so a
``matchFields`` ``In`` never holds and ``NotIn`` always does). :class:`MaskCache` keeps
the masks of the distinct general PV affinities current as nodes change, and the label
ids and sorted order of the PV index's label listings (:mod:`asched.cluster.pv_index`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.labelselector import LabelSelector
from asched.cluster.pv_index import ClassPVs, Placement
from asched.cluster.records import NodeAffinity, NodeSelectorTerm
from asched.cluster.table import NodeTable
from asched.framework.interface import BoolMask

#: masks kept at most (distinct general PV affinities and capacity questions)
_MAX_MASKS: Final = 1024


def term_mask(table: NodeTable, term: NodeSelectorTerm, rows: Rows) -> BoolMask:
    """Rows whose labels satisfy one term (every expression; fields see an empty name)."""
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
        match |= term_mask(table, term, rows)
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
        self._masks: dict[Hashable, tuple[BoolMask, int, int]] = {}
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
        return self.kept(table, affinity, lambda rows: affinity_mask(table, affinity, rows))

    def kept(
        self, table: NodeTable, key: Hashable, compute: Callable[[Rows], BoolMask]
    ) -> BoolMask:
        """``bool[table.size]``: ``compute`` over every row, kept under ``key`` (which
        must name everything but the rows it depends on) and brought up to date on the
        rows changed since."""
        self._for(table)
        found = self._masks.get(key)
        mark = table.change_mark
        if found is not None and found[1] == table.epoch and len(found[0]) == table.size:
            mask, _, since = found
            if since != mark:
                changed = table.changed_rows_since(since)
                if changed is None:
                    mask = compute(table.rows)
                elif changed:
                    touched = np.unique(np.array(changed, dtype=np.intp))
                    mask[touched] = compute(touched)
                self._masks[key] = (mask, table.epoch, mark)
            return mask
        if len(self._masks) >= _MAX_MASKS:  # stale keys (old capacity versions): start over
            self._masks.clear()
        mask = compute(table.rows)
        self._masks[key] = (mask, table.epoch, mark)
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
