"""Custom resources served from CustomResourceDefinitions, as kube-apiserver v1.37.2 serves them.

Every test applies scheduler-plugins' PodGroup CRD (``deploy/crds/``) under a group of its own
(``<test id>.scheduling.x-k8s.io``): CRDs are cluster-scoped and the servers are shared by the
session, so no test sees another's definition, and one being deleted never blocks a create.
Expectations were observed on the genuine server; the same raw requests go to both backends.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from asched.tools.backends.errors import StatusError

from ._support import DEADLINE, kinds, read_events, rv

CRD_FILE = Path(__file__).parents[2] / "deploy" / "crds" / "scheduling.x-k8s.io_podgroups.yaml"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
UPSTREAM_GROUP = "scheduling.x-k8s.io"


def podgroup_crd(group: str) -> dict[str, Any]:
    """The shipped PodGroup CRD, moved to ``group``."""
    documents = [doc for doc in yaml.safe_load_all(CRD_FILE.read_text()) if doc]
    assert len(documents) == 1
    crd: dict[str, Any] = documents[0]
    crd["metadata"]["name"] = f"podgroups.{group}"
    crd["spec"]["group"] = group
    return crd


class PodGroups:
    """Paths and objects of one test's PodGroup resource."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.group = f"t{cluster.test_id}.{UPSTREAM_GROUP}"
        self.crd_name = f"podgroups.{self.group}"
        self.api_version = f"{self.group}/v1alpha1"

    def path(self, name: str | None = None, *, namespace: str | None = "") -> str:
        """``.../namespaces/<ns>/podgroups[/<name>]`` (the test's namespace by default);
        ``namespace=None`` for the list across all namespaces."""
        base = f"/apis/{self.api_version}"
        if namespace is not None:
            base += f"/namespaces/{namespace or self.cluster.namespace}"
        return f"{base}/podgroups" + (f"/{name}" if name else "")

    def body(self, name: str, **spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": "PodGroup",
            "metadata": {"name": name},
            "spec": spec,
        }

    async def create(self, name: str, *, labels: dict[str, str] | None = None, **spec: Any):
        body = self.body(name, **spec)
        if labels:
            body["metadata"]["labels"] = labels
        return await self.cluster.rest.create(self.path(), body)


