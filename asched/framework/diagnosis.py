"""The ``0/N nodes are available: ...`` message, built on the cold path.

Upstream: pkg/scheduler/framework/types.go, FitError.Error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Final

NO_NODES: Final = "no nodes available to schedule pods"
#: NodeResourcesFit's reason for a node already running its maximum number of pods
TOO_MANY_PODS: Final = "Too many pods"


def fit_error_message(
    n_all: int,
    reasons: Iterable[str] = (),
    *,
    pre_filter_message: str = "",
    post_filter_message: str = "",
) -> str:
    """Format upstream's FitError message.

    ``reasons`` holds every reason of every infeasible node (a node may give several).
    Parts are ``"<count> <reason>"`` sorted as plain strings ("10 X" before "2 Y").
    """
    message = f"0/{n_all} nodes are available:"
    if pre_filter_message:
        message += f" {pre_filter_message}."
    else:
        histogram = Counter(reasons)
        parts = sorted(f"{count} {reason}" for reason, count in histogram.items())
        if parts:
            message += " " + ", ".join(parts) + "."
    if post_filter_message:
        message += " " + post_filter_message
    return message
