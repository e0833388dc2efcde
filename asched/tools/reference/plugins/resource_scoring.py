"""The resource-allocation scoring formulas, one resource at a time.

Upstream: pkg/scheduler/framework/plugins/noderesources/{least_allocated.go,
most_allocated.go,requested_to_capacity_ratio.go,balanced_allocation.go}.

Inputs are lists aligned with the configured resources: ``requested`` (node usage plus
the pod's request) and ``allocatable``. A resource whose allocatable is 0 takes no part
(neither in the sum nor in the weights). All integer arithmetic truncates toward zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from asched.config.types import ShapePoint
from asched.tools.reference.gomath import go_div, go_round

MAX_NODE_SCORE: Final = 100
MAX_UTILIZATION: Final = 100
#: RequestedToCapacityRatio shape scores are 0..10; scores are 0..100.
SHAPE_SCALE: Final = 10
#: Upstream's default shape when RequestedToCapacityRatio is chosen without one.
DEFAULT_SHAPE: Final = (ShapePoint(0, 10), ShapePoint(100, 0))


def least_allocated(
    requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]
) -> int:
    """Weighted mean of ``(alloc - req) * 100 // alloc`` (0 when over capacity)."""
    total = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        if alloc == 0:
            continue
        total += (0 if req > alloc else go_div((alloc - req) * MAX_NODE_SCORE, alloc)) * weight
        weight_sum += weight
    return go_div(total, weight_sum) if weight_sum else 0


def most_allocated(
    requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]
) -> int:
    """Weighted mean of ``min(req, alloc) * 100 // alloc``."""
    total = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        if alloc == 0:
            continue
        total += go_div(min(req, alloc) * MAX_NODE_SCORE, alloc) * weight
        weight_sum += weight
    return go_div(total, weight_sum) if weight_sum else 0


def broken_linear(shape: Sequence[tuple[int, int]], utilization: int) -> int:
    """Upstream's ``BuildBrokenLinearFunction``: piecewise linear, flat outside the points."""
    for index, (point_utilization, point_score) in enumerate(shape):
        if utilization <= point_utilization:
            if index == 0:
                return point_score
            prev_utilization, prev_score = shape[index - 1]
            return prev_score + go_div(
                (point_score - prev_score) * (utilization - prev_utilization),
                point_utilization - prev_utilization,
            )
    return shape[-1][1]


def requested_to_capacity_ratio(
    requested: Sequence[int],
    allocatable: Sequence[int],
    weights: Sequence[int],
    shape: Sequence[ShapePoint],
) -> int:
    """Round of the weighted mean of ``f(utilization)`` over resources with ``f > 0``."""
    points = [(p.utilization, p.score * SHAPE_SCALE) for p in (shape or DEFAULT_SHAPE)]
    total = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        if alloc == 0:
            continue
        if req > alloc:
            utilization = MAX_UTILIZATION
        else:
            utilization = go_div(max(req, 0) * MAX_UTILIZATION, alloc)
        resource_score = broken_linear(points, utilization)
        if resource_score > 0:
            total += resource_score * weight
            weight_sum += weight
    if weight_sum == 0:
        return 0
    return go_round(float(total) / float(weight_sum))


def balanced(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """``int((1 - std) * 100)`` over the fractions ``min(1, req / alloc)`` (float64)."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = min(float(req) / float(alloc), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        squares = 0.0
        for fraction in fractions:
            squares = squares + (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))
