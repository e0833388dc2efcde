"""Go integer and float semantics that kube-scheduler's arithmetic relies on.

Python's ``//`` floors and ``round`` rounds half to even; Go's ``/`` on integers
truncates toward zero and ``math.Round`` rounds half away from zero. Scores are
computed with these helpers so that negative intermediates (the falling segments of a
RequestedToCapacityRatio shape) and exact halves come out as upstream's.
"""

from __future__ import annotations

import math


def go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, like Go's ``a / b`` on int64."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b > 0) else -quotient


def go_round(x: float) -> int:
    """Round half away from zero, like Go's ``math.Round``; exact for every float."""
    whole = math.trunc(x)
    if abs(x - whole) >= 0.5:
        whole += 1 if x > 0 else -1
    return whole
