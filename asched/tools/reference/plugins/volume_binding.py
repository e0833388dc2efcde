"""VolumeBinding, node by node: upstream's binder as written (the differential oracle).

PreFilter sorts the pod's claims (``podHasPVCs`` and ``GetPodVolumeClaims``); Filter
is ``FindPodVolumes`` for one node, with ``FindMatchingVolume``'s walk over the PVs of
the claim's class in (capacity, name) order (asched's tie-break for upstream's
unspecified cache order), ``checkVolumeProvisions`` and ``hasEnoughCapacity``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from asched.cluster.pv_index import AVAILABLE, node_affinity_matches
from asched.cluster.volumes import (
    BIND_COMPLETED_ANNOTATION,
    SELECTED_NODE_ANNOTATION,
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeCatalog,
)
from asched.framework.status import Status
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins.base import SKIP, SUCCESS, Plugin, PreFilterOutcome

NAME: Final = "VolumeBinding"
NODE_CONFLICT: Final = "node(s) had volume node affinity conflict"
BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
NOT_ENOUGH_SPACE: Final = "node(s) did not have enough free storage"
PV_NOT_EXIST: Final = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
IMMEDIATE_UNBOUND: Final = "pod has unbound immediate PersistentVolumeClaims"


@dataclass(frozen=True, slots=True)
class _Claims:
    bound: tuple[PersistentVolumeClaim, ...]
    delay: tuple[PersistentVolumeClaim, ...]


def _is_bound_to(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    ref = pv.claim_ref
    if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
        return False
    return not ref.uid or ref.uid == claim.uid


def find_matching_volume(
    claim: PersistentVolumeClaim,
    pvs: list[PersistentVolume],
    labels: dict[str, str],
    excluded: set[str],
) -> PersistentVolume | None:
    """Upstream's FindMatchingVolume on the scheduler path (a node is given)."""
    smallest: PersistentVolume | None = None
    for pv in pvs:
        if pv.name in excluded:
            continue
        if pv.claim_ref is not None and not _is_bound_to(pv, claim):
            continue
        if pv.capacity < claim.request or pv.volume_mode != claim.volume_mode or pv.deleting:
            continue
        affinity_ok = node_affinity_matches(pv.node_affinity, labels)
        if _is_bound_to(pv, claim):
            return pv if affinity_ok else None
        if pv.phase != AVAILABLE:
            continue
        if claim.selector is not None and not claim.selector.matches(pv.labels):
            continue
        if not affinity_ok:
            continue
        if not set(claim.access_modes) <= set(pv.access_modes):
            continue
        if smallest is None or smallest.capacity > pv.capacity:
            smallest = pv
    return smallest


def _has_capacity(
    catalog: VolumeCatalog,
    claim: PersistentVolumeClaim,
    class_name: str,
    provisioner: str,
    labels: dict[str, str],
) -> bool:
    if claim.request <= 0:
        return True
    driver = catalog.csi_drivers.get(provisioner)
    if driver is None or not driver.storage_capacity:
        return True
    for capacity in catalog.capacities.values():
        limit = (
            capacity.maximum_volume_size
            if capacity.maximum_volume_size is not None
            else capacity.capacity
        )
        if capacity.storage_class != class_name or limit is None or limit < claim.request:
            continue
        if capacity.node_topology is not None and capacity.node_topology.matches(labels):
            return True
    return False


