"""Nominations: what nominated pods hold per node, summed as they come and go.

Pods: a (priority 10, 1 CPU) and b (priority 10, 500m) on n1; c (priority 100, 2 CPU) on
n2. CPU in millicores; "" counts pods.
"""

from __future__ import annotations

import pytest

from asched.cluster.decode import decode_pod
from asched.cluster.nominations import PODS_HELD, Nominations
from tests.builders import make_pod


def _pod(name: str, priority: int, cpu: str) -> object:
    return decode_pod(make_pod(name, cpu=cpu, priority=priority))


def _nominations() -> Nominations:
    found = Nominations()
    found.set(_pod("a", 10, "1"), "n1")
    found.set(_pod("b", 10, "500m"), "n1")
    found.set(_pod("c", 100, "2"), "n2")
    return found


@pytest.mark.parametrize(
    ("case", "incoming", "expected"),
    [
        # priority 5: every nomination counts: n1 = 1000 + 500, n2 = 2000
        ("lower priority sees all", ("x", 5), {"n1": (2, 1500), "n2": (1, 2000)}),
        # priority 10: a and b (equal) and c (higher) count
        ("equal priority counts", ("x", 10), {"n1": (2, 1500), "n2": (1, 2000)}),
        # priority 50: only c (100 >= 50)
        ("higher priority ignores lower", ("x", 50), {"n2": (1, 2000)}),
        # a itself: its own 1000m is not held against it: n1 = 500
        ("a pod's own nomination is left out", ("a", 10), {"n1": (1, 500), "n2": (1, 2000)}),
        # c itself: nothing else at 100 or above
        ("alone at its level", ("c", 100), {}),
    ],
)
def test_held_per_node(
    case: str, incoming: tuple[str, int], expected: dict[str, tuple[int, int]]
) -> None:
    nominations = _nominations()
    name, priority = incoming
    held = nominations.held(_pod(name, priority, "100m"))
    got = {node: (a[PODS_HELD], a["cpu"]) for node, a in held.items()}
    assert got == expected, case


def test_sums_follow_clears_and_moves_and_are_not_changed_by_reads() -> None:
    nominations = _nominations()
    nominations.held(_pod("a", 10, "1"))  # a read that leaves a out must not alter the sums
    nominations.clear("default/b")
    nominations.set(_pod("a", 10, "1"), "n2")  # a moves: n1 empties
    held = nominations.held(_pod("x", 0, "100m"))
    # n2 = a (1000) + c (2000); n1 gone
    assert {node: (a[PODS_HELD], a["cpu"]) for node, a in held.items()} == {"n2": (2, 3000)}
    nominations.clear("default/a")
    nominations.clear("default/c")
    assert nominations.held(_pod("x", 0, "100m")) == {}
    assert len(nominations) == 0


@pytest.mark.parametrize(
    ("case", "events", "expected"),
    [
        # after a restart the API's nomination is taken
        ("restored from the API", [("observe", "n1")], "n1"),
        # our newer nomination (patch pending) is not overwritten by an older event
        ("ours is newer", [("set", "n2"), ("observe", "n1")], "n2"),
        # superseded: an event still showing n1 does not bring it back...
        ("superseded stays cleared", [("set", "n1"), ("supersede", ""), ("observe", "n1")], ""),
        # ...until the API shows it cleared; then a later nomination is taken again
        (
            "superseded then cleared then nominated anew",
            [("set", "n1"), ("supersede", ""), ("observe", ""), ("observe", "n1")],
            "n1",
        ),
        # bound or deleted: gone, with no record left
        ("forgotten", [("set", "n1"), ("supersede", ""), ("forget", ""), ("observe", "n1")], "n1"),
    ],
)
def test_nominations_follow_the_api_without_going_back(
    case: str, events: list[tuple[str, str]], expected: str
) -> None:
    nominations = Nominations()
    for action, node in events:
        pod = decode_pod(
            {**make_pod("p", cpu="1", priority=10), "status": {"nominatedNodeName": node}}
        )
        if action == "set":
            nominations.set(pod, node)
        elif action == "observe":
            nominations.observed(pod)
        elif action == "supersede":
            nominations.supersede(pod.key)
        else:
            nominations.forget(pod.key)
    assert nominations.node_of("default/p") == expected, case
