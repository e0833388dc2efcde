"""NodeName: a pod that names a node fits only that node.

Upstream: pkg/scheduler/framework/plugins/nodename/node_name.go.
"""

from __future__ import annotations

from typing import Final

from asched.framework.status import Status
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins.base import Plugin

REASON: Final = "node(s) didn't match the requested node name"


class NodeName(Plugin):
    """Filter only."""

    name = "NodeName"

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        wanted = cycle.pod.node_name
        if wanted and wanted != node.name:
            return Status.unresolvable(REASON)
        return Status.success()
