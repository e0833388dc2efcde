"""The load generator's storage objects against an API server over HTTP: StorageClasses,
CSINodes and local PVs per node, and per pod a pre-bound claim and PV (statuses written
after the create, as upstream's UpdateStatus calls do) or an unbound claim, before the pod.

No scheduler runs here: the objects are what is checked (the volume plugins land apart).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from asched.tools.backends.errors import StatusError
from asched.tools.backends.rest import RestClient
from asched.tools.bench import loadgen, volume_objects
from asched.tools.bench.perf_config import load_config_file
from asched.tools.bench.perf_translate import translate
from asched.tools.bench.volume_spec import (
    ClaimTemplate,
    CSINodeSpec,
    LocalVolumes,
    StorageClassSpec,
)
from asched.tools.bench.workload import NodeGroup, PodGroup

STORAGE = Path(__file__).resolve().parent / "data" / "perf" / "storage" / "performance-config.yaml"
PVS = "/api/v1/persistentvolumes"
CSINODES = "/apis/storage.k8s.io/v1/csinodes"
CLASSES = "/apis/storage.k8s.io/v1/storageclasses"


class Created:
    """Cluster-scoped objects a test made, removed at its end (claims lose their
    protection finalizers first: no controller removes them on a bare API server)."""

    def __init__(self, rest: RestClient, namespace: str) -> None:
        self.rest = rest
        self.namespace = namespace
        self.paths: list[str] = []

    async def remove(self) -> None:
        claims = await self.rest.list(f"/api/v1/namespaces/{self.namespace}/persistentvolumeclaims")
        paths = [
            f"/api/v1/namespaces/{self.namespace}/persistentvolumeclaims/{c['metadata']['name']}"
            for c in claims.get("items", [])
        ]
        for path in [*paths, *self.paths]:
            try:
                await self.rest.patch(path, {"metadata": {"finalizers": None}})
                await self.rest.delete(path)
            except StatusError as exc:
                if exc.status != 404:
                    raise


@pytest.fixture
async def created(cluster: Any) -> AsyncIterator[Created]:
    record = Created(cluster.rest, cluster.namespace)
    try:
        yield record
    finally:
        await record.remove()


async def get(rest: RestClient, path: str) -> dict[str, Any]:
    return (await rest.request("GET", path)).body


def drivers(csi_node: dict[str, Any]) -> list[dict[str, Any]]:
    """A CSINode's drivers without null fields (a genuine server writes topologyKeys: null)."""
    return [{k: v for k, v in d.items() if v is not None} for d in csi_node["spec"]["drivers"]]


def migrated_nodes(prefix: str, labels: dict[str, str]) -> NodeGroup:
    """SchedulingMigratedInTreePVs' nodes, two of them named ``<prefix>-<i>``."""
    case, perf = load_config_file(STORAGE).find("SchedulingMigratedInTreePVs/5Nodes")
    group = translate(case, perf).nodes[0]
    return replace(group, count=2, name_prefix=prefix, labels=labels)


async def test_upstream_migrated_pvs_create_csinodes_and_bound_pairs(
    cluster: Any, created: Created
) -> None:
    # SchedulingMigratedInTreePVs/5Nodes, cut to 2 nodes and 3 measured pods in this
    # test's namespace. The node allocatable patch is left out here (see the next test:
    # the simulator refuses it); the CSINode carries the limit the plugins read.
    prefix = cluster.unique_name("perf")
    nodes = [replace(migrated_nodes(prefix, cluster.labels), patch=None)]
    case, perf = load_config_file(STORAGE).find("SchedulingMigratedInTreePVs/5Nodes")
    group = translate(case, perf).measured_pods[0]
    pods = [replace(group, count=3, namespace=cluster.namespace)]
    created.paths += [f"{CSINODES}/{prefix}-{i}" for i in range(2)]
    created.paths += [f"{PVS}/{cluster.namespace}-vol-measured-0-{i}" for i in range(3)]

    await loadgen.create_many(cluster.rest, loadgen.node_objects(nodes), in_flight=4)
    await loadgen.create_many(cluster.rest, loadgen.node_storage_objects(nodes), in_flight=4)
    stats = await loadgen.create_many(
        cluster.rest,
        loadgen.pod_chains(pods, "measured", scheduler_name="nobody"),
        in_flight=2,
    )

    # one chain per pod (claim, claim status, PV, PV status, pod): counted once each
    assert stats.created == 3
    csi = await get(cluster.rest, f"{CSINODES}/{prefix}-1")
    assert csi["metadata"]["annotations"] == {
        volume_objects.MIGRATED_PLUGINS_ANNOTATION: "kubernetes.io/aws-ebs"
    }
    assert drivers(csi) == [
        {"name": "ebs.csi.aws.com", "nodeID": f"{prefix}-1", "allocatable": {"count": 39}}
    ]

    ns = cluster.namespace
    claim = await get(
        cluster.rest, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/pvc-measured-0-2"
    )
    volume = f"{ns}-vol-measured-0-2"
    assert claim["spec"]["volumeName"] == volume
    assert claim["status"]["phase"] == "Bound"
    assert claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "true"
    pv = await get(cluster.rest, f"{PVS}/{volume}")
    assert pv["status"]["phase"] == "Bound"
    assert pv["spec"]["awsElasticBlockStore"]["volumeID"] == volume
    assert {k: pv["spec"]["claimRef"][k] for k in ("kind", "namespace", "name")} == {
        "kind": "PersistentVolumeClaim",
        "namespace": ns,
        "name": "pvc-measured-0-2",
    }
    pod = await get(cluster.rest, f"/api/v1/namespaces/{ns}/pods/measured-0-2")
    # (a genuine API server may add a service account token volume)
    assert {"name": "vol", "persistentVolumeClaim": {"claimName": "pvc-measured-0-2"}} in pod[
        "spec"
    ]["volumes"]


