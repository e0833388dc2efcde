"""Runs of one pod class choose exactly as a pass over the table does.

Two tables live through the same random history (nodes added, updated and deleted, pods
placed and removed, runs of identical pods, nodes filling up, taints and preferred
affinity that make scores normalize, pods with cross-row constraints in between). One
Algorithm keeps runs (:mod:`asched.engine.class_run`), the other makes the pass every
time; with the same seed they must place every pod on the same node, fail the same pods,
and leave their random generators in the same state (the same tie-break draws).
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.engine.algorithm import Algorithm
from asched.engine.class_run import RUN_ROWS, Normalized, Run
from asched.engine.equivalence import ClassEntry
from asched.engine.selection import pick
from asched.framework.interface import ScorePlugin
from asched.framework.runtime import Framework
from asched.tools.bench import templates
from tests.configs import default_config

# (cpu, memory): small shapes fill nodes slowly, the big one fills them in a few pods
SHAPES = [("100m", "500Mi"), ("100m", "500Mi"), ("1", "2Gi"), ("2", "12Gi")]


def _node(rng: np.random.Generator, name: str, *, varied: bool) -> dict[str, Any]:
    if not varied:  # identical nodes: every total ties, so every choice draws
        return templates.node(name, zone=f"z{rng.integers(3)}", cpu="4", memory="16Gi", pods="8")
    raw = templates.node(
        name,
        zone=f"z{rng.integers(3)}",
        cpu=str(int(rng.integers(2, 9))),
        memory=f"{int(rng.integers(4, 33))}Gi",
        pods=str(int(rng.integers(3, 20))),
    )
    if rng.random() < 0.3:
        raw["spec"]["taints"] = [{"key": "soft", "value": "x", "effect": "PreferNoSchedule"}]
    if rng.random() < 0.3:
        raw["metadata"]["labels"]["tier"] = str(rng.choice(["gold", "silver"]))
    return raw


def _pod(rng: np.random.Generator, name: str, shape: int, kind: int) -> dict[str, Any]:
    cpu, memory = SHAPES[shape]
    raw = templates.pod(name, cpu=cpu, memory=memory)
    if kind == 1:  # preferred affinity: NodeAffinity's score normalizes
        raw["spec"]["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 10,
                        "preference": {
                            "matchExpressions": [
                                {"key": "tier", "operator": "In", "values": ["gold"]}
                            ]
                        },
                    }
                ]
            }
        }
    elif kind == 2:  # a cross-row constraint: never in a run, and it interrupts one
        raw["spec"]["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "bench"}},
            }
        ]
    return raw


@pytest.mark.parametrize(
    ("seed", "varied"),
    [
        pytest.param(seed, varied, id=f"seed{seed}-{'varied' if varied else 'identical'}")
        for seed in range(5)
        for varied in (True, False)
    ],
)
def test_runs_choose_as_the_pass_does(seed: int, varied: bool) -> None:
    rng = np.random.default_rng(seed)
    profile = default_config().profiles[0]
    tables = (NodeTable(capacity=4), NodeTable(capacity=4))
    with_runs = Algorithm(Framework(profile), tables[0], percentage=100, seed=seed)
    passes = Algorithm(Framework(profile), tables[1], percentage=100, seed=seed, runs=False)
    placed: list[str] = []

    def both(change: str, *args: Any) -> None:
        for table in tables:
            getattr(table, change)(*copy.deepcopy(args))

    for index in range(16):
        both("upsert_node", decode_node(_node(rng, f"n{index}", varied=varied)))
    shape, kind, outcomes = 0, 0, []
    for step in range(400):
        action = rng.random()
        if action < 0.03:
            both("upsert_node", decode_node(_node(rng, f"n{rng.integers(20)}", varied=varied)))
        elif action < 0.05 and tables[0].n_nodes > 3:
            both("remove_node", tables[0].name_of(int(rng.choice(tables[0].order()))))
        elif action < 0.5 and placed:  # (often: the cluster stays short of full)
            both("remove_pod", placed.pop(int(rng.integers(len(placed)))))
        if rng.random() < 0.1:  # a new run: another shape or kind
            shape, kind = int(rng.integers(len(SHAPES))), int(rng.choice([0, 0, 1, 2]))
        pod = decode_pod(_pod(rng, f"p{step}", shape, kind))
        one, other = with_runs.schedule(pod), passes.schedule(pod)
        assert one.node == other.node, f"step {step}: {one.node} != {other.node}"
        assert one.status.code == other.status.code
        outcomes.append(one.node)
        if one.node is not None:
            both("add_pod", pod, one.node)
            placed.append(pod.key)
    # the same draws, in the same number
    assert with_runs.rng.integers(1 << 62) == passes.rng.integers(1 << 62)
    assert with_runs.run_steps > 30  # many choices came from runs ...
    assert with_runs.run_passes > 5  # ... and some runs had to be rebuilt
    assert passes.run_steps == 0
    assert outcomes.count(None) < len(outcomes)


def test_pods_that_all_differ_start_no_run() -> None:
    """A run starts at a class's second pass in a row: a stream of pods that all differ
    never pays for keeping one."""
    profile = default_config().profiles[0]
    table = NodeTable(capacity=4)
    for index in range(6):
        table.upsert_node(decode_node(templates.node(f"n{index}", zone="z0")))
    algorithm = Algorithm(Framework(profile), table, percentage=100, seed=0)
    for index in range(20):
        pod = decode_pod(templates.pod(f"p{index}", memory=str(500 * 2**20 + index)))
        decision = algorithm.schedule(pod)
        assert decision.node is not None
        table.add_pod(pod, decision.node)
    assert (algorithm.run_steps, algorithm.run_passes) == (0, 20)
    assert algorithm._run is None
    same = decode_pod(templates.pod("again", memory=str(500 * 2**20 + 19)))  # p19's class
    table.add_pod(same, algorithm.schedule(same).node or "")
    assert algorithm._run is not None  # its second pass in a row: the run starts


def _run(totals: list[int], mask: list[bool]) -> tuple[Run, ClassEntry]:
    """A run with no normalizing plugin over rows with these fixed totals."""
    entry = ClassEntry(0, 0, np.array(mask), fixed_total=np.array(totals, dtype=np.int64))
    chosen = np.array(totals)[np.array(mask)]
    best = int(chosen.max())
    top = np.flatnonzero((np.array(totals) == best) & np.array(mask)).tolist()
    run = Run(entry, 0, 0, np.array(mask), np.array(totals, dtype=np.int64), [], best, top)
    return run, entry


@pytest.mark.parametrize(
    ("totals", "mask", "row", "new_total", "new_fits", "expected"),
    [
        # rows 0..3 with totals 50, 70, 70, 20: the best is 70 on rows 1 and 2
        pytest.param([50, 70, 70, 20], [True] * 4, 1, 60, True, [2], id="best-row-drops"),
        pytest.param([50, 70, 70, 20], [True] * 4, 0, 70, True, [0, 1, 2], id="row-joins-best"),
        pytest.param([50, 70, 70, 20], [True] * 4, 2, 70, False, [1], id="best-row-stops-fitting"),
        # beyond the best: the best rows are found again among the kept totals
        pytest.param([50, 70, 70, 20], [True] * 4, 3, 71, True, [3], id="new-best"),
        # 71 beyond the best on a row that does not fit: not a candidate, nothing moves
        pytest.param([50, 70, 70, 20], [True] * 4, 3, 71, False, [1, 2], id="unfit-row-above"),
        # the only best row drops to 10: 50 on row 0 is the best now
        pytest.param([50, 70, 40, 20], [True] * 4, 1, 10, True, [0], id="best-set-empties"),
        pytest.param([50, 70, 40, 20], [True] * 4, 1, 10, False, [0], id="best-row-leaves"),
        pytest.param([50, 70, 70, 20], [True] * 4, 3, 30, True, [1, 2], id="other-row-moves"),
    ],
)
def test_advance_keeps_the_best_rows(
    totals: list[int],
    mask: list[bool],
    row: int,
    new_total: int,
    new_fits: bool,
    expected: list[int] | None,
) -> None:
    run, entry = _run(totals, mask)
    entry.fixed_total[row] = new_total
    entry.feasible[row] = new_fits
    advanced = run.advance(entry.feasible.copy(), [row, row])  # a row may be logged twice
    if expected is None:
        assert not advanced
    else:
        assert advanced
        assert run.top == expected
        assert int(run.totals[row]) == new_total


def test_many_changed_rows_go_back_to_the_pass() -> None:
    """More changed rows than RUN_ROWS: the vectorised pass rebuilds the run (no Python
    loop over a large part of the table)."""
    size = RUN_ROWS + 2
    run, entry = _run([50] * size, [True] * size)
    # RUN_ROWS + 1 distinct rows changed (one of them logged twice)
    assert not run.advance(entry.feasible.copy(), [*range(RUN_ROWS + 1), 0])
    run, entry = _run([50] * size, [True] * size)
    assert run.advance(entry.feasible.copy(), list(range(RUN_ROWS)))  # the limit itself


def test_a_total_wraps_as_the_pass_sums_it() -> None:
    """A normalized score off the rows taking part is unchecked: the pass's int64 sum
    wraps, and so does the run's (a Python int would not fit the totals array)."""
    top_of_int64 = np.iinfo(np.int64).max
    run, entry = _run([50, 70, 10], [True, True, False])
    plugin = cast("ScorePlugin", SimpleNamespace(name="Odd"))
    entry.raw["Odd"] = np.zeros(3, dtype=np.int64)
    scores = np.array([0, 0, 7], dtype=np.int64)  # 7 on the row that does not fit
    run.parts = [Normalized(plugin, 1, entry.raw["Odd"].copy(), scores)]
    entry.fixed_total[2] = top_of_int64
    assert run.advance(entry.feasible.copy(), [2])
    expected = (entry.fixed_total + scores)[2]  # NumPy's wrapped sum
    assert int(run.totals[2]) == int(expected) < 0
    assert run.top == [1]


@pytest.mark.parametrize(
    ("top", "draws"),
    [
        pytest.param([7], 0, id="one-row-no-draw"),
        pytest.param([1, 4, 9], 1, id="three-rows-one-draw"),
    ],
)
def test_pick_draws_only_among_several(top: list[int], draws: int) -> None:
    rng, reference = np.random.default_rng(3), np.random.default_rng(3)
    row = pick(np.array(top, dtype=np.intp), rng)
    expected = top[int(reference.integers(len(top)))] if draws else top[0]
    assert row == expected
    # the generators moved by the same number of draws
    if not draws:
        reference = np.random.default_rng(3)
    assert rng.integers(1 << 62) == reference.integers(1 << 62)
