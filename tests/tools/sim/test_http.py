"""The REST API over a real socket: status codes, Status bodies, discovery, verbs."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest

from asched.tools.sim.server import SimConfig
from tests.integration.scheduler_harness import until

from .conftest import TIME_SCALE, TOKEN, Api, binding, pod

NS = "/api/v1/namespaces/default"


async def test_requests_without_the_token_are_401(api: Api):
    async with aiohttp.ClientSession(base_url=api.server.url) as anonymous:
        async with anonymous.get(f"{NS}/pods") as response:
            body = await response.json()
            assert response.status == 401
        async with anonymous.get("/version") as response:
            assert response.status == 401  # as kube-apiserver --anonymous-auth=false
        async with anonymous.get("/admin/stats") as response:
            assert response.status == 401
        async with anonymous.get(
            f"{NS}/pods", headers={"Authorization": "Bearer wrong"}
        ) as response:
            assert response.status == 401
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }


async def test_discovery_lists_served_resources(api: Api):
    core = (await api.get("/api/v1")).body
    pods = next(r for r in core["resources"] if r["name"] == "pods")
    assert pods["kind"] == "Pod"
    assert pods["namespaced"] is True
    assert pods["shortNames"] == ["po"]
    assert set(pods["verbs"]) == {
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    }
    names = {r["name"] for r in core["resources"]}
    assert {"pods/binding", "pods/status", "nodes/status", "bindings", "namespaces"} <= names
    groups = {g["name"]: g for g in (await api.get("/apis")).body["groups"]}
    assert groups["policy"]["preferredVersion"]["version"] == "v1"
    apps = (await api.get("/apis/apps/v1")).body
    assert {
        (r["name"], tuple(r.get("shortNames", ())))
        for r in apps["resources"]
        if "/" not in r["name"]
    } == {("replicasets", ("rs",)), ("statefulsets", ("sts",))}
    assert (await api.get("/version")).body["gitVersion"] == "v1.37.2"


@pytest.mark.parametrize(
    ("path", "status", "body"),
    [
        pytest.param(
            "/api/v1/foos",
            404,
            "the server could not find the requested resource",
            id="unknown resource",
        ),
        pytest.param(
            "/apis/nope.io/v1/things", 404, "404 page not found\n", id="unknown group: plain text"
        ),
        pytest.param(f"{NS}/pods/missing", 404, 'pods "missing" not found', id="missing object"),
        pytest.param(
            "/apis/apps/v1/namespaces/default/replicasets/x",
            404,
            'replicasets.apps "x" not found',
            id="missing object in a group",
        ),
    ],
)
async def test_not_found(api: Api, path, status, body):
    reply = await api.get(path)
    assert reply.status == status
    assert (reply.message if isinstance(reply.body, dict) else reply.body) == body


async def test_create_get_list_update_patch_delete(api: Api):
    created = await api.post(f"{NS}/pods", pod("web", labels={"app": "web"}))
    assert created.status == 201
    assert created.body["kind"] == "Pod"
    assert created.body["metadata"]["uid"]
    got = await api.get(f"{NS}/pods/web")
    assert got.body == created.body
    listed = await api.get(f"{NS}/pods?labelSelector=app%3Dweb")
    assert listed.body["kind"] == "PodList"
    assert [p["metadata"]["name"] for p in listed.body["items"]] == ["web"]
    assert "kind" not in listed.body["items"][0]  # list items carry no kind, as upstream
    body = got.body
    body["metadata"]["labels"]["tier"] = "fe"
    updated = await api.call("PUT", f"{NS}/pods/web", body)
    assert updated.status == 200
    assert int(updated.body["metadata"]["resourceVersion"]) > int(
        created.body["metadata"]["resourceVersion"]
    )
    stale = await api.call("PUT", f"{NS}/pods/web", created.body)
    assert stale.status == 409
    assert (
        stale.message
        == 'Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again'
    )
    patched = await api.patch(f"{NS}/pods/web", {"metadata": {"labels": {"tier": None}}})
    assert patched.status == 200
    assert "tier" not in patched.body["metadata"]["labels"]
    deleted = await api.delete(f"{NS}/pods/web")
    assert deleted.status == 200
    assert deleted.body["kind"] == "Pod"
    assert (await api.get(f"{NS}/pods/web")).status == 404


async def test_create_conflicts_and_generated_names(api: Api):
    assert (await api.post(f"{NS}/pods", pod("dup"))).status == 201
    again = await api.post(f"{NS}/pods", pod("dup"))
    assert (again.status, again.reason, again.message) == (
        409,
        "AlreadyExists",
        'pods "dup" already exists',
    )
    generated = pod("x")
    generated["metadata"] = {"generateName": "web-"}
    reply = await api.post(f"{NS}/pods", generated)
    name = reply.body["metadata"]["name"]
    assert reply.status == 201
    assert name.startswith("web-")
    assert len(name) == len("web-") + 5


@pytest.mark.parametrize(
    ("raw", "content_type", "status"),
    [
        pytest.param(b"{not json", "application/json", 400, id="malformed JSON"),
        pytest.param(b"[1, 2]", "application/json", 400, id="not an object"),
        pytest.param(
            b"\x00\x01",
            "application/vnd.kubernetes.protobuf",
            415,
            id="protobuf of an unsupported kind",
        ),
    ],
)
async def test_bad_bodies_never_crash_the_server(api: Api, raw, content_type, status):
    reply = await api.call("POST", f"{NS}/pods", raw=raw, content_type=content_type)
    assert reply.status == status
    assert reply.body["kind"] == "Status"
    assert (await api.get("/version")).status == 200


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param(
            "POST",
            f"{NS}/pods/p/binding",
            {"metadata": "p", "target": {"name": "node-0"}},
            id="binding metadata a string",
        ),
        pytest.param(
            "POST",
            f"{NS}/pods/p/binding",
            {"metadata": {"name": "p", "annotations": "a=b"}, "target": {"name": "node-0"}},
            id="binding annotations a string",
        ),
        pytest.param(
            "DELETE", f"{NS}/pods/p", {"preconditions": "uid"}, id="delete preconditions a string"
        ),
        pytest.param(
            "DELETE", f"{NS}/pods/p", {"preconditions": ["uid"]}, id="delete preconditions a list"
        ),
    ],
)
async def test_malformed_bodies_never_get_the_simulators_own_500(api: Api, method, path, body):
    assert (await api.post(f"{NS}/pods", pod("p"))).status == 201

    reply = await api.call(method, path, body)

    # The real server answers these 400 (binding) or a plain 500 without a reason (a
    # DeleteOptions body that does not decode); "InternalError" is the simulator failing.
    assert reply.body["kind"] == "Status"
    assert reply.body.get("reason") != "InternalError", reply.body
    stored = await api.get(f"{NS}/pods/p")
    assert "nodeName" not in stored.body["spec"]
    assert "deletionTimestamp" not in stored.body["metadata"]


# (Not "name: y": YAML 1.1, which kube-apiserver's decoder speaks, reads a bare y as true.)
YAML_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: yp}\nspec: {containers: [{name: c, image: i}]"
)


# kube-apiserver drops unknown fields such as "x" (201); the simulator keeps them as opaque
# JSON, so it must refuse what it cannot store as JSON: 400, never its own 500.
@pytest.mark.parametrize(
    ("raw", "content_type", "status"),
    [
        pytest.param(
            (YAML_POD + ", x: !!binary aGk=}").encode(), "application/yaml", 400, id="YAML bytes"
        ),
        pytest.param(
            (YAML_POD + ", x: !!set {a}}").encode(), "application/yaml", 400, id="YAML set"
        ),
        pytest.param(
            (YAML_POD + ", activeDeadlineSeconds: 99999999999999999999999}").encode(),
            "application/yaml",
            400,
            id="YAML integer past 64 bits",
        ),
        pytest.param(
            YAML_POD.replace("{name: yp}", "{name: yp, labels: {1: a}}").encode() + b"}",
            "application/yaml",
            201,
            id="YAML integer label key: a string, as JSON has",
        ),
        pytest.param(
            b'{"metadata":{"name":"y"},"spec":{"containers":[{"name":"c","image":"i"}],'
            b'"activeDeadlineSeconds":18446744073709551615}}',
            "application/json",
            400,
            id="int64 field past int64 (400 on v1.37.2 too)",
        ),
        pytest.param(
            b'{"metadata":{"name":"y"},"spec":{"containers":[{"name":"c","image":"i"}],"x":'
            + b"[" * 300
            + b"]" * 300
            + b"}}",
            "application/json",
            400,
            id="nested 300 deep (decodes, cannot be stored)",
        ),
    ],
)
async def test_bodies_that_json_cannot_hold_are_400_not_500(api: Api, raw, content_type, status):
    reply = await api.call("POST", f"{NS}/pods", raw=raw, content_type=content_type)

    assert reply.status == status, reply.body
    if status == 400:
        assert reply.body["reason"] == "BadRequest"
    else:
        assert reply.body["metadata"]["labels"] == {"1": "a"}


DEEP = 1000  # JSON decodes up to 1,024 levels; Python code recursing this deep would fail


@pytest.mark.parametrize(
    ("content_type", "raw"),
    [
        pytest.param(
            "application/merge-patch+json",
            b'{"metadata":{"labels":' + b'{"a":' * DEEP + b'"x"' + b"}" * DEEP + b"}}",
            id="merge",
        ),
        pytest.param(
            "application/strategic-merge-patch+json",
            b'{"metadata":{"labels":' + b'{"a":' * DEEP + b'"x"' + b"}" * DEEP + b"}}",
            id="strategic merge",
        ),
        pytest.param(
            "application/json-patch+json",
            b'[{"op":"add","path":"/metadata/labels","value":'
            + b'{"a":' * DEEP
            + b'"x"'
            + b"}" * DEEP
            + b"}]",
            id="JSON patch",
        ),
    ],
)
async def test_a_patch_nested_a_thousand_deep_is_400(api: Api, content_type, raw):
    assert (await api.post(f"{NS}/pods", pod("p"))).status == 201

    reply = await api.call("PATCH", f"{NS}/pods/p", raw=raw, content_type=content_type)

    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")


async def test_binding_sets_node_and_condition_with_one_event(api: Api):
    await api.post(f"{NS}/pods", pod("p"))
    start = (await api.get(f"{NS}/pods")).body["metadata"]["resourceVersion"]
    bound = await api.post(f"{NS}/pods/p/binding", binding("p", "node-0"))
    assert (bound.status, bound.body) == (
        201,
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
    )
    again = await api.post(f"{NS}/pods/p/binding", binding("p", "node-1"))
    assert again.status == 409
    assert (
        again.message
        == 'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "node-0"'
    )
    missing = await api.post(f"{NS}/pods/nope/binding", binding("nope", "node-0"))
    assert (missing.status, missing.message) == (404, 'pods "nope" not found')
    got = (await api.get(f"{NS}/pods/p")).body
    assert got["spec"]["nodeName"] == "node-0"
    (condition,) = got["status"]["conditions"]
    assert condition["type"] == "PodScheduled"
    assert condition["status"] == "True"
    events = await api.watch(f"{NS}/pods?watch=1&resourceVersion={start}&timeoutSeconds=1")
    assert [(e["type"], e["object"]["spec"].get("nodeName")) for e in events] == [
        ("MODIFIED", "node-0")
    ]


async def test_legacy_bindings_collection(api: Api):
    await api.post(f"{NS}/pods", pod("q"))
    reply = await api.post(f"{NS}/bindings", binding("q", "node-2"))
    assert reply.status == 201
    assert (await api.get(f"{NS}/pods/q")).body["spec"]["nodeName"] == "node-2"


async def test_bound_pod_deletion_is_graceful(api: Api):
    await api.post(f"{NS}/pods", pod("g", terminationGracePeriodSeconds=30))
    await api.post(f"{NS}/pods/g/binding", binding("g", "node-0"))
    terminating = await api.delete(f"{NS}/pods/g")
    assert terminating.status == 200
    assert terminating.body["metadata"]["deletionGracePeriodSeconds"] == 30
    assert (await api.get(f"{NS}/pods/g")).status == 200
    await asyncio.sleep(30 * TIME_SCALE * 5)  # the scaled grace period, with margin
    assert (await api.get(f"{NS}/pods/g")).status == 404


async def test_unbound_pod_is_deleted_at_once(api: Api):
    await api.post(f"{NS}/pods", pod("u"))
    deleted = await api.delete(f"{NS}/pods/u", {"gracePeriodSeconds": 30})
    assert deleted.body["metadata"]["deletionGracePeriodSeconds"] == 0
    assert (await api.get(f"{NS}/pods/u")).status == 404


async def test_finalizers_hold_deletion(api: Api):
    body = pod("f")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    await api.post(f"{NS}/pods", body)
    await api.delete(f"{NS}/pods/f")
    held = await api.get(f"{NS}/pods/f")
    assert held.status == 200
    assert held.body["metadata"]["deletionTimestamp"]
    await api.patch(f"{NS}/pods/f", {"metadata": {"finalizers": None}})
    assert (await api.get(f"{NS}/pods/f")).status == 404


async def test_nodes_answer_delete_with_a_status(api: Api):
    reply = await api.delete("/api/v1/nodes/node-2")
    assert reply.body["kind"] == "Status"
    assert reply.body["status"] == "Success"
    assert reply.body["details"]["name"] == "node-2"
    assert reply.body["details"]["kind"] == "nodes"


class TestNamespaceLifecycle:
    # real time here: at the module's scale the namespace controller's second is 1 ms, which
    # a loaded machine can take between two requests (the namespace is then gone already)
    @pytest.fixture
    def sim_config(self) -> SimConfig:
        return SimConfig(nodes=3, zones=2, token=TOKEN, time_scale=1.0, seed=7)

    async def test_namespace_lifecycle(self, api: Api) -> None:
        assert (await api.post("/api/v1/namespaces", {"metadata": {"name": "tmp"}})).status == 201
        await api.post("/api/v1/namespaces/tmp/pods", pod("a"))
        deleted = await api.delete("/api/v1/namespaces/tmp")
        assert deleted.body["status"]["phase"] == "Terminating"
        refused = await api.post("/api/v1/namespaces/tmp/pods", pod("b"))
        assert (refused.status, refused.reason) == (403, "Forbidden")

        async def purged() -> bool:  # the simulated namespace controller: 1 s
            return (await api.get("/api/v1/namespaces/tmp")).status == 404

        await until(purged, within=10)
        assert (await api.get("/api/v1/namespaces/tmp/pods/a")).status == 404
        protected = await api.delete("/api/v1/namespaces/default")
        assert (protected.status, protected.message) == (
            403,
            'namespaces "default" is forbidden: this namespace may not be deleted',
        )


async def test_pagination_is_a_consistent_snapshot(api: Api):
    for name in ("p3", "p1", "p2"):
        await api.post(f"{NS}/pods", pod(name))
    first = (await api.get(f"{NS}/pods?limit=2")).body
    assert [p["metadata"]["name"] for p in first["items"]] == ["p1", "p2"]
    assert first["metadata"]["remainingItemCount"] == 1
    await api.post(f"{NS}/pods", pod("p0"))  # after the snapshot: not listed
    await api.delete(f"{NS}/pods/p3")  # deleted after the snapshot: still listed
    token = first["metadata"]["continue"]
    second = (await api.get(f"{NS}/pods?limit=2&continue={token}")).body
    assert [p["metadata"]["name"] for p in second["items"]] == ["p3"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert "continue" not in second["metadata"]
    bad = await api.get(f"{NS}/pods?limit=2&continue=garbage")
    assert bad.status == 400


async def test_list_across_namespaces_and_field_selectors(api: Api):
    await api.post("/api/v1/namespaces", {"metadata": {"name": "other"}})
    await api.post(f"{NS}/pods", pod("a"))
    await api.post("/api/v1/namespaces/other/pods", pod("a"))
    await api.post(f"{NS}/pods/a/binding", binding("a", "node-1"))
    every = (await api.get("/api/v1/pods")).body["items"]
    assert [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in every] == [
        ("default", "a"),
        ("other", "a"),
    ]
    unbound = (await api.get("/api/v1/pods?fieldSelector=spec.nodeName%3D")).body["items"]
    assert [p["metadata"]["namespace"] for p in unbound] == ["other"]
    invalid = await api.get("/api/v1/pods?fieldSelector=spec.nope%3Dx")
    assert (invalid.status, invalid.message) == (400, "field label not supported: spec.nope")


async def test_table_output_for_kubectl(api: Api):
    await api.post(f"{NS}/pods", pod("t"))
    accept = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
    table = (await api.call("GET", f"{NS}/pods", headers=accept)).body
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]][:5] == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
    ]
    assert table["rows"][0]["cells"][:3] == ["t", "0/1", "Pending"]
    assert table["rows"][0]["object"]["metadata"]["name"] == "t"


async def test_events_are_one_storage_seen_through_two_groups(api: Api):
    new_event = {
        "metadata": {"name": "e1"},
        "eventTime": "2024-01-02T03:04:05.123456Z",
        "reportingController": "asched",
        "reportingInstance": "asched-0",
        "action": "Binding",
        "reason": "Scheduled",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
        "note": "bound",
        "type": "Normal",
    }
    created = await api.post("/apis/events.k8s.io/v1/namespaces/default/events", new_event)
    assert created.status == 201, created.body
    core = (await api.get(f"{NS}/events/e1")).body
    assert (core["message"], core["involvedObject"]["name"], core["reportingComponent"]) == (
        "bound",
        "p",
        "asched",
    )
    no_micro = {**new_event, "metadata": {"name": "e2"}, "eventTime": "2024-01-02T03:04:05Z"}
    assert (
        await api.post("/apis/events.k8s.io/v1/namespaces/default/events", no_micro)
    ).status == 400


async def test_disruption_budgets_are_policy_v1_only(api: Api):
    # v1.37 serves policy/v1 alone (v1beta1 went in 1.25)
    budget = {
        "metadata": {"name": "b"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}},
    }
    old = await api.post("/apis/policy/v1beta1/namespaces/default/poddisruptionbudgets", budget)
    assert old.status == 404
    assert (
        await api.post("/apis/policy/v1/namespaces/default/poddisruptionbudgets", budget)
    ).status == 201
    seen = (await api.get("/apis/policy/v1/namespaces/default/poddisruptionbudgets/b")).body
    assert seen["apiVersion"] == "policy/v1"
    assert seen["metadata"]["generation"] == 1


async def test_hollow_nodes(api: Api):
    nodes = (await api.get("/api/v1/nodes")).body["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["node-0", "node-1", "node-2"]
    zones = [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes]
    assert zones == ["zone-0", "zone-1", "zone-0"]
    assert nodes[0]["status"]["allocatable"] == {"pods": "110", "cpu": "4", "memory": "32Gi"}
    assert nodes[0]["metadata"]["labels"]["kubernetes.io/hostname"] == "node-0"


class TestRunPodsAfter:
    @pytest.fixture
    def sim_config(self) -> SimConfig:
        return SimConfig(nodes=1, token=TOKEN, time_scale=TIME_SCALE, run_pods_after=10.0)

    async def test_bound_pods_turn_running(self, api: Api):
        await api.post(f"{NS}/pods", pod("r"))
        await api.post(f"{NS}/pods/r/binding", binding("r", "node-0"))
        await asyncio.sleep(10 * TIME_SCALE * 5)
        status = (await api.get(f"{NS}/pods/r")).body["status"]
        assert status["phase"] == "Running"
        assert {c["type"] for c in status["conditions"]} == {
            "Initialized",
            "Ready",
            "ContainersReady",
            "PodScheduled",
        }


@pytest.mark.parametrize(
    ("gates", "conditions"),
    [
        # a v1.26+ API server adds PodScheduled=False/SchedulingGated on create
        # (applySchedulingGatedCondition), stamped with the creation's time ("created");
        # a pod without gates gets no condition
        pytest.param(
            [{"name": "example.com/quota"}],
            [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "SchedulingGated",
                    "message": "Scheduling is blocked due to non-empty scheduling gates",
                    "lastProbeTime": None,
                    "lastTransitionTime": "created",
                }
            ],
            id="gated: the condition",
        ),
        pytest.param([], None, id="not gated: none"),
    ],
)
async def test_a_pod_created_with_gates_says_so(
    api: Api, gates: list[dict[str, str]], conditions: list[dict[str, Any]] | None
) -> None:
    body = pod("gated")
    body["spec"]["schedulingGates"] = gates
    created = await api.post(f"{NS}/pods", body)
    assert created.status == 201
    stamp = created.body["metadata"]["creationTimestamp"]
    for condition in conditions or []:
        condition["lastTransitionTime"] = stamp
    assert created.body["status"].get("conditions") == conditions
