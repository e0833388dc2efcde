"""PreBind over HTTP, on both backends: the PV's claimRef and the claim's
selected-node annotation are written with PUT, and PreBind waits (on the catalog's
listeners) until the claims are bound, or fails as upstream's checkBindings fails.

The scheduler's watch of storage objects is not part of this module: :class:`PlayingHost`
delivers each object it wrote back into the catalog, as the watch would, and the test
plays the PV controller (``_controller``: idempotent writes, so a backend that runs its
own controller completes the same binding without a conflict failing the test).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from asched.api.client import KubeClient
from asched.cluster.volume_decode import (
    decode_claim,
    decode_persistent_volume,
    decode_storage_class,
)
from asched.config.types import VolumeBindingArgs
from asched.explain.engine import table_of
from asched.framework.builtin.volume_binding import VolumeBinding
from asched.framework.cycle_state import CycleState
from asched.framework.status import Code
from asched.scheduler.volume_host import ApiVolumeHost
from tests.builders import make_node, make_pod, pod_info, pvc_volume, snapshot_of
from tests.unit.volumes.binding import _controller as controller
from tests.unit.volumes.binding._objects import claim, local_affinity, pv, storage_class

SELECTED = "volume.kubernetes.io/selected-node"


class PlayingHost(ApiVolumeHost):
    """The API host, plus the watch: what it writes comes back into the catalog."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.written: list[Mapping[str, Any]] = []
        self.wrote = asyncio.Event()

    async def replace(self, resource, obj):  # type: ignore[no-untyped-def]
        stored = await super().replace(resource, obj)
        self.deliver(resource, stored)
        self.written.append(stored)
        self.wrote.set()
        return stored

    def deliver(self, resource: str, obj: Mapping[str, Any]) -> None:
        if resource == "persistentvolumes":
            self.catalog.put_pv(decode_persistent_volume(obj))
        else:
            self.catalog.put_claim(decode_claim(obj))


class Handle:
    def __init__(self, host: PlayingHost) -> None:
        self.volume_host = host


@pytest.fixture
async def client(cluster) -> AsyncIterator[KubeClient]:
    """A KubeClient for the host; the cluster-scoped objects the test made (paths in
    ``client.made``) are deleted after it."""
    api = await KubeClient.connect(str(cluster.kubeconfig))
    api.made = []  # type: ignore[attr-defined]
    try:
        yield api
    finally:
        await api.close()
        for path in api.made:  # type: ignore[attr-defined]
            await controller.delete(cluster.rest, path)


