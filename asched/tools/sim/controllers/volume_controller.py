"""The PV controller's part of kube-controller-manager, inside the simulator.

:class:`VolumeController` subscribes to the simulator's own tables (claims, PVs, classes,
CSIDrivers, capacities), as the real controller watches them through informers: a change marks
the claims and volumes it concerns dirty and wakes one asyncio task owned by the server
(:meth:`start`/:meth:`stop`). After a short debounce the task syncs the dirty objects in one
event-loop step, never inside the store's notification; its own writes mark objects dirty again
and are synced in the same round until nothing changes (every sync writes only differences).

What it does, after upstream's ``pv_controller.go`` (annotations and phases as upstream; Event
messages as kube-controller-manager v1.37 words them, the version of the genuine backend)::

    PV  no claimRef, or a claimRef without uid (pre-bound by a user)  -> phase Available
        claimRef to a claim that is gone (other uid)  -> Released; policy Delete: a
            hollow-provisioned volume (its capacity given back) or a hostPath under /tmp/ is
            deleted, another volume of an external provisioner stays Released, any other is
            Failed with Event VolumeFailedDelete (kube-controller-manager's words)
        claimRef to an unbound claim (the scheduler's PreBind, a provisioner)  -> sync the claim
        claimRef to a claim bound to it  -> phase Bound

    claim  spec.volumeName unset:
             a PV whose claimRef names it, else (unless WaitForFirstConsumer without
             volume.kubernetes.io/selected-node) the smallest matching Available PV
             (:mod:`asched.tools.sim.controllers.volume_match`)  -> bind
             none, delayed  -> Event WaitForFirstConsumer; Pending
             none, the class has an external provisioner  -> annotate
                 volume.kubernetes.io/storage-provisioner and its beta twin, Event
                 ExternalProvisioning;
                 a hollow driver's claim is provisioned at once (:mod:`asched.tools.sim.controllers.provisioner`)
             none, an in-tree provisioner (kubernetes.io/...), or a missing class
                 -> Event ProvisioningFailed
             none, no class  -> Event FailedBinding (Normal, as upstream)
           spec.volumeName set (pre-bound, or bound): its PV claiming it, or unclaimed and
             satisfying it -> bind (unsatisfying: Event VolumeMismatch);
             missing -> Pending (Lost once bound); claimed by another claim -> Event FailedBinding

    bind: PV claimRef = the claim (+ pv.kubernetes.io/bound-by-controller: "yes" when the
          controller chose the PV), PV phase Bound; claim spec.volumeName (+ bound-by-controller
          when the controller set it), pv.kubernetes.io/bind-completed: "yes", claim status
          Bound with the PV's access modes and capacity.

The pure rules live beside it (:mod:`asched.tools.sim.controllers.volume_match`, :mod:`asched.tools.sim.controllers.volume_reclaim`,
:mod:`asched.tools.sim.controllers.volume_protection`); this module (over 500 lines) keeps the volume and claim
syncs together because each drives the other, as in upstream's ``pv_controller.go``.

Faults (:mod:`asched.tools.sim.apiserver.faults`): ``volumeBindingPaused`` holds every bind and provisioning
(PV phases still move) until unpaused; ``volumeBindingDelaySeconds`` replaces the debounce.

The pvc-protection and pv-protection controllers' part is here too: a claim or volume being
deleted loses its protection finalizer once no scheduled, unfinished pod uses the claim, or once
the volume is not Bound (:mod:`asched.tools.sim.controllers.volume_protection`).

Not simulated, compared with kube-controller-manager: periodic resyncs (nothing changes
unless an object does), the recycler and the deleters of in-tree plugins other than hostPath, in-tree provisioners, adding the protection finalizers (an admission plugin),
volume expansion, the ``ClaimMisbound`` bookkeeping beyond an Event, and the Event aggregation
(each reason is recorded once per object).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Final

from asched.tools.sim.apiserver.faults import Faults
from asched.tools.sim.apiserver.registry import Registry
from asched.tools.sim.apiserver.store import Event, object_key
from asched.tools.sim.controllers import (
    provisioner,
    recorder,
    volume_match,
    volume_protection,
    volume_reclaim,
)

logger = logging.getLogger(__name__)

JSON = dict[str, Any]

COMPONENT: Final = "persistentvolume-controller"
BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
#: the annotations kube-controller-manager sets for an external provisioner (1.23+ both; v1.20
#: the beta one only).
STORAGE_PROVISIONER: Final = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER: Final = "volume.beta.kubernetes.io/storage-provisioner"
#: seconds between a change and the round that syncs it (gathers a burst of writes).
DEBOUNCE: Final = 0.001
#: rounds of follow-up syncs in one step before yielding (a guard against write loops).
MAX_PASSES: Final = 20
_CLAIMS: Final = "persistentvolumeclaims"
_VOLUMES: Final = "persistentvolumes"
_WATCHED: Final = (
    _CLAIMS,
    _VOLUMES,
    "storageclasses",
    "csidrivers",
    "csistoragecapacities",
)


class _Feed:
    """One table's subscription, telling the controller which table changed."""

    def __init__(self, controller: VolumeController, table: str) -> None:
        self._controller = controller
        self._table = table

    def offer(self, event: Event) -> None:
        try:
            self._controller.changed(self._table, event)
        except Exception:  # the store would drop a failing subscriber for good
            logger.exception("the simulated PV controller failed on a %s event", self._table)

    def close(self) -> None:
        """The controller lives as long as the server."""


