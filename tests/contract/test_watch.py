"""List/watch and resourceVersion semantics, as kube-apiserver v1.37.2 implements them.

Every expectation here was observed on the genuine server (the truth the simulator must match).
Watches start from a LIST's resourceVersion *after* the changes were made: the server replays
everything newer than that version, so no test depends on when the watch connects.
"""

from __future__ import annotations

import asyncio

import pytest

from asched.tools.backends.errors import StatusError
from asched.tools.backends.rest import pods_path

from ._support import DEADLINE, Event, kinds, name, read_events, rv, watch_lines


async def test_watch_from_list_version_replays_later_changes_in_order(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("before")
    listed = await rest.list(pods_path(ns))
    assert [name(p) for p in listed["items"]] == ["before"]
    start = listed["metadata"]["resourceVersion"]

    created = await cluster.create_pod("later")
    labelled = await rest.patch(pods_path(ns, "later"), {"metadata": {"labels": {"a": "b"}}})
    deleted = await rest.delete(pods_path(ns, "later"), grace_period_seconds=0)

    stream = rest.watch(pods_path(ns), resource_version=start)
    events = await read_events(stream, until=lambda evs: evs[-1]["type"] == "DELETED")

    # "before" existed at the list's version: it is not replayed. A pod DELETE is two writes:
    # deletionTimestamp + deletionGracePeriodSeconds=0 (MODIFIED), then the removal (DELETED)
    # with a version of its own, the DELETE's answer's (v1.20 answered the MODIFIED one's).
    assert kinds(events) == [
        ("ADDED", "later"),
        ("MODIFIED", "later"),
        ("MODIFIED", "later"),
        ("DELETED", "later"),
    ]
    added, modified, marked, removed = (e["object"] for e in events)
    assert rv(added) == rv(created)
    assert rv(modified) == rv(labelled)
    assert modified["metadata"]["labels"] == {"a": "b"}
    assert "deletionTimestamp" not in modified["metadata"]
    assert rv(removed) == rv(deleted)
    assert marked["metadata"]["deletionTimestamp"]
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 0
    # The DELETED object is the last state, stamped with the removal's own version.
    assert removed["metadata"]["labels"] == {"a": "b"}
    assert removed["metadata"]["deletionGracePeriodSeconds"] == 0
    assert len({rv(e["object"]) for e in events}) == 4


async def test_label_selector_watch_sees_objects_enter_and_leave(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")
    start = (await rest.list(pods_path(ns)))["metadata"]["resourceVersion"]

    entered = await rest.patch(pods_path(ns, "p"), {"metadata": {"labels": {"team": "x"}}})
    relabelled = await rest.patch(pods_path(ns, "p"), {"metadata": {"labels": {"tier": "1"}}})
    left = await rest.patch(pods_path(ns, "p"), {"metadata": {"labels": {"team": None}}})

    stream = rest.watch(pods_path(ns), resource_version=start, label_selector="team=x")
    events = await read_events(stream, until=lambda evs: len(evs) == 3)

    # Starting to match is ADDED, still matching is MODIFIED, no longer matching is DELETED.
    assert kinds(events) == [("ADDED", "p"), ("MODIFIED", "p"), ("DELETED", "p")]
    assert rv(events[0]["object"]) == rv(entered)
    assert rv(events[1]["object"]) == rv(relabelled)
    # The DELETED event carries the *previous* content (still labelled team=x) but the
    # resourceVersion of the change that made it leave the selection.
    gone = events[2]["object"]
    assert gone["metadata"]["labels"] == {"team": "x", "tier": "1"}
    assert rv(gone) == rv(left)


async def test_unassigned_pods_watch_sees_a_binding_as_deleted(cluster):
    # kube-scheduler watches `spec.nodeName=` pods; a bound pod must leave that watch.
    rest, ns = cluster.rest, cluster.namespace
    node = await cluster.create_node()
    await cluster.create_pod("p")
    start = (await rest.list(pods_path(ns), field_selector="spec.nodeName="))["metadata"][
        "resourceVersion"
    ]

    assert await rest.bind(ns, "p", node["metadata"]["name"]) == 201
    bound = await rest.get(pods_path(ns, "p"))

    stream = rest.watch(pods_path(ns), resource_version=start, field_selector="spec.nodeName=")
    events = await read_events(stream, until=lambda evs: len(evs) == 1)

    assert kinds(events) == [("DELETED", "p")]
    assert "nodeName" not in events[0]["object"]["spec"]  # the previous (unbound) content
    assert rv(events[0]["object"]) == rv(bound)


async def _watch_with_live_change(cluster, *, bookmarks: bool) -> list[Event]:
    """Watch for 3 s: "a" is replayed (proving the watch is connected), "b" is created live."""
    rest, ns = cluster.rest, cluster.namespace
    start = (await rest.list(pods_path(ns)))["metadata"]["resourceVersion"]
    await cluster.create_pod("a" if bookmarks else "c")
    stream = rest.watch(
        pods_path(ns), resource_version=start, allow_watch_bookmarks=bookmarks, timeout_seconds=3
    )
    events: list[Event] = []
    async with asyncio.timeout(DEADLINE):
        async for event in stream:
            events.append(event)
            if len(events) == 1:
                await cluster.create_pod("b" if bookmarks else "d")
    return events


async def test_bookmarks_arrive_when_requested(cluster):
    # kube-apiserver sends bookmarks from 2 s before a watch's timeoutSeconds deadline,
    # carrying the latest version it processed for the resource, and only when that version is
    # newer than the last event the watch delivered (here "b", delivered live, makes it so).
    events = await _watch_with_live_change(cluster, bookmarks=True)

    assert kinds(events[:2]) == [("ADDED", "a"), ("ADDED", "b")]
    assert events[2:], "no BOOKMARK before the watch timed out"
    assert {e["type"] for e in events[2:]} == {"BOOKMARK"}
    bookmark = events[-1]["object"]
    # A bookmark is an empty object of the watched kind carrying only a resourceVersion.
    assert bookmark["kind"] == "Pod"
    assert bookmark["apiVersion"] == "v1"
    assert name(bookmark) is None
    assert bookmark["metadata"]["resourceVersion"]

    # Resuming from the bookmark's version replays nothing already seen.
    resumed = await read_events(
        cluster.rest.watch(
            pods_path(cluster.namespace), resource_version=rv(bookmark), timeout_seconds=1
        )
    )
    assert resumed == []


async def test_no_bookmarks_unless_requested(cluster):
    events = await _watch_with_live_change(cluster, bookmarks=False)

    assert kinds(events) == [("ADDED", "c"), ("ADDED", "d")]


async def test_watch_from_expired_version_is_one_error_event_with_410(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")
    start = (await rest.list(pods_path(ns)))["metadata"]["resourceVersion"]
    await rest.patch(pods_path(ns, "p"), {"metadata": {"labels": {"a": "b"}}})

    await cluster.expire_history()

    # HTTP 200, then exactly one ERROR event whose object is a Status with code 410, then the
    # server closes the stream.
    events = await read_events(rest.watch(pods_path(ns), resource_version=start))
    assert [e["type"] for e in events] == ["ERROR"]
    status = events[0]["object"]
    assert status["kind"] == "Status"
    assert status["apiVersion"] == "v1"
    assert status["status"] == "Failure"
    assert status["reason"] == "Expired"
    assert status["code"] == 410
    assert status["message"].startswith("too old resource version: ")


async def test_paginated_list_at_expired_version_is_410(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")
    start = (await rest.list(pods_path(ns)))["metadata"]["resourceVersion"]
    await rest.patch(pods_path(ns, "p"), {"metadata": {"labels": {"a": "b"}}})

    await cluster.expire_history()

    with pytest.raises(StatusError) as caught:
        await rest.list(pods_path(ns), resource_version=start, limit=10)
    assert caught.value.status == 410
    assert caught.value.reason == "Expired"
    assert caught.value.message == "The resourceVersion for the provided list is too old."


INITIAL_EVENTS_END = {"k8s.io/initial-events-end": "true"}


async def _two_pods(cluster) -> str:
    """Pods "a" and "b"; return the list's resourceVersion after them."""
    await cluster.create_pod("a")
    await cluster.create_pod("b")
    return rv(await cluster.rest.list(pods_path(cluster.namespace)))


@pytest.mark.parametrize(
    "params",
    [
        pytest.param({}, id="no resourceVersion: defaulted to a watch-list"),
        pytest.param({"resourceVersion": "0"}, id="resourceVersion 0: the same"),
        pytest.param(
            {"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan"},
            id="sendInitialEvents=true",
        ),
    ],
)
async def test_a_watch_list_ends_its_initial_events_with_an_annotated_bookmark(cluster, params):
    # WatchList (on in v1.37): SetListOptionsDefaults turns a watch from "" or "0" into
    # sendInitialEvents=true; with bookmarks allowed, the current state is followed by a
    # BOOKMARK annotated k8s.io/initial-events-end at the state's version
    listed = await _two_pods(cluster)

    events = await watch_lines(
        cluster.kubeconfig,
        pods_path(cluster.namespace),
        {"allowWatchBookmarks": "true", "timeoutSeconds": "1", **params},
    )

    assert kinds(events[:3]) == [("ADDED", "a"), ("ADDED", "b"), ("BOOKMARK", None)]
    end = events[2]["object"]
    assert end["metadata"]["annotations"] == INITIAL_EVENTS_END
    assert int(rv(end)) >= int(listed)
    assert all(event["type"] == "BOOKMARK" for event in events[3:])


async def test_without_bookmarks_the_initial_events_have_no_end_marker(cluster):
    await _two_pods(cluster)

    events = await watch_lines(
        cluster.kubeconfig,
        pods_path(cluster.namespace),
        {
            "sendInitialEvents": "true",
            "resourceVersionMatch": "NotOlderThan",
            "timeoutSeconds": "1",
        },
    )

    assert kinds(events) == [("ADDED", "a"), ("ADDED", "b")]


async def test_send_initial_events_false_starts_from_now(cluster):
    await _two_pods(cluster)

    events = await watch_lines(
        cluster.kubeconfig,
        pods_path(cluster.namespace),
        {
            "sendInitialEvents": "false",
            "resourceVersionMatch": "NotOlderThan",
            "timeoutSeconds": "1",
        },
    )

    assert events == []
