"""NodePorts (PreFilter, Filter): host ports must be free on the node.

Upstream: pkg/scheduler/framework/plugins/nodeports/node_ports.go.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

from asched.cluster.columns import Rows
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.interface import (
    PRE_FILTER_SKIP,
    PRE_FILTER_SUCCESS,
    BoolMask,
    Handle,
    PreFilterResult,
)
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "NodePorts"
REASON: Final = "node(s) didn't have free ports for the requested pod ports"


class NodePorts:
    name: Final = NAME
    #: the cluster events that may undo its rejection (upstream's EventsToRegister)
    events: Final = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.ASSIGNED_POD_DELETE})
    row_local: Final = True
    #: its PreFilter reads the pod only (the Filter reads the ports in use): no pod on a node
    #: changes it (no PreFilter hooks needed)
    pre_filter_reads_pods: Final = False

    def sign(self, pod: PodInfo) -> Hashable:
        return pod.host_ports

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): the pod's host ports."""
        return False

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        return PRE_FILTER_SUCCESS if pod.host_ports else PRE_FILTER_SKIP

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        free: BoolMask = ~table.ports.conflicts(pod.host_ports, rows)
        return free

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        return Status.unschedulable(REASON, plugin=NAME)


def factory(args: object | None, handle: Handle | None) -> NodePorts:
    return NodePorts()


SPEC: Final = declare(NodePorts, api_version=API_VERSION, factory=factory)
