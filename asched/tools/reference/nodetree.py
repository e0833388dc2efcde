"""Upstream's node-tree order, node by node: zones interleaved.

Upstream: pkg/scheduler/backend/cache/node_tree.go, nodeTree.list.

Nodes are grouped by zone (region and zone labels), zones in the order their first node
appeared; the order takes the first node of every zone, then the second of every zone
that has one, and so on. Sampling and preemption's dry run both walk nodes this way.
"""

from __future__ import annotations

from collections.abc import Sequence

from asched.cluster.node_tree import zone_key
from asched.cluster.records import NodeInfo


def node_tree_order(nodes: Sequence[NodeInfo]) -> list[NodeInfo]:
    zones: dict[str, list[NodeInfo]] = {}
    for node in nodes:
        zones.setdefault(zone_key(node.labels), []).append(node)
    out: list[NodeInfo] = []
    deepest = max((len(members) for members in zones.values()), default=0)
    for rank in range(deepest):
        out.extend(members[rank] for members in zones.values() if rank < len(members))
    return out