async def setup(cluster, client: KubeClient, claim_raw, pv_raws, bind_timeout: int = 600):
    """Create the objects (and this test's own classes ``wait`` and ``provision``, so
    that a backend's PV controller treats the claim as WaitForFirstConsumer too), decode
    them as stored, run PreFilter, Filter and Reserve."""
    rest, ns = cluster.rest, cluster.namespace
    node = cluster.unique_name("node")
    name = claim_raw["metadata"]["name"]
    claim_raw["metadata"]["namespace"] = ns
    classes = {
        "wait": storage_class(cluster.unique_name("wait")),
        "provision": storage_class(cluster.unique_name("provision"), provisioner="example.com/p"),
    }
    for raw in classes.values():
        await rest.create("/apis/storage.k8s.io/v1/storageclasses", raw)
        client.made.append(f"/apis/storage.k8s.io/v1/storageclasses/{raw['metadata']['name']}")
    for raw in (claim_raw, *pv_raws):
        raw["metadata"].pop("resourceVersion", None)
        raw["metadata"].pop("uid", None)
        raw["spec"]["storageClassName"] = classes[raw["spec"]["storageClassName"]]["metadata"][
            "name"
        ]
    await rest.create(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", claim_raw)
    stored_claim = await controller.claim_pending(rest, ns, name)
    stored_pvs = []
    for raw in pv_raws:
        raw["spec"]["nodeAffinity"] = local_affinity(node)
        created = await rest.create("/api/v1/persistentvolumes", raw)
        client.made.append(f"/api/v1/persistentvolumes/{created['metadata']['name']}")
        stored_pvs.append(await controller.pv_available(rest, created["metadata"]["name"]))
    node_raw = make_node(node, labels={"kubernetes.io/hostname": node})
    table = table_of(snapshot_of([node_raw]))
    for raw in classes.values():
        table.volumes.put_class(decode_storage_class(raw))
    table.volumes.put_claim(decode_claim(stored_claim))
    for stored in stored_pvs:
        table.volumes.put_pv(decode_persistent_volume(stored))
    host = PlayingHost(client, table)
    plugin = VolumeBinding(VolumeBindingArgs(bind_timeout), Handle(host))
    pod = pod_info(make_pod("p", ns, volumes=[pvc_volume(name)]))
    state = CycleState()
    assert plugin.pre_filter(state, pod, table).status.ok
    assert plugin.filter(state, pod, table, table.rows).tolist() == [True]
    assert plugin.reserve(state, pod, node).ok
    return plugin, host, state, pod, node


async def play_pv_controller(cluster, host: PlayingHost, name: str) -> None:
    """Once the PV carries the claimRef, bind the claim; the watch shows it bound."""
    await host.wrote.wait()
    pv_name = host.written[0]["metadata"]["name"]
    stored = await controller.bind(cluster.rest, cluster.namespace, name, pv_name)
    host.deliver("persistentvolumeclaims", stored)


async def test_static_binding_completes_when_the_claim_is_bound(cluster, client) -> None:
    name = cluster.unique_name("claim")
    pv_name = cluster.unique_name("pv")
    plugin, host, state, pod, node = await setup(cluster, client, claim(name), [pv(pv_name)])
    playing = asyncio.create_task(play_pv_controller(cluster, host, name))
    status = await plugin.pre_bind(state, pod, node)
    await playing
    assert status.ok, status
    stored = await cluster.rest.get(f"/api/v1/persistentvolumes/{pv_name}")
    ref = stored["spec"]["claimRef"]
    assert (ref["namespace"], ref["name"], ref["kind"]) == (
        cluster.namespace,
        name,
        "PersistentVolumeClaim",
    )
    assert stored["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"


async def test_a_changed_pv_is_a_conflict(cluster, client) -> None:
    name = cluster.unique_name("claim")
    pv_name = cluster.unique_name("pv")
    plugin, _, state, pod, node = await setup(cluster, client, claim(name), [pv(pv_name)])
    path = f"/api/v1/persistentvolumes/{pv_name}"

    def touched(obj: dict[str, Any]) -> bool:  # someone changes the PV after the read
        obj["metadata"].setdefault("labels", {})["touched"] = "yes"
        return True

    await controller.settle(cluster.rest, path, touched)
    status = await plugin.pre_bind(state, pod, node)
    assert status.code == Code.ERROR
    assert f"updating PersistentVolume {pv_name} rejected (409)" in status.message
    # upstream leaves the PV as the API has it: no claimRef written
    assert "claimRef" not in (await cluster.rest.get(path))["spec"]


async def test_provisioning_fails_when_the_annotation_is_removed(cluster, client) -> None:
    name = cluster.unique_name("claim")
    plugin, host, state, pod, node = await setup(
        cluster, client, claim(name, storage_class_name="provision"), []
    )
    path = f"/api/v1/namespaces/{cluster.namespace}/persistentvolumeclaims/{name}"

    def given_up(obj: dict[str, Any]) -> bool:  # the provisioner signals failure
        annotations = obj["metadata"]["annotations"]
        assert annotations[SELECTED] == node
        del annotations[SELECTED]
        annotations["other"] = "kept"  # not every annotation gone: "provisioning failed"
        return True

    async def provisioner_gives_up() -> None:
        await host.wrote.wait()
        host.deliver(
            "persistentvolumeclaims", await controller.settle(cluster.rest, path, given_up)
        )

    giving_up = asyncio.create_task(provisioner_gives_up())
    status = await plugin.pre_bind(state, pod, node)
    await giving_up
    assert status.code == Code.ERROR
    assert status.message == f'binding volumes: provisioning failed for PVC "{name}"'


async def test_timeout_is_an_error(cluster, client) -> None:
    # provisioning by example.com/p, which no controller of either backend serves
    name = cluster.unique_name("claim")
    plugin, _, state, pod, node = await setup(
        cluster, client, claim(name, storage_class_name="provision"), [], bind_timeout=1
    )
    status = await plugin.pre_bind(state, pod, node)
    assert status.code == Code.ERROR
    assert status.message == "binding volumes: timed out waiting for the condition"
    plugin.unreserve(state, pod, node)
