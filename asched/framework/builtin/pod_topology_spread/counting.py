"""PodTopologySpread's counting: matching pods per node row and per topology domain.

:class:`Cluster` is one cycle's view of the table for one pod (label ids, the pods its
constraints select per row, the node inclusion masks), computed once per selector and
shared by every constraint; :func:`key_domains` turns it into the counted domains of
one key (:class:`KeyDomains`) with one weighted ``bincount`` of the nodes' label ids.
Separate from the plugin: PreFilter's state and Score's raw scores are both built from
these counts, and this is where the column work is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.labelselector import LabelSelector
from asched.cluster.records import NO_EXECUTE, NO_SCHEDULE, PodInfo
from asched.cluster.spread import HONOR, SpreadConstraint
from asched.cluster.table import NodeTable
from asched.framework import selectors
from asched.framework.interface import BoolMask

_HARD_EFFECTS: Final = frozenset({NO_SCHEDULE, NO_EXECUTE})
Int64Array = npt.NDArray[np.int64]
IdArray = npt.NDArray[np.int32]


class Cluster:
    """One cycle's view of the table for one pod: label ids, pod counts, inclusion masks.

    Every array is over node rows ``[0, table.size)``; per-selector counts and the two
    policy masks are computed once and reused by every constraint.
    """

    def __init__(self, table: NodeTable, pod: PodInfo) -> None:
        self.table = table
        self.pod = pod
        self.size = table.size
        self.live: BoolMask = table.alive[: self.size]
        self._counts: dict[LabelSelector, Int64Array] = {}
        self._affinity: BoolMask | None = None
        self._tolerated: BoolMask | None = None

    def ids(self, key: str) -> tuple[IdArray, int]:
        """The key's label id per row (-1: no such label) and how many values it has."""
        label = self.table.labels.keys.get(key)
        if label is None:
            return np.full(self.size, -1, dtype=np.int32), 0
        return label.column[: self.size], len(label.values)

    def domains(self, key: str) -> tuple[IdArray, int]:
        """Domain ids for Score: the label id, or the id of ``""`` for rows without the key.

        The reference files a node without the key under the value ``""`` (so does
        upstream under the system defaults), sharing the domain of a label set to ``""``.
        """
        label = self.table.labels.keys.get(key)
        if label is None:
            return np.zeros(self.size, dtype=np.int32), 1
        empty = label.ids.get("", len(label.values))
        column = label.column[: self.size]
        domain: IdArray = np.where(column >= 0, column, np.int32(empty)).astype(np.int32)
        return domain, max(len(label.values), empty + 1)

    def has_all(self, constraints: tuple[SpreadConstraint, ...]) -> BoolMask:
        """Live rows carrying every constraint's key."""
        present: BoolMask = self.live.copy()
        for key in {c.topology_key for c in constraints}:
            present &= self.ids(key)[0] >= 0
        return present

    def per_node(self, selector: LabelSelector) -> Int64Array:
        """Pods of the pod's namespace, not being deleted, matching ``selector``, per row."""
        found = self._counts.get(selector)
        if found is not None:
            return found
        if selector.empty or selector.nothing:
            counts: Int64Array = np.zeros(self.size, dtype=np.int64)
        else:
            pods = self.table.pod_columns
            mask = pods.in_namespaces((self.pod.namespace,))
            mask &= ~pods.deleting[: pods.size]
            for req in selector.requirements:
                mask &= pods.labels.requirement(req.key, req.operator, tuple(req.values), pods.rows)
            rows = pods.node_row[: pods.size][mask]
            counts = np.bincount(rows, minlength=self.size).astype(np.int64)
        self._counts[selector] = counts
        return counts

    def included(self, constraint: SpreadConstraint) -> BoolMask:
        """Live rows passing the constraint's node inclusion policies."""
        mask: BoolMask = self.live
        if constraint.node_affinity_policy == HONOR:
            if self._affinity is None:
                rows = self.table.rows
                self._affinity = selectors.selector_mask(
                    self.table, self.pod.node_selector, rows
                ) & selectors.affinity_mask(self.table, self.pod.node_affinity, rows)
            mask = mask & self._affinity
        if constraint.node_taints_policy == HONOR:
            if self._tolerated is None:
                taints = self.table.taints
                untolerated = taints.untolerated(self.pod.tolerations, _HARD_EFFECTS)
                self._tolerated = ~taints.any_of(untolerated, self.table.rows)
            mask = mask & self._tolerated
        return mask


def weighted_bincount(ids: IdArray, weights: Int64Array, n_ids: int) -> Int64Array:
    """Sum of ``weights`` per id (exact: counts stay far below 2**53)."""
    summed = np.bincount(ids, weights=weights, minlength=n_ids)
    return summed.astype(np.int64)


@dataclass(frozen=True, slots=True)
class KeyDomains:
    """Per value id of one key: matching pods, and whether a counted node has the value."""

    key: str
    values: list[str]
    counts: Int64Array
    counted: BoolMask

    @property
    def n_domains(self) -> int:
        return int(np.count_nonzero(self.counted))

    @property
    def minimum(self) -> int:
        return int(self.counts[self.counted].min()) if self.n_domains else 0


def key_domains(
    cluster: Cluster,
    key: str,
    constraints: tuple[SpreadConstraint, ...],
    included: tuple[BoolMask, ...],
) -> KeyDomains:
    """Counted domains of ``key``; a later constraint on the key overwrites a node's count.

    ``included[i]``: the rows constraint ``i`` counts (``bool[cluster.size]``)."""
    per_node = np.zeros(cluster.size, dtype=np.int64)
    counted = np.zeros(cluster.size, dtype=np.bool_)
    for c, rows in zip(constraints, included, strict=True):
        if c.topology_key != key:
            continue
        per_node = np.where(rows, cluster.per_node(c.selector), per_node)
        counted |= rows
    ids, n_values = cluster.ids(key)
    label = cluster.table.labels.keys.get(key)
    values = [] if label is None else label.values
    in_domain = ids[counted]
    return KeyDomains(
        key,
        values,
        weighted_bincount(in_domain, per_node[counted], n_values),
        np.bincount(in_domain, minlength=n_values) > 0,
    )