async def wait_established(
    cluster: Any, name: str, since: str | None = None
) -> list[dict[str, Any]]:
    """Watch the CRD (from ``since``, else from now) until Established is True; return the
    events seen."""

    def established(events: list[dict[str, Any]]) -> bool:
        conditions = events[-1]["object"].get("status", {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    stream = cluster.rest.watch(
        CRDS, field_selector=f"metadata.name={name}", resource_version=since
    )
    return await read_events(stream, until=established)


async def wait_status(cluster: Any, path: str, status: int) -> None:
    """Poll ``path`` until it answers ``status``: a route appears or goes with no event to
    watch (the real server's handler follows the CRD a moment later)."""
    async with asyncio.timeout(DEADLINE):
        while (await cluster.rest.request("GET", path, check=False)).status != status:  # noqa: ASYNC110 (no event to await)
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def served_podgroups(cluster: Any) -> AsyncIterator[PodGroups]:
    """The PodGroup CRD applied under the test's group, established and served; deleted
    afterwards."""
    handle = PodGroups(cluster)
    await cluster.rest.create(CRDS, podgroup_crd(handle.group))
    try:
        await wait_established(cluster, handle.crd_name)
        await wait_status(cluster, handle.path(), 200)
        yield handle
    finally:
        with contextlib.suppress(StatusError):
            await cluster.rest.delete(f"{CRDS}/{handle.crd_name}")


@pytest.fixture
async def podgroups(cluster):
    """:func:`served_podgroups` for the test."""
    async with served_podgroups(cluster) as handle:
        yield handle


def causes(error: StatusError) -> set[tuple[str, str]]:
    """``{(field, message), ...}`` of a 422 (the real server's order is a map's)."""
    return {(c["field"], c["message"]) for c in error.body["details"]["causes"]}


async def test_a_new_crd_is_named_then_established_then_served(cluster):
    handle = PodGroups(cluster)
    created = await cluster.rest.create(CRDS, podgroup_crd(handle.group))

    # The create's answer: no conditions yet, nothing accepted, the storage version stored;
    # the v1 defaults filled in.
    assert created["status"] == {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": ["v1alpha1"],
    }
    assert created["spec"]["conversion"] == {"strategy": "None"}
    assert created["metadata"]["generation"] == 1
    try:
        events = await wait_established(cluster, handle.crd_name, rv(created))
        # The naming controller, then the establishing controller: one write each.
        steps = [
            [(c["type"], c["status"], c["reason"]) for c in e["object"]["status"]["conditions"]]
            for e in events
            if e["object"]["status"]["conditions"]
        ]
        assert steps == [
            [("NamesAccepted", "True", "NoConflicts"), ("Established", "False", "Installing")],
            [
                ("NamesAccepted", "True", "NoConflicts"),
                ("Established", "True", "InitialNamesAccepted"),
            ],
        ]
        assert events[-1]["object"]["status"]["acceptedNames"] == {
            "plural": "podgroups",
            "singular": "podgroup",
            "shortNames": ["pg", "pgs"],
            "kind": "PodGroup",
            "listKind": "PodGroupList",
        }
        await wait_status(cluster, handle.path(), 200)

        group = await cluster.rest.get(f"/apis/{handle.group}")
        assert group["preferredVersion"]["version"] == "v1alpha1"
        resources = await cluster.rest.get(f"/apis/{handle.api_version}")
        listed = {r["name"]: r for r in resources["resources"]}
        assert set(listed) == {"podgroups", "podgroups/status"}
        assert listed["podgroups"]["kind"] == "PodGroup"
        assert listed["podgroups"]["namespaced"] is True
        assert listed["podgroups"]["shortNames"] == ["pg", "pgs"]
        assert listed["podgroups"]["verbs"] == [
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch",
        ]
        assert listed["podgroups/status"]["verbs"] == ["get", "patch", "update"]
        groups = await cluster.rest.get("/apis")
        assert handle.group in {g["name"] for g in groups["groups"]}
    finally:
        await cluster.rest.delete(f"{CRDS}/{handle.crd_name}")


async def test_create_get_and_list_with_selectors(podgroups, cluster):
    rest = cluster.rest
    created = await podgroups.create("gang-a", labels={"team": "x"}, minMember=3)
    await podgroups.create("gang-b", labels={"team": "y"}, minMember=2)

    got = await rest.get(podgroups.path("gang-a"))
    assert got == created
    assert (got["apiVersion"], got["kind"]) == (podgroups.api_version, "PodGroup")
    assert got["spec"] == {"minMember": 3}
    assert got["metadata"]["generation"] == 1

    by_label = await rest.list(podgroups.path(), label_selector="team=x")
    assert [p["metadata"]["name"] for p in by_label["items"]] == ["gang-a"]
    # Unlike built-in lists, every item carries its kind and apiVersion.
    assert {(p["apiVersion"], p["kind"]) for p in by_label["items"]} == {
        (podgroups.api_version, "PodGroup")
    }
    by_name = await rest.list(podgroups.path(), field_selector="metadata.name=gang-b")
    assert [p["metadata"]["name"] for p in by_name["items"]] == ["gang-b"]
    everywhere = await rest.list(
        podgroups.path(namespace=None), field_selector=f"metadata.namespace={cluster.namespace}"
    )
    assert [p["metadata"]["name"] for p in everywhere["items"]] == ["gang-a", "gang-b"]
    assert everywhere["kind"] == "PodGroupList"


async def test_a_field_selector_on_a_spec_field_is_400(podgroups, cluster):
    with pytest.raises(StatusError) as caught:
        await cluster.rest.list(podgroups.path(), field_selector="spec.minMember=1")
    assert (caught.value.status, caught.value.reason) == (400, "BadRequest")
    assert caught.value.message == "field label not supported: spec.minMember"


async def test_lists_page_with_limit_and_continue(podgroups, cluster):
    for name in ("a", "b", "c"):
        await podgroups.create(name, minMember=1)

    first = await cluster.rest.list(podgroups.path(), limit=2)
    rest = await cluster.rest.list(podgroups.path(), continue_=first["metadata"]["continue"])

    assert [p["metadata"]["name"] for p in first["items"]] == ["a", "b"]
    # 3 objects, a page of 2: one remains.
    assert first["metadata"]["remainingItemCount"] == 1
    assert [p["metadata"]["name"] for p in rest["items"]] == ["c"]
    # Unstructured lists always carry the continue token, empty on the last page.
    assert rest["metadata"]["continue"] == ""


async def test_unknown_fields_are_pruned_and_a_created_status_dropped(podgroups, cluster):
    body = podgroups.body("pruned", minMember=2, unknown="x", minResources={"cpu": "1"})
    body["metadata"]["junk"] = 1
    body["extra"] = {"a": 1}
    body["status"] = {"phase": "Running"}

    created = await cluster.rest.create(podgroups.path(), body)

    assert created["spec"] == {"minMember": 2, "minResources": {"cpu": "1"}}
    assert "extra" not in created
    assert "junk" not in created["metadata"]
    # With a status subresource, a create starts without status.
    assert "status" not in created
    assert await cluster.rest.get(podgroups.path("pruned")) == created


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"minMember": "x"},
            {
                (
                    "spec.minMember",
                    'Invalid value: "string": spec.minMember in body must be of type integer: '
                    '"string"',
                )
            },
            id="a string for an integer",
        ),
        pytest.param(
            # minMember is an int32: the float64 is the wrong Go type, and out of its range
            {"minMember": 1.5},
            {
                (
                    "spec.minMember",
                    'Invalid value: "float64": spec.minMember in body must be of type int32: '
                    '"float64"',
                ),
                (
                    "<nil>",
                    'Invalid value: "": Checked value must be of type integer with format int32 '
                    "in spec.minMember",
                ),
            },
            id="a fraction for an integer",
        ),
        pytest.param(
            {"minMember": 0},
            {
                (
                    "spec.minMember",
                    "Invalid value: 0: spec.minMember in body should be greater than or equal to 1",
                )
            },
            id="below the minimum of 1",
        ),
        pytest.param(
            {"minResources": {"cpu": "lots"}},
            {
                (
                    "spec.minResources.cpu",
                    'Invalid value: "lots": spec.minResources.cpu in body should match '
                    "'^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                    "([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$'",
                )
            },
            id="a quantity that does not match the pattern",
        ),
        pytest.param(
            {"minMember": 0, "scheduleTimeoutSeconds": "soon"},
            {
                (
                    "spec.minMember",
                    "Invalid value: 0: spec.minMember in body should be greater than or equal to 1",
                ),
                (
                    "spec.scheduleTimeoutSeconds",
                    'Invalid value: "string": spec.scheduleTimeoutSeconds in body must be of '
                    'type integer: "string"',
                ),
            },
            id="every violation is reported",
        ),
    ],
)
async def test_a_schema_violation_is_422_naming_the_field(podgroups, cluster, spec, expected):
    with pytest.raises(StatusError) as caught:
        await cluster.rest.create(podgroups.path(), podgroups.body("bad", **spec))

    assert (caught.value.status, caught.value.reason) == (422, "Invalid")
    assert caught.value.body["details"]["kind"] == "PodGroup"
    assert caught.value.body["details"]["group"] == podgroups.group
    assert causes(caught.value) == expected


