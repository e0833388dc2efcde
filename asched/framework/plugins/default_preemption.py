"""DefaultPreemption (PostFilter): not modelled yet (issue 6); it never nominates a node.

The failure message therefore carries no ``preemption: ...`` part.
"""

from __future__ import annotations

from typing import Final

from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import PluginArgs
from asched.framework.cycle_state import CycleState
from asched.framework.interface import Handle
from asched.framework.status import Status

NAME: Final = "DefaultPreemption"


class DefaultPreemption:
    name: Final = NAME

    def post_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable, failed: dict[int, Status]
    ) -> tuple[Status, str]:
        return Status.unschedulable(plugin=NAME), ""


def factory(args: PluginArgs | None, handle: Handle | None) -> DefaultPreemption:
    return DefaultPreemption()
