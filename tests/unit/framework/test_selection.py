"""Node sampling (section 2) and host selection (4.5), as upstream's schedule_one tests."""

from __future__ import annotations

import numpy as np
import pytest

from asched.benchmark import templates
from asched.cluster.decode import decode_node
from asched.cluster.table import NodeTable
from asched.framework import selection


@pytest.mark.parametrize(
    ("nodes", "percentage", "expected"),
    [
        pytest.param(10, 0, 10, id="fewer than 100 nodes: all"),
        pytest.param(99, 0, 99, id="99 nodes"),
        pytest.param(100, 0, 100, id="100 nodes"),
        # adaptive 50 - 500/125 = 46 %: 500 * 46 // 100 = 230
        pytest.param(500, 0, 230, id="500 nodes adaptive"),
        # 50 - 1000/125 = 42 %: 420
        pytest.param(1000, 0, 420, id="1000 nodes adaptive"),
        # 50 - 5000/125 = 10 %: 500
        pytest.param(5000, 0, 500, id="5000 nodes adaptive"),
        # 50 - 6000/125 = 2 -> floored at 5 %: 300
        pytest.param(6000, 0, 300, id="6000 nodes floored at 5 percent"),
        pytest.param(10000, 0, 500, id="10000 nodes"),
        pytest.param(1000, 40, 400, id="explicit 40 percent"),
        pytest.param(6000, 40, 2400, id="explicit 40 percent of 6000"),
        # 1000 * 1 // 100 = 10, raised to the minimum of 100
        pytest.param(1000, 1, 100, id="explicit 1 percent raised to 100"),
        pytest.param(1000, 100, 1000, id="100 percent"),
    ],
)
def test_num_feasible_nodes_to_find(nodes: int, percentage: int, expected: int) -> None:
    assert selection.num_feasible_nodes_to_find(nodes, percentage) == expected


def table_with(n: int) -> NodeTable:
    table = NodeTable()
    for index in range(n):
        table.upsert_node(decode_node(templates.node(f"n{index}", zone=f"z{index % 3}")))
    return table


def test_fair_evaluation_start_index_advances_by_nodes_to_find() -> None:
    # TestFairEvaluationForNodes: 500 nodes, all feasible, 230 to find per attempt:
    # the start index moves 230 each time, modulo 500.
    table = table_with(500)
    sampler = selection.Sampler()
    feasible = np.ones(table.size, dtype=np.bool_)
    for attempt in range(1, 5):
        sample = sampler.sample(table, feasible, 230)
        assert sample.count == 230
        assert sample.examined == 230
        assert sampler.start == (230 * attempt) % 500


def test_sample_takes_first_feasible_in_node_order_from_start() -> None:
    table = table_with(300)
    order = table.order()
    feasible = np.zeros(table.size, dtype=np.bool_)
    feasible[order[::2]] = True  # every other node in order: 150 feasible
    sampler = selection.Sampler()
    sample = sampler.sample(table, feasible, 100)
    expected = set(order[::2][:100].tolist())
    assert set(np.flatnonzero(sample.mask).tolist()) == expected
    # the 100th feasible node sits at position 198 of the order: 199 examined
    assert sample.examined == 199
    assert sampler.start == 199


def test_sample_keeps_all_when_fewer_feasible_than_wanted() -> None:
    table = table_with(200)
    feasible = np.zeros(table.size, dtype=np.bool_)
    feasible[:50] = True
    sampler = selection.Sampler()
    sample = sampler.sample(table, feasible, 100)
    assert sample.count == 50
    assert sampler.start == 0  # all nodes examined: (0 + 200) % 200


def test_select_host_is_uniform_among_ties() -> None:
    totals = np.array([5, 9, 9, 1, 9], dtype=np.int64)
    candidates = np.array([True, True, True, True, False])
    rng = np.random.default_rng(0)
    picks = [selection.select_host(totals, candidates, rng)[0] for _ in range(2000)]
    counts = np.bincount(picks, minlength=5)
    assert counts[0] == counts[3] == counts[4] == 0  # not top, or not a candidate
    # rows 1 and 2 tie; each near 1000 of 2000 (binomial sd ~ 22)
    assert 850 < counts[1] < 1150
    assert counts[1] + counts[2] == 2000
