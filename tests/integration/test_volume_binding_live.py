"""VolumeBinding live, on both backends: StatefulSet-like pods with WaitForFirstConsumer
claims over local PVs (one per node) each land on the node of a free PV, every claim ends
bound to a PV whose node affinity names the pod's node, and the pod left without a PV
(four pods, three PVs: the race for the last one) is reported with upstream's reason.

The test plays the PV controller (a watch on PVs: once the scheduler has set a PV's
claimRef, it binds the claim and marks the PV Bound) with idempotent writes, so it passes
whether or not the backend runs a PV controller of its own (the simulator's,
kube-controller-manager).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from tests.integration.scheduler_harness import running_scheduler, until
from tests.unit.volumes.binding import _controller as controller

HOSTNAME = "kubernetes.io/hostname"


def local_pv(name: str, node: str, storage_class: str) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "local": {"path": f"/mnt/{name}"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
        },
    }


def claim(name: str, storage_class: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


async def play_pv_controller(rest: Any, namespace: str, storage_class: str) -> None:
    """Bind each claim whose PV (of ``storage_class``) the scheduler gave a claimRef."""
    async for event in rest.watch("/api/v1/persistentvolumes"):
        pv = event.get("object", {})
        ref = pv.get("spec", {}).get("claimRef")
        if (
            event.get("type") in ("ADDED", "MODIFIED")
            and pv["spec"].get("storageClassName") == storage_class
            and ref
            and ref.get("namespace") == namespace
        ):
            await controller.bind(rest, namespace, ref["name"], pv["metadata"]["name"])


async def test_statefulset_pods_land_on_their_local_pvs(cluster) -> None:
    rest, namespace = cluster.rest, cluster.namespace
    storage_class = cluster.unique_name("local")
    made = [f"/apis/storage.k8s.io/v1/storageclasses/{storage_class}"]
    await rest.create(
        "/apis/storage.k8s.io/v1/storageclasses",
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": storage_class},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
    )
    nodes = [(await cluster.create_node())["metadata"]["name"] for _ in range(3)]
    for index, node in enumerate(nodes):
        created = await rest.create(
            "/api/v1/persistentvolumes", local_pv(f"{storage_class}-{index}", node, storage_class)
        )
        made.append(f"/api/v1/persistentvolumes/{created['metadata']['name']}")
        await controller.pv_available(rest, created["metadata"]["name"])
    claims_path = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims"
    for index in range(4):
        await rest.create(claims_path, claim(f"data-web-{index}", storage_class))
    playing = asyncio.create_task(play_pv_controller(rest, namespace, storage_class))
    try:
        async with running_scheduler(cluster, "volumes"):
            for index in range(4):
                volume = {
                    "name": "data",
                    "persistentVolumeClaim": {"claimName": f"data-web-{index}"},
                }
                await cluster.create_pod(
                    f"web-{index}", scheduler_name="volumes", spec={"volumes": [volume]}
                )

            async def settled() -> bool:
                pods = await rest.list_all(f"/api/v1/namespaces/{namespace}/pods")
                placed = [p for p in pods if p["spec"].get("nodeName")]
                refused = [p for p in pods if _unschedulable(p)]
                return len(placed) == 3 and len(refused) == 1

            await until(settled, within=60)
            pods = await rest.list_all(f"/api/v1/namespaces/{namespace}/pods")
            placed = {
                p["metadata"]["name"]: p["spec"]["nodeName"]
                for p in pods
                if p["spec"].get("nodeName")
            }
            # three PVs, one per node: each node gets exactly one pod
            assert sorted(placed.values()) == sorted(nodes)
            for pod, node in placed.items():
                bound = await rest.get(f"{claims_path}/data-{pod}")
                pv = await rest.get(f"/api/v1/persistentvolumes/{bound['spec']['volumeName']}")
                terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
                assert terms[0]["matchExpressions"][0]["values"] == [node]
            (refused,) = [p for p in pods if not p["spec"].get("nodeName")]
            assert _unschedulable(refused) == (
                "0/3 nodes are available: 3 node(s) didn't find available persistent volumes "
                "to bind. preemption: 0/3 nodes are available: 3 Preemption is not helpful "
                "for scheduling."
            )
    finally:
        playing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await playing
        for path in made:
            await controller.delete(rest, path)


def _unschedulable(pod: dict[str, Any]) -> str:
    for condition in pod.get("status", {}).get("conditions", []):
        if condition["type"] == "PodScheduled" and condition["status"] == "False":
            return str(condition.get("message", ""))
    return ""
