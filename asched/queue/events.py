"""Cluster events that can make unschedulable pods schedulable, and who cares about them.

Upstream's plugins register the events that may turn their own rejection into a fit
(``EventsToRegister``); a parked pod moves back only when one of the plugins that
rejected it is interested in the event. A pod rejected for reasons no event can fix
(an unsupported feature, a pod-level error) waits for its own update or the 5-minute
flush.
"""

from __future__ import annotations

import enum
from typing import Final


class ClusterEvent(enum.Enum):
    NODE_ADD = "NodeAdd"
    NODE_ALLOCATABLE = "NodeAllocatableChange"
    NODE_LABEL = "NodeLabelChange"
    NODE_TAINT = "NodeTaintChange"
    NODE_SCHEDULABLE = "NodeSchedulableChange"
    ASSIGNED_POD_DELETE = "AssignedPodDelete"
    ASSIGNED_POD_ADD = "AssignedPodAdd"
    UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"
    FORCE_ACTIVATE = "ForceActivate"


INTERESTS: Final[dict[str, frozenset[ClusterEvent]]] = {
    "NodeResourcesFit": frozenset(
        {ClusterEvent.NODE_ADD, ClusterEvent.NODE_ALLOCATABLE, ClusterEvent.ASSIGNED_POD_DELETE}
    ),
    "NodePorts": frozenset({ClusterEvent.NODE_ADD, ClusterEvent.ASSIGNED_POD_DELETE}),
    "NodeAffinity": frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_LABEL}),
    "TaintToleration": frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_TAINT}),
    "NodeUnschedulable": frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_SCHEDULABLE}),
    "NodeName": frozenset({ClusterEvent.NODE_ADD}),
}

#: Events that move every parked pod regardless of who rejected it.
UNIVERSAL: Final = frozenset({ClusterEvent.UNSCHEDULABLE_TIMEOUT, ClusterEvent.FORCE_ACTIVATE})


def interested(rejected_by: frozenset[str], event: ClusterEvent) -> bool:
    """True when ``event`` may help a pod rejected by ``rejected_by``.

    A pod with no recorded rejector (an error, or zero nodes) is moved by any node or
    pod event, as upstream moves such pods.
    """
    if event in UNIVERSAL or not rejected_by:
        return True
    return any(event in INTERESTS.get(plugin, frozenset()) for plugin in rejected_by)
