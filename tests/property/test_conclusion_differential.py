"""Differential test: an extender conclusion re-filters only the rows the extenders
accepted, and must pick exactly what a full re-filter picks.

Hypothesis builds a small cluster (nodes in zones, with random cpu; bound pods labelled
``app=a`` or ``app=b``), an incoming pod with requests and, at random, a hard topology
spread constraint, a required anti-affinity or affinity (the cross-row Filters), and
some pods nominated to nodes (the nominated pods' check). The pod is decided as the
cycle decides it; then, as while its extenders are asked, other pods are assumed and
nodes deleted or added; then two identical Algorithms over the same table conclude: one
with the full unsampled re-filter AND the accepted rows (the conclusion before this
change), one with ``candidates(within=accepted)``. The candidates must be equal, and so
must the seeded choice with the same extender scores.

The run is derandomized so CI sees the same examples every time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.engine.algorithm import Algorithm
from asched.framework.runtime import Framework
from tests.builders import (
    affinity_term,
    default_profile,
    label_selector,
    make_node,
    make_pod,
    pod_affinity_rules,
    spread_constraint,
)

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
APPS = ("a", "b")


def _node(index: int, zone: int, cpu: int) -> Any:
    name = f"n{index}"
    return decode_node(
        make_node(name, cpu=str(cpu), labels={ZONE: f"z{zone}", HOSTNAME: name}, pods="20")
    )


def _pod(name: str, app: str, cpu: int, **fields: Any) -> Any:
    return decode_pod(make_pod(name, cpu=f"{cpu}00m", labels={"app": app}, **fields))


@st.composite
def _incoming(draw: st.DrawFn) -> Any:
    fields: dict[str, Any] = {}
    key = draw(st.sampled_from((ZONE, HOSTNAME)))
    if draw(st.booleans()):
        skew = draw(st.integers(1, 2))
        selector = label_selector({"app": "a"})
        fields["topology_spread"] = [spread_constraint(skew, key, "DoNotSchedule", selector)]
    kind = draw(st.sampled_from(("none", "anti", "affinity")))
    if kind != "none":
        other = draw(st.sampled_from(APPS))
        term = affinity_term(label_selector({"app": other}), key)
        rules = pod_affinity_rules(required=[term])
        fields["pod_anti_affinity" if kind == "anti" else "pod_affinity"] = rules
    return _pod("incoming", "a", draw(st.integers(1, 20)), **fields)


@st.composite
def _scenario(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(2, 9))
    nodes = [(draw(st.integers(0, 2)), draw(st.integers(1, 4))) for _ in range(n)]
    bound = draw(
        st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(APPS), st.integers(1, 10)))
    )
    nominated = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, 20)), max_size=3))
    meanwhile = draw(
        st.lists(
            st.one_of(
                st.tuples(
                    st.just("assume"),
                    st.integers(0, n - 1),
                    st.sampled_from(APPS),
                    st.integers(1, 20),
                ),
                st.tuples(st.just("delete"), st.integers(0, n - 1)),
                st.tuples(st.just("add"), st.integers(0, 2), st.integers(1, 4)),
            ),
            max_size=6,
        )
    )
    return {
        "nodes": nodes,
        "bound": bound,
        "nominated": nominated,
        "incoming": draw(_incoming()),
        "meanwhile": meanwhile,
        "accepted": draw(st.lists(st.booleans(), min_size=n + 6, max_size=n + 6)),
        "scores": draw(st.lists(st.integers(0, 10), min_size=n + 6, max_size=n + 6)),
        "seed": draw(st.integers(0, 3)),
    }


def _table(scenario: dict[str, Any]) -> NodeTable:
    table = NodeTable()
    for index, (zone, cpu) in enumerate(scenario["nodes"]):
        table.upsert_node(_node(index, zone, cpu))
    for i, (node, app, cpu) in enumerate(scenario["bound"]):
        table.add_pod(_pod(f"bound-{i}", app, cpu), f"n{node}")
    for i, (node, cpu) in enumerate(scenario["nominated"]):
        table.nominations.set(_pod(f"nominated-{i}", "b", cpu, priority=10), f"n{node}")
    return table


def _meanwhile(table: NodeTable, scenario: dict[str, Any]) -> None:
    added = len(scenario["nodes"])
    for i, step in enumerate(scenario["meanwhile"]):
        if step[0] == "assume":
            _, node, app, cpu = step
            if table.row_of(f"n{node}") is not None:
                table.add_pod(_pod(f"meanwhile-{i}", app, cpu), f"n{node}")
        elif step[0] == "delete":
            table.remove_node(f"n{step[1]}")
        else:
            table.upsert_node(_node(added, step[1], step[2]))
            added += 1


def _rows(mask: Any) -> list[int]:
    return [] if mask is None else np.flatnonzero(mask).tolist()


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_scenario())
def test_the_restricted_conclusion_picks_what_the_full_one_picks(
    scenario: dict[str, Any],
) -> None:
    table = _table(scenario)
    pod = scenario["incoming"]
    full = Algorithm(Framework(default_profile()), table, seed=scenario["seed"])
    restricted = Algorithm(Framework(default_profile()), table, seed=scenario["seed"])
    # the decision in the cycle (it fills each algorithm's class cache)
    assert _rows(full.candidates(pod).candidates) == _rows(restricted.candidates(pod).candidates)
    _meanwhile(table, scenario)
    accepted = np.array(scenario["accepted"][: table.size], dtype=np.bool_)
    accepted &= table.alive[: table.size]
    extra = np.array(scenario["scores"][: table.size], dtype=np.int64) * 10

    before = full.candidates(pod, nominated=False, sample=False)
    after = restricted.candidates(pod, nominated=False, sample=False, within=accepted)
    assert (before.pre_filter is None) == (after.pre_filter is None)
    if before.pre_filter is not None and after.pre_filter is not None:
        assert before.pre_filter.status == after.pre_filter.status
    expected = np.zeros(table.size, dtype=np.bool_)
    if before.candidates is not None:
        expected = before.candidates & accepted
    got = np.zeros(table.size, dtype=np.bool_)
    if after.candidates is not None:
        got = after.candidates
    assert got.tolist() == expected.tolist()
    if expected.any():
        full.choose(before, expected, extra)
        restricted.choose(after, got, extra)
        assert after.node == before.node
