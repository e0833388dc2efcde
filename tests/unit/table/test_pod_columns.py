"""Pods as columns: selectors over all pods at once, counts per topology domain."""

from __future__ import annotations

import numpy as np

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import Requirement
from asched.cluster.table import NodeTable
from asched.tools.bench import templates


def pod(name: str, namespace: str = "default", **labels: str):
    raw = templates.pod(name, namespace=namespace)
    raw["metadata"]["labels"] = labels
    return decode_pod(raw)


def table_with_zones() -> NodeTable:
    table = NodeTable()
    for name, zone in [("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c")]:
        table.upsert_node(decode_node(templates.node(name, zone=zone)))
    return table


def test_selector_and_domain_counts() -> None:
    table = table_with_zones()
    table.add_pod(pod("w1", app="web"), "a1")
    table.add_pod(pod("w2", app="web"), "a2")
    table.add_pod(pod("w3", app="web"), "b1")
    table.add_pod(pod("d1", app="db"), "c1")
    table.add_pod(pod("w4", namespace="other", app="web"), "c1")
    columns = table.pod_columns
    web = columns.matching({"app": "web"}, (), namespaces={"default"})
    assert int(web.sum()) == 3  # w4 is in another namespace
    zone = table.labels.keys["topology.kubernetes.io/zone"]
    per_node, counted = columns.per_node_counts(web, zone.column, len(zone.values), table.size)
    # web pods in default: a1 and a2 in zone a (2), b1 in zone b (1), none in zone c;
    # every node reads its zone's count: a1 2, a2 2, b1 1, c1 0
    assert per_node.tolist() == [2, 2, 1, 0]
    assert counted == 3
    not_db = columns.matching({}, (Requirement("app", "NotIn", ("db",)),), namespaces=None)
    assert int(not_db.sum()) == 4  # w1, w2, w3, w4


def test_rows_follow_pod_removal_and_forget_exactly() -> None:
    table = table_with_zones()
    table.add_pod(pod("w1", app="web"), "a1")
    before = table.pod_columns.matching({"app": "web"}, ()).copy()
    table.add_pod(pod("w2", app="web"), "b1")
    table.remove_pod("default/w2")  # a forget after an assume
    after = table.pod_columns.matching({"app": "web"}, ())
    assert int(after.sum()) == int(before.sum()) == 1
    table.remove_node("a1")  # its pods wait as orphans: no longer counted anywhere
    assert int(table.pod_columns.matching({"app": "web"}, ()).sum()) == 0
    table.upsert_node(decode_node(templates.node("a1", zone="a")))
    assert int(table.pod_columns.matching({"app": "web"}, ()).sum()) == 1


def test_rows_are_reused_and_capacity_grows() -> None:
    table = table_with_zones()
    for index in range(200):
        table.add_pod(pod(f"p{index}", app="x"), "a1")
    for index in range(0, 200, 2):
        table.remove_pod(f"default/p{index}")
    size = table.pod_columns.size
    for index in range(100):
        table.add_pod(pod(f"q{index}", app="y"), "b1")
    assert table.pod_columns.size == size  # the freed rows were reused
    y = table.pod_columns.matching({"app": "y"}, ())
    assert int(y.sum()) == 100
    assert np.all(table.pod_columns.node_row[: table.pod_columns.size][y] == table.row_of("b1"))
