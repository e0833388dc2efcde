"""NodeName (Filter): a pod with ``spec.nodeName`` fits only that node.

Upstream: pkg/scheduler/framework/plugins/nodename/node_name.go.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

import numpy as np

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.interface import BoolMask, Handle, RowFilter
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "NodeName"
REASON: Final = "node(s) didn't match the requested node name"


class NodeName:
    name: Final = NAME
    #: the cluster events that may undo its rejection (upstream's EventsToRegister)
    events: Final = frozenset({ClusterEvent.NODE_ADD})
    row_local: Final = True

    def sign(self, pod: PodInfo) -> Hashable:
        return pod.node_name

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        if not pod.node_name:
            return np.ones(size_of(rows), dtype=np.bool_)
        wanted = table.row_of(pod.node_name)
        if isinstance(rows, slice):
            match = np.zeros(size_of(rows), dtype=np.bool_)
            if wanted is not None and rows.start <= wanted < rows.stop:
                match[wanted - rows.start] = True
            return match
        same: BoolMask = rows == (-1 if wanted is None else wanted)
        return same

    def row_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> RowFilter:
        """:meth:`filter` for one row."""
        if not pod.node_name:
            return lambda row: True
        wanted = table.row_of(pod.node_name)
        return lambda row: row == wanted

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        return Status.unresolvable(REASON, plugin=NAME)


def factory(args: object | None, handle: Handle | None) -> NodeName:
    return NodeName()


SPEC: Final = declare(NodeName, api_version=API_VERSION, factory=factory)
