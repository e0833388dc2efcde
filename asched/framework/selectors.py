"""Vectorised node-selector matching shared by plugins.

Upstream: RequiredNodeAffinity.Match in
staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go.

``term_mask`` evaluates one NodeSelectorTerm over table rows; ``required_mask`` the
pod's ``nodeSelector`` AND its required node affinity (OR over terms). The scalar twin
of each function is in :mod:`asched.cluster.records`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import NodeAffinity, NodeSelectorTerm, Requirement
from asched.cluster.table import NodeTable
from asched.framework.interface import BoolMask


def name_in(table: NodeTable, names: tuple[str, ...], rows: Rows) -> BoolMask:
    """Rows whose node name is one of ``names``."""
    wanted = [row for row in (table.row_of(n) for n in names) if row is not None]
    if isinstance(rows, slice):
        hit = np.zeros(size_of(rows), dtype=np.bool_)
        for row in wanted:
            if rows.start <= row < rows.stop:
                hit[row - rows.start] = True
        return hit
    found: BoolMask = np.isin(rows, np.array(wanted, dtype=np.intp))
    return found


def field_mask(table: NodeTable, requirement: Requirement, rows: Rows) -> BoolMask:
    """A ``metadata.name`` In/NotIn field requirement."""
    hit = name_in(table, requirement.values, rows)
    if requirement.operator == "In":
        return hit
    missed: BoolMask = ~hit
    return missed


def term_mask(table: NodeTable, term: NodeSelectorTerm, rows: Rows) -> BoolMask:
    """Rows matching every expression and field of ``term`` (an empty term matches none)."""
    if term.empty or term.invalid:
        return np.zeros(size_of(rows), dtype=np.bool_)
    match = np.ones(size_of(rows), dtype=np.bool_)
    for req in term.match_expressions:
        match &= table.labels.requirement(req.key, req.operator, req.values, rows)
    for req in term.match_fields:
        match &= field_mask(table, req, rows)
    return match


def selector_mask(table: NodeTable, selector: Mapping[str, str], rows: Rows) -> BoolMask:
    """Rows whose labels include every ``key: value`` of ``selector``."""
    match = np.ones(size_of(rows), dtype=np.bool_)
    for key, value in selector.items():
        match &= table.labels.equals(key, value, rows)
    return match


def affinity_mask(table: NodeTable, affinity: NodeAffinity | None, rows: Rows) -> BoolMask:
    """Rows matching the required terms of ``affinity`` (OR); all rows when unset."""
    if affinity is None or affinity.required is None:
        return np.ones(size_of(rows), dtype=np.bool_)
    match = np.zeros(size_of(rows), dtype=np.bool_)
    for term in affinity.required:
        match |= term_mask(table, term, rows)
    return match


def preferred_weights(
    table: NodeTable, affinity: NodeAffinity | None, rows: Rows
) -> npt.NDArray[np.int64]:
    """Sum of the weights of the preferred terms each row matches (int64)."""
    total = np.zeros(size_of(rows), dtype=np.int64)
    if affinity is None:
        return total
    for preferred in affinity.preferred:
        if preferred.weight and not preferred.term.empty:
            total += np.where(term_mask(table, preferred.term, rows), preferred.weight, 0)
    return total