class VolumeBinding(Plugin):
    """PreFilter and Filter (Reserve and PreBind are the live scheduler's)."""

    name = NAME
    implements_score = False

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        pod = cycle.pod
        if not pod.pvc_names:
            return SKIP
        catalog = cycle.volumes
        ephemeral = {
            v.claim or f"{pod.name}-{v.name}" for v in pod.volumes if v.kind == "ephemeral"
        }
        claims: list[PersistentVolumeClaim] = []
        for name in dict.fromkeys(pod.pvc_names):
            claim = catalog.claims.get(f"{pod.namespace}/{name}")
            if claim is None:
                if name in ephemeral:
                    message = (
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{name}"'
                    )
                else:
                    message = f'persistentvolumeclaim "{name}" not found'
                return PreFilterOutcome(Status.unresolvable(message))
            if claim.phase == "Lost":
                return PreFilterOutcome(
                    Status.unresolvable(
                        f'persistentvolumeclaim "{name}" bound to non-existent '
                        f'persistentvolume "{claim.volume_name}"'
                    )
                )
            if claim.deleting:
                return PreFilterOutcome(
                    Status.unresolvable(f'persistentvolumeclaim "{name}" is being deleted')
                )
            if name in ephemeral and pod.uid not in claim.owners:
                return PreFilterOutcome(
                    Status.unresolvable(
                        f"PVC {claim.namespace}/{claim.name} was not created for pod "
                        f"{pod.namespace}/{pod.name} (pod is not owner)"
                    )
                )
            claims.append(claim)
        bound, delay = [], []
        for claim in claims:
            if claim.volume_name and BIND_COMPLETED_ANNOTATION in claim.annotations:
                bound.append(claim)
                continue
            class_name = claim.storage_class or ""
            found = catalog.classes.get(class_name) if class_name else None
            delayed = found is not None and found.binding_mode == WAIT_FOR_FIRST_CONSUMER
            if delayed and not claim.volume_name:
                delay.append(claim)
                continue
            return PreFilterOutcome(Status.unresolvable(IMMEDIATE_UNBOUND))
        cycle.scratch[NAME] = _Claims(tuple(bound), tuple(delay))
        return SUCCESS

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        claims: _Claims = cycle.scratch[NAME]
        reasons = find_pod_volumes(cycle.volumes, claims, node)
        return Status.unresolvable(*reasons) if reasons else Status.success()

    def pre_score(self, cycle: Cycle) -> bool:
        return False


def find_pod_volumes(catalog: VolumeCatalog, claims: _Claims, node: NodeState) -> list[str]:
    """Upstream's FindPodVolumes for one node: its reasons (none: the node fits)."""
    labels = dict(node.info.labels)
    bound_ok = unbound_ok = storage_ok = pvs_found = True
    for claim in claims.bound:
        pv = catalog.pvs.get(claim.volume_name)
        if pv is None:
            pvs_found = False
            break
        if not node_affinity_matches(pv.node_affinity, labels):
            bound_ok = False
            break
    if claims.delay:
        unbound_ok, storage_ok = _unbound(catalog, claims.delay, node.name, labels)
    reasons = []
    if not bound_ok:
        reasons.append(NODE_CONFLICT)
    if not unbound_ok:
        reasons.append(BIND_CONFLICT)
    if not storage_ok:
        reasons.append(NOT_ENOUGH_SPACE)
    if not pvs_found:
        reasons.append(PV_NOT_EXIST)
    return reasons


def _unbound(
    catalog: VolumeCatalog,
    delay: tuple[PersistentVolumeClaim, ...],
    node_name: str,
    labels: dict[str, str],
) -> tuple[bool, bool]:
    """(unboundVolumesSatisfied, sufficientStorage) for the unbound claims."""
    to_provision: list[PersistentVolumeClaim] = []
    to_match: list[PersistentVolumeClaim] = []
    for claim in delay:
        if SELECTED_NODE_ANNOTATION in claim.annotations:
            if claim.annotations[SELECTED_NODE_ANNOTATION] != node_name:
                return False, True
            to_provision.append(claim)
        else:
            to_match.append(claim)
    satisfied = True
    chosen: set[str] = set()
    for claim in sorted(to_match, key=lambda c: c.request):
        class_name = claim.storage_class or ""
        pvs = sorted(
            (pv for pv in catalog.pvs.values() if pv.storage_class == class_name),
            key=lambda pv: (pv.capacity, pv.name),
        )
        pv = find_matching_volume(claim, pvs, labels, chosen)
        if pv is None:
            to_provision.append(claim)
            satisfied = False
            continue
        chosen.add(pv.name)
    if not to_provision:
        return satisfied, True
    for claim in to_provision:
        class_name = claim.storage_class or ""
        storage_class = catalog.classes.get(class_name)
        if storage_class is None:
            raise LookupError(f'failed to find storage class "{class_name}"')
        provisioner = storage_class.provisioner
        if not provisioner or provisioner == "kubernetes.io/no-provisioner":
            return False, True
        topologies = storage_class.allowed_topologies
        if topologies and not any(t.matches("", labels) for t in topologies):
            return False, True
        if not _has_capacity(catalog, claim, class_name, provisioner, labels):
            return True, False
    return True, True
