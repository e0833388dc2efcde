"""VolumeRestrictions (PreFilter, Filter): in-tree disk conflicts and ReadWriteOncePod.

Upstream ``volumerestrictions/volume_restrictions.go`` (v1.33).

* Disk conflicts, per node, against the pods counted there: the same GCE PD (``pdName``)
  unless both mounts are read-only; the same AWS EBS ``volumeID`` always; the same
  iSCSI ``iqn`` unless both are read-only; the same RBD ``pool/image`` with a monitor in
  common unless both are read-only. Unschedulable "node(s) had no available disk".
  Vectorised from the table's disk index (:mod:`asched.cluster.attachments`): per volume
  of the pod, only the rows already using that disk are looked at.
* ReadWriteOncePod: PreFilter reads the pod's ``persistentVolumeClaim`` claims (a
  missing one: UnschedulableAndUnresolvable ``persistentvolumeclaim "<name>" not
  found``); if one with the ReadWriteOncePod access mode is used by a pod counted on any
  node, every node is Unschedulable with upstream's reason (Unschedulable, not
  Unresolvable: preemption may free the claim). Filter reads the use counts from the
  table, so a preemption what-if that removes the user sees the claim free.

PreFilter skips pods with neither such disks nor an in-use ReadWriteOncePod claim.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

import numpy as np

from asched.cluster.attachments import DISK_KINDS, disk_keys
from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.cluster.volumes import READ_WRITE_ONCE_POD, PersistentVolumeClaim, PodVolume
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.interface import (
    PRE_FILTER_SKIP,
    PRE_FILTER_SUCCESS,
    BoolMask,
    FollowsPods,
    Handle,
    PreFilterResult,
)
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "VolumeRestrictions"
REASON_DISK: Final = "node(s) had no available disk"
REASON_RWOP: Final = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
_STATE: Final = "PreFilterVolumeRestrictions"


def read_write_once_pod_claims(
    pod: PodInfo, claims: dict[str, PersistentVolumeClaim]
) -> frozenset[str] | Status:
    """Keys of the pod's ReadWriteOncePod claims, or the status for a missing claim."""
    found = set()
    for volume in pod.volumes:
        if volume.kind != "claim":
            continue
        claim = claims.get(f"{pod.namespace}/{volume.claim}")
        if claim is None:
            return Status.unresolvable(f'persistentvolumeclaim "{volume.claim}" not found')
        if READ_WRITE_ONCE_POD in claim.access_modes:
            found.add(claim.key)
    return frozenset(found)


def conflicts(volume: PodVolume, other: PodVolume) -> bool:
    """Whether mounting ``volume`` conflicts with ``other``, mounted by a pod on the node."""
    if volume.kind != other.kind or volume.kind not in DISK_KINDS:
        return False
    if volume.handle != other.handle:
        return False
    if volume.kind == "aws-ebs":
        return True
    if volume.kind == "rbd" and not volume.monitors & other.monitors:
        return False
    return not (volume.read_only and other.read_only)


class VolumeRestrictions(FollowsPods):
    name: Final = NAME
    #: upstream's EventsToRegister with queueing hints on
    events: Final = frozenset(
        {ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.NODE_ADD, ClusterEvent.PVC_ADD}
    )
    #: ReadWriteOncePod looks at the pods of every node
    row_local: Final = False
    #: other pods matter only through their volumes (preemption may vectorise past it)
    filter_reads_only_pod_volumes: Final = True

    def sign(self, pod: PodInfo) -> Hashable:
        """One fragment for every pod without volumes (PreFilter skips them all)."""
        return (pod.namespace, pod.volumes) if pod.volumes else ()

    def queueing_hint(self, event: ClusterEvent, pod: PodInfo, changed: object) -> bool:
        """Upstream's hints: a claim of the pod added; a deleted pod of the same namespace
        whose disks conflicted with the pod's, or that used one of its claims."""
        if isinstance(changed, PersistentVolumeClaim):
            return changed.namespace == pod.namespace and any(
                v.kind == "claim" and v.claim == changed.name for v in pod.volumes
            )
        if isinstance(changed, PodInfo) and event == ClusterEvent.ASSIGNED_POD_DELETE:
            if changed.namespace != pod.namespace:
                return False
            if any(conflicts(v, o) for v in pod.volumes for o in changed.volumes):
                return True
            mine = {v.claim for v in pod.volumes if v.kind == "claim"}
            return any(v.kind == "claim" and v.claim in mine for v in changed.volumes)
        return True

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): a pod without volumes is skipped whatever the pods."""
        return bool(pod.volumes)

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        needs_check = any(v.kind in DISK_KINDS for v in pod.volumes)
        found = read_write_once_pod_claims(pod, table.volumes.claims)
        if isinstance(found, Status):
            return PreFilterResult(found.with_plugin(NAME))
        in_use = sum(1 for key in found if table.attachments.claim_refs.get(key, 0) > 0)
        if not needs_check and in_use == 0:
            return PRE_FILTER_SKIP
        state.write(_STATE, found)
        return PRE_FILTER_SUCCESS

    def follow_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, other: PodInfo, row: int, sign: int
    ) -> Status:
        """The PreFilterExtensions hooks (:class:`FollowsPods`). PreFilter reads the pods
        on the nodes only through the claims' use counts (Skip while the pod has no disk
        and none of its ReadWriteOncePod claims is in use), and it is cheap (the pod's
        volumes): called once the table counts the change, it runs again (a pod without
        volumes: Skip, whatever the table)."""
        return self.pre_filter(state, pod, table).status if pod.volumes else Status.skip()

    @staticmethod
    def _disk_conflicts(pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        """``bool[len(rows)]``: rows where a disk of the pod conflicts."""
        hit = np.zeros(table.size, dtype=np.bool_)
        disks = table.attachments.disks
        for volume in pod.volumes:
            for key in disk_keys(volume):
                users = disks.get(key)
                if not users:
                    continue
                # read-write users always conflict; read-only ones unless both are
                # read-only (EBS: any user)
                ebs = volume.kind == "aws-ebs"
                used = [
                    row
                    for row, (rw, ro) in users.items()
                    if rw or (ro and (ebs or not volume.read_only))
                ]
                hit[used] = True
        conflicting: BoolMask = hit[rows]
        return conflicting

    @staticmethod
    def _rwop_in_use(state: CycleState, table: NodeTable) -> bool:
        claims: frozenset[str] = state.get(_STATE, frozenset())
        refs = table.attachments.claim_refs
        return any(refs.get(key, 0) > 0 for key in claims)

    def filter_pods_matter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> bool:
        """Only for a pod with an inline disk (a conflict on its node) or a
        ReadWriteOncePod claim (in use by any pod)."""
        claims: frozenset[str] = state.get(_STATE, frozenset())
        return bool(claims) or any(v.kind in DISK_KINDS for v in pod.volumes)

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        if self._rwop_in_use(state, table):
            return np.zeros(size_of(rows), dtype=np.bool_)
        fits: BoolMask = ~self._disk_conflicts(pod, table, rows)
        return fits

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        if self._disk_conflicts(pod, table, np.array([row], dtype=np.intp))[0]:
            return Status.unschedulable(REASON_DISK, plugin=NAME)
        return Status.unschedulable(REASON_RWOP, plugin=NAME)


def factory(args: object | None, handle: Handle | None) -> VolumeRestrictions:
    return VolumeRestrictions()


SPEC: Final = declare(VolumeRestrictions, api_version=API_VERSION, factory=factory)
