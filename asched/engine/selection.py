"""Which nodes are examined and which one is chosen.

Upstream: pkg/scheduler/schedule_one.go, numFeasibleNodesToFind, findNodesThatPassFilters
and selectHost.

``num_feasible_nodes_to_find`` is upstream's formula. :class:`Sampler` reproduces the
sequential emulation of upstream's filter loop over the zone-interleaved node order:
start at a rotating index, keep the first ``k`` feasible nodes, advance the index by the
number of nodes examined. With the feasibility of every row already known (it is one
vectorised pass), sampling is a gather and a ``flatnonzero``, never a loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.table import NodeTable

MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5


def adaptive_percentage(n_all: int) -> int:
    """``50 - n/125`` floored at 5 %."""
    return max(50 - n_all // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)


def num_feasible_nodes_to_find(n_all: int, percentage: int) -> int:
    """How many feasible nodes to find among ``n_all`` (``percentage`` 0 = adaptive)."""
    if n_all < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return n_all
    pct = percentage if percentage > 0 else adaptive_percentage(n_all)
    return max(n_all * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(slots=True)
class Sample:
    """The candidates of one attempt: ``mask`` over table rows, ``examined`` nodes."""

    mask: npt.NDArray[np.bool_]
    count: int
    examined: int


class Sampler:
    """Keeps upstream's rotating start index between attempts."""

    def __init__(self) -> None:
        self.start = 0

    def sample(self, table: NodeTable, feasible: npt.NDArray[np.bool_], wanted: int) -> Sample:
        """The first ``wanted`` feasible rows in node order from the start index.

        ``feasible`` is over ``table.rows``. Advances the start index.
        """
        n_all = table.n_nodes
        count = int(np.count_nonzero(feasible))
        if wanted >= n_all or count <= wanted:  # every node gets examined: start unchanged
            return Sample(feasible, count, n_all)
        order = table.order()
        start = self.start % n_all
        rotated = np.concatenate((order[start:], order[:start]))
        positions = np.flatnonzero(feasible[rotated])
        if len(positions) > wanted:
            chosen = rotated[positions[:wanted]]
            examined = int(positions[wanted - 1]) + 1
        else:
            chosen = rotated[positions]
            examined = n_all
        self.start = (start + examined) % n_all
        mask = np.zeros(len(feasible), dtype=np.bool_)
        mask[chosen] = True
        return Sample(mask, len(chosen), examined)


def select_host(
    totals: npt.NDArray[np.int64], candidates: npt.NDArray[np.bool_], rng: np.random.Generator
) -> tuple[int, npt.NDArray[np.intp]]:
    """Pick uniformly among the candidate rows with the highest total.

    Returns the chosen row and all rows sharing the top total (in row order).
    """
    top_rows = best_rows(totals, candidates)
    return pick(top_rows, rng), top_rows


def best_rows(
    totals: npt.NDArray[np.int64], candidates: npt.NDArray[np.bool_]
) -> npt.NDArray[np.intp]:
    """The candidate rows with the highest total, ascending.

    The masked formula (non-candidates at -1, the rows of the maximum) in its usual case
    is the candidates' own maximum when it is not negative: then it is found over the
    candidates alone (an extender conclusion's few hundred rows, not the table's)."""
    rows = np.flatnonzero(candidates)
    if rows.size:
        taken = totals[rows]
        best = taken.max()
        if best >= 0:
            top: npt.NDArray[np.intp] = rows[taken == best]
            return top
    masked = np.where(candidates, totals, -1)
    return np.flatnonzero(masked == masked.max())


def pick(top_rows: npt.NDArray[np.intp] | list[int], rng: np.random.Generator) -> int:
    """One of ``top_rows`` (ascending), uniformly; the generator draws only among two or
    more, so runs that keep the best rows (:mod:`asched.engine.class_run`) draw as the
    pass does."""
    if len(top_rows) == 1:
        return int(top_rows[0])
    return int(top_rows[int(rng.integers(len(top_rows)))])
