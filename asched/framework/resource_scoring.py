"""Resource-based scoring maths shared by NodeResourcesFit and BalancedAllocation.

Upstream: pkg/scheduler/framework/plugins/noderesources/{least_allocated.go,
most_allocated.go,requested_to_capacity_ratio.go,balanced_allocation.go}. For each
configured resource ``r`` a :class:`ResourceTerm` holds the node-side columns and the
pod's request; a node whose allocatable of ``r`` is 0 leaves ``r`` out of both the
numerator and the weight sum. All arithmetic is upstream's: int64 with truncating
division, ``math.Round`` half away from zero, float64 fractions (where a float64 path
replaces an int64 one, its docstring proves the results equal). Each formula has a one-row
twin in Python (``*_row``) for the scalar recompute of a cached class
(:mod:`asched.engine.row_recompute`).

Arrays are ``int64`` of shape ``(n_selected_rows,)``, resources in canonical units.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Final

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
    """``Σ w·(alloc-req)·100//alloc // Σ w`` (0 for a resource with req > alloc).

    When every row of every term has ``0 < alloc < FLOAT_EXACT_BELOW`` (any real node:
    the bound is 64 TiB of memory, 70 billion cores), the quotients are taken in float64
    by :func:`_exact_share`, proven equal to int64's (the CPU does not vectorise int64
    division: over 50,000 rows the float path takes ~0.6x the time); otherwise in int64.
    """
    if n and terms and all(_float_exact(table, term, rows) for term in terms):
        return _least_allocated_float(table, terms, rows, n)
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


#: An allocatable below this keeps every LeastAllocated quotient exact in float64.
FLOAT_EXACT_BELOW: Final = 2**46


def _float_exact(table: NodeTable, term: ResourceTerm, rows: Rows) -> bool:
    """Every row's allocatable of ``term`` is in ``[1, FLOAT_EXACT_BELOW)``."""
    alloc = table.allocatable[term.axis][rows]
    return bool(alloc.min() > 0) and bool(alloc.max() < FLOAT_EXACT_BELOW)


