"""Label selectors (equality and set-based) and the pod field selectors a scheduler uses."""

from __future__ import annotations

import pytest

from asched.backends.errors import StatusError
from asched.backends.rest import nodes_path, pods_path

# Pods of the label-selector table: name -> labels.
LABELLED = {
    "web-a": {"app": "web", "tier": "a"},
    "web-b": {"app": "web", "tier": "b"},
    "db": {"app": "db"},
    "bare": {},
}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("app=web", {"web-a", "web-b"}, id="equality"),
        pytest.param("app==web", {"web-a", "web-b"}, id="double equals"),
        pytest.param("app!=web", {"db", "bare"}, id="inequality includes pods without the key"),
        pytest.param("app=web,tier=b", {"web-b"}, id="conjunction"),
        pytest.param("tier in (a,c)", {"web-a"}, id="in"),
        pytest.param(
            "tier notin (a)", {"web-b", "db", "bare"}, id="notin includes pods without the key"
        ),
        pytest.param("tier", {"web-a", "web-b"}, id="exists"),
        pytest.param("!tier", {"db", "bare"}, id="does not exist"),
        pytest.param("app in (web,db),!tier", {"db"}, id="set-based conjunction"),
    ],
)
async def test_label_selector(cluster, selector, expected):
    rest, ns = cluster.rest, cluster.namespace
    for pod, labels in LABELLED.items():
        await cluster.create_pod(pod, labels=labels)

    listed = await rest.list(pods_path(ns), label_selector=selector)

    assert {p["metadata"]["name"] for p in listed["items"]} == expected


async def test_label_selector_on_cluster_scoped_nodes(cluster):
    rest = cluster.rest
    await cluster.create_node("a-" + cluster.test_id, labels={"zone": "z1"})
    await cluster.create_node("b-" + cluster.test_id, labels={"zone": "z2"})
    mine = f"asched.test/id={cluster.test_id}"

    listed = await rest.list(nodes_path(), label_selector=f"{mine},zone in (z2)")

    assert [n["metadata"]["name"] for n in listed["items"]] == ["b-" + cluster.test_id]


async def test_malformed_label_selector_is_400(cluster):
    with pytest.raises(StatusError) as caught:
        await cluster.rest.list(pods_path(cluster.namespace), label_selector="tier in a")
    assert (caught.value.status, caught.value.reason) == (400, "BadRequest")
    assert caught.value.message == "unable to parse requirement: found 'a' expected: '('"


async def _field_selector_pods(cluster) -> str:
    """Create: bound (on a node, Running), unbound, other (another scheduler), done (Succeeded)."""
    rest, ns = cluster.rest, cluster.namespace
    node: str = (await cluster.create_node())["metadata"]["name"]
    await cluster.create_pod("bound")
    assert await rest.bind(ns, "bound", node) == 201
    await rest.patch(pods_path(ns, "bound") + "/status", {"status": {"phase": "Running"}})
    await cluster.create_pod("unbound")
    await cluster.create_pod("other", scheduler_name="asched")
    await cluster.create_pod("done")
    await rest.patch(pods_path(ns, "done") + "/status", {"status": {"phase": "Succeeded"}})
    return node


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("spec.nodeName=", {"unbound", "other", "done"}, id="unassigned"),
        pytest.param("spec.nodeName!=", {"bound"}, id="assigned"),
        pytest.param("spec.schedulerName=asched", {"other"}, id="schedulerName"),
        pytest.param(
            "spec.schedulerName=default-scheduler",
            {"bound", "unbound", "done"},
            id="default schedulerName is filled in",
        ),
        pytest.param(
            "status.phase!=Succeeded", {"bound", "unbound", "other"}, id="phase inequality"
        ),
        pytest.param(
            "spec.nodeName=,status.phase!=Succeeded,status.phase!=Failed",
            {"unbound", "other"},
            id="kube-scheduler's unassigned non-terminal pods",
        ),
        pytest.param("metadata.name=bound", {"bound"}, id="metadata.name"),
    ],
)
async def test_pod_field_selector(cluster, selector, expected):
    await _field_selector_pods(cluster)

    listed = await cluster.rest.list(pods_path(cluster.namespace), field_selector=selector)

    assert {p["metadata"]["name"] for p in listed["items"]} == expected


async def test_field_selector_on_the_node_name(cluster):
    node = await _field_selector_pods(cluster)

    listed = await cluster.rest.list(
        pods_path(cluster.namespace), field_selector=f"spec.nodeName={node}"
    )

    assert [p["metadata"]["name"] for p in listed["items"]] == ["bound"]


async def test_unsupported_field_selector_is_400(cluster):
    with pytest.raises(StatusError) as caught:
        await cluster.rest.list(pods_path(cluster.namespace), field_selector="spec.foo=bar")
    assert (caught.value.status, caught.value.reason) == (400, "BadRequest")
    assert caught.value.message == "field label not supported: spec.foo"
