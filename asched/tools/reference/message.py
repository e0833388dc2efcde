"""The FailedScheduling message, upstream's ``FitError.Error()``
(pkg/scheduler/framework/types.go).

``0/N nodes are available: `` followed by either the PreFilter rejection message or the
histogram of every reason of every rejected node, each part ``"<count> <reason>"``,
sorted as plain strings (so ``"10 X"`` sorts before ``"2 Y"``), joined by ``", "`` and
closed by a period. A PostFilter message, when there is one, follows after a space
(v1.31+ format).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final

NO_NODES_MESSAGE: Final = "no nodes available to schedule pods"


def fit_error_message(
    num_all_nodes: int,
    node_reasons: Iterable[Sequence[str]] = (),
    *,
    pre_filter_message: str = "",
    post_filter_message: str = "",
) -> str:
    """Build the message for a pod that fits no node.

    Parameters
    ----------
    num_all_nodes : int
        Nodes in the snapshot (``N`` in ``0/N``).
    node_reasons : iterable of sequences of str
        The reasons of each rejected node (one sequence per node); ignored when
        ``pre_filter_message`` is set, as upstream ignores the per-node copies of a
        PreFilter rejection.
    pre_filter_message : str
        The message of a PreFilter rejection (reasons joined by ``", "``), if any.
    post_filter_message : str
        Appended after the reasons, if any.
    """
    message = f"0/{num_all_nodes} nodes are available:"
    if pre_filter_message:
        message += f" {pre_filter_message}."
    else:
        histogram: Counter[str] = Counter()
        for reasons in node_reasons:
            histogram.update(reasons)
        parts = sorted(f"{count} {reason}" for reason, count in histogram.items())
        if parts:
            message += " " + ", ".join(parts) + "."
    if post_filter_message:
        message += f" {post_filter_message}"
    return message
