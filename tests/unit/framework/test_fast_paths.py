"""The whole-table fast paths answer as the plain formulas they replace.

* ``select_host`` looks at the candidate rows alone when their best total is not
  negative: the top rows and the seeded choice must be the masked formula's;
* ``default_normalize`` skips the masked maximum when no score is positive;
* ``check_range`` settles the usual case with one pass over the scores viewed as
  ``uint64``: it must raise exactly when a row taking part is out of ``[0, 100]``.

Hypothesis draws the arrays: totals with many ties and negative values, candidate masks
from empty to full.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from asched.cluster.table import NodeTable
from asched.engine.selection import select_host
from asched.errors import PluginContractError
from asched.framework.builtin.taint_toleration import TaintToleration
from asched.framework.normalize import default_normalize
from asched.framework.score_runs import check_range

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True)


@st.composite
def totals_and_candidates(draw: st.DrawFn, low: int = -3, high: int = 8):
    n = draw(st.integers(1, 40))
    totals = np.array(draw(st.lists(st.integers(low, high), min_size=n, max_size=n)), np.int64)
    candidates = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), np.bool_)
    return totals, candidates


def masked_select(totals, candidates, rng):
    """The formula before the fast path."""
    masked = np.where(candidates, totals, -1)
    top_rows = np.flatnonzero(masked == masked.max())
    chosen = top_rows[0] if len(top_rows) == 1 else top_rows[int(rng.integers(len(top_rows)))]
    return int(chosen), top_rows


@SETTINGS
@given(totals_and_candidates(), st.integers(0, 2**16))
def test_select_host_chooses_as_the_masked_formula(drawn, seed: int) -> None:
    totals, candidates = drawn
    got_row, got_top = select_host(totals, candidates, np.random.default_rng(seed))
    want_row, want_top = masked_select(totals, candidates, np.random.default_rng(seed))
    assert got_row == want_row
    np.testing.assert_array_equal(got_top, want_top)


@SETTINGS
@given(totals_and_candidates(low=-2, high=3), st.booleans())
def test_default_normalize_equals_the_masked_maximum_formula(drawn, reverse: bool) -> None:
    scores, taking_part = drawn
    mx = int(scores.max(where=taking_part, initial=0))
    if mx == 0:
        want = np.full_like(scores, 100) if reverse else scores
    else:
        want = scores * 100 // mx
        want = 100 - want if reverse else want
    np.testing.assert_array_equal(default_normalize(scores, taking_part, reverse=reverse), want)


@SETTINGS
@given(totals_and_candidates(low=-(2**62), high=2**62))
def test_check_range_raises_exactly_when_a_taking_part_row_is_out_of_range(drawn) -> None:
    scores, taking_part = drawn
    scores = np.where(np.arange(len(scores)) % 2 == 0, scores % 101, scores)  # some in range
    taking = scores[taking_part]
    out = bool(taking.size) and (int(taking.min()) < 0 or int(taking.max()) > 100)
    if out:
        with pytest.raises(PluginContractError):
            check_range(TaintToleration(), scores, taking_part)
    else:
        check_range(TaintToleration(), scores, taking_part)


def test_plugin_lists_follow_each_cycles_skips_and_are_the_callers_own() -> None:
    """The split plugin lists are kept per skip set: each cycle gets its own skips' lists,
    and a caller mutating one changes nothing for the next."""
    from asched.framework.cycle_state import CycleState
    from asched.framework.runtime import Framework
    from tests.builders import default_profile

    framework = Framework(default_profile())
    plain, skipping = CycleState(), CycleState()
    skipping.skip_filter.add("TaintToleration")
    skipping.skip_score.add("ImageLocality")
    every = [p.name for p in framework.filter]
    for _ in range(2):  # the second round reads the kept lists
        assert [p.name for p in framework.active_filters(plain)] == every
        assert [p.name for p in framework.active_filters(skipping)] == [
            name for name in every if name != "TaintToleration"
        ]
        assert "ImageLocality" in [p.name for p, _ in framework.local_scores(plain)]
        assert "ImageLocality" not in [p.name for p, _ in framework.local_scores(skipping)]
        framework.active_filters(plain).clear()
        framework.local_filters(plain).clear()
        framework.local_scores(plain).clear()


def test_the_kept_resource_need_follows_the_tables_axes() -> None:
    """NodeResourcesFit keeps a pod class's ResourceNeed; a table whose axes differ (an
    extended resource added later, or in another order) gets its own, never a stale one."""
    from asched.cluster.decode import decode_node
    from asched.config.types import NodeResourcesFitArgs
    from asched.framework.builtin.node_resources_fit import NodeResourcesFit
    from asched.framework.cycle_state import CycleState
    from asched.framework.resource_fit import ResourceNeed
    from tests.builders import make_node, make_pod, pod_info

    gpu, fpga = "example.com/gpu", "vendor.io/fpga"
    pod = pod_info(make_pod(requests=[{"cpu": "1", gpu: "1", fpga: "1"}]))
    plugin = NodeResourcesFit(NodeResourcesFitArgs())

    def table_with(*extended: str) -> NodeTable:
        table = NodeTable()
        for index, name in enumerate(extended):
            table.upsert_node(decode_node(make_node(f"n{index}", allocatable={name: "2"})))
        return table

    def need(table: NodeTable) -> ResourceNeed:
        state = CycleState()
        plugin.pre_filter(state, pod, table)
        return state.read("NodeResourcesFit/prefilter")

    def fresh(table: NodeTable) -> ResourceNeed:
        return ResourceNeed.of(table, plugin.resource_checks(pod, table))

    growing = table_with(gpu)
    assert need(growing) == fresh(growing)
    assert need(growing).impossible  # no node has the fpga yet
    growing.upsert_node(decode_node(make_node("late", allocatable={fpga: "1"})))
    assert need(growing) == fresh(growing)
    assert not need(growing).impossible
    swapped = table_with(fpga, gpu)  # the same axes in another column order
    assert need(swapped) == fresh(swapped)
    assert need(swapped) != need(growing)