async def test_a_spec_of_the_wrong_type_is_422(podgroups, cluster):
    body = podgroups.body("bad")
    body["spec"] = "x"
    with pytest.raises(StatusError) as caught:
        await cluster.rest.create(podgroups.path(), body)
    assert causes(caught.value) == {
        ("spec", 'Invalid value: "string": spec in body must be of type object: "string"')
    }


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        pytest.param(2**31 - 1, None, id="2**31 - 1 fits"),
        pytest.param(
            2**31,
            {
                (
                    "<nil>",
                    'Invalid value: "": Checked value must be of type integer with format int32 '
                    "in spec.scheduleTimeoutSeconds",
                )
            },
            id="2**31 does not",
        ),
    ],
)
async def test_int32_format_bounds_the_value(podgroups, cluster, seconds, expected):
    # v1.37 checks an int32 field's range (v1.20 checked formats on strings only): an unnamed
    # cause, no field
    if expected is None:
        created = await podgroups.create("big", minMember=1, scheduleTimeoutSeconds=seconds)
        assert created["spec"]["scheduleTimeoutSeconds"] == seconds
        return
    with pytest.raises(StatusError) as caught:
        await podgroups.create("big", minMember=1, scheduleTimeoutSeconds=seconds)
    assert (caught.value.status, causes(caught.value)) == (422, expected)
    assert caught.value.body["details"]["causes"][0]["reason"] == "FieldValueInvalid"


