"""``coordination.k8s.io/v1`` Lease: create and update with optimistic concurrency."""

from __future__ import annotations

import pytest

from asched.tools.backends.errors import StatusError
from asched.tools.backends.rest import now_rfc3339


def _leases_path(namespace: str, name: str | None = None) -> str:
    base = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    return f"{base}/{name}" if name else base


def _lease(namespace: str, name: str, holder: str) -> dict[str, object]:
    now = now_rfc3339(micro=True)
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 15,
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": 0,
        },
    }


async def test_lease_update_with_current_version_succeeds_and_stale_version_is_409(cluster):
    rest, ns = cluster.rest, cluster.namespace
    created = await rest.create(_leases_path(ns), _lease(ns, "sched", "a"))
    assert created["spec"]["holderIdentity"] == "a"
    assert created["spec"]["renewTime"] == created["spec"]["acquireTime"]

    renewed_spec = {**created["spec"], "holderIdentity": "b", "renewTime": now_rfc3339(micro=True)}
    updated = await rest.replace(_leases_path(ns, "sched"), {**created, "spec": renewed_spec})
    assert updated["spec"]["holderIdentity"] == "b"
    assert updated["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]

    # A second writer still holding the first version loses.
    stale = {**created, "spec": {**created["spec"], "holderIdentity": "c"}}
    with pytest.raises(StatusError) as caught:
        await rest.replace(_leases_path(ns, "sched"), stale)
    assert caught.value.status == 409
    assert caught.value.reason == "Conflict"
    assert caught.value.message == (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "sched": the object has been'
        " modified; please apply your changes to the latest version and try again"
    )
    assert caught.value.body["details"] == {
        "name": "sched",
        "group": "coordination.k8s.io",
        "kind": "leases",
    }
    assert (await rest.get(_leases_path(ns, "sched")))["spec"]["holderIdentity"] == "b"


async def test_creating_an_existing_lease_is_409_already_exists(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await rest.create(_leases_path(ns), _lease(ns, "sched", "a"))

    with pytest.raises(StatusError) as caught:
        await rest.create(_leases_path(ns), _lease(ns, "sched", "b"))

    assert (caught.value.status, caught.value.reason) == (409, "AlreadyExists")
    assert caught.value.message == 'leases.coordination.k8s.io "sched" already exists'


async def test_lease_update_without_resource_version_is_422(cluster):
    # Leases do not allow unconditional updates (pods do).
    rest, ns = cluster.rest, cluster.namespace
    created = await rest.create(_leases_path(ns), _lease(ns, "sched", "a"))
    metadata = {k: v for k, v in created["metadata"].items() if k != "resourceVersion"}

    with pytest.raises(StatusError) as caught:
        await rest.replace(_leases_path(ns, "sched"), {**created, "metadata": metadata})

    assert (caught.value.status, caught.value.reason) == (422, "Invalid")


async def test_lease_times_without_microseconds_are_400(cluster):
    rest, ns = cluster.rest, cluster.namespace
    lease = _lease(ns, "sched", "a")
    lease["spec"]["renewTime"] = "2024-01-02T03:04:05Z"  # type: ignore[index]

    with pytest.raises(StatusError) as caught:
        await rest.create(_leases_path(ns), lease)

    assert (caught.value.status, caught.value.reason) == (400, "BadRequest")
