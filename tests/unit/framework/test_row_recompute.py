"""The scalar forms of the row-local plugins equal their vectorised forms, row by row.

A cached pod class recomputes the one to three rows a decision changed in Python
(:mod:`asched.engine.row_recompute`) when every row-local plugin of the cycle has a
scalar form. Hypothesis draws the differential test's random clusters (nodes with random
allocatable, missing resources, taints, images; bound pods), removes some nodes (dead
rows), draws an incoming pod and a profile (scoring strategy, resources and weights);
then, for every row:

* each row-local Filter's scalar form answers what its vectorised ``filter`` answers
  on every live row;
* each row-local Score's scalar form gives its vectorised raw score on every row;
* a class entry brought up to date on a few scrambled rows by the scalar path is equal,
  array for array, to one the vectorised path computed in full.

LeastAllocated's float64 quotient (:func:`~asched.framework.resource_scoring._exact_share`)
is held to int64's ``//`` over the edges of its range here too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from asched.cluster.table import NodeTable
from asched.engine import class_fill, row_recompute
from asched.engine.equivalence import ClassEntry
from asched.explain.engine import table_of
from asched.framework import resource_scoring as scoring
from asched.framework.cycle_state import CycleState
from asched.framework.interface import MAX_SCORE
from asched.framework.runtime import Framework
from tests.builders import pod_info, snapshot_of
from tests.property.test_differential import bound_pods, incoming_pods, nodes, profiles

EXAMPLES = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def cycles(draw: st.DrawFn):
    """A table (some rows dead), an incoming pod and a profile."""
    names = [f"node-{i}" for i in range(draw(st.integers(1, 12)))]
    node_objects = [draw(nodes(name)) for name in names]
    pod_objects = [draw(bound_pods(i, names)) for i in range(draw(st.integers(0, 20)))]
    table = table_of(snapshot_of(node_objects, pod_objects))
    for name in draw(st.lists(st.sampled_from(names), max_size=3, unique=True)):
        table.remove_node(name)
    incoming = draw(incoming_pods(names))
    if draw(st.integers(0, 4)):  # mostly without what the plugins lacking scalar forms read
        spec = incoming["spec"]
        spec.pop("nodeSelector", None)
        spec.get("affinity", {}).pop("nodeAffinity", None)
        for container in spec["containers"]:
            container.pop("ports", None)
    return table, pod_info(incoming), draw(profiles(names))


def prepared(table: NodeTable, pod, profile) -> tuple[Framework, CycleState] | None:
    """The framework and the cycle's state after PreFilter and PreScore (None: rejected)."""
    framework = Framework(profile)
    state = CycleState()
    if not framework.run_pre_filter(state, pod, table).status.ok:
        return None
    if not framework.run_pre_score(state, pod, table).ok:
        return None
    return framework, state


@EXAMPLES
@given(cycles())
def test_scalar_forms_answer_as_the_vectorised_plugins(cycle) -> None:
    table, pod, profile = cycle
    found = prepared(table, pod, profile)
    if found is None:
        event("rejected before Filter")
        return
    framework, state = found
    forms = row_recompute.forms(framework, state, pod, table)
    if forms is None:
        event("a row-local plugin without a scalar form")
        return
    event("scalar forms")
    filters, scores = forms
    live = np.flatnonzero(table.alive[table.rows]).tolist()
    for name, passes in filters:
        plugin = framework.plugins[name]
        mask = framework.run_filter(plugin, state, pod, table, table.rows)
        assert [passes(row) for row in live] == mask[live].tolist(), name
    for plugin, _, score in scores:
        raw = framework.run_score(plugin, state, pod, table, table.rows)
        assert [score(row) for row in range(table.size)] == raw.tolist(), plugin.name


@EXAMPLES
@given(cycles(), st.data())
def test_an_entry_refreshed_in_python_equals_one_computed_in_full(cycle, data) -> None:
    table, pod, profile = cycle
    found = prepared(table, pod, profile)
    if found is None:
        return
    framework, state = found
    forms = row_recompute.forms(framework, state, pod, table)
    if forms is None:
        return
    full = ClassEntry(table.epoch, table.change_mark, np.zeros(table.size, dtype=np.bool_))
    full.fixed_total = np.zeros(table.size, dtype=np.int64)
    class_fill.compute(framework, table, state, pod, full, None)
    rows = data.draw(
        st.lists(
            st.integers(0, table.size - 1),
            min_size=1,
            max_size=row_recompute.SCALAR_ROWS,
            unique=True,
        )
    )
    stale = ClassEntry(
        full.epoch,
        full.mark,
        full.feasible.copy(),
        {name: raw.copy() for name, raw in full.raw.items()},
        full.fixed_total.copy(),
    )
    for row in rows:  # what the rows held before they changed: anything
        stale.feasible[row] = not stale.feasible[row]
        stale.fixed_total[row] = -7
        for raw in stale.raw.values():
            raw[row] = -7
    filters, scores = forms
    feasible = row_recompute.refilter(table, stale, rows, filters)
    row_recompute.rescore(stale, feasible, scores)
    np.testing.assert_array_equal(stale.feasible, full.feasible)
    np.testing.assert_array_equal(stale.fixed_total, full.fixed_total)
    assert stale.raw.keys() == full.raw.keys()
    for name, raw in full.raw.items():
        np.testing.assert_array_equal(stale.raw[name], raw, err_msg=name)


# --- LeastAllocated's float64 quotient ------------------------------------------------