async def test_watch_sees_create_patch_delete(podgroups, cluster):
    rest = cluster.rest
    start = (await rest.list(podgroups.path()))["metadata"]["resourceVersion"]
    created = await podgroups.create("w", minMember=1)
    patched = await rest.patch(podgroups.path("w"), {"spec": {"minMember": 2}})
    await rest.delete(podgroups.path("w"))

    stream = rest.watch(podgroups.path(), resource_version=start)
    events = await read_events(stream, until=lambda evs: evs[-1]["type"] == "DELETED")

    assert kinds(events) == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]
    assert rv(events[0]["object"]) == rv(created)
    assert rv(events[1]["object"]) == rv(patched)
    assert events[1]["object"]["spec"] == {"minMember": 2}
    assert {(e["object"]["apiVersion"], e["object"]["kind"]) for e in events} == {
        (podgroups.api_version, "PodGroup")
    }


@pytest.mark.parametrize(
    ("subpath", "patch", "spec", "status", "labels", "generation"),
    [
        pytest.param(
            "/status",
            {
                "spec": {"minMember": 5},
                "metadata": {"labels": {"c": "d"}},
                "status": {"phase": "Pending", "running": 2, "bogus": 1},
            },
            {"minMember": 3},
            {"phase": "Pending", "running": 2},
            {"a": "b"},
            1,
            id="status: only the status changes (spec and labels ignored, unknown pruned)",
        ),
        pytest.param(
            "",
            {"spec": {"minMember": 4}, "status": {"phase": "Running"}},
            {"minMember": 4},
            {"phase": "Pending"},
            {"a": "b"},
            2,  # a spec change: 1 + 1
            id="main resource: the status is ignored, the generation bumps",
        ),
        pytest.param(
            "",
            {"metadata": {"labels": {"c": "d"}}},
            {"minMember": 3},
            {"phase": "Pending"},
            {"a": "b", "c": "d"},
            1,
            id="main resource: a metadata change keeps the generation",
        ),
    ],
)
async def test_status_subresource(
    podgroups, cluster, subpath, patch, spec, status, labels, generation
):
    rest = cluster.rest
    await podgroups.create("s", labels={"a": "b"}, minMember=3)
    await rest.patch(podgroups.path("s") + "/status", {"status": {"phase": "Pending"}})

    patched = await rest.patch(podgroups.path("s") + subpath, patch)

    assert patched["spec"] == spec
    assert patched["status"] == status
    assert patched["metadata"]["labels"] == labels
    assert patched["metadata"]["generation"] == generation
    assert await rest.get(podgroups.path("s")) == patched


async def test_a_status_violation_is_422(podgroups, cluster):
    # v1.37 validates a /status write's status alone, against the status schema: the message
    # names the field from the status down, the cause from the root
    await podgroups.create("s", minMember=1)
    with pytest.raises(StatusError) as caught:
        await cluster.rest.patch(podgroups.path("s") + "/status", {"status": {"running": "x"}})
    assert causes(caught.value) == {
        (
            "status.running",
            'Invalid value: "string": running in body must be of type integer: "string"',
        )
    }
    assert caught.value.body["details"]["causes"][0]["reason"] == "FieldValueTypeInvalid"


async def test_json_patch_applies_and_strategic_merge_patch_is_415(podgroups, cluster):
    rest = cluster.rest
    await podgroups.create("p", minMember=1)

    patched = await rest.patch(
        podgroups.path("p"),
        [{"op": "replace", "path": "/spec/minMember", "value": 4}],
        patch_type="json",
    )
    assert patched["spec"] == {"minMember": 4}

    with pytest.raises(StatusError) as caught:
        await rest.patch(podgroups.path("p"), {"spec": {"minMember": 5}}, patch_type="strategic")
    assert (caught.value.status, caught.value.reason) == (415, "UnsupportedMediaType")
    assert caught.value.message == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )


