"""The store: one resourceVersion counter, bounded per-resource history, 410 semantics."""

from __future__ import annotations

import pytest

from asched.tools.sim.apiserver.store import Store, TooOld


def _obj(name: str, **extra) -> dict:
    return {"metadata": {"name": name, "namespace": "ns"}, **extra}


def test_one_counter_across_tables():
    store = Store(["pods", "nodes"], history_limit=10)
    first = store.commit(store.table("pods"), _obj("a"))
    second = store.commit(store.table("nodes"), {"metadata": {"name": "n"}})
    assert (first.rv, second.rv) == (2, 3)
    assert first.obj["metadata"]["resourceVersion"] == "2"


def test_commit_does_not_mutate_the_given_metadata():
    store = Store(["pods"], history_limit=10)
    meta = {"name": "a", "namespace": "ns"}
    store.commit(store.table("pods"), {"metadata": meta})
    assert "resourceVersion" not in meta


def test_history_replays_and_expires():
    store = Store(["pods"], history_limit=2)
    table = store.table("pods")
    start = store.rv  # 1: a fresh store can replay from its first version
    for name in ("a", "b", "c"):
        store.commit(table, _obj(name))  # rv 2, 3, 4; the history keeps the last two
    assert [e.rv for e in table.since(2)] == [3, 4]
    # Go: "too old resource version: X (oldest - 1)" with oldest = 3.
    with pytest.raises(TooOld, match=r"too old resource version: 1 \(2\)"):
        table.since(start)


def test_reset_history_makes_every_earlier_version_too_old():
    store = Store(["pods"], history_limit=10)
    table = store.table("pods")
    store.commit(table, _obj("a"))
    store.reset_history()
    with pytest.raises(TooOld):
        table.since(store.rv - 1)
    assert table.since(store.rv) == []


def test_deletion_event_carries_a_new_version_and_the_previous_state():
    store = Store(["pods"], history_limit=10)
    table = store.table("pods")
    created = store.commit(table, _obj("a"))
    removed = store.remove(table, created.key)
    (_, event) = table.since(1)
    assert event.type == "DELETED"
    assert event.rv == created.rv + 1
    assert event.prev is created
    # what v1.37 answers a DELETE with: the final object at the removal's version
    assert event.entry is removed
    assert removed.obj["metadata"]["resourceVersion"] == str(created.rv + 1)


def test_keys_in_a_namespace_are_sorted():
    store = Store(["pods"], history_limit=10)
    table = store.table("pods")
    for namespace, name in (("b", "x"), ("a", "z"), ("a", "y"), ("ab", "w")):
        store.commit(table, {"metadata": {"name": name, "namespace": namespace}})
    assert table.keys_in("a") == ["a/y", "a/z"]
    assert table.keys_in(None) == ["a/y", "a/z", "ab/w", "b/x"]
    assert table.keys_in("a", start="a/z") == ["a/z"]
