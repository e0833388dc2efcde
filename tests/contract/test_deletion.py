"""Pod deletion: graceful for pods on a node, immediate for unscheduled ones."""

from __future__ import annotations

import pytest

from asched.tools.backends.errors import StatusError
from asched.tools.backends.rest import pods_path

from ._support import kinds, read_events, rv


async def _bound_pod(cluster, name: str) -> None:
    """Create a pod with a 30 s grace period and bind it; return once the server's cache has it.

    kube-apiserver may evaluate a DELETE's grace period on its watch-cache copy of the
    pod first; a DELETE sent right after the binding can then see an unscheduled pod and
    delete it at once. Waiting until a watch shows the binding (a watch is served from that
    cache) rules this out, as a kubelet's own watch would in a real cluster.
    """
    rest, ns = cluster.rest, cluster.namespace
    node = (await cluster.create_node())["metadata"]["name"]
    created = await cluster.create_pod(name, termination_grace_period_seconds=30)
    assert await rest.bind(ns, name, node) == 201
    await read_events(
        rest.watch(
            pods_path(ns), resource_version=rv(created), field_selector=f"metadata.name={name}"
        ),
        until=lambda evs: bool(evs[-1]["object"]["spec"].get("nodeName")),
    )


async def test_bound_pod_deleted_with_grace_gets_a_deletion_timestamp_first(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await _bound_pod(cluster, "p")
    start = (await rest.list(pods_path(ns)))["metadata"]["resourceVersion"]

    terminating = await rest.delete(pods_path(ns, "p"), grace_period_seconds=30)

    # The answer is the pod, still there, marked for deletion.
    assert terminating["kind"] == "Pod"
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    assert terminating["metadata"]["deletionTimestamp"]
    still_there = await rest.get(pods_path(ns, "p"))
    assert (
        still_there["metadata"]["deletionTimestamp"] == terminating["metadata"]["deletionTimestamp"]
    )

    # Without a kubelet only a grace-0 delete removes it.
    gone = await rest.delete(pods_path(ns, "p"), grace_period_seconds=0)
    with pytest.raises(StatusError) as caught:
        await rest.get(pods_path(ns, "p"))
    assert (caught.value.status, caught.value.reason) == (404, "NotFound")

    events = await read_events(
        rest.watch(pods_path(ns), resource_version=start),
        until=lambda evs: evs[-1]["type"] == "DELETED",
    )
    # Terminating (grace 30), then shortened to grace 0, then removed with a version of its
    # own: the one the grace-0 DELETE answered with (v1.37 decodes the deleted object at the
    # deletion's revision; v1.20 answered the shortened one's version).
    assert kinds(events) == [("MODIFIED", "p"), ("MODIFIED", "p"), ("DELETED", "p")]
    terminating_event, shortened, removed = (e["object"] for e in events)
    assert terminating_event["metadata"]["deletionGracePeriodSeconds"] == 30
    assert rv(terminating_event) == rv(terminating)
    assert shortened["metadata"]["deletionGracePeriodSeconds"] == 0
    assert gone["metadata"]["deletionGracePeriodSeconds"] == 0
    assert removed["metadata"]["deletionGracePeriodSeconds"] == 0
    assert rv(removed) == rv(gone)
    assert len({rv(terminating), rv(shortened), rv(removed)}) == 3


async def test_deleting_a_terminating_pod_again_with_the_same_grace_changes_nothing(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await _bound_pod(cluster, "p")
    first = await rest.delete(pods_path(ns, "p"), grace_period_seconds=30)

    again = await rest.delete(pods_path(ns, "p"), grace_period_seconds=30)

    assert rv(again) == rv(first)
    assert again["metadata"]["deletionTimestamp"] == first["metadata"]["deletionTimestamp"]


async def test_unscheduled_pod_is_deleted_at_once_whatever_the_grace(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p", termination_grace_period_seconds=30)

    deleted = await rest.delete(pods_path(ns, "p"), grace_period_seconds=30)

    # The answer is the final state, with the grace period the server actually applied, at
    # the version of the removal (the DELETED event's).
    assert deleted["kind"] == "Pod"
    assert deleted["metadata"]["deletionGracePeriodSeconds"] == 0
    with pytest.raises(StatusError) as caught:
        await rest.get(pods_path(ns, "p"))
    assert caught.value.status == 404


async def test_deleting_a_missing_pod_is_404(cluster):
    with pytest.raises(StatusError) as caught:
        await cluster.rest.delete(pods_path(cluster.namespace, "nope"))
    assert (caught.value.status, caught.value.reason) == (404, "NotFound")
    assert caught.value.message == 'pods "nope" not found'
