"""NodeTable: O(1) row updates, exact pod accounting, free-list reuse, zone order."""

from __future__ import annotations

import numpy as np
import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.node_tree import zone_key
from asched.cluster.records import HostPort
from asched.cluster.table import NodeTable
from asched.tools.bench import templates


def node(name: str, zone: str = "z0", **kwargs: str):
    return decode_node(templates.node(name, zone=zone, **kwargs))


def pod(name: str, cpu: str = "100m", memory: str = "500Mi"):
    return decode_pod(templates.pod(name, cpu=cpu, memory=memory))


def snapshot_of(table: NodeTable) -> dict[str, np.ndarray]:
    cols = {f"alloc{a}": table.allocatable[a].copy() for a in range(len(table.axes))}
    cols |= {f"req{a}": table.requested[a].copy() for a in range(len(table.axes))}
    cols |= {f"free{a}": table.free[a].copy() for a in range(len(table.axes))}
    cols["nz_cpu"] = table.nonzero_cpu.copy()
    cols["nz_mem"] = table.nonzero_memory.copy()
    return cols


def test_add_then_remove_pod_restores_row_exactly() -> None:
    table = NodeTable()
    table.upsert_node(node("n1"))
    before = snapshot_of(table)
    # 250m cpu + 300Mi: requested cpu 250, nonzero cpu 250; pods column +1
    assert table.add_pod(pod("p", cpu="250m", memory="300Mi"), "n1")
    row = table.row_of("n1")
    cpu = table.axis_index["cpu"]
    assert table.requested[cpu][row] == 250
    assert table.free[cpu][row] == 4000 - 250
    assert table.requested[table.axis_index["pods"]][row] == 1
    table.remove_pod("default/p")
    after = snapshot_of(table)
    for key, column in before.items():
        np.testing.assert_array_equal(after[key], column, err_msg=key)


def test_capacity_doubles_and_rows_are_reused() -> None:
    table = NodeTable(capacity=2)
    for index in range(5):
        table.upsert_node(node(f"n{index}"))
    assert table.capacity == 8  # 2 -> 4 -> 8
    assert table.size == 5
    row = table.row_of("n2")
    table.remove_node("n2")
    assert not table.alive[row]
    table.upsert_node(node("n9"))
    assert table.row_of("n9") == row  # the free list gave the row back
    assert table.size == 5
    assert table.n_nodes == 5


def test_update_changes_the_row_in_place() -> None:
    table = NodeTable()
    table.upsert_node(node("n1"))
    table.add_pod(pod("p", cpu="1"), "n1")
    epoch = table.epoch
    table.upsert_node(node("n1", cpu="8"))
    cpu = table.axis_index["cpu"]
    row = table.row_of("n1")
    # allocatable 8000m, requested 1000m: free 7000m; the pod stays counted
    assert table.free[cpu][row] == 7000
    assert table.epoch == epoch  # no structural change: caches reuse, the row is logged
    assert table.changed_rows_since(table.change_mark - 1) == [row]


def test_pod_on_unknown_node_waits_as_orphan() -> None:
    table = NodeTable()
    assert not table.add_pod(pod("p", cpu="1"), "later")
    table.upsert_node(node("later"))
    cpu = table.axis_index["cpu"]
    assert table.requested[cpu][table.row_of("later")] == 1000


def test_removing_a_node_keeps_its_pods_for_its_return() -> None:
    table = NodeTable()
    table.upsert_node(node("n1"))
    table.add_pod(pod("p", cpu="1"), "n1")
    table.remove_node("n1")
    assert "default/p" not in table.pods
    table.upsert_node(node("n1"))
    assert table.requested[table.axis_index["cpu"]][table.row_of("n1")] == 1000


def test_extended_resource_axis_added_on_demand() -> None:
    table = NodeTable()
    raw = templates.node("gpu")
    raw["status"]["allocatable"]["nvidia.com/gpu"] = "2"
    table.upsert_node(decode_node(raw))
    axis = table.axis_index["nvidia.com/gpu"]
    assert table.allocatable[axis][table.row_of("gpu")] == 2


def test_host_ports_counted_and_released() -> None:
    table = NodeTable()
    table.upsert_node(node("n1"))
    raw = templates.pod("web")
    raw["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    table.add_pod(decode_pod(raw), "n1")
    wanted = (HostPort("0.0.0.0", "TCP", 8080),)
    assert table.ports.conflicts(wanted, table.rows).tolist() == [True]
    table.remove_pod("default/web")
    assert table.ports.conflicts(wanted, table.rows).tolist() == [False]


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        pytest.param(
            [("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c"), ("b2", "b")],
            ["a1", "b1", "c1", "a2", "b2"],
            id="round robin over zones in first-seen order",
        ),
        pytest.param(
            [("x", "z"), ("y", "z"), ("w", "z")],
            ["x", "y", "w"],
            id="one zone keeps insertion order",
        ),
    ],
)
def test_zone_interleaved_order(nodes: list[tuple[str, str]], expected: list[str]) -> None:
    table = NodeTable()
    for name, zone in nodes:
        table.upsert_node(node(name, zone=zone))
    assert [table.name_of(int(r)) for r in table.order()] == expected


def test_zone_key_uses_region_and_zone() -> None:
    assert zone_key({}) == ""
    assert zone_key({"topology.kubernetes.io/zone": "z"}) == ":\x00:z"
    assert zone_key({"failure-domain.beta.kubernetes.io/region": "r"}) == "r:\x00:"