async def test_put_needs_the_resource_version_and_never_creates(podgroups, cluster):
    rest = cluster.rest
    created = await podgroups.create("u", minMember=1)

    unconditional = podgroups.body("u", minMember=2)
    with pytest.raises(StatusError) as caught:
        await rest.replace(podgroups.path("u"), unconditional)
    assert (caught.value.status, caught.value.reason) == (422, "Invalid")
    assert caught.value.message == (
        f'podgroups.{podgroups.group} "u" is invalid: metadata.resourceVersion: '
        "Invalid value: 0: must be specified for an update"  # v1.20 printed Go's %#v: 0x0
    )

    current = copy.deepcopy(created)
    current["spec"]["minMember"] = 2
    replaced = await rest.replace(podgroups.path("u"), current)
    assert replaced["spec"] == {"minMember": 2}
    assert replaced["metadata"]["generation"] == 2

    with pytest.raises(StatusError) as stale:
        await rest.replace(podgroups.path("u"), current)  # the old resourceVersion
    assert (stale.value.status, stale.value.reason) == (409, "Conflict")

    with pytest.raises(StatusError) as missing:
        await rest.replace(podgroups.path("nope"), podgroups.body("nope", minMember=1))
    assert (missing.value.status, missing.value.reason) == (404, "NotFound")


async def test_delete_answers_a_status_and_deletecollection_the_list(podgroups, cluster):
    rest = cluster.rest
    created = await podgroups.create("d", minMember=1)
    await podgroups.create("k1", labels={"keep": "no"}, minMember=1)
    await podgroups.create("k2", labels={"keep": "yes"}, minMember=1)

    answer = await rest.delete(podgroups.path("d"))
    assert answer["kind"] == "Status"
    assert answer["status"] == "Success"
    assert answer["details"] == {
        "name": "d",
        "group": podgroups.group,
        "kind": "podgroups",
        "uid": created["metadata"]["uid"],
    }
    with pytest.raises(StatusError) as caught:
        await rest.get(podgroups.path("d"))
    assert caught.value.message == f'podgroups.{podgroups.group} "d" not found'

    collection = await rest.request("DELETE", podgroups.path(), params={"labelSelector": "keep=no"})
    assert collection.body["kind"] == "PodGroupList"
    assert [p["metadata"]["name"] for p in collection.body["items"]] == ["k1"]
    left = await rest.list(podgroups.path())
    assert [p["metadata"]["name"] for p in left["items"]] == ["k2"]


