"""Watches: replay from a version, initial state, selectors, 410, bookmarks, fan-out."""

from __future__ import annotations

import asyncio

import pytest

from asched.tools.sim.apiserver import views
from asched.tools.sim.apiserver.resources import BY_GVR
from asched.tools.sim.apiserver.selectors import FieldSelector, LabelSelector, parse_labels
from asched.tools.sim.apiserver.store import Store
from asched.tools.sim.apiserver.watch import Watcher
from asched.tools.sim.server import SimConfig

from .conftest import TIME_SCALE, TOKEN, Api, pod

NS = "/api/v1/namespaces/default"
PODS = BY_GVR[("", "v1", "pods")]


def kinds(events):
    return [(e["type"], e["object"].get("metadata", {}).get("name")) for e in events]


async def _rv(api: Api) -> str:
    return (await api.get(f"{NS}/pods")).body["metadata"]["resourceVersion"]


async def test_watch_replays_changes_after_a_version(api: Api):
    start = await _rv(api)
    await api.post(f"{NS}/pods", pod("a"))
    await api.patch(f"{NS}/pods/a", {"metadata": {"labels": {"x": "y"}}})
    await api.delete(f"{NS}/pods/a")
    events = await api.watch(
        f"{NS}/pods?watch=1&resourceVersion={start}", until=lambda e: len(e) == 4
    )
    # Deleting an unbound pod marks it first (grace 0), then removes it: MODIFIED, DELETED.
    assert kinds(events) == [("ADDED", "a"), ("MODIFIED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions)
    assert len(set(versions)) == 4
    assert events[0]["object"]["kind"] == "Pod"  # watch objects carry kind and apiVersion


async def test_watch_without_version_starts_with_the_current_state(api: Api):
    for name in ("b", "a"):
        await api.post(f"{NS}/pods", pod(name))
    for version in ("", "&resourceVersion=0"):
        events = await api.watch(f"{NS}/pods?watch=true{version}&timeoutSeconds=1")
        assert kinds(events) == [("ADDED", "a"), ("ADDED", "b")]


async def test_selector_transitions_are_added_and_deleted(api: Api):
    start = await _rv(api)
    await api.post(f"{NS}/pods", pod("p", labels={"app": "a"}))
    await api.patch(f"{NS}/pods/p", {"metadata": {"labels": {"app": "b"}}})
    await api.patch(f"{NS}/pods/p", {"metadata": {"labels": {"app": "a"}}})
    events = await api.watch(
        f"{NS}/pods?watch=1&resourceVersion={start}&labelSelector=app%3Da&timeoutSeconds=1"
    )
    assert kinds(events) == [("ADDED", "p"), ("DELETED", "p"), ("ADDED", "p")]
    # The DELETED carries the content before the change, at the change's version.
    assert events[1]["object"]["metadata"]["labels"] == {"app": "a"}


async def test_watch_from_an_expired_version_is_200_then_one_410_error(api: Api):
    start = await _rv(api)
    await api.post(f"{NS}/pods", pod("a"))
    assert (await api.call("POST", "/admin/compact")).status == 200
    events = await api.watch(f"{NS}/pods?watch=1&resourceVersion={start}")
    assert len(events) == 1
    assert events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": status["message"],
        "reason": "Expired",
        "code": 410,
    }
    assert status["message"].startswith(f"too old resource version: {start} (")


async def test_watch_times_out_when_asked(api: Api):
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert (
        await api.watch(f"{NS}/pods?watch=1&resourceVersion={await _rv(api)}&timeoutSeconds=1")
        == []
    )
    assert 0.9 <= loop.time() - started < 3


async def test_watch_of_one_object_by_legacy_path(api: Api):
    start = await _rv(api)
    await api.post(f"{NS}/pods", pod("one"))
    await api.post(f"{NS}/pods", pod("two"))
    events = await api.watch(
        f"/api/v1/watch/namespaces/default/pods/two?resourceVersion={start}&timeoutSeconds=1"
    )
    assert kinds(events) == [("ADDED", "two")]


class TestBookmarks:
    @pytest.fixture
    def sim_config(self) -> SimConfig:
        return SimConfig(token=TOKEN, time_scale=TIME_SCALE, bookmark_interval=0.1)

    async def test_bookmark_carries_only_the_version(self, api: Api):
        await api.post("/api/v1/namespaces", {"metadata": {"name": "quiet"}})
        start = await _rv(api)
        await api.post(f"{NS}/pods", pod("elsewhere"))  # pods changed, but not in "quiet"
        events = await api.watch(
            f"/api/v1/namespaces/quiet/pods?watch=1&resourceVersion={start}&allowWatchBookmarks=true&timeoutSeconds=5",
            until=lambda e: bool(e),
        )
        (bookmark,) = events
        assert bookmark["type"] == "BOOKMARK"
        assert bookmark["object"] == {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": bookmark["object"]["metadata"]["resourceVersion"]},
        }
        assert int(bookmark["object"]["metadata"]["resourceVersion"]) > int(start)

    async def test_no_bookmark_when_nothing_changed(self, api: Api):
        start = await _rv(api)
        events = await api.watch(
            f"{NS}/pods?watch=1&resourceVersion={start}&allowWatchBookmarks=true&timeoutSeconds=1"
        )
        assert events == []


def test_fan_out_encodes_each_event_once():
    store = Store(["pods"], history_limit=10)
    table = store.table("pods")

    def render(event, type_, *, previous=False):
        return views.watch_line(PODS, event, type_, previous=previous)

    watchers = [
        Watcher(render, None, LabelSelector(), FieldSelector(), start_rv=0, queue_limit=10)
        for _ in range(4)
    ]
    selective = Watcher(
        render, "ns", parse_labels("app=a"), FieldSelector(), start_rv=0, queue_limit=10
    )
    for watcher in [*watchers, selective]:
        table.subscribers.add(watcher)
    store.commit(table, {"metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"}}})
    lines = [watcher.pending[0] for watcher in [*watchers, selective]]
    assert all(line is lines[0] for line in lines)  # the very same bytes object
    assert lines[0].startswith(
        b'{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":'
    )


def test_a_watcher_that_falls_behind_is_closed():
    store = Store(["pods"], history_limit=10)
    table = store.table("pods")
    watcher = Watcher(
        lambda event, type_, *, previous=False: b"x",
        None,
        LabelSelector(),
        FieldSelector(),
        start_rv=0,
        queue_limit=2,
    )
    table.subscribers.add(watcher)
    for name in "abc":
        store.commit(table, {"metadata": {"name": name, "namespace": "ns"}})
    assert watcher.closed