class VolumeController:
    """Binds claims and volumes (see the module docstring)."""

    def __init__(self, registry: Registry, faults: Faults) -> None:
        self._registry = registry
        self._tables = registry.store.tables
        self._faults = faults
        self._events = recorder.Once()
        self.provisioner = provisioner.Provisioner(registry, self._events)
        self._claims: set[str] = set()
        self._volumes: set[str] = set()
        self._held: set[str] = set()
        #: claims being deleted (a pod's end may let their protection finalizer go)
        self._protected: set[str] = set()
        #: unbound claims whose binding is not delayed but found no volume and no provisioning:
        #: synced again when a volume or a capacity changes (upstream's periodic resync does it)
        self._stalled: set[str] = set()
        #: deleted PVs whose capacity goes back at the next round
        self._freed: list[JSON] = []
        #: claim key -> names of the PVs whose claimRef names it
        self._claimed: dict[str, set[str]] = {}
        #: PV name -> the claim whose spec.volumeName names it (pre-bound claims wait on it)
        self._wanted: dict[str, str] = {}
        #: class name -> names of the unclaimed PVs of that class
        self._by_class: dict[str, set[str]] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        for table in _WATCHED:
            self._tables[table].subscribers.add(_Feed(self, table))
        #: subscribed to the pods only while a claim being deleted waits for its pods
        self._pod_feed = _Feed(self, "pods")
        faults.subscribe(self._faults_changed)

    def start(self) -> None:
        """Start the controller's task (objects already stored are synced first)."""
        for entry in self._tables[_VOLUMES].objects.values():
            self._index(entry.obj, add=True)
        for entry in self._tables["csistoragecapacities"].objects.values():
            self.provisioner.index(Event("ADDED", entry, None))
        self._volumes.update(self._tables[_VOLUMES].objects)
        for key, entry in self._tables[_CLAIMS].objects.items():
            self._claims.add(key)
            if entry.obj["spec"].get("volumeName"):
                self._wanted[entry.obj["spec"]["volumeName"]] = key
        self._wake.set()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Cancel the task and wait for it."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    # Change notifications (inside the store's notification: no writes here) --------------

    def changed(self, table: str, event: Event) -> None:
        """Mark what ``event`` concerns dirty and wake the task."""
        entry = event.entry
        if table == "pods":  # subscribed only while a protected claim waits for its pods
            if event.prev is not None:
                namespace = entry.namespace
                for name in volume_protection.claims_of(event.prev.obj):
                    if object_key(namespace, name) in self._protected:
                        self._claims.add(object_key(namespace, name))
                        self._wake.set()
            return
        if table == _CLAIMS:
            self._claims.add(entry.key)
            if event.type != "DELETED" and entry.obj["metadata"].get("deletionTimestamp"):
                self._protected.add(entry.key)
            else:
                self._protected.discard(entry.key)
            pod_watchers = self._tables["pods"].subscribers
            if self._protected:  # the pods table is the hottest: watch it only when needed
                pod_watchers.add(self._pod_feed)
            else:
                pod_watchers.discard(self._pod_feed)
            wanted = entry.obj["spec"].get("volumeName")
            if wanted and event.type != "DELETED":
                self._wanted[wanted] = entry.key
            if event.type == "DELETED":
                self._stalled.discard(entry.key)
                if wanted and self._wanted.get(wanted) == entry.key:
                    del self._wanted[wanted]
                self._volumes.update(self._claimed.get(entry.key, ()))
                self._events.forget(str(entry.obj["metadata"].get("uid", "")))
        elif table == _VOLUMES:
            if event.prev is not None:
                self._index(event.prev.obj, add=False)
            if event.type != "DELETED":
                self._index(entry.obj, add=True)
            else:
                self._freed.append(entry.obj)
            self._volumes.add(entry.key)
            self._claims |= self._stalled  # a new or freed volume may match them
            wanting = self._wanted.get(entry.key)
            if wanting is not None:
                self._claims.add(wanting)
            ref = entry.obj["spec"].get("claimRef")
            if ref:
                self._claims.add(object_key(ref.get("namespace", ""), ref.get("name", "")))
        elif table == "csistoragecapacities":  # our own decrements too: only stalled claims
            self.provisioner.index(event)
            self._claims |= self._stalled
        else:  # a class or driver (rare): any unbound claim may now go further
            self._claims.update(
                key
                for key, claim in self._tables[_CLAIMS].objects.items()
                if not claim.obj["spec"].get("volumeName")
            )
        self._wake.set()

    def _index(self, volume: JSON, *, add: bool) -> None:
        name = volume["metadata"]["name"]
        ref = volume["spec"].get("claimRef")
        if ref:  # matched only by the claim it names
            key = object_key(ref.get("namespace", ""), ref.get("name", ""))
            buckets = [self._claimed.setdefault(key, set())]
        else:
            buckets = [self._by_class.setdefault(volume_match.volume_class(volume), set())]
        for bucket in buckets:
            if add:
                bucket.add(name)
            else:
                bucket.discard(name)

    def _faults_changed(self) -> None:
        if not self._faults.volume_binding_paused and self._held:
            self._claims |= self._held
            self._held.clear()
        self._wake.set()

    # The task ------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await asyncio.sleep(self._faults.volume_binding_delay or DEBOUNCE)
            try:
                self.sync()
            except Exception:  # a bug must not stop binding for the server's lifetime
                logger.exception("the simulated PV controller failed a round")

    def sync(self) -> None:
        """Sync every dirty volume, then every dirty claim, until none is left."""
        for _ in range(MAX_PASSES):
            freed, self._freed = self._freed, []
            for volume in freed:
                self.provisioner.released(volume)
            if not self._volumes and not self._claims:
                return
            volumes, self._volumes = self._volumes, set()
            for name in sorted(volumes):
                self._guarded(self._sync_volume, "PersistentVolume", name)
            claims, self._claims = self._claims, set()
            for key in sorted(claims):
                self._guarded(self._sync_claim, "PersistentVolumeClaim", key)
        self._wake.set()  # more work: another round after yielding

    @staticmethod
    def _guarded(step: Callable[[str], None], kind: str, key: str) -> None:
        """One object's sync; a failure is logged and skips that object only (it is synced
        again on its next change)."""
        try:
            step(key)
        except Exception:
            logger.exception("the simulated PV controller failed to sync %s %s", kind, key)

    # Volumes -------------------------------------------------------------------------------

    def _sync_volume(self, name: str) -> None:
        entry = self._tables[_VOLUMES].objects.get(name)
        if entry is None:
            return
        volume = entry.obj
        if volume["metadata"].get("deletionTimestamp") and (
            (volume.get("status") or {}).get("phase") != "Bound"
        ):
            self._unprotect(_VOLUMES, volume, volume_protection.VOLUME_FINALIZER)
            return
        ref = volume["spec"].get("claimRef")
        if not ref or not ref.get("uid"):
            self._volume_phase(volume, "Available")
            return
        claim_entry = self._tables[_CLAIMS].objects.get(
            object_key(ref.get("namespace", ""), ref.get("name", ""))
        )
        claim = claim_entry.obj if claim_entry is not None else None
        if claim is None or claim["metadata"].get("uid") != ref["uid"]:
            self._released(volume)
        elif claim["spec"].get("volumeName") == name:
            self._volume_phase(volume, "Bound")
        elif claim["spec"].get("volumeName") and (  # the claim went to another volume
            (volume["metadata"].get("annotations") or {}).get(BOUND_BY_CONTROLLER)
        ):
            self._unbind(volume)

    def _volume_phase(self, volume: JSON, phase: str) -> JSON:
        status = volume.get("status") or {}
        if status.get("phase") == phase:
            return volume
        return self._registry.write(_VOLUMES, {**volume, "status": {"phase": phase}}).obj

    def _released(self, volume: JSON) -> None:
        """Its claim is gone: Released, then (policy Delete) deleted or Failed."""
        if (volume.get("status") or {}).get("phase") == "Failed":
            return
        volume = self._volume_phase(volume, "Released")
        if volume["spec"].get("persistentVolumeReclaimPolicy") != "Delete":
            return
        outcome = volume_reclaim.deletion(volume)
        if outcome == volume_reclaim.DELETE:
            self._registry.store.remove(self._tables[_VOLUMES], volume["metadata"]["name"])
        elif outcome != volume_reclaim.KEEP:
            failed = {**volume, "status": {"phase": "Failed", "message": outcome}}
            self._registry.write(_VOLUMES, failed)
            recorder.record(
                self._registry,
                volume,
                "PersistentVolume",
                "Warning",
                "VolumeFailedDelete",
                outcome,
                COMPONENT,
            )

    def _unbind(self, volume: JSON) -> None:
        meta = dict(volume["metadata"])
        meta["annotations"] = {
            key: value
            for key, value in (meta.get("annotations") or {}).items()
            if key != BOUND_BY_CONTROLLER
        }
        spec = {key: value for key, value in volume["spec"].items() if key != "claimRef"}
        unbound = {**volume, "metadata": meta, "spec": spec, "status": {"phase": "Available"}}
        self._registry.write(_VOLUMES, unbound)

    # Claims --------------------------------------------------------------------------------

    def _sync_claim(self, key: str) -> None:
        self._stalled.discard(key)
        entry = self._tables[_CLAIMS].objects.get(key)
        if entry is None:
            return
        claim = entry.obj
        if claim["metadata"].get("deletionTimestamp"):
            pods = self._tables["pods"]
            namespace = entry.namespace
            users = (pods.objects[k].obj for k in pods.keys_in(namespace))
            if not volume_protection.in_use(entry.name, users):
                self._unprotect(_CLAIMS, claim, volume_protection.CLAIM_FINALIZER)
            return
        name = claim["spec"].get("volumeName")
        if not name:
            self._sync_unbound(key, claim)
            return
        volume_entry = self._tables[_VOLUMES].objects.get(name)
        if volume_entry is None:
            bound = (claim["metadata"].get("annotations") or {}).get(BIND_COMPLETED)
            if (
                bound
                and self._claim_phase(claim, "Lost")
                and self._events.first(claim, "ClaimLost")
            ):
                self._event(
                    claim,
                    "Warning",
                    "ClaimLost",
                    "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
                )
            return
        volume = volume_entry.obj
        if not volume["spec"].get("claimRef"):
            why = volume_match.mismatch(volume, claim)
            if why is None:
                self._bind(key, volume, claim)
            elif self._events.first(claim, "VolumeMismatch"):
                self._event(
                    claim,
                    "Warning",
                    "VolumeMismatch",
                    f'Cannot bind to requested volume "{name}": {why}',
                )
        elif volume_match.is_bound_to(volume, claim):
            self._bind(key, volume, claim)
        elif self._events.first(claim, "FailedBinding"):
            self._event(
                claim,
                "Warning",
                "FailedBinding",
                f'volume "{name}" already bound to a different claim.',
            )

    def _sync_unbound(self, key: str, claim: JSON) -> None:
        class_name = volume_match.claim_class(claim)
        class_entry = self._tables["storageclasses"].objects.get(class_name) if class_name else None
        storage_class = class_entry.obj if class_entry is not None else None
        annotations = claim["metadata"].get("annotations") or {}
        delayed = (
            storage_class is not None
            and storage_class.get("volumeBindingMode") == "WaitForFirstConsumer"
            and not annotations.get(provisioner.SELECTED_NODE)
        )
        names = set(self._claimed.get(key, ()))
        if not delayed:
            names |= self._by_class.get(class_name, set())
        volumes = self._tables[_VOLUMES].objects
        candidates = (volumes[name].obj for name in sorted(names) if name in volumes)
        volume = volume_match.best_match(candidates, claim, delayed=delayed)
        if volume is None and not delayed:
            self._stalled.add(key)  # until a volume or capacity appears (or it is provisioned)
        if volume is not None:
            self._bind(key, volume, claim)
        elif delayed:
            if self._events.first(claim, "WaitForFirstConsumer"):
                self._event(
                    claim,
                    "Normal",
                    "WaitForFirstConsumer",
                    "waiting for first consumer to be created before binding",
                )
        elif storage_class is not None and storage_class.get("provisioner"):
            self._provision(key, claim, storage_class)
        elif class_name and storage_class is None:
            if self._events.first(claim, "ProvisioningFailed"):
                self._event(
                    claim,
                    "Warning",
                    "ProvisioningFailed",
                    f'storageclass.storage.k8s.io "{class_name}" not found',
                )
        elif self._events.first(claim, "FailedBinding"):
            self._event(
                claim,
                "Normal",  # sic: upstream records this one as Normal
                "FailedBinding",
                "no persistent volumes available for this claim and no storage class is set",
            )

    def _provision(self, key: str, claim: JSON, storage_class: JSON) -> None:
        if self._faults.volume_binding_paused:
            self._held.add(key)
            return
        driver = str(storage_class["provisioner"])
        if driver.startswith(volume_reclaim.IN_TREE_PREFIX):  # in-tree plugins are not simulated
            if self._events.first(claim, "ProvisioningFailed"):
                self._event(
                    claim,
                    "Warning",
                    "ProvisioningFailed",
                    f"no volume plugin matched name: {driver}",
                )
            return
        annotations = claim["metadata"].get("annotations") or {}
        if annotations.get(STORAGE_PROVISIONER) != driver:
            meta = {
                **claim["metadata"],
                "annotations": {
                    **annotations,
                    BETA_STORAGE_PROVISIONER: driver,
                    STORAGE_PROVISIONER: driver,
                },
            }
            claim = self._registry.write(_CLAIMS, {**claim, "metadata": meta}).obj
            self._event(
                claim,
                "Normal",
                "ExternalProvisioning",
                f"Waiting for a volume to be created either by the external provisioner '{driver}' "
                "or manually by the system administrator. If volume creation is delayed, please "
                "verify that the provisioner is running and correctly registered.",
            )
        if provisioner.is_hollow(driver):
            self.provisioner.provision(claim, storage_class)

    def _bind(self, key: str, volume: JSON, claim: JSON) -> None:
        """Both halves of a binding, each written only where it differs."""
        if self._faults.volume_binding_paused:
            self._held.add(key)
            return
        meta = claim["metadata"]
        ref = volume["spec"].get("claimRef") or {}
        if ref.get("uid") != meta.get("uid") or not volume_match.is_bound_to(volume, claim):
            volume_meta = dict(volume["metadata"])
            if not volume_match.is_bound_to(volume, claim):
                volume_meta["annotations"] = {
                    **(volume_meta.get("annotations") or {}),
                    BOUND_BY_CONTROLLER: "yes",
                }
            spec = {**volume["spec"], "claimRef": volume_match.claim_ref(claim)}
            volume = self._registry.write(
                _VOLUMES, {**volume, "metadata": volume_meta, "spec": spec}
            ).obj
        volume = self._volume_phase(volume, "Bound")
        name = volume["metadata"]["name"]
        annotations = dict(meta.get("annotations") or {})
        spec = claim["spec"]
        if spec.get("volumeName") != name:
            spec = {**spec, "volumeName": name}
            annotations.setdefault(BOUND_BY_CONTROLLER, "yes")
        annotations.setdefault(BIND_COMPLETED, "yes")
        if spec is not claim["spec"] or annotations != (meta.get("annotations") or {}):
            claim = self._registry.write(
                _CLAIMS, {**claim, "metadata": {**meta, "annotations": annotations}, "spec": spec}
            ).obj
        status = {
            **(claim.get("status") or {}),
            "phase": "Bound",
            "accessModes": list(volume["spec"].get("accessModes") or []),
            "capacity": dict(volume["spec"].get("capacity") or {}),
        }
        if status != claim.get("status"):
            self._registry.write(_CLAIMS, {**claim, "status": status})

    def _unprotect(self, storage: str, obj: JSON, finalizer: str) -> None:
        """Remove a protection finalizer; the object goes if it was the last one."""
        released = volume_protection.without(obj, finalizer)
        if released is None:
            return
        entry = self._registry.write(storage, released)
        if not released["metadata"].get("finalizers"):
            self._registry.store.remove(self._tables[storage], entry.key)

    def _claim_phase(self, claim: JSON, phase: str) -> bool:
        """Set the claim's phase; False if it already had it."""
        status = claim.get("status") or {}
        if status.get("phase") == phase:
            return False
        self._registry.write(_CLAIMS, {**claim, "status": {**status, "phase": phase}})
        return True

    def _event(self, claim: JSON, type_: recorder.EventType, reason: str, message: str) -> None:
        recorder.record(
            self._registry, claim, "PersistentVolumeClaim", type_, reason, message, COMPONENT
        )
