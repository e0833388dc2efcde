"""The equivalence-class cache never changes an answer.

A long random history of node and pod changes is applied to one table; after every
change an Algorithm that reuses its class cache and a fresh one that computes every row
from scratch must agree on which rows are feasible and on every score total, and the
chosen node must be one the explain engine (differential-tested against the scalar
reference) lists among the top nodes.
"""

from __future__ import annotations

import numpy as np
import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.engine.algorithm import Algorithm
from asched.explain.engine import evaluate_table
from asched.framework.cycle_state import CycleState
from asched.framework.runtime import Framework
from asched.tools.bench import templates
from tests.configs import default_config

SHAPES = [("100m", "500Mi"), ("1", "2Gi"), ("250m", "64Mi"), ("3", "20Gi")]


def random_node(rng: np.random.Generator, name: str) -> dict:
    raw = templates.node(
        name,
        zone=f"z{rng.integers(3)}",
        cpu=str(int(rng.integers(2, 9))),
        memory=f"{int(rng.integers(4, 65))}Gi",
        pods=str(int(rng.integers(3, 111))),
    )
    if rng.random() < 0.2:
        raw["spec"]["taints"] = [{"key": "soft", "value": "x", "effect": "PreferNoSchedule"}]
    if rng.random() < 0.1:
        raw["spec"]["unschedulable"] = True
    return raw


def all_totals(algorithm: Algorithm, pod) -> tuple[np.ndarray, np.ndarray]:
    state = CycleState()
    algorithm.framework.run_pre_filter(state, pod, algorithm.table)
    algorithm.framework.run_pre_score(state, pod, algorithm.table)
    entry = algorithm._class_entry(state, pod)
    return entry.feasible.copy(), algorithm.totals(state, pod, entry, entry.feasible)


@pytest.mark.parametrize("seed", range(6))
def test_cached_and_fresh_agree_through_random_history(seed: int) -> None:
    rng = np.random.default_rng(seed)
    profile = default_config().profiles[0]
    table = NodeTable(capacity=4)
    cached = Algorithm(Framework(profile), table, percentage=100, seed=seed)
    placed: list[str] = []
    for index in range(12):
        table.upsert_node(decode_node(random_node(rng, f"n{index}")))
    for step in range(150):
        action = rng.random()
        if action < 0.08:
            table.upsert_node(decode_node(random_node(rng, f"n{int(rng.integers(16))}")))
        elif action < 0.12 and table.n_nodes > 3:
            table.remove_node(table.name_of(int(rng.choice(table.order()))))
        elif action < 0.3 and placed:
            table.remove_pod(placed.pop(int(rng.integers(len(placed)))))
        cpu, memory = SHAPES[int(rng.integers(len(SHAPES)))]
        pod = decode_pod(templates.pod(f"p{step}", cpu=cpu, memory=memory))
        fresh = Algorithm(Framework(profile), table, percentage=100, seed=seed)
        feasible_c, totals_c = all_totals(cached, pod)
        feasible_f, totals_f = all_totals(fresh, pod)
        np.testing.assert_array_equal(feasible_c, feasible_f)
        np.testing.assert_array_equal(totals_c[feasible_c], totals_f[feasible_f])
        decision = cached.schedule(pod)
        evaluation = evaluate_table(table, pod, profile)
        if decision.node is None:
            assert evaluation.selected is None
            # the message the scheduler posts carries preemption's verdict too
            preempted = evaluation.preemption.message if evaluation.preemption else ""
            assert decision.message(post_filter=preempted) == evaluation.message
        else:
            assert decision.node in evaluation.top
            table.add_pod(pod, decision.node)
            placed.append(pod.key)
    assert cached.cache.hits > 0  # the incremental path was exercised
