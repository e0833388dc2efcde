"""NodeUnschedulable (Filter): cordoned nodes only take pods that tolerate the taint.

Upstream: pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go. A node
with ``spec.unschedulable`` rejects a pod unless it tolerates
``node.kubernetes.io/unschedulable:NoSchedule``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

import numpy as np

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import NO_SCHEDULE, NodeInfo, PodInfo, Taint, tolerates
from asched.cluster.table import NodeTable
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.interface import BoolMask, Handle, RowFilter
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "NodeUnschedulable"
REASON: Final = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT: Final = Taint("node.kubernetes.io/unschedulable", "", NO_SCHEDULE)


class NodeUnschedulable:
    name: Final = NAME
    #: the cluster events that may undo its rejection (upstream's EventsToRegister)
    events: Final = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_SCHEDULABLE})
    row_local: Final = True

    def sign(self, pod: PodInfo) -> Hashable:
        """Its answer depends only on whether the pod tolerates the unschedulable taint."""
        return tolerates(pod.tolerations, UNSCHEDULABLE_TAINT)

    def queueing_hint(self, event: ClusterEvent, pod: PodInfo, changed: object) -> bool:
        """A node helps only if it is schedulable, or the pod tolerates it being not."""
        if not isinstance(changed, NodeInfo):
            return True
        return not changed.unschedulable or tolerates(pod.tolerations, UNSCHEDULABLE_TAINT)

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        if tolerates(pod.tolerations, UNSCHEDULABLE_TAINT):
            return np.ones(size_of(rows), dtype=np.bool_)
        schedulable: BoolMask = ~table.unschedulable[rows]
        return schedulable

    def row_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> RowFilter:
        """:meth:`filter` for one row."""
        if tolerates(pod.tolerations, UNSCHEDULABLE_TAINT):
            return lambda row: True
        unschedulable = table.unschedulable
        return lambda row: not unschedulable[row]

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        return Status.unresolvable(REASON, plugin=NAME)


def factory(args: object | None, handle: Handle | None) -> NodeUnschedulable:
    return NodeUnschedulable()


SPEC: Final = declare(NodeUnschedulable, api_version=API_VERSION, factory=factory)
