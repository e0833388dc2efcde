"""VolumeZone (PreFilter, Filter): a bound PV's zone and region labels must match the node.

Upstream ``volumezone/volume_zone.go`` (v1.33). PreFilter reads, for each
``persistentVolumeClaim`` volume of the pod, the claim and its bound PV, and keeps the
PV's topology labels (legacy ``failure-domain.beta.kubernetes.io/{zone,region}`` and
``topology.kubernetes.io/{zone,region}``); a value may list several zones separated by
``__`` (a value with an empty part is ignored, as upstream ignores a label it cannot
parse). An unbound claim of a WaitForFirstConsumer class is skipped; the other failures
reject the pod everywhere (UnschedulableAndUnresolvable) with upstream's messages. No
topology at all: Skip.

Filter: a node with none of the four labels passes. Otherwise every PV label must be
matched by the node's label of the same key (a legacy PV key falls back to the GA node
label, not the reverse), compared as label ids over the table: one ``isin`` per label.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Final

import numpy as np

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.cluster.volumes import (
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
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

NAME: Final = "VolumeZone"
REASON: Final = "node(s) had no available volume zone"
_STATE: Final = "PreFilterVolumeZone"

LEGACY_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
LEGACY_REGION: Final = "failure-domain.beta.kubernetes.io/region"
ZONE: Final = "topology.kubernetes.io/zone"
REGION: Final = "topology.kubernetes.io/region"
#: the PV labels read, in upstream's order
TOPOLOGY_LABELS: Final = (LEGACY_ZONE, LEGACY_REGION, ZONE, REGION)
#: a legacy key -> the GA key a node may carry instead
GA_OF: Final = {LEGACY_ZONE: ZONE, LEGACY_REGION: REGION}


@dataclass(frozen=True, slots=True)
class Topology:
    """One PV label the node must match: its key and the values allowed."""

    pv: str
    key: str
    values: frozenset[str]


def zones_of(value: str) -> frozenset[str] | None:
    """A ``__``-separated zone list (trimmed); None when a part is empty (ignored)."""
    parts = [part.strip() for part in value.split("__")]
    if any(not part for part in parts):
        return None
    return frozenset(parts)


def pv_topologies(pv: PersistentVolume) -> tuple[Topology, ...]:
    """The PV's topology labels, in :data:`TOPOLOGY_LABELS` order."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        values = zones_of(value)
        if values is not None:
            out.append(Topology(pv.name, key, values))
    return tuple(out)


def not_found(resource: str, name: str) -> str:
    """The message of an informer lister's NotFound error."""
    return f'{resource} "{name}" not found'


def pod_topologies(
    pod: PodInfo,
    claims: dict[str, PersistentVolumeClaim],
    pvs: dict[str, PersistentVolume],
    classes: dict[str, StorageClass],
) -> tuple[Topology, ...] | Status:
    """The topologies of the pod's bound PVs, or the rejection status (no plugin set)."""
    out: list[Topology] = []
    for volume in pod.volumes:
        if volume.kind != "claim":
            continue
        if not volume.claim:
            return Status.unresolvable("PersistentVolumeClaim had no name")
        claim = claims.get(f"{pod.namespace}/{volume.claim}")
        if claim is None:
            return Status.unresolvable(not_found("persistentvolumeclaim", volume.claim))
        if not claim.volume_name:
            class_name = claim.storage_class or ""
            if not class_name:
                return Status.unresolvable(
                    "PersistentVolumeClaim had no pv name and storageClass name"
                )
            storage_class = classes.get(class_name)
            if storage_class is None:
                return Status.unresolvable(not_found("storageclass.storage.k8s.io", class_name))
            if storage_class.binding_mode == WAIT_FOR_FIRST_CONSUMER:
                continue
            return Status.unresolvable("PersistentVolume had no name")
        pv = pvs.get(claim.volume_name)
        if pv is None:
            return Status.unresolvable(not_found("persistentvolume", claim.volume_name))
        out.extend(pv_topologies(pv))
    return tuple(out)


class VolumeZone:
    name: Final = NAME
    #: upstream's EventsToRegister with queueing hints on (node taints not needed)
    events: Final = frozenset(
        {
            ClusterEvent.STORAGE_CLASS_ADD,
            ClusterEvent.NODE_ADD,
            ClusterEvent.NODE_LABEL,
            ClusterEvent.PVC_ADD,
            ClusterEvent.PVC_UPDATE,
            ClusterEvent.PV_ADD,
            ClusterEvent.PV_UPDATE,
        }
    )
    #: its answer depends on PVs and claims, which change without touching any row
    row_local: Final = False
    #: other pods matter only through their volumes (preemption may vectorise past it)
    filter_reads_only_pod_volumes: Final = True
    #: its PreFilter reads the pod and the volume catalogue only: no pod on a node changes it (no
    #: PreFilter hooks needed)
    pre_filter_reads_pods: Final = False

    def sign(self, pod: PodInfo) -> Hashable:
        """Pods without claims all skip it; others are told apart by their claims."""
        return tuple(v.claim for v in pod.volumes if v.kind == "claim")

    def queueing_hint(self, event: ClusterEvent, pod: PodInfo, changed: object) -> bool:
        """A new WaitForFirstConsumer class, or a claim the pod uses (upstream's hints);
        a PV event always may help (the old PV is not at hand to compare topologies)."""
        if isinstance(changed, StorageClass):
            return changed.binding_mode == WAIT_FOR_FIRST_CONSUMER
        if isinstance(changed, PersistentVolumeClaim):
            return changed.namespace == pod.namespace and any(
                v.kind == "claim" and v.claim == changed.name for v in pod.volumes
            )
        return True

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): a pod without volumes is skipped; volumes are storage
        objects."""
        return bool(pod.volumes)

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        catalog = table.volumes
        found = pod_topologies(pod, catalog.claims, catalog.pvs, catalog.classes)
        if isinstance(found, Status):
            return PreFilterResult(found.with_plugin(NAME))
        if not found:
            return PRE_FILTER_SKIP
        state.write(_STATE, found)
        return PRE_FILTER_SUCCESS

    @staticmethod
    def _matches(table: NodeTable, key: str, values: frozenset[str], rows: Rows) -> BoolMask:
        codes, known = table.label_codes(key)
        allowed = np.array([i for i, v in enumerate(known) if v in values], dtype=np.int32)
        matched: BoolMask = np.isin(codes[rows], allowed)
        return matched

    def filter_pods_matter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> bool:
        """Never: the answer is the claims' volumes against the nodes' labels."""
        return False

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        topologies: tuple[Topology, ...] = state.get(_STATE, ())
        constrained = np.zeros(size_of(rows), dtype=np.bool_)
        for key in TOPOLOGY_LABELS:
            constrained |= table.label_codes(key)[0][rows] >= 0
        fits = np.ones(size_of(rows), dtype=np.bool_)
        for topology in topologies:
            has_key = table.label_codes(topology.key)[0][rows] >= 0
            match = self._matches(table, topology.key, topology.values, rows)
            ga = GA_OF.get(topology.key)
            if ga is not None:
                match = np.where(has_key, match, self._matches(table, ga, topology.values, rows))
            fits &= match
        result: BoolMask = ~constrained | fits
        return result

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        return Status.unresolvable(REASON, plugin=NAME)


def factory(args: object | None, handle: Handle | None) -> VolumeZone:
    return VolumeZone()


SPEC: Final = declare(VolumeZone, api_version=API_VERSION, factory=factory)
