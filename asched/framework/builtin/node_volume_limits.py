"""NodeVolumeLimits (PreFilter, Filter): CSI attach limits per node and driver.

Upstream ``nodevolumelimits/csi.go`` (v1.33). What counts is in
:mod:`asched.cluster.csi_volumes`. For each CSI driver the pod's new volumes use, a node
fails when ``attached + new > limit``, where ``attached`` is the number of distinct
volumes of that driver its counted pods attach (a table column, kept on assume and
forget: :mod:`asched.cluster.attachments`), ``new`` the pod's volumes of that driver not
already attached there, and ``limit`` the node's CSINode ``allocatable.count`` for the
driver; a node without a limit for the driver passes, and so does a node where the pod
adds no volume of the driver (even one already over its limit). Unschedulable
"node(s) exceed max volume count".

The pod's own claims are resolved once per cycle, twice over: as on a node with a
CSINode (in-tree volumes then count under their CSI driver) and as on one without.
A claim that does not exist rejects every node (UnschedulableAndUnresolvable,
upstream's Filter message); a claim with no name or an ephemeral claim the pod does not
own is an error (upstream raises it from Filter; here from PreFilter, with the same
message and the same outcome: the attempt fails with that error).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Final

import numpy as np

from asched.cluster.columns import Rows, size_of
from asched.cluster.csi_volumes import (
    INLINE_PLUGINS,
    VolumeLookupError,
    attachable_volumes,
    needs_count,
)
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.cluster.volumes import PersistentVolumeClaim
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

NAME: Final = "NodeVolumeLimits"
REASON: Final = "node(s) exceed max volume count"
_STATE: Final = "PreFilterNodeVolumeLimits"


@dataclass(frozen=True, slots=True)
class _PodVolumes:
    """The pod's attachable volumes on nodes with / without a CSINode, or why none."""

    with_csi_node: dict[str, str]
    without_csi_node: dict[str, str]
    missing: str = ""


class NodeVolumeLimits:
    name: Final = NAME
    #: upstream's EventsToRegister
    events: Final = frozenset(
        {ClusterEvent.CSI_NODE_ADD, ClusterEvent.ASSIGNED_POD_DELETE, ClusterEvent.PVC_ADD}
    )
    #: its limits and what a claim attaches change without touching any row
    row_local: Final = False
    #: other pods matter only through their volumes (preemption may vectorise past it)
    filter_reads_only_pod_volumes: Final = True
    #: its PreFilter reads the pod and the volume catalogue only (the Filter reads the attachments):
    #: no pod on a node changes it (no PreFilter hooks needed)
    pre_filter_reads_pods: Final = False

    def sign(self, pod: PodInfo) -> Hashable:
        """One fragment for every pod it skips (no claims, no inline migratable volume)."""
        return (pod.namespace, pod.uid, pod.volumes) if needs_count(pod) else ()

    def queueing_hint(self, event: ClusterEvent, pod: PodInfo, changed: object) -> bool:
        """Upstream's hints: a deleted pod with claims or inline migratable volumes; an
        added claim the pod uses (its own, or its ephemeral volume's)."""
        if isinstance(changed, PodInfo) and event == ClusterEvent.ASSIGNED_POD_DELETE:
            return any(
                v.kind in ("claim", "ephemeral") or v.kind in INLINE_PLUGINS
                for v in changed.volumes
            )
        if isinstance(changed, PersistentVolumeClaim):
            return changed.namespace == pod.namespace and any(
                v.kind in ("claim", "ephemeral") and v.claim == changed.name for v in pod.volumes
            )
        return True

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): a pod without volumes is skipped."""
        return bool(pod.volumes)

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        if not needs_count(pod):
            return PRE_FILTER_SKIP
        catalog = table.volumes
        try:
            found = _PodVolumes(
                attachable_volumes(pod, catalog, migrated=True, new_pod=True),
                attachable_volumes(pod, catalog, migrated=False, new_pod=True),
            )
        except VolumeLookupError as exc:
            if not exc.unresolvable:
                return PreFilterResult(Status.error(exc.message, plugin=NAME))
            found = _PodVolumes({}, {}, exc.message)
        state.write(_STATE, found)
        return PRE_FILTER_SUCCESS

    def filter_pods_matter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> bool:
        """Only when some node limits a driver the pod attaches to: elsewhere the count
        of what the pods attach is compared with nothing."""
        found: _PodVolumes | None = state.get(_STATE)
        if found is None or found.missing:
            return False
        drivers = set(found.with_csi_node.values()) | set(found.without_csi_node.values())
        attachments = table.attachments
        return any(bool((attachments.limit_of(d, table.size) >= 0).any()) for d in drivers)

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        found: _PodVolumes | None = state.get(_STATE)
        n = size_of(rows)
        if found is None:
            return np.ones(n, dtype=np.bool_)
        if found.missing:
            return np.zeros(n, dtype=np.bool_)
        attachments = table.attachments
        has_csi_node = attachments.has_csi_node[rows]
        fits = np.ones(n, dtype=np.bool_)
        drivers = set(found.with_csi_node.values()) | set(found.without_csi_node.values())
        for driver in sorted(drivers):
            new = np.zeros(table.size, dtype=np.int64)
            for volumes, on_csi_node in (
                (found.with_csi_node, True),
                (found.without_csi_node, False),
            ):
                for unique, of in volumes.items():
                    if of != driver:
                        continue
                    wanted = np.zeros(table.size, dtype=np.bool_)
                    wanted[rows] = has_csi_node if on_csi_node else ~has_csi_node
                    attached_on = list(attachments.users.get(unique, {}))
                    wanted[attached_on] = False
                    new += wanted
            adding = new[rows]
            limit = attachments.limit_of(driver, table.size)[rows]
            attached = attachments.count_of(driver, table.size)[rows]
            # a driver the pod adds nothing to on a row is not checked there (upstream
            # compares only the drivers with new volumes, however full the node is)
            fits &= (adding == 0) | (limit < 0) | (attached + adding <= limit)
        return fits

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        found: _PodVolumes | None = state.get(_STATE)
        if found is not None and found.missing:
            return Status.unresolvable(found.missing, plugin=NAME)
        return Status.unschedulable(REASON, plugin=NAME)


def factory(args: object | None, handle: Handle | None) -> NodeVolumeLimits:
    return NodeVolumeLimits()


SPEC: Final = declare(NodeVolumeLimits, api_version=API_VERSION, factory=factory)