def _exact_share(
    left: Int64Array, alloc: Int64Array, out: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """``left * 100 // alloc`` into ``out`` (float64 holding integers 0..100), exactly.

    Preconditions: ``0 <= left <= alloc`` and ``1 <= alloc < 2**46`` (int64).

    Proof. ``left``, ``alloc`` and ``N = 100 * left < 100 * 2**46 < 2**53`` are integers
    float64 holds exactly, so the one rounding is the division's: the result is
    ``t * (1 + d)`` with ``t = N / alloc`` in ``[0, 100]`` and ``|d| <= 2**-53``, an error
    below ``100 * 2**-53 < 2**-46``. If ``t`` is an integer it is representable and the
    correctly rounded division returns it exactly. Otherwise ``t``'s distance to either
    neighbouring integer is at least ``1 / alloc > 2**-46``, more than the error, so the
    result lies strictly between the same two integers. Either way ``floor`` of the
    result is ``floor(t)``, which is int64's ``N // alloc`` for non-negative operands.
    """
    np.multiply(left, float(MAX_SCORE), out=out)
    np.divide(out, alloc, out=out)
    np.floor(out, out=out)
    return out


def _least_allocated_float(
    table: NodeTable, terms: list[ResourceTerm], rows: Rows, n: int
) -> Int64Array:
    """:func:`least_allocated` when every allocatable is in ``[1, FLOAT_EXACT_BELOW)``.

    Per term ``left = max(alloc - req, 0)``: equal to ``alloc - req`` where
    ``req <= alloc`` and 0 (so a 0 share) where not, which is the int64 formula's
    ``where``; ``left <= alloc`` since ``req >= 0`` (the table's bounds keep ``req`` in
    int64). The weighted sum holds integers up to ``100 * Σ w < 2**53``, exactly, and its
    quotient by ``Σ w`` floors exactly as in :func:`_exact_share`: the division's error is
    below ``100 * 2**-53 < 2**-46`` and a non-integer quotient lies at least
    ``1 / Σ w > 2**-46`` from an integer (weights are at most 100 per resource).
    """
    total = np.zeros(n, dtype=np.float64)
    left = np.empty(n, dtype=np.int64)
    share = np.empty(n, dtype=np.float64)
    weights = 0
    for term in terms:
        alloc = table.allocatable[term.axis][rows]
        np.add(term.node_requested[rows], term.pod_request, out=left)
        np.subtract(alloc, left, out=left)
        np.maximum(left, 0, out=left)
        _exact_share(left, alloc, share)
        if term.weight != 1:
            share *= term.weight
        total += share
        weights += term.weight
    if weights != 1:
        total /= weights
        np.floor(total, out=total)
    return total.astype(np.int64)


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
    """``int((1 - std) * 100)`` of the requested/allocatable fractions (upstream:
    balancedResourceScorer).

    Two fractions: ``|f0 - f1| / 2``; more: the population standard deviation, summed in
    resource order exactly as upstream does; fewer: 0.
    """
    columns = [_columns(table, term, rows) for term in terms]
    if len(columns) == 2 and n and min(alloc.min() for alloc, _ in columns) > 0:
        # The common case (cpu and memory on every node): two fractions everywhere,
        # ``int((1 - |f0 - f1| / 2) * 100)`` step by step in two buffers (same operations,
        # same order, so the same float64 results as the expression).
        (alloc0, req0), (alloc1, req1) = columns
        f0 = np.divide(req0, alloc0)
        np.minimum(f0, 1.0, out=f0)
        f1 = np.divide(req1, alloc1)
        np.minimum(f1, 1.0, out=f1)
        np.subtract(f0, f1, out=f0)
        np.divide(f0, 2, out=f0)
        np.abs(f0, out=f0)
        np.subtract(1, f0, out=f0)
        np.multiply(f0, MAX_SCORE, out=f0)
        common: Int64Array = f0.astype(np.int64)
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


# The formulas above for one row, in Python ints and floats: what a cached class uses to
# recompute the one to three rows a decision changed (tests/unit/framework hold them
# equal to the vectorised forms). Python's ints do not wrap: the table's bounds keep
# every sum and product here inside int64 (asched.cluster.bounds), where they agree.


def _row_amounts(table: NodeTable, term: ResourceTerm, row: int) -> tuple[int, int]:
    return int(table.allocatable[term.axis][row]), int(term.node_requested[row]) + term.pod_request


def least_allocated_row(table: NodeTable, terms: list[ResourceTerm], row: int) -> int:
    """:func:`least_allocated` for one row."""
    total = weights = 0
    for term in terms:
        alloc, req = _row_amounts(table, term, row)
        if alloc > 0:
            if req <= alloc:
                total += (alloc - req) * MAX_SCORE // alloc * term.weight
            weights += term.weight
    return total // weights if weights else 0


def most_allocated_row(table: NodeTable, terms: list[ResourceTerm], row: int) -> int:
    """:func:`most_allocated` for one row."""
    total = weights = 0
    for term in terms:
        alloc, req = _row_amounts(table, term, row)
        if alloc > 0:
            total += min(req, alloc) * MAX_SCORE // alloc * term.weight
            weights += term.weight
    return total // weights if weights else 0


def balanced_allocation_row(table: NodeTable, terms: list[ResourceTerm], row: int) -> int:
    """:func:`balanced_allocation` for one row: float64 like NumPy's (``float(req) /
    float(alloc)``, not Python's exact ``int / int``), summed in the same order."""
    fractions = []
    for term in terms:
        alloc, req = _row_amounts(table, term, row)
        if alloc > 0:
            fractions.append(min(float(req) / float(alloc), 1.0))
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        count = len(fractions)
        total = 0.0
        for fraction in fractions:
            total += fraction
        mean = total / count
        squares = 0.0
        for fraction in fractions:
            squares += (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / count)  # IEEE's correctly rounded root, as np.sqrt
    else:
        std = 0.0
    return int((1 - std) * MAX_SCORE)


def broken_linear_row(shape: tuple[ShapePoint, ...], utilization: int) -> int:
    """:func:`broken_linear` for one utilization."""
    points_u = [p.utilization for p in shape]
    points_s = [p.score * SHAPE_SCALE for p in shape]
    index = bisect.bisect_left(points_u, utilization)  # searchsorted(side="left")
    last = len(shape) - 1
    if index == 0:
        return points_s[0]
    if index > last:
        return points_s[last]
    rise = points_s[index] - points_s[index - 1]
    run = max(points_u[index] - points_u[index - 1], 1)
    numerator = rise * (utilization - points_u[index - 1])
    step = abs(numerator) // run
    return points_s[index - 1] + (step if numerator >= 0 else -step)  # Go truncates


def requested_to_capacity_ratio_row(
    table: NodeTable, terms: list[ResourceTerm], row: int, shape: tuple[ShapePoint, ...]
) -> int:
    """:func:`requested_to_capacity_ratio` for one row."""
    total = weights = 0
    for term in terms:
        alloc, req = _row_amounts(table, term, row)
        utilization = req * 100 // alloc if alloc > 0 and req <= alloc else 100
        score = broken_linear_row(shape, utilization)
        if alloc > 0 and score > 0:
            total += score * term.weight
            weights += term.weight
    return math.floor(float(total) / float(weights) + 0.5) if weights else 0