async def test_statefulset_shape_creates_a_class_local_pvs_and_unbound_claims(
    cluster: Any, created: Created
) -> None:
    klass = cluster.unique_name("local")
    prefix = cluster.unique_name("sts")
    nodes = [
        NodeGroup(
            count=2,
            name_prefix=prefix,
            labels=cluster.labels,
            local_volumes=LocalVolumes(count=2, storage="10Gi", storage_class=klass),
            csi_node=CSINodeSpec(drivers={"hostpath.csi.k8s.io": None}),
        )
    ]
    pods = [
        PodGroup(
            count=2,
            namespace=cluster.namespace,
            claim_templates=(ClaimTemplate(name="data", storage_class=klass, storage="5Gi"),),
        )
    ]
    created.paths.append(f"{CLASSES}/{klass}")
    created.paths += [f"{CSINODES}/{prefix}-{i}" for i in range(2)]
    created.paths += [f"{PVS}/{prefix}-{i}-local-{j}" for i in range(2) for j in range(2)]

    await loadgen.ensure(cluster.rest, [volume_objects.storage_class(StorageClassSpec(name=klass))])
    await loadgen.create_many(cluster.rest, loadgen.node_objects(nodes), in_flight=4)
    await loadgen.create_many(cluster.rest, loadgen.node_storage_objects(nodes), in_flight=4)
    stats = await loadgen.create_many(
        cluster.rest, loadgen.pod_chains(pods, "measured", scheduler_name="nobody"), in_flight=2
    )

    assert stats.created == 2
    storage_class = await get(cluster.rest, f"{CLASSES}/{klass}")
    assert storage_class["provisioner"] == "kubernetes.io/no-provisioner"
    assert storage_class["volumeBindingMode"] == "WaitForFirstConsumer"
    # a driver without allocatable: no count, so no limit
    csi = await get(cluster.rest, f"{CSINODES}/{prefix}-0")
    assert drivers(csi) == [{"name": "hostpath.csi.k8s.io", "nodeID": f"{prefix}-0"}]
    assert csi["metadata"]["annotations"] == {volume_objects.MIGRATED_PLUGINS_ANNOTATION: ""}
    pv = await get(cluster.rest, f"{PVS}/{prefix}-1-local-1")
    assert pv["spec"]["storageClassName"] == klass
    assert pv["spec"]["capacity"] == {"storage": "10Gi"}
    assert "claimRef" not in pv["spec"]
    term = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]
    assert term["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": [f"{prefix}-1"]}
    ]
    ns = cluster.namespace
    claim = await get(
        cluster.rest, f"/api/v1/namespaces/{ns}/persistentvolumeclaims/data-measured-0-1"
    )
    assert claim["spec"]["storageClassName"] == klass
    assert claim["spec"]["resources"]["requests"] == {"storage": "5Gi"}
    assert not claim["spec"].get("volumeName")
    assert claim["status"].get("phase", "Pending") == "Pending"
    pod = await get(cluster.rest, f"/api/v1/namespaces/{ns}/pods/measured-0-1")
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-measured-0-1"}} in pod[
        "spec"
    ]["volumes"]


async def test_upstream_volume_nodes_take_the_attachable_allocatable(cluster: Any) -> None:
    # upstream's nodeAllocatableStrategy.nodeAllocatable of the CSI workloads
    prefix = cluster.unique_name("perf")
    nodes = [replace(migrated_nodes(prefix, cluster.labels), count=1)]
    await loadgen.create_many(cluster.rest, loadgen.node_objects(nodes), in_flight=1)
    node = await get(cluster.rest, f"/api/v1/nodes/{prefix}-0")
    assert node["status"]["allocatable"]["attachable-volumes-csi-ebs.csi.aws.com"] == "39"


async def test_a_default_class_does_not_reach_a_pre_bound_claim(
    cluster: Any, created: Created
) -> None:
    # a cluster with a default StorageClass (the DefaultStorageClass admission plugin gives
    # it to claims without storageClassName): the pre-bound claim keeps its PV's class ""
    klass = cluster.unique_name("default")
    default = volume_objects.storage_class(StorageClassSpec(name=klass))
    default["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    created.paths.append(f"{CLASSES}/{klass}")
    await loadgen.ensure(cluster.rest, [default])
    case, perf = load_config_file(STORAGE).find("SchedulingCSIPVs/5Nodes")
    group = replace(translate(case, perf).measured_pods[0], count=1, namespace=cluster.namespace)
    created.paths.append(f"{PVS}/{cluster.namespace}-vol-measured-0-0")

    await loadgen.create_many(
        cluster.rest, loadgen.pod_chains([group], "measured", scheduler_name="nobody")
    )

    path = f"/api/v1/namespaces/{cluster.namespace}/persistentvolumeclaims/pvc-measured-0-0"
    claim = await get(cluster.rest, path)
    assert claim["spec"]["storageClassName"] == ""
