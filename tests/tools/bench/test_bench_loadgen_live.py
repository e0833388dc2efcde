"""The load generator's retries over HTTP: an object whose POST had in fact succeeded (the
retry is answered AlreadyExists) still gets the status write that follows the create."""

from __future__ import annotations

from typing import Any

from asched.tools.bench import loadgen
from asched.tools.bench.workload import NodeGroup


async def test_a_node_already_created_still_gets_its_status(cluster: Any) -> None:
    # as after a POST whose answer was lost: the node exists, without status
    group = NodeGroup(count=1, name_prefix=cluster.unique_name("n"), labels=cluster.labels)
    (node,) = loadgen.node_objects([group])
    await cluster.rest.create("/api/v1/nodes", {k: v for k, v in node.items() if k != "status"})

    stats = await loadgen.create_many(cluster.rest, [node], in_flight=1)

    assert stats.created == 1
    got = (await cluster.rest.request("GET", f"/api/v1/nodes/{node['metadata']['name']}")).body
    assert got["status"]["allocatable"]["cpu"] == "4"
    assert {"type": "Ready", "status": "True"}.items() <= got["status"]["conditions"][0].items()


async def test_a_claim_already_created_still_gets_its_bound_phase(cluster: Any) -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "pvc-x", "namespace": cluster.namespace},
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "resources": {"requests": {"storage": "1Gi"}},
            "volumeName": f"{cluster.namespace}-vol-x",
        },
        "status": {"phase": "Bound"},
    }
    path = f"/api/v1/namespaces/{cluster.namespace}/persistentvolumeclaims"
    await cluster.rest.create(path, {k: v for k, v in claim.items() if k != "status"})
    try:
        await loadgen.create_many(cluster.rest, [claim], in_flight=1)
        got = (await cluster.rest.request("GET", f"{path}/pvc-x")).body
        assert got["status"]["phase"] == "Bound"
    finally:
        await cluster.rest.patch(f"{path}/pvc-x", {"metadata": {"finalizers": None}})
        await cluster.rest.delete(f"{path}/pvc-x")


def test_collections_of_the_storage_kinds() -> None:
    claim = {"kind": "PersistentVolumeClaim", "metadata": {"namespace": "ns"}}
    assert loadgen.collection(claim) == "/api/v1/namespaces/ns/persistentvolumeclaims"
    assert loadgen.collection({"kind": "CSINode"}) == "/apis/storage.k8s.io/v1/csinodes"
    assert loadgen.collection({"kind": "PersistentVolume"}) == "/api/v1/persistentvolumes"
