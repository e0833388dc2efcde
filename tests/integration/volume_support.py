"""Storage objects for the live volume tests: classes, local PVs, claims, pods using them.

Every test makes its own StorageClass (a unique name), so the cluster-wide PVs of one test
can never match another test's claims on the shared session servers; the test's claims,
then its PVs, are deleted at the end of each test by :func:`delete_pvs` (in that order:
the protection controllers keep a PV whose claim is still bound).
"""

from __future__ import annotations

from typing import Any

from asched.tools.backends.errors import StatusError

NO_PROVISIONER = "kubernetes.io/no-provisioner"
HOSTNAME = "kubernetes.io/hostname"


async def create_class(
    cluster: Any,
    name: str,
    *,
    mode: str = "WaitForFirstConsumer",
    provisioner: str = NO_PROVISIONER,
) -> dict[str, Any]:
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name, "labels": cluster.labels},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }
    created: dict[str, Any] = await cluster.rest.create(
        "/apis/storage.k8s.io/v1/storageclasses", body
    )
    return created


async def create_local_pv(
    cluster: Any, name: str, node: str, storage_class: str, *, size: str = "1Gi"
) -> dict[str, Any]:
    """A local PV pinned to ``node`` (node affinity on its hostname label)."""
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "labels": cluster.labels},
        "spec": {
            "capacity": {"storage": size},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": storage_class,
            "local": {"path": f"/mnt/disks/{name}"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": HOSTNAME, "operator": "In", "values": [node]}
                            ]
                        }
                    ]
                }
            },
        },
    }
    created: dict[str, Any] = await cluster.rest.create("/api/v1/persistentvolumes", body)
    return created


async def create_claim(
    cluster: Any, name: str, storage_class: str, *, size: str = "1Gi"
) -> dict[str, Any]:
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": cluster.namespace},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": size}},
        },
    }
    path = f"/api/v1/namespaces/{cluster.namespace}/persistentvolumeclaims"
    created: dict[str, Any] = await cluster.rest.create(path, body)
    return created


async def create_pod_with_claim(
    cluster: Any, name: str, scheduler: str, claim: str
) -> dict[str, Any]:
    created: dict[str, Any] = await cluster.create_pod(
        name,
        scheduler_name=scheduler,
        spec={"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]},
    )
    return created


async def claim(cluster: Any, name: str) -> dict[str, Any]:
    path = f"/api/v1/namespaces/{cluster.namespace}/persistentvolumeclaims/{name}"
    found: dict[str, Any] = await cluster.rest.get(path)
    return found


async def pv(cluster: Any, name: str) -> dict[str, Any]:
    found: dict[str, Any] = await cluster.rest.get(f"/api/v1/persistentvolumes/{name}")
    return found


def affinity_hosts(volume: dict[str, Any]) -> set[str]:
    """The hostnames a local PV's node affinity names."""
    terms = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    return {
        value
        for term in terms
        for expression in term.get("matchExpressions", ())
        if expression["key"] == HOSTNAME
        for value in expression.get("values", ())
    }


async def delete_pvs(cluster: Any, names: list[str]) -> None:
    """Delete the test namespace's claims, then the PVs ``names``."""
    path = f"/api/v1/namespaces/{cluster.namespace}/persistentvolumeclaims"
    claims = await cluster.rest.list(path)
    paths = [f"{path}/{c['metadata']['name']}" for c in claims.get("items", [])]
    paths += [f"/api/v1/persistentvolumes/{name}" for name in names]
    for each in paths:
        try:
            await cluster.rest.delete(each)
        except StatusError as exc:
            if exc.status != 404:
                raise


async def node_with_local_pvs(cluster: Any, pvs: list[str]) -> tuple[str, str]:
    """A new 4-CPU node and a new WaitForFirstConsumer class with the local PVs ``pvs``
    on that node; returns (node, class)."""
    storage_class = cluster.unique_name("local")
    node = cluster.unique_name("n")
    await cluster.create_node(node, cpu="4", memory="8Gi")
    await create_class(cluster, storage_class)
    for volume in pvs:
        await create_local_pv(cluster, volume, node, storage_class)
    return node, storage_class


async def pause_pv_controller(cluster: Any, paused: bool) -> None:
    """Pause or resume the simulator's PV controller (its ``volumeBindingPaused`` fault)."""
    await cluster.rest.request("POST", "/admin/faults", body={"volumeBindingPaused": paused})
