"""NodeTable.annotation_values: one column per key, refreshed only where a node changed.

Each node's annotations are a :class:`Counting` map, so a test sees how many nodes a call
read: the first call for a key reads every live node, a later one only the nodes added,
updated or removed since (pods counted on a node change nothing), and a call for another
key starts its own column.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import ClassVar

import numpy as np
import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import NodeInfo
from asched.cluster.table import NodeTable
from asched.tools.bench import templates

KEY = "example.com/maintenance"


class Counting(Mapping[str, str]):
    """Annotations that count the lookups made through them (in ``reads``)."""

    reads: ClassVar[list[str]] = []

    def __init__(self, node: str, values: Mapping[str, str]) -> None:
        self.node = node
        self.values = dict(values)

    def __getitem__(self, key: str) -> str:
        Counting.reads.append(self.node)
        return self.values[key]

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        Counting.reads.append(self.node)
        return self.values.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


def node(name: str) -> NodeInfo:
    return replace(decode_node(templates.node(name)), annotations=Counting(name, {}))


def maintained(name: str, value: str) -> NodeInfo:
    return replace(decode_node(templates.node(name)), annotations=Counting(name, {KEY: value}))


def reads(table: NodeTable, key: str = KEY) -> tuple[list[object], list[str]]:
    """The column for ``key`` as a list, and the nodes read to answer it."""
    Counting.reads = []
    values = table.annotation_values(key)
    assert values.dtype == np.object_
    assert values.shape == (table.size,)
    assert not values.flags.writeable
    return values.tolist(), sorted(Counting.reads)


@pytest.fixture
def table() -> NodeTable:
    table = NodeTable()
    table.upsert_node(maintained("a", "true"))
    table.upsert_node(node("b"))
    table.upsert_node(maintained("c", "false"))
    return table


def test_the_first_call_reads_every_node_then_only_what_changed(table: NodeTable) -> None:
    assert reads(table) == (["true", None, "false"], ["a", "b", "c"])
    assert reads(table) == (["true", None, "false"], [])  # nothing changed: nothing read

    table.upsert_node(maintained("b", "true"))  # b goes into maintenance: b read again
    assert reads(table) == (["true", "true", "false"], ["b"])

    pod = decode_pod(templates.pod("p"))
    table.add_pod(pod, "a")  # a pod counted (row a touched): no node changed
    table.remove_pod(pod.key)
    assert reads(table) == (["true", "true", "false"], [])

    table.remove_node("a")  # a dead row reads None, without a node to read
    assert reads(table) == ([None, "true", "false"], [])
    table.remove_node("c")
    table.upsert_node(maintained("d", "false"))  # d takes c's free row 2 (removed, added:
    assert table.row_of("d") == 2  # two changes of one row, read once)
    assert reads(table) == ([None, "true", "false"], ["d"])


def test_each_key_has_its_own_column(table: NodeTable) -> None:
    assert reads(table) == (["true", None, "false"], ["a", "b", "c"])
    assert reads(table, "example.com/other") == ([None, None, None], ["a", "b", "c"])
    table.upsert_node(maintained("c", "true"))
    assert reads(table) == (["true", None, "true"], ["c"])
    assert reads(table, "example.com/other") == ([None, None, None], ["c"])


def test_a_column_grows_with_the_table() -> None:
    table = NodeTable(capacity=2)
    table.upsert_node(maintained("n0", "0"))
    assert reads(table) == (["0"], ["n0"])
    for index in range(1, 5):  # capacity 2 -> 4 -> 8
        table.upsert_node(maintained(f"n{index}", str(index)))
    assert table.capacity == 8
    assert reads(table) == (["0", "1", "2", "3", "4"], ["n1", "n2", "n3", "n4"])


def test_past_the_change_log_the_column_is_rebuilt(table: NodeTable) -> None:
    assert reads(table)[1] == ["a", "b", "c"]
    for value in range(300):  # the node log keeps 4 * max(size, 64) = 256 changes
        table.upsert_node(maintained("b", str(value)))
    assert reads(table) == (["true", "299", "false"], ["a", "b", "c"])


def test_a_column_read_before_a_change_sees_it(table: NodeTable) -> None:
    before = table.annotation_values(KEY)
    table.upsert_node(maintained("a", "false"))
    assert table.annotation_values(KEY).tolist() == ["false", None, "false"]
    assert before.tolist() == ["false", None, "false"]  # a view of the live column
    with pytest.raises(ValueError, match="read-only"):
        before[0] = "true"


def test_nodes_decoded_without_annotations_read_none() -> None:
    table = NodeTable()
    raw = templates.node("a")
    raw["metadata"]["annotations"] = {KEY: "true"}
    table.upsert_node(decode_node(raw))  # no plugin reads them: not decoded
    raw["metadata"]["name"] = "b"
    table.upsert_node(decode_node(raw, keep_annotations=True))
    assert table.annotation_values(KEY).tolist() == [None, "true"]
