"""NodeTable.what_if: a decision's what-ifs leave the table as they found it, and no trace.

Nodes n1 and n2, 4 CPU / 8Gi and 10 pods each. On n1: "web" (1 CPU, port 80) and "db"
(2 CPU, with a required anti-affinity term, so not a plain pod). A what-if takes pods off
and counts others; when it closes, every column and index is as before, and the table's
``generation``, ``shared_generation`` and change log never moved. While it is open the
filters see its changes, and the table's own mutators refuse to run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.cluster.what_if import WhatIf
from tests.builders import make_node, make_pod

ANTI = {
    "requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
    ]
}


def _pod(name: str, cpu: str, *, port: int | None = None, anti: bool = False) -> PodInfo:
    return decode_pod(
        make_pod(
            name,
            cpu=cpu,
            labels={"app": name},
            host_ports=() if port is None else (port,),
            pod_anti_affinity=ANTI if anti else None,
        )
    )


def _table() -> NodeTable:
    table = NodeTable()
    for name in ("n1", "n2"):
        table.upsert_node(decode_node(make_node(name, cpu="4", memory="8Gi", pods="10")))
    table.add_pod(_pod("web", "1", port=80), "n1")
    table.add_pod(_pod("db", "2", anti=True), "n1")
    return table


def _picture(table: NodeTable) -> dict[str, Any]:
    """Everything a filter can read of the pods counted, as plain values."""
    rows = table.rows
    return {
        "requested": [c[rows].tolist() for c in table.requested],
        "free": [c[rows].tolist() for c in table.free],
        "nonzero": (table.nonzero_cpu[rows].tolist(), table.nonzero_memory[rows].tolist()),
        "ports": {k: v[rows].tolist() for k, v in table.ports.columns.items()},
        "pods": {k: (p.row, p.deltas) for k, p in table.pods.items()},
        "row_pods": [sorted(d) for d in table.row_pods[: table.size]],
        "pod_keys": sorted(table.pod_columns.index),
        "groups": {
            kind: {key: sorted(members.values()) for key, members in groups.items()}
            for kind, groups in table.pod_columns.term_groups.items()
        },
    }


def _marks(table: NodeTable) -> tuple[int, int, int, int]:
    return table.generation, table.shared_generation, table.change_mark, table.epoch


Change = Callable[[NodeTable, WhatIf], None]


def _remove_web(table: NodeTable, w: WhatIf) -> None:
    w.remove_pod("default/web")


def _remove_both_and_put_one_back(table: NodeTable, w: WhatIf) -> None:
    web = w.remove_pod("default/web")
    w.remove_pod("default/db")
    assert web is not None
    w.add_pod(web, "n1")


def _count_new_on_n2(table: NodeTable, w: WhatIf) -> None:
    w.add_pod(_pod("nominee", "3", port=80), "n2")


def _move_db_to_n2(table: NodeTable, w: WhatIf) -> None:
    # counting a counted pod elsewhere replaces where it is counted
    w.add_pod(_pod("db", "2", anti=True), "n2")


def _nested(table: NodeTable, w: WhatIf) -> None:
    w.remove_pod("default/web")
    with table.what_if() as inner:
        inner.add_pod(_pod("nominee", "3"), "n1")
        inner.remove_pod("default/db")
    w.add_pod(_pod("other", "1"), "n2")


@pytest.mark.parametrize(
    ("case", "change"),
    [
        ("one pod taken off", _remove_web),
        ("two off, one put back", _remove_both_and_put_one_back),
        ("a pod counted that was not", _count_new_on_n2),
        ("a counted pod moved to another node", _move_db_to_n2),
        ("what-ifs nested", _nested),
    ],
)
def test_a_what_if_leaves_the_table_as_it_found_it(case: str, change: Change) -> None:
    table = _table()
    before, marks = _picture(table), _marks(table)
    with table.what_if() as scratch:
        change(table, scratch)
        assert _marks(table) == marks, case  # no trace while open either
    assert _picture(table) == before, case
    assert _marks(table) == marks, case
    assert table.what_ifs_open == 0


def test_the_filters_see_the_changes_while_it_is_open() -> None:
    table = _table()
    cpu = table.axis_index["cpu"]
    with table.what_if() as scratch:
        scratch.remove_pod("default/db")
        # n1: 4000m - 1000m (web) = 3000m free once db (2000m) is off
        assert table.free[cpu][table.index["n1"]] == 3000
        assert "default/db" not in table.pod_columns.index
        scratch.add_pod(_pod("nominee", "3", port=80), "n2")
        # n2: 4000m - 3000m = 1000m, and its host port 80 taken
        assert table.free[cpu][table.index["n2"]] == 1000
        assert sum(int(c[table.index["n2"]]) for c in table.ports.columns.values()) == 1
    # after: n1 4000 - 1000 - 2000 = 1000m, n2 untouched
    assert table.free[cpu][table.index["n1"]] == 1000
    assert table.free[cpu][table.index["n2"]] == 4000


@pytest.mark.parametrize(
    ("case", "mutate"),
    [
        ("ingest counts a pod", lambda t: t.add_pod(_pod("late", "1"), "n2")),
        ("the ledger forgets a pod", lambda t: t.remove_pod("default/web")),
        ("a node is updated", lambda t: t.upsert_node(decode_node(make_node("n2", cpu="8")))),
        ("a node is deleted", lambda t: t.remove_node("n2")),
    ],
)
def test_the_mutators_refuse_while_a_what_if_is_open(
    case: str, mutate: Callable[[NodeTable], object]
) -> None:
    table = _table()
    before = _picture(table)
    with table.what_if(), pytest.raises(RuntimeError, match="what-if is open"):
        mutate(table)
    assert _picture(table) == before, case
    mutate(table)  # closed: allowed again


def test_unknown_nodes_and_uncounted_pods_change_nothing() -> None:
    table = _table()
    table.add_pod(_pod("orphan", "1"), "gone")  # kept as an orphan of an unknown node
    before = _picture(table)
    with table.what_if() as scratch:
        assert scratch.add_pod(_pod("x", "1"), "nowhere") is False
        assert scratch.remove_pod("default/orphan") is None
        assert scratch.remove_pod("default/never") is None
    assert _picture(table) == before
    assert "default/orphan" in table.orphans["gone"]


def test_a_what_if_closes_when_its_block_raises() -> None:
    table = _table()
    before = _picture(table)
    scratch = table.what_if()

    def failing_question() -> None:
        with scratch:
            scratch.remove_pod("default/web")
            raise ValueError("a plugin failed")

    with pytest.raises(ValueError, match="a plugin failed"):
        failing_question()
    assert _picture(table) == before
    assert table.what_ifs_open == 0
    with pytest.raises(RuntimeError, match="outside its context"):
        scratch.remove_pod("default/db")


def test_columns_are_restored_bit_for_bit_under_random_changes() -> None:
    # 20 nodes and 60 pods; 200 random what-ifs of up to 6 changes each
    rng = np.random.default_rng(7)
    table = NodeTable()
    names = [f"n{i}" for i in range(20)]
    for name in names:
        table.upsert_node(decode_node(make_node(name, cpu="16", memory="32Gi", pods="50")))
    pods = [
        _pod(f"p{i}", f"{rng.integers(1, 9) * 100}m", port=8000 + i % 3 if i % 4 == 0 else None)
        for i in range(60)
    ]
    for pod in pods[:40]:
        table.add_pod(pod, names[int(rng.integers(20))])
    before, marks = _picture(table), _marks(table)
    for _ in range(200):
        with table.what_if() as scratch:
            for _ in range(int(rng.integers(1, 7))):
                pod = pods[int(rng.integers(60))]
                if rng.random() < 0.5:
                    scratch.remove_pod(pod.key)
                else:
                    scratch.add_pod(pod, names[int(rng.integers(20))])
        assert _picture(table) == before
        assert _marks(table) == marks
