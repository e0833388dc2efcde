"""The zones of the node table's rows and upstream's zone-interleaved node order.

Upstream: pkg/scheduler/backend/cache/node_tree.go. Nodes are grouped by zone (region and
zone labels, :func:`zone_key`), each zone lists its nodes in the order they joined it, and
the node list takes one node of each zone in turn, the zones in the order they got their
first node (a zone that empties starts over). Sampling (:mod:`asched.engine.selection`)
and preemption's dry run walk the nodes in this order.

Apart from :mod:`asched.cluster.table` because this bookkeeping changes only when a node
joins, leaves or changes zone, never when pods are counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import numpy as np
import numpy.typing as npt

REGION_LABEL: Final = "topology.kubernetes.io/region"
ZONE_LABEL: Final = "topology.kubernetes.io/zone"
LEGACY_REGION_LABEL: Final = "failure-domain.beta.kubernetes.io/region"
LEGACY_ZONE_LABEL: Final = "failure-domain.beta.kubernetes.io/zone"


def zone_key(labels: Mapping[str, str]) -> str:
    """The node-tree zone of a node: region and zone labels (legacy ones as fallback)."""
    region = labels.get(REGION_LABEL) or labels.get(LEGACY_REGION_LABEL, "")
    zone = labels.get(ZONE_LABEL) or labels.get(LEGACY_ZONE_LABEL, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    """Which zones exist and when each got its current first node.

    The rows' own zone ids and join numbers are the table's ``zone`` (``int32[cap]``, -1
    on a free row) and ``seq`` (``int64[cap]``) columns, passed in: the table grows them
    with its other columns.
    """

    def __init__(self) -> None:
        #: zone key (:func:`zone_key`) -> zone id, in order of first sight
        self.zone_ids: dict[str, int] = {}
        #: zone id -> join number of the first node it got since it was last empty
        self._zone_first: dict[int, int] = {}
        #: zone id -> its live nodes
        self._zone_count: dict[int, int] = {}
        self._seq = 0

    def set_zone(
        self,
        zone_column: npt.NDArray[np.int32],
        seq_column: npt.NDArray[np.int64],
        row: int,
        key: str,
        *,
        moved: bool,
    ) -> bool:
        """Put ``row`` in the zone ``key`` (``moved``: the row held that node already, and
        keeps its place if the zone is the same); False when nothing changed."""
        zone = self.zone_ids.setdefault(key, len(self.zone_ids))
        current = int(zone_column[row])
        if moved and current == zone:
            return False
        if current >= 0:
            self.leave_zone(current)
        zone_column[row] = zone
        self._seq += 1
        seq_column[row] = self._seq
        if self._zone_count.get(zone, 0) == 0:
            self._zone_first[zone] = self._seq
        self._zone_count[zone] = self._zone_count.get(zone, 0) + 1
        return True

    def leave_zone(self, zone: int) -> None:
        """A node of zone id ``zone`` left it."""
        self._zone_count[zone] -= 1
        if self._zone_count[zone] == 0:
            del self._zone_first[zone]

    def order(
        self, live: npt.NDArray[np.intp], zones: npt.NDArray[np.int32], seqs: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.intp]:
        """The ``live`` rows, whose zone ids and join numbers are ``zones`` and ``seqs``
        (same length), in node-tree order (upstream: nodeTree.list)."""
        by_zone_seq = np.lexsort((seqs, zones))
        sorted_zones = zones[by_zone_seq]
        starts = np.flatnonzero(np.r_[True, sorted_zones[1:] != sorted_zones[:-1]])
        counts = np.diff(np.r_[starts, len(sorted_zones)])
        rank = np.arange(len(sorted_zones)) - np.repeat(starts, counts)
        zone_rank = np.array(
            [self._zone_first.get(int(z), 0) for z in sorted_zones], dtype=np.int64
        )
        interleaved = np.lexsort((zone_rank, rank))
        return live[by_zone_seq][interleaved].astype(np.intp)
