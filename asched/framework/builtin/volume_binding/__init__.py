"""VolumeBinding (PreFilter, Filter, Reserve, Unreserve, PreBind): a pod's claims.

Upstream's ``volumebinding`` plugin (v1.33), section "Volumes: VolumeBinding" of
docs/semantics.md. PreFilter reads the pod's claims from the catalog
(``table.volumes``): a pod without claims is skipped (its Filter does not run, nothing
is computed); a missing, lost, deleting or foreign ephemeral claim, or an unbound claim
that is not WaitForFirstConsumer, rejects the pod outright with upstream's message.
Filter is :func:`~asched.framework.builtin.volume_binding.match.find_pod_volumes` over the rows.

Reserve assumes, for the chosen node, each static match (the PV's ``claimRef``) and
each claim to provision (its selected-node annotation) in the catalog's assume cache,
so the next cycle cannot take the same PV; Unreserve restores them (idempotent).
PreBind writes them through the :class:`VolumeHost` and waits, woken by the catalog's
listeners (never polling), until upstream's ``checkBindings`` says every claim is bound,
or fails, or ``bindTimeoutSeconds`` of loop time pass
(:mod:`asched.framework.builtin.volume_binding.prebind`).

Not row-local: the answer depends on the catalog, which other pods' Reserve changes,
so it is computed afresh every cycle; pods without claims skip it and stay batchable.
PreScore/Score are not offered: the default profile scores with VolumeBinding only
under the StorageCapacityScoring gate, which asched does not implement.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows
from asched.cluster.pv_index import PVIndex, index_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.cluster.volumes import (
    BIND_COMPLETED_ANNOTATION,
    SELECTED_NODE_ANNOTATION,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimRef,
    CSIDriver,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeCatalog,
)
from asched.config.args import IN_TREE_ARGS
from asched.config.types import VolumeBindingArgs
from asched.framework.builtin.volume_binding.masks import MaskCache
from asched.framework.builtin.volume_binding.match import (
    NONE,
    PodClaims,
    PodVolumes,
    find_pod_volumes,
    reasons_of,
    split_unbound,
)
from asched.framework.builtin.volume_binding.prebind import VolumeWriteError, bind_pod_volumes
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.hosts import Resource, VolumeHost
from asched.framework.interface import (
    PRE_FILTER_SKIP,
    PRE_FILTER_SUCCESS,
    BoolMask,
    Handle,
    PreFilterResult,
)
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "VolumeBinding"
STATE_KEY: Final = f"{NAME}/state"
REASON_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
CLAIM_LOST: Final = "Lost"

__all__ = ["NAME", "SPEC", "Resource", "VolumeBinding", "VolumeHost", "VolumeWriteError"]


def ephemeral_claims(pod: PodInfo) -> frozenset[str]:
    """Names of the pod's generic ephemeral claims (``<pod>-<volume>``)."""
    return frozenset(
        volume.claim or f"{pod.name}-{volume.name}"
        for volume in pod.volumes
        if volume.kind == "ephemeral"
    )


def fully_bound(claim: PersistentVolumeClaim) -> bool:
    """Upstream's isPVCFullyBound: a volume name and the bind-completed annotation."""
    return bool(claim.volume_name) and BIND_COMPLETED_ANNOTATION in claim.annotations


def claim_problem(pod: PodInfo, name: str, claim: PersistentVolumeClaim | None) -> str | None:
    """Upstream's podHasPVCs error for one of the pod's claims, or None."""
    ephemeral = name in ephemeral_claims(pod)
    if claim is None:
        if ephemeral:
            return (
                "waiting for ephemeral volume controller to create the persistentvolumeclaim "
                f'"{name}"'
            )
        return f'persistentvolumeclaim "{name}" not found'
    if claim.phase == CLAIM_LOST:
        return (
            f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
            f'"{claim.volume_name}"'
        )
    if claim.deleting:
        return f'persistentvolumeclaim "{name}" is being deleted'
    if ephemeral and pod.uid not in claim.owners:
        return (
            f"PVC {claim.namespace}/{claim.name} was not created for pod "
            f"{pod.namespace}/{pod.name} (pod is not owner)"
        )
    return None


def delay_binding(catalog: VolumeCatalog, claim: PersistentVolumeClaim) -> bool:
    """Upstream's IsDelayBindingMode: the claim's class exists and is WaitForFirstConsumer."""
    name = claim.storage_class or ""
    found = catalog.classes.get(name) if name else None
    return found is not None and found.binding_mode == WAIT_FOR_FIRST_CONSUMER


