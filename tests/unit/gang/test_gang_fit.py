"""Whole-gang feasibility (asched.gangs.fit.py): members placed tentatively, shape by shape.

Nodes are 4 CPU (4000m), 8Gi, 110 pods unless a case says otherwise; members ask for
CPU only unless stated. Every expected count is worked out in the case's comment.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.framework.resource_fit import ResourceNeed, resource_checks
from asched.gangs.fit import Shape, place_gang


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110") -> Any:
    return decode_node(
        {
            "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}},
        }
    )


def pod(name: str, cpu: str, memory: str = "0") -> Any:
    requests = {"cpu": cpu}
    if memory != "0":
        requests["memory"] = memory
    return decode_pod(
        {
            "metadata": {"name": name, "namespace": "ns", "uid": name},
            "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]},
        }
    )


def table_of(nodes: list[Any], used: dict[str, str] | None = None) -> NodeTable:
    table = NodeTable(capacity=8)
    for info in nodes:
        table.upsert_node(info)
    for i, (where, cpu) in enumerate((used or {}).items()):
        table.add_pod(pod(f"used-{i}", cpu), where)
    return table


def shape(table: NodeTable, name: str, cpu: str, count: int, memory: str = "0") -> Shape:
    member = pod(name, cpu, memory)
    need = ResourceNeed.of(table, resource_checks(member, table, lambda _r: False))
    allowed = np.ones(table.size, dtype=np.bool_)
    return Shape(name, need, count, allowed)


@pytest.mark.parametrize(
    ("nodes", "used", "members", "fits", "placed"),
    [
        # 3 nodes x floor(4000 / 1000) = 12 copies of a 1-CPU worker: 12 fit, 13 do not
        pytest.param(3, {}, [("w", "1", 12)], True, {"w": 12}, id="exactly full"),
        pytest.param(3, {}, [("w", "1", 13)], False, {"w": 12}, id="one member too many"),
        # 2.5 CPU used on n0: n0 fits floor(1500 / 1000) = 1, n1 and n2 4 each: 9 in all
        pytest.param(3, {"n0": "2500m"}, [("w", "1", 9)], True, {"w": 9}, id="used room"),
        pytest.param(3, {"n0": "2500m"}, [("w", "1", 10)], False, {"w": 9}, id="used short"),
        # heterogeneous: a 3-CPU launcher goes first (largest share 3000 / 4000), leaving
        # 1 CPU on its node; 4 workers of 1 CPU: 1 there + 4 on n1 = fits (5 possible)
        pytest.param(
            2,
            {},
            [("worker", "1", 4), ("launcher", "3", 1)],
            True,
            {"worker": 4, "launcher": 1},
            id="launcher placed first, workers around it",
        ),
        # two 3-CPU launchers on 2 nodes leave 1 CPU each: 2 workers fit, not 3
        pytest.param(
            2,
            {},
            [("worker", "1", 3), ("launcher", "3", 2)],
            False,
            {"worker": 2, "launcher": 2},
            id="heterogeneous gang one worker short",
        ),
        # 4 CPU is a whole node: 2 nodes hold 2, the third member finds no room
        pytest.param(2, {}, [("big", "4", 3)], False, {"big": 2}, id="whole-node members"),
    ],
)
def test_place_gang(
    nodes: int,
    used: dict[str, str],
    members: list[tuple[str, str, int]],
    fits: bool,
    placed: dict[str, int],
) -> None:
    table = table_of([node(f"n{i}") for i in range(nodes)], used)
    result = place_gang(table, [shape(table, name, cpu, count) for name, cpu, count in members])
    assert result.fits is fits
    assert dict(result.placed) == placed
    # the tentative placement never over-commits a row: copies x request <= free
    for name, _cpu, _count in members:
        assert (result.rows[name] >= 0).all()
    total_cpu = sum(result.rows[n] * int(float(c) * 1000) for n, c, _ in members)
    free_cpu = table.free_of("cpu")[: table.size]
    assert (total_cpu <= free_cpu).all()


def test_the_pod_count_limits_too() -> None:
    # pods: 3 per node; 2 nodes; tiny members (10m): 2 x 3 = 6 fit, the 7th does not
    table = table_of([node("a", pods="3"), node("b", pods="3")])
    assert place_gang(table, [shape(table, "w", "10m", 6)]).fits
    result = place_gang(table, [shape(table, "w", "10m", 7)])
    assert (result.fits, result.short) == (False, 1)


def test_rows_other_filters_reject_are_not_used() -> None:
    # 3 nodes of 4 copies, but only n1 is allowed: 4 fit there, a 5th does not
    table = table_of([node(f"n{i}") for i in range(3)])
    member = shape(table, "w", "1", 5)
    allowed = np.zeros(table.size, dtype=np.bool_)
    allowed[table.row_of("n1")] = True
    result = place_gang(table, [Shape("w", member.need, 5, allowed)])
    assert (result.fits, result.placed["w"]) == (False, 4)
    assert int(result.rows["w"][table.row_of("n1")]) == 4


def test_a_removed_node_holds_nobody() -> None:
    # n1 removed: its row is dead; 4 copies on n0 only
    table = table_of([node("n0"), node("n1")])
    table.remove_node("n1")
    result = place_gang(table, [shape(table, "w", "1", 5)])
    assert (result.fits, result.placed["w"]) == (False, 4)


def test_a_resource_no_node_has_fits_nowhere() -> None:
    table = table_of([node("n0")])
    member = decode_pod(
        {
            "metadata": {"name": "g", "namespace": "ns", "uid": "g"},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}]
            },
        }
    )
    need = ResourceNeed.of(table, resource_checks(member, table, lambda _r: False))
    result = place_gang(table, [Shape("g", need, 1, np.ones(table.size, dtype=np.bool_))])
    assert (result.fits, result.placed["g"]) == (False, 0)


def test_the_table_is_not_changed() -> None:
    table = table_of([node("n0"), node("n1")], {"n0": "1"})
    before = [column.copy() for column in table.free]
    place_gang(table, [shape(table, "w", "1", 5)])
    assert all((a == b).all() for a, b in zip(before, table.free, strict=True))


def test_rows_of_clamped_amounts_do_not_wrap_the_running_total() -> None:
    # 2,048 nodes allowing 2**53 - 1 pods each: copies per row are capped at the count
    # wanted (5), so the running total is at most 2,048 x 5, not ~2**64 (which would wrap)
    table = NodeTable(capacity=2048)
    for index in range(2048):
        table.upsert_node(node(f"n{index}", cpu="99999999999999", pods="999999Pi"))
    result = place_gang(table, [shape(table, "w", "1m", 5)])
    assert (result.fits, result.placed["w"]) == (True, 5)
    assert int(result.rows["w"].sum()) == 5
