"""kube-controller-manager v1.37.2's PV controller beside the genuine kube-apiserver.

These are the behaviours the scheduler's volume live tests rely on when they run on the genuine
backend (the simulator's own PV controller answers for the same behaviours on the sim):

- a pre-bound pair (the claim's ``spec.volumeName`` and the PV's ``spec.claimRef`` name each
  other) ends Bound, whatever the class's binding mode: the scheduler treats such a claim as
  bound and only checks the PV's node affinity;
- an Immediate claim is bound by the controller alone, to the smallest Available PV of its class
  that fits: the scheduler never binds it, and a pod whose Immediate claim is still unbound is
  unschedulable (``pod has unbound immediate PersistentVolumeClaims``);
- a WaitForFirstConsumer claim stays Pending (the controller says ``WaitForFirstConsumer`` in an
  event and leaves every PV Available) until something sets a PV's ``claimRef`` to it, which is
  what the scheduler's PreBind does with a plain PUT; then the controller binds the claim and
  both end Bound, the claim's ``spec.volumeName`` naming that PV. PreBind waits for exactly this;
- a deleted claim, then its deleted PV, are really gone: the API server's
  StorageObjectInUseProtection puts protection finalizers on both, and the pv-protection and
  pvc-protection controllers remove them, so tests can clean up.

Every test makes its own StorageClass, so the cluster-wide PVs of one test never match the
claims of another on the shared session server.
"""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from asched.tools.backends.errors import StatusError
from asched.tools.backends.launcher import KubeApiServer
from asched.tools.backends.rest import RestClient

pytestmark = pytest.mark.kube_apiserver

#: Seconds to wait for the controller to act (it acts on watch events, within a second here).
DEADLINE = 60.0
NO_PROVISIONER = "kubernetes.io/no-provisioner"
CLASSES = "/apis/storage.k8s.io/v1/storageclasses"
PVS = "/api/v1/persistentvolumes"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@dataclass
class Storage:
    """A REST client, a namespace and the storage objects a test made (deleted at teardown)."""

    rest: RestClient
    namespace: str
    classes: list[str] = field(default_factory=list)
    pvs: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)

    @property
    def claims_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/persistentvolumeclaims"

    async def storage_class(self, mode: str) -> str:
        name = _name("class")
        body = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": name},
            "provisioner": NO_PROVISIONER,
            "volumeBindingMode": mode,
        }
        await self.rest.create(CLASSES, body)
        self.classes.append(name)
        return name

    async def pv(
        self, storage_class: str, size: str, *, claim_ref: dict[str, str] | None = None
    ) -> dict[str, Any]:
        name = _name("pv")
        spec: dict[str, Any] = {
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": storage_class,
            "hostPath": {"path": f"/tmp/{name}"},
        }
        if claim_ref is not None:
            spec["claimRef"] = claim_ref
        created = await self.rest.create(
            PVS,
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": name},
                "spec": spec,
            },
        )
        self.pvs.append(name)
        return created

    async def claim(
        self, storage_class: str, size: str, *, volume_name: str | None = None
    ) -> dict[str, Any]:
        name = _name("claim")
        spec: dict[str, Any] = {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": size}},
        }
        if volume_name is not None:
            spec["volumeName"] = volume_name
        body = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": spec,
        }
        created = await self.rest.create(self.claims_path, body)
        self.claims.append(name)
        return created

    async def until(
        self, collection: str, name: str, ready: Callable[[dict[str, Any] | None], bool]
    ) -> dict[str, Any] | None:
        """Return the object (None once deleted) as soon as ``ready`` holds, watching for it."""
        try:
            current: dict[str, Any] | None = await self.rest.get(f"{collection}/{name}")
        except StatusError as exc:
            if exc.status != 404:
                raise
            current = None
        if ready(current):
            return current
        listed = await self.rest.list(collection, field_selector=f"metadata.name={name}")
        stream = self.rest.watch(
            collection,
            field_selector=f"metadata.name={name}",
            resource_version=listed["metadata"]["resourceVersion"],
        )
        try:
            async with asyncio.timeout(DEADLINE):
                items = listed["items"]
                current = items[0] if items else None
                if ready(current):
                    return current
                async for event in stream:
                    current = None if event["type"] == "DELETED" else event["object"]
                    if ready(current):
                        return current
        finally:
            await stream.aclose()
        raise AssertionError(f"{collection}/{name} ended its watch before the condition held")

    async def until_phase(self, collection: str, name: str, phase: str) -> dict[str, Any]:
        found = await self.until(collection, name, lambda obj: _phase(obj) == phase)
        assert found is not None
        return found

    async def cleanup(self) -> None:
        for path in (
            *(f"{self.claims_path}/{name}" for name in self.claims),
            *(f"{PVS}/{name}" for name in self.pvs),
            *(f"{CLASSES}/{name}" for name in self.classes),
        ):
            try:
                await self.rest.delete(path)
            except StatusError as exc:
                if exc.status != 404:
                    raise