@dataclass(slots=True)
class _State:
    """What PreFilter found for the pod and what Reserve assumed."""

    table: NodeTable
    claims: PodClaims
    #: (PV as assumed or found, claim): Reserve's static bindings
    bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]] = field(default_factory=list)
    #: claims to provision, as assumed (with the selected-node annotation)
    provisions: list[PersistentVolumeClaim] = field(default_factory=list)
    #: Filter's answer over every row, with the catalog generation and table epoch it
    #: was computed at (Reserve reads the chosen row from it while they hold)
    answer: tuple[PodVolumes, int, int] | None = None


class VolumeBinding:
    name: Final = NAME
    #: upstream's EventsToRegister (queueing hints enabled: no node taint event)
    events: Final = frozenset(
        {
            ClusterEvent.NODE_ADD,
            ClusterEvent.NODE_LABEL,
            ClusterEvent.PVC_ADD,
            ClusterEvent.PVC_UPDATE,
            ClusterEvent.PV_ADD,
            ClusterEvent.PV_UPDATE,
            ClusterEvent.STORAGE_CLASS_ADD,
            ClusterEvent.STORAGE_CLASS_UPDATE,
            ClusterEvent.CSI_NODE_ADD,
            ClusterEvent.CSI_NODE_UPDATE,
            ClusterEvent.CSI_DRIVER_UPDATE,
            ClusterEvent.CSI_CAPACITY_ADD,
            ClusterEvent.CSI_CAPACITY_UPDATE,
        }
    )
    row_local: Final = False
    #: other pods matter only through their volumes (preemption may vectorise past it)
    filter_reads_only_pod_volumes: Final = True
    #: its PreFilter reads the pod and the volume catalogue only: no pod on a node changes it (no
    #: PreFilter hooks needed)
    pre_filter_reads_pods: Final = False

    def __init__(self, args: VolumeBindingArgs, handle: Handle | None = None) -> None:
        self.bind_timeout = float(args.bind_timeout_seconds)
        self._handle = handle
        self._masks = MaskCache()

    def queueing_hint(self, event: ClusterEvent, pod: PodInfo, changed: object) -> bool:
        """Upstream's hints, as far as the new object tells: a claim helps only if it is
        one of the pod's; a CSIDriver update only if the pod has an inline volume of
        that driver and the driver no longer asks for capacity checks. Every other
        registered event may help (upstream compares with the old object, which the
        events here do not carry)."""
        if isinstance(changed, PersistentVolumeClaim):
            return changed.namespace == pod.namespace and changed.name in pod.pvc_names
        if event == ClusterEvent.CSI_DRIVER_UPDATE and isinstance(changed, CSIDriver):
            inline = any(v.kind == "csi" and v.driver == changed.name for v in pod.volumes)
            return inline and not changed.storage_capacity
        return True

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): a pod without volumes is skipped; claims are storage
        objects."""
        return bool(pod.volumes)

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        if not pod.pvc_names:
            return PRE_FILTER_SKIP
        catalog = table.volumes
        found: list[PersistentVolumeClaim] = []
        for name in dict.fromkeys(pod.pvc_names):
            claim = catalog.claims.get(f"{pod.namespace}/{name}")
            problem = claim_problem(pod, name, claim)
            if problem is not None:
                return PreFilterResult(Status.unresolvable(problem, plugin=NAME))
            assert claim is not None
            found.append(claim)
        bound: list[PersistentVolumeClaim] = []
        delay: list[PersistentVolumeClaim] = []
        for claim in found:
            if fully_bound(claim):
                bound.append(claim)
            elif delay_binding(catalog, claim) and not claim.volume_name:
                delay.append(claim)
            else:
                return PreFilterResult(Status.unresolvable(REASON_IMMEDIATE, plugin=NAME))
        selected, to_match = split_unbound(delay)
        state.write(STATE_KEY, _State(table, PodClaims(tuple(bound), selected, to_match)))
        return PRE_FILTER_SUCCESS

    def _index(self, table: NodeTable) -> PVIndex:
        return index_of(table.volumes)

    def _find(self, state: CycleState, table: NodeTable, rows: Rows) -> PodVolumes:
        found: _State = state.read(STATE_KEY)
        index = self._index(table)
        return find_pod_volumes(found.claims, table.volumes, index, table, rows, self._masks)

    def filter_pods_matter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> bool:
        """Never: the answer reads the volume catalogue (claims, volumes, classes,
        capacities and the bindings assumed at Reserve), not the pods on the nodes."""
        return False

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        answer = self._find(state, table, rows)
        if isinstance(rows, slice) and rows == table.rows:
            found: _State = state.read(STATE_KEY)
            found.answer = (answer, table.volumes.generation, table.epoch)
        passing: BoolMask = answer.reasons == 0
        return passing

    def _at_row(self, state: CycleState, found: _State, row: int) -> PodVolumes:
        """The answer for one row: Filter's, if nothing changed since, else afresh."""
        table = found.table
        if found.answer is not None:
            answer, generation, epoch = found.answer
            if generation == table.volumes.generation and epoch == table.epoch:
                matches = [
                    dataclasses.replace(m, ranks=m.ranks[row : row + 1]) for m in answer.matches
                ]
                return PodVolumes(answer.reasons[row : row + 1], matches)
        return self._find(state, table, np.array([row], dtype=np.intp))

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        bits = int(self._find(state, table, np.array([row], dtype=np.intp)).reasons[0])
        return Status.unresolvable(*reasons_of(bits), plugin=NAME)

    def explain_rows(
        self, state: CycleState, pod: PodInfo, table: NodeTable, rows: npt.NDArray[np.intp]
    ) -> list[Status]:
        """:meth:`explain` for many rows at once (one computation, one Status per reason set)."""
        bits = self._find(state, table, rows).reasons.tolist()
        statuses = {b: Status.unresolvable(*reasons_of(b), plugin=NAME) for b in set(bits)}
        return [statuses[b] for b in bits]

    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        found: _State | None = state.get(STATE_KEY)
        if found is None or found.claims.all_bound:
            return Status.success()
        table = found.table
        row = table.row_of(node)
        if row is None:
            return Status.error(f'VolumeBinding: node "{node}" is not in the cache', NAME)
        catalog = table.volumes
        outcome = self._at_row(state, found, row)
        bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]] = []
        unmatched: list[PersistentVolumeClaim] = []
        for match in outcome.matches:
            rank = int(match.ranks[0])
            if rank == NONE or match.pvs is None:
                unmatched.append(match.claim)
                continue
            pv = match.pvs.pvs[int(match.pvs.by_rank[rank])]
            assert pv is not None
            bindings.append((pv, match.claim))
        try:
            for pv, claim in bindings:
                ref = ClaimRef(claim.namespace, claim.name, claim.uid)
                if pv.claim_ref != ref:
                    catalog.assume_pv(dataclasses.replace(pv, claim_ref=ref))
                found.bindings.append((catalog.pvs[pv.name], claim))
            for claim in (*found.claims.selected, *unmatched):
                annotations = {**claim.annotations, SELECTED_NODE_ANNOTATION: node}
                assumed = dataclasses.replace(claim, annotations=annotations)
                catalog.assume_claim(assumed)
                found.provisions.append(assumed)
        except (KeyError, ValueError) as exc:
            self.unreserve(state, pod, node)
            return Status.error(str(exc), NAME)
        return Status.success()

    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        found: _State | None = state.get(STATE_KEY)
        if found is None:
            return
        catalog = found.table.volumes
        for pv, _ in found.bindings:
            catalog.restore_pv(pv.name)
        for claim in found.provisions:
            catalog.restore_claim(claim.key)
        found.bindings.clear()
        found.provisions.clear()

    async def pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        found: _State | None = state.get(STATE_KEY)
        if found is None or (not found.bindings and not found.provisions):
            return Status.success()
        host = self._handle.volume_host if self._handle is not None else None
        if host is None:
            return Status.error("binding volumes: the scheduler has no volume host", NAME)
        return await bind_pod_volumes(
            host, pod, node, found.bindings, found.provisions, self.bind_timeout
        )


def factory(args: object | None, handle: Handle | None) -> VolumeBinding:
    return VolumeBinding(
        args if isinstance(args, VolumeBindingArgs) else VolumeBindingArgs(), handle
    )


SPEC: Final = declare(
    VolumeBinding,
    api_version=API_VERSION,
    factory=factory,
    args=IN_TREE_ARGS[NAME],
    points=("preFilter", "filter", "reserve", "preBind"),
)
