"""Node sampling (numFeasibleNodesToFind) and host selection (selectHost), as upstream's schedule_one tests."""

from __future__ import annotations

import numpy as np

from asched.cluster.decode import decode_node
from asched.cluster.table import NodeTable
from asched.engine import selection
from asched.tools.bench import templates

# num_feasible_nodes_to_find's table runs against both implementations in
# tests/unit/plugins/test_framework_helpers.py.


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
