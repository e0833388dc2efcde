"""NodePorts: a wanted host port must not be in use on the node.

Upstream: pkg/scheduler/framework/plugins/nodeports/node_ports.go.

A wanted ``(ip, protocol, port)`` conflicts with a used one on the same protocol and
port when either side binds ``0.0.0.0`` or both name the same ip.
"""

from __future__ import annotations

from typing import Final

from asched.cluster.records import HostPort
from asched.framework.status import Status
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins.base import SKIP, SUCCESS, Plugin, PreFilterOutcome

REASON: Final = "node(s) didn't have free ports for the requested pod ports"
ANY_IP: Final = "0.0.0.0"


def conflicts(wanted: HostPort, used: HostPort) -> bool:
    """Whether ``wanted`` collides with ``used`` (upstream ``HostPortInfo.CheckConflict``)."""
    if wanted.port <= 0 or (wanted.protocol, wanted.port) != (used.protocol, used.port):
        return False
    return ANY_IP in (wanted.ip, used.ip) or wanted.ip == used.ip


class NodePorts(Plugin):
    """PreFilter (Skip without host ports), Filter."""

    name = "NodePorts"

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        return SUCCESS if cycle.pod.host_ports else SKIP

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        for wanted in cycle.pod.host_ports:
            if any(conflicts(wanted, used) for used in node.used_ports):
                return Status.unschedulable(REASON)
        return Status.success()
