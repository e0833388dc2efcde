"""NodeUnschedulable: cordoned nodes, unless the pod tolerates the taint.

Upstream: pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go.
"""

from __future__ import annotations

from typing import Final

from asched.cluster.records import NO_SCHEDULE, Taint, tolerates
from asched.framework.status import Status
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins.base import Plugin

REASON: Final = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT: Final = Taint("node.kubernetes.io/unschedulable", "", NO_SCHEDULE)


class NodeUnschedulable(Plugin):
    """Filter only."""

    name = "NodeUnschedulable"

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        if node.info.unschedulable and not tolerates(cycle.pod.tolerations, UNSCHEDULABLE_TAINT):
            return Status.unresolvable(REASON)
        return Status.success()
