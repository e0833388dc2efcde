"""Whole-gang feasibility: can every missing member of a gang be placed at once?

Upstream's Coscheduling places a gang one member per cycle and only learns at Permit, or
at its timeout, that the rest does not fit; two gangs that each need 60 % of a cluster
can each take half of it and hold it until both time out. asched asks first: before the
first member of a gang is assumed, the members still to place are placed *tentatively*
over a copy of the table's free columns, one vectorised pass per member shape.

The rule (docs/gang.md states it for users):

* A **shape** is what one member asks of a node: room for one more pod and its
  requests (a :class:`~asched.framework.resource_fit.ResourceNeed`), the rows where
  every other Filter of the profile passes (``allowed``), and how many members of that
  shape are still to place (``count``).
* Shapes are placed group by group (the gangs admitted earlier first), and within a
  group largest first (by the sum of their requests as fractions of the
  largest free amount of each resource, then by count), each over what the earlier ones
  left. Within a shape, a row takes ``min(copies that fit, copies still needed)``
  copies, rows in table order; the copies are taken off that row's free amounts.
* The gang fits when every shape's ``count`` is placed.

For a gang of one shape (the common case: N identical workers) this is exact as far as
resources go: rows are independent, so N members fit if and only if the per-row copies
that fit add up to N, whichever rows the scheduler later picks. With several shapes it
is a greedy packing: when it says "fits" a placement exists; it may rarely say "does not
fit" for a gang an exhaustive search could place (bin packing is NP-hard), and then the
gang waits for room instead of grabbing part of the cluster. Constraints *between*
members (anti-affinity among the workers, topology spreading over them) are not in
``allowed``, which is computed for one member against the table as it is: they can still
reject a later member, and then the gang's rollback is the usual one.

Arrays: free amounts are int64 per axis in the table's units (millicores, bytes, pods);
``allowed`` is bool of shape ``(table.size,)``. Nothing here mutates the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from asched.cluster.table import NodeTable
from asched.framework.resource_fit import ResourceNeed

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Shape:
    """``count`` members asking ``need`` each, allowed on the rows of ``allowed``."""

    name: str
    need: ResourceNeed
    count: int
    allowed: BoolArray
    #: shapes are placed by group first (earlier gangs before later ones), then largest first
    group: int = 0


@dataclass(frozen=True, slots=True)
class GangFit:
    """The tentative placement: per shape, how many members found room, and where.

    ``rows[name]`` is an int64 array of shape ``(table.size,)``: the members of that
    shape placed on each row (0 almost everywhere).
    """

    placed: Mapping[str, int]
    wanted: Mapping[str, int]
    rows: Mapping[str, IntArray]

    @property
    def fits(self) -> bool:
        return all(self.placed[name] >= self.wanted[name] for name in self.wanted)

    @property
    def short(self) -> int:
        """Members that found no room (0 when the gang fits)."""
        return sum(max(0, self.wanted[n] - self.placed[n]) for n in self.wanted)


def copies_that_fit(need: ResourceNeed, free: Mapping[int, IntArray], n: int) -> IntArray:
    """Per row, how many pods of ``need`` fit in ``free`` (int64, shape ``(n,)``).

    The pod count axis allows ``free[pods]`` copies; each request ``r`` on axis ``a``
    allows ``free[a] // r``. A request no node has (``need.impossible``) allows none.
    """
    if need.impossible:
        return np.zeros(n, dtype=np.int64)
    copies = np.maximum(free[need.pods_axis][:n], 0)
    for axis, request in zip(need.axes[1:], need.requests[1:], strict=True):
        copies = np.minimum(copies, np.maximum(free[axis][:n], 0) // request)
    return copies


def _weight(shape: Shape, largest: Mapping[int, int]) -> tuple[int, float, int]:
    """Sort key: the shape's group, then largest first: the sum of the shape's requests
    as fractions of the largest free amount of each resource, then the number of members."""
    share = 0.0
    for axis, request in zip(shape.need.axes[1:], shape.need.requests[1:], strict=True):
        share += request / max(1, largest.get(axis, 1))
    return (shape.group, -share, -shape.count)


def place_gang(table: NodeTable, shapes: Sequence[Shape]) -> GangFit:
    """Place every shape's ``count`` members tentatively over a copy of the free columns.

    See the module docstring for the rule. Costs one pass over the rows per shape plus
    a copy of the axes the shapes use.
    """
    n = table.size
    axes = sorted({axis for shape in shapes for axis in shape.need.axes})
    free = {axis: table.free[axis][:n].copy() for axis in axes}
    alive = table.alive[:n]
    largest = {axis: int(free[axis][alive].max(initial=0)) for axis in axes}
    placed: dict[str, int] = {}
    wanted: dict[str, int] = {}
    rows: dict[str, IntArray] = {}
    for shape in sorted(shapes, key=lambda s: _weight(s, largest)):
        wanted[shape.name] = wanted.get(shape.name, 0) + shape.count
        # at most `count` copies per row: the running total below stays far from int64's
        # range even on rows of clamped (2**53 - 1) amounts
        copies = np.minimum(copies_that_fit(shape.need, free, n), shape.count)
        copies[~(shape.allowed[:n] & alive)] = 0
        # take rows in order until `count` copies are found: the running total says how
        # many each row still has to give (vectorised: no loop over rows)
        before = np.cumsum(copies) - copies
        take = np.clip(shape.count - before, 0, copies)
        for axis, request in zip(shape.need.axes, shape.need.requests, strict=True):
            free[axis] -= take * request
        got = int(take.sum())
        placed[shape.name] = placed.get(shape.name, 0) + got
        rows[shape.name] = rows[shape.name] + take if shape.name in rows else take
    return GangFit(placed, wanted, rows)
