"""NodeVolumeLimits, one node at a time (upstream ``nodevolumelimits/csi.go``).

For each node: the pod's attachable volumes and those of every pod on the node are
resolved afresh (:func:`asched.cluster.csi_volumes.attachable_volumes`, migration on
when the node has a CSINode), volumes already attached are not new, and per driver
``attached + new`` is compared with the CSINode limit.
"""

from __future__ import annotations

from typing import Final

from asched.cluster.csi_volumes import VolumeLookupError, attachable_volumes, needs_count
from asched.framework.status import Status
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins.base import SKIP, SUCCESS, Plugin, PreFilterOutcome

NAME: Final = "NodeVolumeLimits"
REASON: Final = "node(s) exceed max volume count"


class NodeVolumeLimits(Plugin):
    """PreFilter, Filter."""

    name = NAME
    implements_score = False

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        if not needs_count(cycle.pod):
            return SKIP
        try:
            attachable_volumes(cycle.pod, cycle.volumes, migrated=True, new_pod=True)
        except VolumeLookupError as exc:
            if not exc.unresolvable:
                return PreFilterOutcome(Status.error(exc.message))
        return SUCCESS

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        catalog = cycle.volumes
        csi_node = catalog.csi_nodes.get(node.name)
        migrated = csi_node is not None
        try:
            new = attachable_volumes(cycle.pod, catalog, migrated=migrated, new_pod=True)
        except VolumeLookupError as exc:
            return Status.unresolvable(exc.message)
        if not new:
            return Status.success()
        limits = {
            driver: count
            for driver, count in (csi_node.limits.items() if csi_node is not None else ())
            if count is not None
        }
        if not limits:
            return Status.success()
        attached: dict[str, str] = {}
        for pod in node.pods:
            attached.update(attachable_volumes(pod, catalog, migrated=migrated, new_pod=False))
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new.pop(unique, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status.unschedulable(REASON)
        return Status.success()
