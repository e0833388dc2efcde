"""VolumeZone, one node at a time (upstream ``volumezone/volume_zone.go``).

PreFilter shares the vectorised plugin's claim/PV lookup (its messages are upstream's);
Filter compares the PV labels with the node's labels directly.
"""

from __future__ import annotations

from typing import Final

from asched.framework.builtin.volume_zone import (
    GA_OF,
    REASON,
    TOPOLOGY_LABELS,
    Topology,
    pod_topologies,
)
from asched.framework.status import Status
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins.base import SKIP, SUCCESS, Plugin, PreFilterOutcome

NAME: Final = "VolumeZone"


class VolumeZone(Plugin):
    """PreFilter, Filter."""

    name = NAME
    implements_score = False

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        catalog = cycle.volumes
        found = pod_topologies(cycle.pod, catalog.claims, catalog.pvs, catalog.classes)
        if isinstance(found, Status):
            return PreFilterOutcome(found)
        if not found:
            return SKIP
        cycle.scratch[NAME] = found
        return SUCCESS

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        labels = node.info.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return Status.success()
        topologies: tuple[Topology, ...] = cycle.scratch.get(NAME, ())
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None and topology.key in GA_OF:
                value = labels.get(GA_OF[topology.key])
            if value is None or value not in topology.values:
                return Status.unresolvable(REASON)
        return Status.success()