def _widget_crd(group: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "names": {"plural": "widgets", "kind": "Widget"},
            "scope": "Cluster",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


async def test_defaults_nulls_and_preserved_fields_of_a_cluster_scoped_resource(cluster):
    group = f"w{cluster.test_id}.example.com"
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer", "default": 3},
                    "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                    "opt": {"type": "string", "nullable": True},
                    "notnull": {"type": "string"},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "nested": {
                        "type": "object",
                        "default": {},
                        "properties": {"x": {"type": "integer", "default": 7}},
                    },
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                },
            }
        },
    }
    created = await cluster.rest.create(CRDS, _widget_crd(group, schema))
    # names.singular and listKind default from the kind.
    assert created["spec"]["names"]["singular"] == "widget"
    assert created["spec"]["names"]["listKind"] == "WidgetList"
    path = f"/apis/{group}/v1/widgets"
    try:
        await wait_established(cluster, f"widgets.{group}")
        await wait_status(cluster, path, 200)
        body = {
            "apiVersion": f"{group}/v1",
            "kind": "Widget",
            "metadata": {"name": f"w-{cluster.test_id}"},
            "spec": {
                "size": None,
                "opt": None,
                "notnull": None,
                "free": {"q": {"r": 1}},
                "labels": {"k": "v"},
            },
        }
        widget = await cluster.rest.create(path, body)
        # null: kept where nullable, the default where there is one, else dropped; missing
        # fields get their defaults, and a defaulted object its own fields' defaults.
        assert widget["spec"] == {
            "size": 3,
            "color": "red",
            "opt": None,
            "free": {"q": {"r": 1}},
            "nested": {"x": 7},
            "labels": {"k": "v"},
        }
        body["metadata"]["name"] += "-bad"
        body["spec"] = {"color": "green", "labels": {"k": 1}}
        with pytest.raises(StatusError) as caught:
            await cluster.rest.create(path, body)
        assert causes(caught.value) == {
            ("spec.color", 'Unsupported value: "green": supported values: "red", "blue"'),
            (
                "spec.labels.k",
                'Invalid value: "integer": spec.labels.k in body must be of type string: "integer"',
            ),
        }
    finally:
        await cluster.rest.delete(f"{CRDS}/widgets.{group}")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            {"metadata": {"name": "wrong.example.com"}},
            {("metadata.name", "FieldValueInvalid")},
            id="name is not plural.group",
        ),
        pytest.param(
            {"scope": "Galaxy"},
            {("spec.scope", "FieldValueNotSupported")},
            id="an unknown scope",
        ),
        pytest.param(
            {"storage": False},
            {
                ("spec.versions", "FieldValueInvalid"),
                ("status.storedVersions", "FieldValueInvalid"),
            },
            id="no storage version",
        ),
        pytest.param(
            {"schema": None},
            {("spec.versions[0].schema.openAPIV3Schema", "FieldValueRequired")},
            id="no schema",
        ),
        pytest.param(
            {"schema": {"properties": {"spec": {"properties": {"a": {"type": "string"}}}}}},
            {
                ("spec.validation.openAPIV3Schema.type", "FieldValueRequired"),
                ("spec.validation.openAPIV3Schema.properties[spec].type", "FieldValueRequired"),
            },
            id="not structural: types missing",
        ),
        pytest.param(
            {"schema": {"type": "object", "properties": {"b": {"type": "array"}}}},
            {("spec.validation.openAPIV3Schema.properties[b].items", "FieldValueRequired")},
            id="not structural: an array without items",
        ),
        pytest.param(
            {
                "schema": {
                    "type": "object",
                    "properties": {"a": {"type": "integer", "default": "x"}},
                }
            },
            {("spec.validation.openAPIV3Schema.properties[a].default", "FieldValueTypeInvalid")},
            id="a default that does not validate",
        ),
        pytest.param(
            {
                "schema": {
                    "type": "object",
                    "properties": {
                        "u": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
                    },
                }
            },
            {("spec.validation.openAPIV3Schema.properties[u].uniqueItems", "FieldValueForbidden")},
            id="uniqueItems",
        ),
    ],
)
async def test_an_invalid_crd_is_422(cluster, change, expected):
    group = f"v{cluster.test_id}.example.com"
    crd = _widget_crd(group, {"type": "object"})
    version = crd["spec"]["versions"][0]
    crd["metadata"].update(change.get("metadata", {}))
    if "scope" in change:
        crd["spec"]["scope"] = change["scope"]
    if "storage" in change:
        version["storage"] = change["storage"]
    if "schema" in change:
        if change["schema"] is None:
            del version["schema"]
        else:
            version["schema"] = {"openAPIV3Schema": change["schema"]}

    with pytest.raises(StatusError) as caught:
        await cluster.rest.create(CRDS, crd)

    assert (caught.value.status, caught.value.reason) == (422, "Invalid")
    got = {(c["field"], c["reason"]) for c in caught.value.body["details"]["causes"]}
    assert got == expected


@pytest.fixture
async def widgets(cluster):
    """A function applying a cluster-scoped Widget CRD of a schema; returns the served
    collection's path. The CRD is deleted at teardown."""
    group = f"w{cluster.test_id}.example.com"
    crd_path = f"{CRDS}/widgets.{group}"

    async def apply(schema: dict[str, Any]) -> str:
        await cluster.rest.create(CRDS, _widget_crd(group, schema))
        await wait_established(cluster, f"widgets.{group}")
        path = f"/apis/{group}/v1/widgets"
        await wait_status(cluster, path, 200)
        return path

    apply.crd_path = crd_path  # type: ignore[attr-defined]
    yield apply
    with contextlib.suppress(StatusError):
        await cluster.rest.delete(crd_path)


