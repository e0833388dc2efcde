"""VolumeRestrictions, one node at a time (upstream ``volumerestrictions``).

Disk conflicts compare the pod's volumes with every volume of every pod on the node;
ReadWriteOncePod counts the pods of all nodes using each of the pod's such claims.
"""

from __future__ import annotations

from typing import Final

from asched.framework.builtin.volume_restrictions import (
    REASON_DISK,
    REASON_RWOP,
    conflicts,
    read_write_once_pod_claims,
)
from asched.framework.status import Status
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins.base import SKIP, SUCCESS, Plugin, PreFilterOutcome

NAME: Final = "VolumeRestrictions"
_DISKS: Final = ("gce-pd", "aws-ebs", "rbd", "iscsi")


def _in_use(cycle: Cycle, claim_key: str) -> bool:
    return any(
        f"{pod.namespace}/{volume.claim}" == claim_key
        for node in cycle.nodes
        for pod in node.pods
        for volume in pod.volumes
        if volume.kind == "claim"
    )


class VolumeRestrictions(Plugin):
    """PreFilter, Filter."""

    name = NAME
    implements_score = False

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        pod = cycle.pod
        found = read_write_once_pod_claims(pod, cycle.volumes.claims)
        if isinstance(found, Status):
            return PreFilterOutcome(found)
        in_use = sum(1 for key in found if _in_use(cycle, key))
        if not any(v.kind in _DISKS for v in pod.volumes) and in_use == 0:
            return SKIP
        cycle.scratch[NAME] = in_use
        return SUCCESS

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        for volume in cycle.pod.volumes:
            for other in node.pods:
                if any(conflicts(volume, existing) for existing in other.volumes):
                    return Status.unschedulable(REASON_DISK)
        if cycle.scratch.get(NAME, 0) > 0:
            return Status.unschedulable(REASON_RWOP)
        return Status.success()
