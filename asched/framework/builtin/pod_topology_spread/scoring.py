"""PodTopologySpread's raw scores, equal to the reference's bit for bit.

Weights ``ln(size + 2)`` are Python floats and the sums run per constraint in the
reference's order (:mod:`asched.tools.reference.topologyspread`); the result is rounded
as Go's ``math.Round``. Separate from the plugin: this is Score's arithmetic over the
counts of :mod:`~asched.framework.builtin.pod_topology_spread.counting`, while the
plugin decides which rows take part and normalizes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from asched.cluster.spread import HOSTNAME, SpreadConstraint
from asched.framework.builtin.pod_topology_spread.counting import (
    Cluster,
    Int64Array,
    weighted_bincount,
)
from asched.framework.interface import BoolMask


@dataclass(frozen=True, slots=True)
class ScoreSetup:
    """What PreScore decoded: the soft constraints, and whether a node lacking one of
    their keys is ignored (:func:`~asched.cluster.spread.requires_all_keys`)."""

    constraints: tuple[SpreadConstraint, ...]
    require_all: bool


def _go_round(values: npt.NDArray[np.float64]) -> Int64Array:
    """Go's ``math.Round`` (half away from zero), elementwise, as the reference computes it."""
    whole = np.trunc(values)
    bump = np.abs(values - whole) >= 0.5
    step = np.where(values > 0, 1.0, -1.0)
    rounded: Int64Array = (whole + np.where(bump, step, 0.0)).astype(np.int64)
    return rounded


def raw_scores(
    setup: ScoreSetup, cluster: Cluster, scored: BoolMask
) -> tuple[Int64Array, BoolMask]:
    """Raw scores over all rows and the ignored rows, for the rows taking part ``scored``."""
    constraints = setup.constraints
    has_all = cluster.has_all(constraints)
    if setup.require_all:
        ignored: BoolMask = scored & ~has_all
        eligible = has_all
    else:
        ignored = np.zeros(cluster.size, dtype=np.bool_)
        eligible = cluster.live
    kept = scored & ~ignored
    # Domains seen on the kept rows, per key; the first constraint on a key takes its size.
    seen: dict[str, BoolMask] = {}
    weights: list[float] = []
    for c in constraints:
        if c.topology_key == HOSTNAME:
            weights.append(math.log(int(np.count_nonzero(kept)) + 2))
        elif c.topology_key in seen:
            weights.append(math.log(0 + 2))
        else:
            domain, n_domains = cluster.domains(c.topology_key)
            seen[c.topology_key] = np.bincount(domain[kept], minlength=n_domains) > 0
            weights.append(math.log(int(np.count_nonzero(seen[c.topology_key])) + 2))
    # Matching pods per seen domain, over every eligible node, summed over constraints.
    totals: dict[str, Int64Array] = {}
    for c in constraints:
        if c.topology_key == HOSTNAME:
            continue
        domain, n_domains = cluster.domains(c.topology_key)
        included = eligible & cluster.included(c)
        counts = weighted_bincount(
            domain[included], cluster.per_node(c.selector)[included], n_domains
        )
        previous = totals.get(c.topology_key)
        totals[c.topology_key] = counts if previous is None else previous + counts
    total = np.zeros(cluster.size, dtype=np.float64)
    for c, weight in zip(constraints, weights, strict=True):
        ids, _ = cluster.ids(c.topology_key)
        if c.topology_key == HOSTNAME:
            count = cluster.per_node(c.selector)
        else:
            domain, _ = cluster.domains(c.topology_key)
            count = np.where(seen[c.topology_key], totals[c.topology_key], 0)[domain]
        term = count * weight + float(c.max_skew - 1)
        np.add(total, term, out=total, where=ids >= 0)
    raw = _go_round(total)
    raw[ignored] = 0
    return raw, ignored
