"""``pods/binding`` semantics of kube-apiserver v1.20.2 (what a scheduler's bind call sees)."""

from __future__ import annotations

from asched.backends.rest import pods_path

from ._support import conditions_by_type


async def test_binding_sets_node_name_and_pod_scheduled_condition(cluster):
    rest, ns = cluster.rest, cluster.namespace
    node = (await cluster.create_node())["metadata"]["name"]
    await cluster.create_pod("p")

    answer = await rest.bind_raw(ns, "p", node)

    assert answer.status == 201
    assert answer.body["kind"] == "Status"
    assert answer.body["status"] == "Success"
    assert answer.body["code"] == 201
    pod = await rest.get(pods_path(ns, "p"))
    assert pod["spec"]["nodeName"] == node
    scheduled = conditions_by_type(pod)["PodScheduled"]
    assert scheduled["status"] == "True"
    assert scheduled["lastTransitionTime"]  # set by the server
    assert pod["status"]["phase"] == "Pending"  # no kubelet: the phase does not move


async def test_binding_an_already_bound_pod_is_409_and_changes_nothing(cluster):
    rest, ns = cluster.rest, cluster.namespace
    first = (await cluster.create_node())["metadata"]["name"]
    second = (await cluster.create_node())["metadata"]["name"]
    await cluster.create_pod("p")
    assert await rest.bind(ns, "p", first) == 201
    before = await rest.get(pods_path(ns, "p"))

    answer = await rest.bind_raw(ns, "p", second)

    assert answer.status == 409
    assert answer.body["reason"] == "Conflict"
    assert answer.body["details"] == {"name": "p", "kind": "pods/binding"}
    assert answer.body["message"] == (
        f'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "{first}"'
    )
    after = await rest.get(pods_path(ns, "p"))
    assert after["spec"]["nodeName"] == first
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


async def test_binding_a_pod_created_with_a_node_name_is_409(cluster):
    rest, ns = cluster.rest, cluster.namespace
    first = (await cluster.create_node())["metadata"]["name"]
    second = (await cluster.create_node())["metadata"]["name"]
    await cluster.create_pod("p", node_name=first)

    assert await rest.bind(ns, "p", second) == 409


async def test_binding_a_deleted_pod_is_404(cluster):
    rest, ns = cluster.rest, cluster.namespace
    node = (await cluster.create_node())["metadata"]["name"]
    await cluster.create_pod("p")
    await rest.delete(pods_path(ns, "p"), grace_period_seconds=0)

    answer = await rest.bind_raw(ns, "p", node)

    assert answer.status == 404
    assert answer.body["reason"] == "NotFound"
    assert answer.body["message"] == 'pods "p" not found'
    assert answer.body["details"] == {"name": "p", "kind": "pods"}


async def test_binding_to_a_node_that_does_not_exist_is_accepted(cluster):
    # The server does not look the node up: binding is only a write of spec.nodeName.
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")
    ghost = cluster.unique_name("no-such-node")

    assert await rest.bind(ns, "p", ghost) == 201
    assert (await rest.get(pods_path(ns, "p")))["spec"]["nodeName"] == ghost