def _phase(obj: dict[str, Any] | None) -> str | None:
    return None if obj is None else obj.get("status", {}).get("phase")


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    annotations: dict[str, str] = obj["metadata"].get("annotations") or {}
    return annotations


@pytest.fixture
async def storage(
    kube_apiserver: KubeApiServer, kube_controller_manager: Any
) -> AsyncIterator[Storage]:
    rest = RestClient.from_kubeconfig(kube_apiserver.kubeconfig)
    try:
        namespace = _name("kcm")
        await rest.create_namespace(namespace)
        handle = Storage(rest=rest, namespace=namespace)
        yield handle
        await handle.cleanup()
    finally:
        await rest.close()


@pytest.mark.parametrize(
    "mode",
    [
        pytest.param("Immediate", id="Immediate"),
        # the binding mode only matters for claims that name no volume
        pytest.param("WaitForFirstConsumer", id="WaitForFirstConsumer"),
    ],
)
async def test_pre_bound_pair_becomes_bound(storage: Storage, mode: str) -> None:
    storage_class = await storage.storage_class(mode)
    claim_name = _name("claim")
    # the PV names the claim before the claim exists (no uid: the controller fills it in)
    volume = await storage.pv(
        storage_class, "1Gi", claim_ref={"namespace": storage.namespace, "name": claim_name}
    )
    pv_name = volume["metadata"]["name"]
    storage.claims.append(claim_name)
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim_name, "namespace": storage.namespace},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeName": pv_name,
        },
    }
    created = await storage.rest.create(storage.claims_path, body)

    claim = await storage.until_phase(storage.claims_path, claim_name, "Bound")
    volume = await storage.until_phase(PVS, pv_name, "Bound")

    assert claim["spec"]["volumeName"] == pv_name
    assert claim["status"]["capacity"] == {"storage": "1Gi"}
    assert volume["spec"]["claimRef"]["uid"] == created["metadata"]["uid"]
    assert _annotations(claim)[BIND_COMPLETED] == "yes"
    # both halves were set by the user, so the controller marks neither as its own binding
    assert BOUND_BY_CONTROLLER not in _annotations(claim)
    assert BOUND_BY_CONTROLLER not in _annotations(volume)


async def test_immediate_claim_binds_the_smallest_available_pv_that_fits(storage: Storage) -> None:
    storage_class = await storage.storage_class("Immediate")
    other_class = await storage.storage_class("Immediate")
    # the claim asks 2Gi: 1Gi is too small, 3Gi of another class never matches, and of the
    # fitting 5Gi and 10Gi the smaller wins
    sizes = {"1Gi": storage_class, "3Gi": other_class, "5Gi": storage_class, "10Gi": storage_class}
    pvs = {size: (await storage.pv(cls, size))["metadata"]["name"] for size, cls in sizes.items()}
    created = await storage.claim(storage_class, "2Gi")
    claim_name = created["metadata"]["name"]

    claim = await storage.until_phase(storage.claims_path, claim_name, "Bound")
    volume = await storage.until_phase(PVS, pvs["5Gi"], "Bound")

    assert claim["spec"]["volumeName"] == pvs["5Gi"]
    assert claim["status"]["capacity"] == {"storage": "5Gi"}
    assert volume["spec"]["claimRef"]["name"] == claim_name
    assert volume["spec"]["claimRef"]["uid"] == created["metadata"]["uid"]
    assert _annotations(claim)[BOUND_BY_CONTROLLER] == "yes"
    assert _annotations(volume)[BOUND_BY_CONTROLLER] == "yes"
    for size in ("1Gi", "3Gi", "10Gi"):
        untouched = await storage.rest.get(f"{PVS}/{pvs[size]}")
        assert (_phase(untouched), untouched["spec"].get("claimRef")) == ("Available", None), size