LIMIT = scoring.FLOAT_EXACT_BELOW
allocatables = st.one_of(
    st.integers(1, 100),
    st.integers(1, LIMIT - 1),
    st.sampled_from([1, 3, 7, 1000, 4000, 2**34, 2**45 + 1, LIMIT - 3, LIMIT - 1]),
)


@st.composite
def quotients(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    """Pairs ``0 <= left <= alloc < 2**46``: near 0, near alloc, exact hundredths, random."""
    allocs, lefts = [], []
    for _ in range(draw(st.integers(1, 40))):
        alloc = draw(allocatables)
        share = draw(st.integers(0, 100))
        near = alloc * share // 100 + draw(st.integers(-2, 2))
        left = draw(st.one_of(st.integers(0, alloc), st.just(min(max(near, 0), alloc))))
        allocs.append(alloc)
        lefts.append(left)
    return allocs, lefts


@settings(max_examples=400, deadline=None, derandomize=True)
@given(quotients())
def test_the_float_quotient_is_int64_floor_division(pairs) -> None:
    allocs, lefts = pairs
    alloc = np.array(allocs, dtype=np.int64)
    left = np.array(lefts, dtype=np.int64)
    got = scoring._exact_share(left, alloc, np.empty(len(allocs), dtype=np.float64))
    np.testing.assert_array_equal(got.astype(np.int64), left * MAX_SCORE // alloc)


@pytest.mark.parametrize(
    ("alloc", "left"),
    [
        # 100 * left is a multiple of alloc: the quotient is an integer, exactly
        pytest.param(LIMIT - 1, LIMIT - 1, id="full at the bound: 100"),
        pytest.param(3 * 2**40, 2**40, id="a third: 33"),
        # 100 * (alloc - 1) // alloc = 99 for any alloc > 100: one below an integer
        pytest.param(LIMIT - 1, LIMIT - 2, id="one unit short of full at the bound: 99"),
        pytest.param(2**45 + 1, 2**45, id="one unit short of full, odd allocatable: 99"),
    ],
)
def test_the_float_quotient_at_the_edges(alloc: int, left: int) -> None:
    got = scoring._exact_share(
        np.array([left], dtype=np.int64), np.array([alloc], dtype=np.int64), np.empty(1)
    )
    assert int(got[0]) == left * MAX_SCORE // alloc


# --- failures are the vectorised path's ----------------------------------------------


class _Scorer:
    """A row-local score plugin reduced to what rescore reads."""

    name = "Odd"
    row_local = True

    def __init__(self, *, normalizes: bool) -> None:
        self.normalizes = normalizes


def _entry(size: int) -> ClassEntry:
    entry = ClassEntry(0, 0, np.ones(size, dtype=np.bool_), {"Odd": np.zeros(size, np.int64)})
    entry.fixed_total = np.zeros(size, dtype=np.int64)
    return entry


def test_a_final_score_out_of_range_on_a_feasible_row_breaks_the_contract() -> None:
    from asched.errors import PluginContractError

    scorer = _Scorer(normalizes=False)
    with pytest.raises(PluginContractError, match=r"'Odd' returned scores in \[101, 101\]"):
        row_recompute.rescore(_entry(3), {1: True, 2: False}, [(scorer, 1, lambda row: 100 + row)])
    # out of range on an infeasible row only, or before normalization: not checked here
    row_recompute.rescore(_entry(3), {1: True, 2: False}, [(scorer, 1, lambda row: row * 50)])
    normalizing = _Scorer(normalizes=True)
    row_recompute.rescore(_entry(3), {1: True}, [(normalizing, 1, lambda row: -5)])


def test_a_raising_scalar_form_is_a_plugin_failure_at_its_point() -> None:
    from asched.framework.contain import PluginFailure

    def broken(row: int) -> int:
        raise ValueError("no")

    with pytest.raises(PluginFailure) as failure:
        row_recompute.rescore(_entry(2), {0: True}, [(_Scorer(normalizes=False), 1, broken)])
    assert (failure.value.point, failure.value.plugin) == ("Score", "Odd")
    table = NodeTable()
    from asched.cluster.decode import decode_node
    from tests.builders import make_node

    table.upsert_node(decode_node(make_node("n0")))
    with pytest.raises(PluginFailure) as failure:
        row_recompute.refilter(table, _entry(1), [0], [("Odd", broken)])
    assert (failure.value.point, failure.value.plugin) == ("Filter", "Odd")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        # the vectorised path refuses a score array that is not int64: so does this one
        pytest.param(lambda row: 1.5, "returned a float score", id="a float"),
        pytest.param(lambda row: True, "returned a bool score", id="a bool"),
        # beyond int64 (a normalizing plugin's raw score is not range-checked otherwise)
        pytest.param(lambda row: 2**63, "returned 9223372036854775808, beyond int64", id="2**63"),
    ],
)
def test_a_scalar_score_that_is_not_int64_breaks_the_contract(answer: Any, message: str) -> None:
    from asched.errors import PluginContractError

    with pytest.raises(PluginContractError, match=message):
        row_recompute.rescore(_entry(2), {0: True}, [(_Scorer(normalizes=True), 1, answer)])


def test_totals_of_rows_no_filter_passes_wrap_as_int64() -> None:
    # a raw score of 2**62 on an infeasible row, weight 4: 2**64 wraps to 0 in int64, as
    # the vectorised sum does, instead of an OverflowError out of the refresh
    entry = _entry(2)
    row_recompute.rescore(entry, {1: False}, [(_Scorer(normalizes=False), 4, lambda row: 2**62)])
    assert int(entry.fixed_total[1]) == 0
    assert int(entry.raw["Odd"][1]) == 2**62
