"""How many feasible nodes kube-scheduler looks for before it stops filtering.

Upstream: pkg/scheduler/schedule_one.go, numFeasibleNodesToFind.

``asched explain`` evaluates every node, so :func:`asched.tools.reference.evaluate` does not
sample; this function is the scalar oracle for the scheduling loop, which does.
"""

from __future__ import annotations

from typing import Final

MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    """Upstream's ``numFeasibleNodesToFind`` for a resolved percentage (0 = adaptive).

    The caller resolves the percentage first (the profile's
    ``percentageOfNodesToScore`` if set, else the global one).
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        percentage = max(percentage, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    found = num_all_nodes * percentage // 100
    return max(found, MIN_FEASIBLE_NODES_TO_FIND)