async def test_wait_for_first_consumer_claim_binds_once_a_pv_names_it(storage: Storage) -> None:
    storage_class = await storage.storage_class("WaitForFirstConsumer")
    pv_name = (await storage.pv(storage_class, "1Gi"))["metadata"]["name"]
    created = await storage.claim(storage_class, "1Gi")
    claim_name = created["metadata"]["name"]

    # the controller has seen the claim and decided to wait (an event, not a fixed sleep)
    waiting = await _until_event(storage, claim_name, "WaitForFirstConsumer")
    assert waiting["message"] == "waiting for first consumer to be created before binding"
    claim = await storage.rest.get(f"{storage.claims_path}/{claim_name}")
    volume = await storage.rest.get(f"{PVS}/{pv_name}")
    assert (_phase(claim), claim["spec"].get("volumeName")) == ("Pending", None)
    assert (_phase(volume), volume["spec"].get("claimRef")) == ("Available", None)

    # what the scheduler's PreBind writes: the PV's claimRef (with the claim's uid) and the
    # bound-by-controller annotation, in one PUT
    volume["spec"]["claimRef"] = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": storage.namespace,
        "name": claim_name,
        "uid": created["metadata"]["uid"],
        "resourceVersion": created["metadata"]["resourceVersion"],
    }
    volume["metadata"].setdefault("annotations", {})[BOUND_BY_CONTROLLER] = "yes"
    await storage.rest.replace(f"{PVS}/{pv_name}", volume)

    claim = await storage.until_phase(storage.claims_path, claim_name, "Bound")
    volume = await storage.until_phase(PVS, pv_name, "Bound")
    assert claim["spec"]["volumeName"] == pv_name
    assert _annotations(claim)[BIND_COMPLETED] == "yes"
    assert _annotations(claim)[BOUND_BY_CONTROLLER] == "yes"
    assert volume["spec"]["claimRef"]["uid"] == created["metadata"]["uid"]


async def _until_event(storage: Storage, involved: str, reason: str) -> dict[str, Any]:
    path = f"/api/v1/namespaces/{storage.namespace}/events"
    selector = f"involvedObject.name={involved},reason={reason}"
    listed = await storage.rest.list(path, field_selector=selector)
    if listed["items"]:
        found: dict[str, Any] = listed["items"][0]
        return found
    stream = storage.rest.watch(
        path, field_selector=selector, resource_version=listed["metadata"]["resourceVersion"]
    )
    try:
        async with asyncio.timeout(DEADLINE):
            async for event in stream:
                if event["type"] in ("ADDED", "MODIFIED"):
                    found = event["object"]
                    return found
    finally:
        await stream.aclose()
    raise AssertionError(f"no {reason} event for {involved}")


async def test_deleted_claim_and_pv_are_gone(storage: Storage) -> None:
    storage_class = await storage.storage_class("Immediate")
    pv_name = (await storage.pv(storage_class, "1Gi"))["metadata"]["name"]
    claim_name = (await storage.claim(storage_class, "1Gi"))["metadata"]["name"]
    claim = await storage.until_phase(storage.claims_path, claim_name, "Bound")
    volume = await storage.until_phase(PVS, pv_name, "Bound")
    # why the protection controllers run: the API server's admission adds these finalizers
    assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert volume["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]

    await storage.rest.delete(f"{storage.claims_path}/{claim_name}")
    assert await storage.until(storage.claims_path, claim_name, lambda obj: obj is None) is None
    # Retain: the PV outlives its claim, Released; only then may it go
    await storage.until_phase(PVS, pv_name, "Released")
    await storage.rest.delete(f"{PVS}/{pv_name}")
    assert await storage.until(PVS, pv_name, lambda obj: obj is None) is None


def test_controller_manager_is_started_once_and_again_after_it_died(
    kube_apiserver: KubeApiServer,
) -> None:
    first = kube_apiserver.ensure_controller_manager()
    assert first.child is not None
    pid = first.child.pid

    again = kube_apiserver.ensure_controller_manager()
    assert again is first
    assert kube_apiserver.pids()["kube-controller-manager"] == pid
    assert first.log == kube_apiserver.directory / "kube-controller-manager.log"
    assert "Starting persistent volume controller" in first.log.read_text()

    os.kill(pid, signal.SIGKILL)  # the process this test's fixture started
    first.child.stop()  # reaps it
    restarted = kube_apiserver.ensure_controller_manager()
    assert restarted.alive()
    assert kube_apiserver.pids()["kube-controller-manager"] != pid

    # stopped again, it leaves the shared server to the tests that want no controller
    kube_apiserver.stop_controller_manager()
    assert not restarted.alive()
    assert "kube-controller-manager" not in kube_apiserver.pids()
