"""The simulator serving custom resources: versions, discovery, tables, CRD updates, namespaces.

What the contract tests cannot cheaply cover on both backends (several versions, tables,
schema changes), against the in-process simulator over HTTP.
"""

from __future__ import annotations

import copy
from typing import Any

import aiohttp

from asched.tools.sim.server import SimConfig, SimServer

from .conftest import TIME_SCALE, TOKEN, Api

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "example.com"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
}


def widget_crd(*, scope: str = "Namespaced") -> dict[str, Any]:
    """Widgets: v1 stored, v1beta1 served, v1alpha1 not served; a printer column."""

    def version(name: str, *, served: bool = True, storage: bool = False) -> dict[str, Any]:
        return {
            "name": name,
            "served": served,
            "storage": storage,
            "schema": {"openAPIV3Schema": copy.deepcopy(SCHEMA)},
            "additionalPrinterColumns": [
                {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
            ],
        }

    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "scope": scope,
            "versions": [
                version("v1beta1"),
                version("v1", storage=True),
                version("v1alpha1", served=False),
            ],
        },
    }


async def established(api: Api, crd: dict[str, Any]) -> dict[str, Any]:
    """Create ``crd`` and wait (by watching it) until it is Established."""
    created = await api.post(CRDS, crd)
    assert created.status == 201, created.body
    name = crd["metadata"]["name"]
    rv = created.body["metadata"]["resourceVersion"]

    def done(events: list[dict[str, Any]]) -> bool:
        conditions = events[-1]["object"]["status"].get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    events = await api.watch(
        f"{CRDS}?watch=1&resourceVersion={rv}&fieldSelector=metadata.name%3D{name}", until=done
    )
    latest: dict[str, Any] = events[-1]["object"]
    return latest


def widget(name: str, api_version: str = f"{GROUP}/v1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "Widget", "metadata": {"name": name}, "spec": spec}


async def test_served_versions_share_one_storage_and_are_discovered_in_priority_order(api: Api):
    await established(api, widget_crd())

    group = await api.get(f"/apis/{GROUP}")
    # v1 > v1beta1 (GA before beta); v1alpha1 is not served.
    assert [v["version"] for v in group.body["versions"]] == ["v1", "v1beta1"]
    assert group.body["preferredVersion"]["version"] == "v1"
    assert (await api.get(f"/apis/{GROUP}/v1alpha1/namespaces/default/widgets")).status == 404

    created = await api.post(
        f"/apis/{GROUP}/v1beta1/namespaces/default/widgets", widget("a", f"{GROUP}/v1beta1", size=2)
    )
    assert created.status == 201, created.body
    through_v1 = await api.get(f"/apis/{GROUP}/v1/namespaces/default/widgets/a")
    assert through_v1.body["apiVersion"] == f"{GROUP}/v1"
    assert through_v1.body["spec"] == {"size": 2}
    assert through_v1.body["metadata"]["uid"] == created.body["metadata"]["uid"]


async def test_table_answers_use_the_printer_columns(api: Api):
    await established(api, widget_crd())
    await api.post(f"/apis/{GROUP}/v1/namespaces/default/widgets", widget("a", size=2))

    table = await api.call(
        "GET",
        f"/apis/{GROUP}/v1/namespaces/default/widgets",
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
    )

    columns = [(c["name"], c["type"], c["priority"]) for c in table.body["columnDefinitions"]]
    assert columns == [("Name", "string", 0), ("Size", "integer", 0), ("Color", "string", 1)]
    # No color: a null cell, as the real server's table convertor leaves a missing value.
    assert [row["cells"] for row in table.body["rows"]] == [["a", 2, None]]


async def test_a_schema_update_takes_effect(api: Api):
    crd = await established(api, widget_crd())
    path = f"/apis/{GROUP}/v1/namespaces/default/widgets"
    pruned = await api.post(path, widget("before", size=1, color="red"))
    assert pruned.body["spec"] == {"size": 1}

    properties = crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]
    properties["spec"]["properties"]["color"] = {"type": "string"}
    updated = await api.call("PUT", f"{CRDS}/widgets.{GROUP}", crd)
    assert updated.status == 200, updated.body
    assert updated.body["metadata"]["generation"] == 2  # a spec change: 1 + 1

    # The controller reinstalls the versions as the update is stored (no step to wait for).
    kept = await api.post(path, widget("after", size=1, color="red"))
    assert kept.body["spec"] == {"size": 1, "color": "red"}


async def test_group_names_and_scope_are_immutable(api: Api):
    crd = await established(api, widget_crd())
    crd["spec"]["scope"] = "Cluster"

    answer = await api.call("PUT", f"{CRDS}/widgets.{GROUP}", crd)

    assert answer.status == 422
    assert [c["field"] for c in answer.body["details"]["causes"]] == ["spec.scope"]


async def test_deleting_a_namespace_deletes_its_custom_objects(api: Api):
    await established(api, widget_crd())
    assert (await api.post("/api/v1/namespaces", {"metadata": {"name": "team"}})).status == 201
    path = f"/apis/{GROUP}/v1/namespaces/team/widgets"
    assert (await api.post(path, widget("a", size=1))).status == 201
    start = (await api.get(path)).body["metadata"]["resourceVersion"]

    await api.delete("/api/v1/namespaces/team")
    events = await api.watch(
        f"{path}?watch=1&resourceVersion={start}", until=lambda evs: evs[-1]["type"] == "DELETED"
    )

    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("DELETED", "a")]


async def test_a_cluster_scoped_resource_has_no_namespaced_path(api: Api):
    await established(api, widget_crd(scope="Cluster"))

    created = await api.post(f"/apis/{GROUP}/v1/widgets", widget("c", size=1))
    namespaced = await api.get(f"/apis/{GROUP}/v1/namespaces/default/widgets")

    assert created.status == 201, created.body
    assert "namespace" not in created.body["metadata"]
    assert namespaced.status == 404


async def test_a_snapshot_restores_an_established_crd_and_its_objects():
    crd = widget_crd()
    crd["status"] = {
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
        ],
        "acceptedNames": {"plural": "widgets", "kind": "Widget"},
        "storedVersions": ["v1"],
    }
    saved = widget("a", size=4)
    saved["metadata"]["namespace"] = "default"
    # Objects first: the snapshot's order must not matter.
    config = SimConfig(token=TOKEN, time_scale=TIME_SCALE, snapshot=(saved, crd))

    async with SimServer(config) as server:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with aiohttp.ClientSession(base_url=server.url, headers=headers) as session:
            got = await Api(server, session).get(f"/apis/{GROUP}/v1/namespaces/default/widgets/a")

    assert got.status == 200, got.body
    assert got.body["spec"] == {"size": 4}
