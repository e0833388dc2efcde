"""A relist of nodes or pods handed over page by page (asched.api.watch.PAGED).

Each page is applied as it comes, so a big cluster's parsed JSON is never all held at
once; what no page of the list held is removed once the last page is in. A whole set
(first and last at once) behaves as before. Tables: the state before, the pages, the
nodes and pods counted after each page.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_node, make_pod

from asched.api.watch import Relisted
from asched.cluster.table import NodeTable
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.ingest import Ingest
from asched.scheduler.ledger import Ledger

OURS = "asched"


def build() -> Ingest:
    table = NodeTable()
    return Ingest(table, Ledger(table), SchedulingQueue(clock=lambda: 0.0), {OURS})


def bound(name: str, node: str) -> dict[str, Any]:
    raw = make_pod(name, cpu="1", memory="1Gi")
    raw["spec"]["nodeName"] = node
    return raw


def pending(name: str) -> dict[str, Any]:
    raw = make_pod(name, cpu="1", memory="1Gi")
    raw["spec"]["schedulerName"] = OURS
    return raw


def pages(kind: str, *groups: list[dict[str, Any]]) -> list[Relisted]:
    last = len(groups) - 1
    return [
        Relisted(kind, objects, first=index == 0, last=index == last)
        for index, objects in enumerate(groups)
    ]


def state(ingest: Ingest) -> tuple[list[str], list[str], list[str]]:
    """Node names, bound pod keys, pending pod keys (sorted)."""
    return (
        sorted(ingest.table.index),
        sorted(ingest.table.pods),
        sorted(ingest.pending),
    )


@pytest.mark.parametrize(
    ("before", "relist", "after_each"),
    [
        pytest.param(
            ["n1", "n2", "n3"],
            pages("nodes", [make_node("n1")], [make_node("n4")]),
            # n2 and n3 are still there after the first page: only the last one knows
            # the list did not hold them
            [["n1", "n2", "n3"], ["n1", "n4"]],
            id="nodes in two pages: the missing ones go with the last",
        ),
        pytest.param(
            ["n1", "n2"],
            pages("nodes", [make_node("n2"), make_node("n5")]),
            [["n2", "n5"]],
            id="nodes as one whole set",
        ),
        pytest.param(
            [],
            pages("nodes", [make_node("n1")], [], [make_node("n2")]),
            [["n1"], ["n1"], ["n1", "n2"]],
            id="an empty page in the middle",
        ),
    ],
)
def test_node_pages(before: list[str], relist: list[Relisted], after_each: list[list[str]]) -> None:
    ingest = build()
    ingest.apply(Relisted("nodes", [make_node(name) for name in before]))
    seen = []
    for page in relist:
        ingest.apply(page)
        seen.append(state(ingest)[0])
    assert seen == after_each


def test_pod_pages_remove_what_no_page_held() -> None:
    ingest = build()
    ingest.apply(Relisted("nodes", [make_node("n1")]))
    ingest.apply(
        Relisted("pods", [bound("old-bound", "n1"), bound("kept", "n1"), pending("old-pending")])
    )
    first, last = pages("pods", [bound("kept", "n1"), pending("new-pending")], [bound("new", "n1")])
    ingest.apply(first)
    # nothing is removed before the last page: old-bound may still be on a later one
    assert state(ingest)[1:] == (
        ["default/kept", "default/old-bound"],
        ["default/new-pending", "default/old-pending"],
    )
    ingest.apply(last)
    assert state(ingest)[1:] == (["default/kept", "default/new"], ["default/new-pending"])
    # the bound pods' requests are on n1 exactly once each: 2 pods x 1 cpu
    row = ingest.table.row_of("n1")
    assert row is not None
    assert int(ingest.table.requested[0][row]) == 2000


def test_a_list_started_again_forgets_the_pages_of_the_broken_one() -> None:
    # a list that failed after its first page starts again from a first page: the keys
    # of the broken list's pages do not count as held by the new one
    ingest = build()
    ingest.apply(Relisted("nodes", [make_node("n1"), make_node("n2")]))
    ingest.apply(Relisted("nodes", [make_node("n1"), make_node("n2")], first=True, last=False))
    for page in pages("nodes", [make_node("n1")], [make_node("n3")]):
        ingest.apply(page)
    assert state(ingest)[0] == ["n1", "n3"]
