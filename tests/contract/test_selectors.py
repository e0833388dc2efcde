"""Label selectors (equality and set-based) and the pod field selectors a scheduler uses."""

from __future__ import annotations

import pytest

from asched.tools.backends.errors import StatusError
from asched.tools.backends.rest import nodes_path, pods_path

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


NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param("tier in a", "found 'a' expected: '('", id="in without parenthesis"),
        # v1.37's labels parser; v1.20 said "expected: '=', '!=', '==', 'in', notin'"
        pytest.param(
            "a b", "found 'b', expected: in, notin, =, ==, !=, gt, lt", id="missing operator"
        ),
        # field errors: a key on no path, a value on its place among the sorted values
        pytest.param("-a=b", f'<nil>: Invalid value: "-a": {NAME_PART}', id="a bad key"),
        pytest.param(
            "n>x",
            "values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an "
            "integer",
            id="gt needs an integer",
        ),
        pytest.param(
            "x=" + "v" * 64,
            f'values[0][x]: Invalid value: "{"v" * 64}": must be no more than 63 bytes',
            id="a value too long",
        ),
    ],
)
async def test_malformed_label_selector_is_400(cluster, selector, message):
    with pytest.raises(StatusError) as caught:
        await cluster.rest.list(pods_path(cluster.namespace), label_selector=selector)
    assert (caught.value.status, caught.value.reason) == (400, "BadRequest")
    assert caught.value.message == f"unable to parse requirement: {message}"


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