def _widget(path: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    group_version = path.removeprefix("/apis/").removesuffix("/widgets")
    return {
        "apiVersion": group_version,
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": spec,
    }


async def test_list_items_and_strings_are_validated_as_v1_37_does(widgets, cluster):
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "ports": {
                        "type": "array",
                        "maxItems": 2,
                        "items": {"type": "integer", "format": "int32"},
                    },
                    "name": {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"},
                },
            }
        },
    }
    path = await widgets(schema)
    body = _widget(path, f"w-{cluster.test_id}", {"ports": [1, "x", 2.5], "name": "ABCD"})

    with pytest.raises(StatusError) as caught:
        await cluster.rest.create(path, body)

    found = [
        (c["field"], c["message"], c["reason"]) for c in caught.value.body["details"]["causes"]
    ]
    # an item names its index; a string reports its first failure only; maxItems is a
    # TooMany cause (v1.20: no index, every failure, "should have at most 2 items")
    assert sorted(found) == sorted(
        [
            (
                "spec.ports[1]",
                'Invalid value: "string": spec.ports[1] in body must be of type integer: "string"',
                "FieldValueTypeInvalid",
            ),
            (
                "spec.ports[2]",
                'Invalid value: "float64": spec.ports[2] in body must be of type int32: "float64"',
                "FieldValueTypeInvalid",
            ),
            (
                "<nil>",
                'Invalid value: "": Checked value must be of type integer with format int32 '
                "in spec.ports[2]",
                "FieldValueInvalid",
            ),
            ("spec.ports", "Too many: 3: must have at most 2 items", "FieldValueTooMany"),
            ("spec.name", "Too long: may not be more than 3 bytes", "FieldValueTooLong"),
        ]
    )


async def test_an_update_ratchets_the_values_it_does_not_change(widgets, cluster):
    """CRDValidationRatcheting (GA in 1.33): a value a stricter schema refuses may stay as it
    is; an update that changes it is checked."""
    loose: dict[str, Any] = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            }
        },
    }
    path = await widgets(loose)
    rest, name = cluster.rest, f"w-{cluster.test_id}"
    await rest.create(path, _widget(path, name, {"a": 50, "b": 1}))
    crd = await rest.get(widgets.crd_path)
    strict = copy.deepcopy(loose)
    strict["properties"]["spec"]["properties"]["a"]["maximum"] = 10
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = strict
    await rest.replace(widgets.crd_path, crd)
    probe = _widget(path, f"{name}-probe", {"a": 20})
    async with asyncio.timeout(DEADLINE):  # the handler takes the new schema a moment later
        while (  # noqa: ASYNC110 (no event to await)
            await rest.request("POST", path, body=probe, params={"dryRun": "All"}, check=False)
        ).status != 422:
            await asyncio.sleep(0.1)

    kept = await rest.patch(f"{path}/{name}", {"spec": {"b": 2}})
    changed = await rest.request(
        "PATCH",
        f"{path}/{name}",
        body={"spec": {"a": 40}},
        content_type="application/merge-patch+json",
        check=False,
    )

    assert kept["spec"] == {"a": 50, "b": 2}
    assert changed.status == 422
    assert [(c["field"], c["message"]) for c in changed.body["details"]["causes"]] == [
        ("spec.a", "Invalid value: 40: spec.a in body should be less than or equal to 10")
    ]


async def test_deleting_the_crd_deletes_its_objects_ends_watches_and_unserves(podgroups, cluster):
    rest = cluster.rest
    await podgroups.create("doomed", minMember=1)
    stream = rest.watch(podgroups.path())
    async with asyncio.timeout(DEADLINE):  # the initial ADDED: the watch is open
        first = await anext(stream)
    assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "doomed")

    answer = await rest.delete(f"{CRDS}/{podgroups.crd_name}")

    # The first DELETE marks the CRD and adds the cleanup finalizer (200 with the CRD).
    assert answer["kind"] == "CustomResourceDefinition"
    assert answer["metadata"]["deletionTimestamp"]
    assert answer["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    terminating = answer["status"]["conditions"][-1]
    assert (terminating["type"], terminating["status"], terminating["reason"]) == (
        "Terminating",
        "True",
        "InstanceDeletionPending",
    )
    # Watchers see every object deleted, then the stream ends.
    events = await read_events(stream)
    assert kinds(events) == [("DELETED", "doomed")]
    # The group goes with its last resource: the mux's plain 404.
    await wait_status(cluster, podgroups.path(), 404)
    with pytest.raises(StatusError) as caught:
        await rest.get(f"/apis/{podgroups.group}")
    assert caught.value.status == 404
    groups = await rest.get("/apis")
    assert podgroups.group not in {g["name"] for g in groups["groups"]}
    await wait_status(cluster, f"{CRDS}/{podgroups.crd_name}", 404)
