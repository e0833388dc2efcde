"""Resource-based scoring maths shared by NodeResourcesFit and BalancedAllocation.

Sections 6.3 and 7. For each configured resource ``r`` a :class:`ResourceTerm` holds the
node-side columns and the pod's request; a node whose allocatable of ``r`` is 0 leaves
``r`` out of both the numerator and the weight sum. All arithmetic is upstream's: int64
with truncating division, ``math.Round`` half away from zero, float64 fractions.

Arrays are ``int64`` of shape ``(n_selected_rows,)``, resources in canonical units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows
from asched.cluster.records import PodInfo
from asched.cluster.resources import CPU, MEMORY, is_scalar
from asched.cluster.table import NodeTable
from asched.config.types import ResourceSpec, ShapePoint
from asched.framework.interface import MAX_SCORE

Int64Array = npt.NDArray[np.int64]
#: RequestedToCapacityRatio shape scores are 0..10; scaled to 0..100.
SHAPE_SCALE = MAX_SCORE // 10


@dataclass(frozen=True, slots=True)
class ResourceTerm:
    """One resource of a scoring formula, bound to a pod."""

    axis: int
    weight: int
    pod_request: int
    node_requested: Int64Array  # full column (nonzero or real requested)


def resource_terms(
    table: NodeTable, pod: PodInfo, resources: tuple[ResourceSpec, ...], *, use_requested: bool
) -> list[ResourceTerm]:
    """The resources that take part for this pod (scalar ones it does not request drop out)."""
    terms = []
    for spec in resources:
        axis = table.axis_index.get(spec.name)
        if not use_requested and spec.name == CPU:
            pod_request, column = pod.nonzero_cpu, table.nonzero_cpu
        elif not use_requested and spec.name == MEMORY:
            pod_request, column = pod.nonzero_memory, table.nonzero_memory
        else:
            pod_request = pod.requests.get(spec.name, 0)
            column = table.requested[axis] if axis is not None else table.nonzero_cpu
            if pod_request == 0 and is_scalar(spec.name):
                continue
        if axis is None:
            continue  # no node has this resource: allocatable 0 everywhere
        terms.append(ResourceTerm(axis, spec.weight, pod_request, column))
    return terms


def _columns(table: NodeTable, term: ResourceTerm, rows: Rows) -> tuple[Int64Array, Int64Array]:
    alloc: Int64Array = table.allocatable[term.axis][rows]
    requested: Int64Array = term.node_requested[rows] + term.pod_request
    return alloc, requested


def _weighted_mean(total: Int64Array, weights: Int64Array, everywhere: int = 0) -> Int64Array:
    """``total // weights`` (0 where no weight); ``everywhere`` is weight every row has."""
    if not weights.any():
        mean: Int64Array = total // everywhere if everywhere else np.zeros_like(total)
        return mean
    weights = weights + everywhere
    mean = np.where(weights > 0, total // np.maximum(weights, 1), 0)
    return mean


def least_allocated(table: NodeTable, terms: list[ResourceTerm], rows: Rows, n: int) -> Int64Array:
    """``Σ w·(alloc-req)·100//alloc // Σ w`` (0 for a resource with req > alloc)."""
    total = np.zeros(n, dtype=np.int64)
    weights = np.zeros(n, dtype=np.int64)
    everywhere = 0
    for term in terms:
        alloc, req = _columns(table, term, rows)
        if n and alloc.min() > 0:  # the common case: skip the zero-allocatable guards
            total += np.where(req <= alloc, (alloc - req) * MAX_SCORE // alloc, 0) * term.weight
            everywhere += term.weight
            continue
        has = alloc > 0
        safe = np.where(has, alloc, 1)
        score = np.where(has & (req <= alloc), (alloc - req) * MAX_SCORE // safe, 0)
        total += score * term.weight
        weights += has * term.weight
    return _weighted_mean(total, weights, everywhere)


def most_allocated(table: NodeTable, terms: list[ResourceTerm], rows: Rows, n: int) -> Int64Array:
    """``Σ w·min(req, alloc)·100//alloc // Σ w``."""
    total = np.zeros(n, dtype=np.int64)
    weights = np.zeros(n, dtype=np.int64)
    for term in terms:
        alloc, req = _columns(table, term, rows)
        has = alloc > 0
        safe = np.where(has, alloc, 1)
        score = np.where(has, np.minimum(req, alloc) * MAX_SCORE // safe, 0)
        total += score * term.weight
        weights += has * term.weight
    return _weighted_mean(total, weights)


def broken_linear(shape: tuple[ShapePoint, ...], utilization: Int64Array) -> Int64Array:
    """The RequestedToCapacityRatio shape function (scores scaled to 0..100).

    ``p <= U0 -> S0``; for the first ``i`` with ``p <= Ui``:
    ``S(i-1) + trunc((Si - S(i-1)) * (p - U(i-1)) / (Ui - U(i-1)))``; beyond -> last score.
    """
    points_u = np.array([p.utilization for p in shape], dtype=np.int64)
    points_s = np.array([p.score * SHAPE_SCALE for p in shape], dtype=np.int64)
    index = np.searchsorted(points_u, utilization, side="left")
    last = len(shape) - 1
    upper = np.minimum(index, last)
    lower = np.maximum(index - 1, 0)
    rise = points_s[upper] - points_s[lower]
    run = np.maximum(points_u[upper] - points_u[lower], 1)
    numerator = rise * (utilization - points_u[lower])
    step = np.sign(numerator) * (np.abs(numerator) // run)  # Go truncates toward zero
    inside = points_s[lower] + step
    out: Int64Array = np.where(
        index == 0, points_s[0], np.where(index > last, points_s[last], inside)
    )
    return out


def requested_to_capacity_ratio(
    table: NodeTable, terms: list[ResourceTerm], rows: Rows, n: int, shape: tuple[ShapePoint, ...]
) -> Int64Array:
    """``round(Σ w·f(util) / Σ w)`` over resources whose f(util) > 0."""
    total = np.zeros(n, dtype=np.int64)
    weights = np.zeros(n, dtype=np.int64)
    for term in terms:
        alloc, req = _columns(table, term, rows)
        has = alloc > 0
        safe = np.where(has, alloc, 1)
        utilization = np.where(has & (req <= alloc), req * 100 // safe, 100)
        score = broken_linear(shape, utilization)
        counted = has & (score > 0)
        total += np.where(counted, score * term.weight, 0)
        weights += counted * term.weight
    ratio = total / np.maximum(weights, 1)
    rounded: Int64Array = np.where(weights > 0, np.floor(ratio + 0.5), 0).astype(np.int64)
    return rounded


def balanced_allocation(
    table: NodeTable, terms: list[ResourceTerm], rows: Rows, n: int
) -> Int64Array:
    """``int((1 - std) * 100)`` of the requested/allocatable fractions (section 7).

    Two fractions: ``|f0 - f1| / 2``; more: the population standard deviation, summed in
    resource order exactly as upstream does; fewer: 0.
    """
    columns = [_columns(table, term, rows) for term in terms]
    if len(columns) == 2 and n and min(alloc.min() for alloc, _ in columns) > 0:
        # The common case (cpu and memory on every node): two fractions everywhere.
        (alloc0, req0), (alloc1, req1) = columns
        f0 = np.minimum(req0 / alloc0, 1.0)
        f1 = np.minimum(req1 / alloc1, 1.0)
        common: Int64Array = ((1 - np.abs((f0 - f1) / 2)) * MAX_SCORE).astype(np.int64)
        return common
    fractions: list[npt.NDArray[np.float64]] = []
    included: list[npt.NDArray[np.bool_]] = []
    for alloc, req in columns:
        has = alloc > 0
        fraction = np.minimum(req / np.where(has, alloc, 1).astype(np.float64), 1.0)
        fractions.append(np.where(has, fraction, 0.0))
        included.append(has)
    if not fractions:
        return np.full(n, MAX_SCORE, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    first = np.zeros(n, dtype=np.float64)
    second = np.zeros(n, dtype=np.float64)
    total = np.zeros(n, dtype=np.float64)
    for fraction, has in zip(fractions, included, strict=True):
        count += has
        first += np.where(has & (count == 1), fraction, 0.0)
        second += np.where(has & (count == 2), fraction, 0.0)
        total += fraction
    std = np.where(count == 2, np.abs((first - second) / 2), 0.0)
    if len(fractions) > 2:
        many = count > 2
        mean = total / np.maximum(count, 1)
        squares = np.zeros(n, dtype=np.float64)
        for fraction, has in zip(fractions, included, strict=True):
            squares += np.where(has, (fraction - mean) * (fraction - mean), 0.0)
        std = np.where(many, np.sqrt(squares / np.maximum(count, 1)), std)
    score: Int64Array = ((1 - std) * MAX_SCORE).astype(np.int64)
    return score
