"""Paginated LIST: ``limit`` + ``continue`` give a consistent snapshot in key (name) order."""

from __future__ import annotations

from asched.tools.backends.rest import pods_path


async def test_limit_and_continue_walk_a_consistent_snapshot(cluster):
    rest, ns = cluster.rest, cluster.namespace
    for pod in ("p4", "p2", "p5", "p1", "p3"):  # created out of order on purpose
        await cluster.create_pod(pod)

    first = await rest.list(pods_path(ns), limit=2)
    # Created after the first page: not part of the snapshot the continue token reads.
    await cluster.create_pod("p0")
    await cluster.create_pod("p6")
    second = await rest.list(pods_path(ns), limit=2, continue_=first["metadata"]["continue"])
    third = await rest.list(pods_path(ns), limit=2, continue_=second["metadata"]["continue"])

    names = [[p["metadata"]["name"] for p in page["items"]] for page in (first, second, third)]
    assert names == [["p1", "p2"], ["p3", "p4"], ["p5"]]
    # 5 pods, 2 per page: 3 remain after page one, 1 after page two, none after the last.
    assert first["metadata"]["remainingItemCount"] == 3
    assert second["metadata"]["remainingItemCount"] == 1
    assert "remainingItemCount" not in third["metadata"]
    assert "continue" not in third["metadata"]
    # Every page reports the snapshot's resourceVersion.
    versions = {page["metadata"]["resourceVersion"] for page in (first, second, third)}
    assert versions == {first["metadata"]["resourceVersion"]}
    assert first["kind"] == "PodList"
    assert first["apiVersion"] == "v1"


async def test_limit_larger_than_the_collection_returns_everything_without_continue(cluster):
    rest, ns = cluster.rest, cluster.namespace
    for pod in ("a", "b"):
        await cluster.create_pod(pod)

    page = await rest.list(pods_path(ns), limit=10)

    assert [p["metadata"]["name"] for p in page["items"]] == ["a", "b"]
    assert "continue" not in page["metadata"]
    assert "remainingItemCount" not in page["metadata"]
