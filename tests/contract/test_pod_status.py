"""Pod status writes: the ``status`` subresource and strategic merge of conditions by type."""

from __future__ import annotations

from asched.tools.backends.rest import pods_path

from ._support import conditions_by_type


def _condition(kind: str, status: str, **extra: str) -> dict[str, str]:
    return {"type": kind, "status": status, **extra}


async def test_strategic_merge_patch_merges_conditions_by_type(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")
    status_path = pods_path(ns, "p") + "/status"
    unschedulable = _condition(
        "PodScheduled", "False", reason="Unschedulable", message="0/1 nodes are available"
    )

    first = await rest.patch(
        status_path, {"status": {"conditions": [unschedulable]}}, patch_type="strategic"
    )
    second = await rest.patch(
        status_path,
        {"status": {"conditions": [_condition("example.com/Gate", "True")]}},
        patch_type="strategic",
    )
    third = await rest.patch(
        status_path,
        {"status": {"conditions": [dict(unschedulable, message="0/2 nodes are available")]}},
        patch_type="strategic",
    )

    assert set(conditions_by_type(first)) == {"PodScheduled"}
    # A new type is added next to the existing one...
    assert set(conditions_by_type(second)) == {"PodScheduled", "example.com/Gate"}
    # ...and an existing type is updated in place, not duplicated.
    merged = conditions_by_type(third)
    assert len(third["status"]["conditions"]) == 2
    assert merged["PodScheduled"]["message"] == "0/2 nodes are available"
    assert merged["PodScheduled"]["reason"] == "Unschedulable"
    assert merged["example.com/Gate"]["status"] == "True"
    assert third["status"]["phase"] == "Pending"  # untouched fields stay
    stored = await rest.get(pods_path(ns, "p"))
    assert conditions_by_type(stored) == merged


async def test_merge_patch_replaces_the_conditions_list(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")
    status_path = pods_path(ns, "p") + "/status"
    await rest.patch(
        status_path,
        {"status": {"conditions": [_condition("PodScheduled", "False", reason="Unschedulable")]}},
        patch_type="strategic",
    )

    replaced = await rest.patch(
        status_path, {"status": {"conditions": [_condition("Foo", "True")]}}, patch_type="merge"
    )

    assert set(conditions_by_type(replaced)) == {"Foo"}


async def test_status_patch_does_not_change_the_spec(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")

    patched = await rest.patch(
        pods_path(ns, "p") + "/status",
        {"spec": {"nodeName": "sneaky"}, "status": {"conditions": [_condition("Foo", "True")]}},
        patch_type="strategic",
    )

    assert "nodeName" not in patched["spec"]
    assert set(conditions_by_type(patched)) == {"Foo"}
