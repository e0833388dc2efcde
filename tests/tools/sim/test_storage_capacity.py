"""CSIStorageCapacity served as ``storage.k8s.io/v1`` (as v1.37 serves it): in discovery,
namespaced, with every verb."""

from __future__ import annotations

from .conftest import Api
from .storage import capacity, create

GROUP = "/apis/storage.k8s.io"


def _collection(version: str, namespace: str = "default") -> str:
    return f"{GROUP}/{version}/namespaces/{namespace}/csistoragecapacities"


async def test_discovery_lists_v1_only(api: Api):
    # v1.37 serves CSIStorageCapacity at v1 alone (v1beta1 went in 1.27)
    group = (await api.get(GROUP)).body
    assert [v["version"] for v in group["versions"]] == ["v1"]
    assert group["preferredVersion"]["version"] == "v1"
    listed = (await api.get(f"{GROUP}/v1")).body["resources"]
    found = [r for r in listed if r["name"] == "csistoragecapacities"]
    assert len(found) == 1
    assert (found[0]["kind"], found[0]["namespaced"]) == ("CSIStorageCapacity", True)
    assert set(found[0]["verbs"]) >= {"create", "get", "list", "watch", "update", "delete"}
    assert (await api.get(f"{GROUP}/v1beta1/csistoragecapacities")).status == 404


async def test_update_list_watch_delete(api: Api):
    created = await create(api, _collection("v1"), capacity("cap", "hollow", "10Gi", "node-0"))
    assert created["nodeTopology"] == {"matchLabels": {"kubernetes.io/hostname": "node-0"}}
    since = created["metadata"]["resourceVersion"]
    changed = dict(created, capacity="4Gi")
    reply = await api.call("PUT", f"{_collection('v1')}/cap", changed)
    assert reply.status == 200, reply.body
    assert reply.body["capacity"] == "4Gi"
    events = await api.watch(
        f"{_collection('v1')}?watch=1&resourceVersion={since}",
        until=lambda seen: len(seen) == 1,
    )
    assert (events[0]["type"], events[0]["object"]["apiVersion"]) == (
        "MODIFIED",
        "storage.k8s.io/v1",
    )
    listed = (await api.get(f"{GROUP}/v1/csistoragecapacities")).body  # all namespaces
    assert listed["kind"] == "CSIStorageCapacityList"
    assert [item["capacity"] for item in listed["items"]] == ["4Gi"]
    assert (await api.get(_collection("v1", "kube-system"))).body["items"] == []
    assert (await api.delete(f"{_collection('v1')}/cap")).status == 200
    assert (await api.get(f"{_collection('v1')}/cap")).status == 404


async def test_quantities_are_canonical(api: Api):
    # 1024Mi = 1Gi; "1.5Gi" = 1536Mi
    created = await create(api, _collection("v1"), capacity("cap", "hollow", "1024Mi"))
    assert created["capacity"] == "1Gi"
    body = capacity("cap2", "hollow", "1.5Gi")
    body["maximumVolumeSize"] = "1.5Gi"
    created = await create(api, _collection("v1"), body)
    assert (created["capacity"], created["maximumVolumeSize"]) == ("1536Mi", "1536Mi")


async def test_a_capacity_that_is_not_a_quantity_is_400(api: Api):
    reply = await api.post(_collection("v1"), capacity("cap", "hollow", "lots"))
    assert (reply.status, reply.reason) == (400, "BadRequest")
    # v1.37's words (measured): Quantity.UnmarshalJSON's error, no field named
    assert reply.message == (
        'CSIStorageCapacity in version "v1" cannot be handled as a CSIStorageCapacity: '
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


async def test_kubectl_table_columns(api: Api):
    await create(api, _collection("v1"), capacity("cap", "hollow", "10Gi", "node-0"))
    reply = await api.call(
        "GET",
        _collection("v1"),
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
    )
    assert reply.status == 200, reply.body
    names = [column["name"] for column in reply.body["columnDefinitions"]]
    assert names == ["Name", "StorageClassName", "Capacity", "Age"]
    assert reply.body["rows"][0]["cells"][:3] == ["cap", "hollow", "10Gi"]
