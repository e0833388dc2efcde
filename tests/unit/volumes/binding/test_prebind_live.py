"""PreBind over HTTP, on both backends: the PV's claimRef and the claim's
selected-node annotation are written with PUT, and PreBind waits (on the catalog's
listeners) until the claims are bound, or fails as upstream's checkBindings fails.

The scheduler's watch of storage objects is not part of this module (the live side
feeds the catalog): :class:`PlayingHost` delivers each object it wrote back into the
catalog, as the watch would, and the test plays the PV controller by writing the
claim's ``spec.volumeName`` and ``pv.kubernetes.io/bind-completed`` itself. Loop time:
the timeout case uses a 1-second ``bindTimeoutSeconds`` that no event ends early.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from asched.api.client import KubeClient
from asched.cluster.volume_decode import decode_claim, decode_persistent_volume
from asched.config.types import VolumeBindingArgs
from asched.explain.engine import table_of
from asched.framework.cycle_state import CycleState
from asched.framework.plugins.volume_binding import VolumeBinding
from asched.framework.status import Code
from asched.scheduler.volume_host import ApiVolumeHost
from tests.builders import make_node, make_pod, pod_info, pvc_volume
from tests.unit.volumes.binding._objects import claim, local_affinity, pv, storage_class

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"


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
    api = await KubeClient.connect(str(cluster.kubeconfig))
    try:
        yield api
    finally:
        await api.close()


async def created(client: KubeClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.create(path, body)
    assert response.ok, response.body
    return dict(response.body)


async def setup(cluster, client: KubeClient, claim_raw, pv_raws, bind_timeout: int = 600):
    """Create the objects, decode what the server stored, run PreFilter..Reserve."""
    ns = cluster.namespace
    node = cluster.unique_name("node")
    claim_raw["metadata"]["namespace"] = ns
    for raw in (claim_raw, *pv_raws):
        raw["metadata"].pop("resourceVersion", None)
        raw["metadata"].pop("uid", None)
    stored_claim = await created(
        client, f"/api/v1/namespaces/{ns}/persistentvolumeclaims", claim_raw
    )
    stored_pvs = []
    for raw in pv_raws:
        raw["spec"]["nodeAffinity"] = local_affinity(node)
        stored = await created(client, "/api/v1/persistentvolumes", raw)
        # the PV controller's part: a new PV becomes Available
        stored["status"] = {"phase": "Available"}
        name = stored["metadata"]["name"]
        response = await client.replace(f"/api/v1/persistentvolumes/{name}/status", stored)
        assert response.ok, response.body
        stored_pvs.append(dict(response.body))
    table = table_of_node(node)
    table.volumes.put_class(_decode_class(storage_class("wait")))
    table.volumes.put_class(_decode_class(storage_class("provision", provisioner="example.com/p")))
    table.volumes.put_claim(decode_claim(stored_claim))
    for stored in stored_pvs:
        table.volumes.put_pv(decode_persistent_volume(stored))
    host = PlayingHost(client, table)
    plugin = VolumeBinding(VolumeBindingArgs(bind_timeout), Handle(host))
    pod = pod_info(make_pod("p", ns, volumes=[pvc_volume(claim_raw["metadata"]["name"])]))
    state = CycleState()
    assert plugin.pre_filter(state, pod, table).status.ok
    assert plugin.filter(state, pod, table, table.rows).tolist() == [True]
    assert plugin.reserve(state, pod, node).ok
    return plugin, host, state, pod, node, stored_claim


def table_of_node(node: str):
    from tests.builders import snapshot_of

    return table_of(snapshot_of([make_node(node, labels={"kubernetes.io/hostname": node})]))


def _decode_class(raw):
    from asched.cluster.volume_decode import decode_storage_class

    return decode_storage_class(raw)


async def play_pv_controller(client: KubeClient, host: PlayingHost, ns: str, name: str) -> None:
    """Once the PV carries the claimRef, bind the claim (volumeName + bind-completed)."""
    await host.wrote.wait()
    pv_name = host.written[0]["metadata"]["name"]
    path = f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}"
    current = dict((await client.get(path)).body)
    current["spec"]["volumeName"] = pv_name
    current["metadata"].setdefault("annotations", {})[BIND_COMPLETED] = "yes"
    response = await client.replace(path, current)
    assert response.ok, response.body
    host.deliver("persistentvolumeclaims", response.body)


async def test_static_binding_completes_when_the_claim_is_bound(cluster, client) -> None:
    name = cluster.unique_name("claim")
    pv_name = cluster.unique_name("pv")
    plugin, host, state, pod, node, _ = await setup(cluster, client, claim(name), [pv(pv_name)])
    controller = asyncio.create_task(play_pv_controller(client, host, cluster.namespace, name))
    status = await plugin.pre_bind(state, pod, node)
    await controller
    assert status.ok, status
    stored = (await client.get(f"/api/v1/persistentvolumes/{pv_name}")).body
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
    plugin, _, state, pod, node, _ = await setup(cluster, client, claim(name), [pv(pv_name)])
    # someone updates the PV after the scheduler read it: its resourceVersion moves on
    path = f"/api/v1/persistentvolumes/{pv_name}"
    current = dict((await client.get(path)).body)
    current["metadata"].setdefault("labels", {})["touched"] = "yes"
    assert (await client.replace(path, current)).ok
    status = await plugin.pre_bind(state, pod, node)
    assert status.code == Code.ERROR
    assert f"updating PersistentVolume {pv_name} rejected (409)" in status.message
    # upstream leaves the PV as the API has it: no claimRef written
    assert "claimRef" not in (await client.get(path)).body["spec"]


async def test_provisioning_fails_when_the_annotation_is_removed(cluster, client) -> None:
    name = cluster.unique_name("claim")
    plugin, host, state, pod, node, _ = await setup(
        cluster, client, claim(name, storage_class_name="provision"), []
    )
    ns = cluster.namespace

    async def provisioner_gives_up() -> None:
        await host.wrote.wait()
        path = f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}"
        current = dict((await client.get(path)).body)
        assert current["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node
        del current["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
        current["metadata"]["annotations"]["other"] = "kept"
        response = await client.replace(path, current)
        assert response.ok
        host.deliver("persistentvolumeclaims", response.body)

    provisioner = asyncio.create_task(provisioner_gives_up())
    status = await plugin.pre_bind(state, pod, node)
    await provisioner
    assert status.code == Code.ERROR
    assert status.message == f'binding volumes: provisioning failed for PVC "{name}"'


async def test_timeout_is_an_error(cluster, client) -> None:
    name = cluster.unique_name("claim")
    plugin, _, state, pod, node, _ = await setup(
        cluster, client, claim(name), [pv(cluster.unique_name("pv"))], bind_timeout=1
    )
    status = await plugin.pre_bind(state, pod, node)  # nobody binds the claim
    assert status.code == Code.ERROR
    assert status.message == "binding volumes: timed out waiting for the condition"
    plugin.unreserve(state, pod, node)
