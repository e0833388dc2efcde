"""Preemption's exact search with PreFilter once per preemptor and the PreFilterExtensions
hooks (:mod:`asched.framework.preemption_trial`), against PreFilter afresh per check.

Every case runs the exact search both ways and expects the same candidates and the same
statuses for the visited nodes that are none; then, which trial ran. Nodes have 1 CPU and
the labels ``kubernetes.io/hostname`` and ``zone``; pods request 1 CPU unless told, so a
node's low-priority pod must go for the 500m preemptor (priority 10) to fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from asched import plugin as ap
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import DefaultPreemptionArgs
from asched.framework.builtin.default_preemption import DefaultPreemption
from asched.framework.builtin.inter_pod_affinity import InterPodAffinity
from asched.framework.cycle_state import CycleState
from asched.framework.interface import PreFilterResult
from asched.framework.preemption import Search
from asched.framework.registry import installed
from asched.framework.runtime import Framework
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status
from tests.builders import (
    affinity_term,
    cluster_inputs,
    engine_table,
    exists,
    make_node,
    make_pod,
    pod_affinity_rules,
    pod_info,
    profile_with,
    spread_constraint,
    with_pod_fields,
)

HOST = "kubernetes.io/hostname"
FILTERS = ["NodeResourcesFit", "InterPodAffinity", "PodTopologySpread"]
ANTI = {"pod_anti_affinity": pod_affinity_rules(required=[affinity_term(exists("app"), HOST)])}
SPREAD = {
    "labels": {"app": "a"},
    "topology_spread": [spread_constraint(1, "zone", "DoNotSchedule", exists("app"))],
}


def _node(i: int, zone: str) -> dict[str, Any]:
    return make_node(f"n{i}", cpu="1", labels={HOST: f"n{i}", "zone": zone})


def _low(name: str, node: str, cpu: str = "1", **fields: Any) -> dict[str, Any]:
    return make_pod(name, node_name=node, priority=0, cpu=cpu, **fields)


def _nominated(name: str, node: str, **fields: Any) -> PodInfo:
    raw = make_pod(name, priority=100, cpu="100m", **fields)
    return pod_info(with_pod_fields(raw, nominated_node=node))


def _search(
    framework: Framework, table: NodeTable, me: PodInfo, *, incremental: bool
) -> tuple[Search, str]:
    plugin = DefaultPreemption(DefaultPreemptionArgs(0, 10))
    plugin.vectorise = False
    plugin.incremental = incremental
    rows = [int(r) for r in table.order()]
    found = plugin.search(CycleState(), me, table, framework, rows, len(rows))
    return found, plugin.last_trial


def _shown(table: NodeTable, found: Search) -> tuple[Any, ...]:
    return (
        [(table.name_of(c.row), [v.key for v in c.victims]) for c in found.candidates],
        {table.name_of(r): (s.code, s.reasons, s.plugin) for r, s in found.statuses.items()},
    )


def _both(
    nodes: list[Any], placed: list[Any], nominated: list[PodInfo], me: PodInfo, profile: Any
) -> tuple[tuple[Any, ...], str]:
    """The search's answer (the same both ways, asserted) and the trial the default took."""
    infos, by_node, _, extras = cluster_inputs(nodes, placed)
    answers, trials = [], []
    for incremental in (True, False):
        table = engine_table(infos, by_node, extras, nominated=nominated)
        found, trial = _search(Framework(profile), table, me, incremental=incremental)
        answers.append(_shown(table, found))
        trials.append(trial)
    assert answers[0] == answers[1]
    assert trials[1] == "fresh"
    return answers[0], trials[0]


CASES = [
    pytest.param(
        # n0 holds a nominated pod labelled app (priority 100 >= 10): the first pass counts
        # it on n0, so the preemptor's anti-affinity (hostname, app Exists) fails there
        # even with low0 gone; n1 needs its low pod gone (1 CPU node, 1 CPU pod).
        ANTI,
        [_low("low0", "n0"), _low("low1", "n1")],
        [_nominated("nom", "n0", labels={"app": "x"})],
        [("n1", ["default/low1"])],
        ["n0"],
        id="anti-affinity-sees-a-nominated-pod",
    ),
    pytest.param(
        # the nominated pod has no app label: the anti-affinity term selects nothing on n0
        ANTI,
        [_low("low0", "n0"), _low("low1", "n1")],
        [_nominated("nom", "n0")],
        [("n0", ["default/low0"]), ("n1", ["default/low1"])],
        [],
        id="anti-affinity-ignores-an-unlabelled-nominated-pod",
    ),
    pytest.param(
        # zones z0 = {n0}, z1 = {n1}; no app pod is placed. n0's first pass counts the
        # nominated app pod: z0 = 1, z1 = 0, min 0: 1 + 1 (the preemptor) - 0 = 2 >
        # maxSkew 1, rejected. n1 (the pod is nominated to n0 only): z1 = 0: 0 + 1 - 0 = 1.
        SPREAD,
        [_low("low0", "n0"), _low("low1", "n1")],
        [_nominated("nom", "n0", labels={"app": "c"})],
        [("n1", ["default/low1"])],
        ["n0"],
        id="spread-counts-a-nominated-pod-in-its-zone",
    ),
    pytest.param(
        # z1 holds low1 (400m, app): z0 = 0, z1 = 1. n1 has room (500m used) but 1 + 1 - 0
        # = 2 > 1. With low1 and low2 gone z1 = 0: 0 + 1 - 0 = 1 passes (the remove hook);
        # low1 back: 2 > 1 again, a victim; low2 (100m, no app) back: z1 = 0, kept (the
        # add hook). n0: 0 + 1 - 0 = 1 passes, low0 (1 CPU) back does not fit.
        SPREAD,
        [
            _low("low0", "n0"),
            _low("low1", "n1", cpu="400m", labels={"app": "a"}),
            _low("low2", "n1", cpu="100m"),
        ],
        [],
        [("n0", ["default/low0"]), ("n1", ["default/low1"])],
        [],
        id="spread-follows-the-victims-removed-and-re-added",
    ),
    pytest.param(
        # the nominated pod asks for a resource no node has: counting it adds a resource
        # axis to the table (its epoch moves), so the search runs PreFilter afresh from
        # then on; the answers are those of the anti-affinity case without labels
        ANTI,
        [_low("low0", "n0"), _low("low1", "n1")],
        [
            pod_info(
                with_pod_fields(
                    make_pod(
                        "nom", priority=100, requests=[{"cpu": "100m", "example.com/gpu": "1"}]
                    ),
                    nominated_node="n0",
                )
            )
        ],
        [("n0", ["default/low0"]), ("n1", ["default/low1"])],
        [],
        id="a-new-resource-axis-sends-the-search-back-to-pre-filter-afresh",
    ),
]


@pytest.mark.parametrize(("extra", "placed", "nominated", "candidates", "rejected"), CASES)
def test_incremental_trial_matches_the_fresh_one(
    extra: dict[str, Any],
    placed: list[Any],
    nominated: list[PodInfo],
    candidates: list[tuple[str, list[str]]],
    rejected: list[str],
) -> None:
    nodes = [_node(0, "z0"), _node(1, "z1")]
    me = pod_info(make_pod("me", priority=10, cpu="500m", **extra))
    (found, statuses), trial = _both(nodes, placed, nominated, me, profile_with(filter=FILTERS))
    assert trial == "incremental"
    assert sorted(found) == candidates
    assert sorted(statuses) == rejected


class _CountsPods:
    """An out-of-tree PreFilter that reads the pods on the nodes and has no hooks."""

    name = "CountsPods"
    row_local = False

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        return PreFilterResult(Status.success() if len(table.pods) < 100 else Status.skip())


def test_a_pre_filter_without_hooks_keeps_pre_filter_afresh() -> None:
    spec = declare(_CountsPods, api_version=API_VERSION)
    registry = installed().adding(spec)
    profile = profile_with(filter=FILTERS, pre_filter=[*FILTERS, "CountsPods"])
    framework = Framework(profile, registry=registry)
    assert not framework.pre_filter_extensible()
    nodes = [_node(0, "z0"), _node(1, "z1")]
    infos, by_node, _, extras = cluster_inputs(nodes, [_low("low0", "n0")])
    table = engine_table(infos, by_node, extras)
    me = pod_info(make_pod("me", priority=10, cpu="500m", **ANTI))
    found, trial = _search(framework, table, me, incremental=True)
    assert trial == "fresh"
    assert [table.name_of(c.row) for c in found.candidates] == ["n0"]


def test_a_failing_hook_sends_the_search_back_to_pre_filter_afresh(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the hooks of InterPodAffinity raise: the first row's state is dropped at its first
    # change and every check from then on, on both rows, runs PreFilter afresh, with the
    # same answers; the failure is logged once, not once per row visited
    def broken(*args: Any) -> Status:
        raise RuntimeError("boom")

    monkeypatch.setattr(InterPodAffinity, "pre_filter_add_pod", broken)
    monkeypatch.setattr(InterPodAffinity, "pre_filter_remove_pod", broken)
    nodes = [_node(0, "z0"), _node(1, "z1")]
    placed = [_low("low0", "n0", labels={"app": "a"}), _low("low1", "n1")]
    infos, by_node, _, extras = cluster_inputs(nodes, placed)
    me = pod_info(make_pod("me", priority=10, cpu="500m", **ANTI))
    answers = []
    for incremental in (True, False):
        table = engine_table(infos, by_node, extras)
        found, trial = _search(
            Framework(profile_with(filter=FILTERS)), table, me, incremental=incremental
        )
        answers.append(_shown(table, found))
        assert trial == ("incremental" if incremental else "fresh")
    assert answers[0] == answers[1]
    assert sorted(name for name, _ in answers[0][0]) == ["n0", "n1"]
    failures = [
        r
        for r in caplog.records
        if "internal error in PreFilterExtensionRemovePod of plugin InterPodAffinity"
        in r.getMessage()
    ]
    assert len(failures) == 1


# An InterPodAffinity PreFilter skips when the pod has no required terms and no existing
# pod's required anti-affinity matches it: a hook must end the Skip when such a pod comes
# and restore it when it goes.
SKIP_CASES = [
    # (the pod added to n0, whether the plugin runs after, n0 passes, n1 passes)
    pytest.param({}, False, True, True, id="a-plain-pod-keeps-the-skip"),
    pytest.param(
        {"pod_anti_affinity": pod_affinity_rules(required=[affinity_term(exists("app"), HOST)])},
        True,
        False,
        True,
        id="an-anti-affinity-against-the-pod-ends-the-skip-on-its-host",
    ),
    pytest.param(
        {"pod_anti_affinity": pod_affinity_rules(required=[affinity_term(exists("app"), "zone")])},
        True,
        False,
        True,  # n1 is alone in z1
        id="an-anti-affinity-against-the-pod-ends-the-skip-in-its-zone",
    ),
    pytest.param(
        {"pod_anti_affinity": pod_affinity_rules(required=[affinity_term(exists("tier"), HOST)])},
        False,
        True,
        True,
        id="an-anti-affinity-not-matching-the-pod-keeps-the-skip",
    ),
]


@pytest.mark.parametrize(("fields", "runs", "n0_passes", "n1_passes"), SKIP_CASES)
def test_hooks_end_and_restore_inter_pod_affinity_skip(
    fields: dict[str, Any], *, runs: bool, n0_passes: bool, n1_passes: bool
) -> None:
    framework = Framework(profile_with(filter=["InterPodAffinity"]))
    infos, by_node, _, extras = cluster_inputs([_node(0, "z0"), _node(1, "z1")])
    table = engine_table(infos, by_node, extras)
    me = pod_info(make_pod("me", labels={"app": "a"}))
    state = CycleState()
    assert framework.run_pre_filter(state, me, table).status.ok
    assert "InterPodAffinity" in state.skip_filter
    other = pod_info(make_pod("other", **fields))
    table.add_pod(other, "n0")
    assert framework.run_pre_filter_add_pod(state, me, table, other, 0).ok
    assert ("InterPodAffinity" not in state.skip_filter) == runs
    if runs:
        plugin = framework.plugins["InterPodAffinity"]
        assert plugin.filter(state, me, table, table.rows).tolist() == [n0_passes, n1_passes]
    table.remove_pod(other.key)
    assert framework.run_pre_filter_remove_pod(state, me, table, other, 0).ok
    assert "InterPodAffinity" in state.skip_filter


# --- an out-of-tree PreFilter with hooks, written against asched.plugin alone --------------


@dataclass
class _ZoneFree:
    """Free CPU per zone (millicores, ``int64[len(values) + 1]``, slot 0: no zone); the
    hooks change it in place, so it is a StateData."""

    free: np.ndarray

    def clone(self) -> _ZoneFree:
        return _ZoneFree(self.free.copy())


class _ZoneHeadroom:
    """A node passes while its zone keeps twice the pod's CPU request free (summed over the
    zone's nodes): a cross-row PreFilter that reads what the pods request."""

    name = "ZoneHeadroom"
    row_local = False
    KEY = "ZoneHeadroom/free"

    def pre_filter(self, state: ap.CycleState, pod: ap.PodInfo, nodes: Any) -> ap.PreFilterResult:
        codes, values = nodes.label_codes("zone")
        live = nodes.alive[nodes.rows]
        slots = codes[nodes.rows][live].astype(np.intp) + 1
        free = np.bincount(
            slots, weights=nodes.free_of("cpu")[nodes.rows][live], minlength=len(values) + 1
        )
        state.write(self.KEY, _ZoneFree(free.astype(np.int64)))
        return ap.PreFilterResult(ap.Status.success())

    def filter(self, state: ap.CycleState, pod: ap.PodInfo, nodes: Any, rows: Any) -> np.ndarray:
        codes, _ = nodes.label_codes("zone")
        zone_free = state.read(self.KEY).free[codes[rows].astype(np.intp) + 1]
        passes: np.ndarray = zone_free >= 2 * pod.requests.get("cpu", 0)
        return passes

    def explain(self, state: ap.CycleState, pod: ap.PodInfo, nodes: Any, row: int) -> ap.Status:
        return ap.Status.unschedulable("zone headroom", plugin=self.name)

    def _follow(
        self, state: ap.CycleState, nodes: Any, other: ap.PodInfo, row: int, sign: int
    ) -> ap.Status:
        codes, _ = nodes.label_codes("zone")
        state.read(self.KEY).free[int(codes[row]) + 1] -= sign * other.requests.get("cpu", 0)
        return ap.Status.success()

    def pre_filter_add_pod(
        self, state: ap.CycleState, pod: ap.PodInfo, nodes: Any, added: ap.PodInfo, row: int
    ) -> ap.Status:
        return self._follow(state, nodes, added, row, +1)

    def pre_filter_remove_pod(
        self, state: ap.CycleState, pod: ap.PodInfo, nodes: Any, removed: ap.PodInfo, row: int
    ) -> ap.Status:
        return self._follow(state, nodes, removed, row, -1)


def test_an_installed_plugins_hooks_keep_the_search_incremental_and_exact() -> None:
    # n0 (z0) full with low0; n1 (z1) holds two 500m pods a and b; n2 (z1) is full with a
    # pod of priority 100 (no victim). The 500m preemptor needs 2 x 500m free in its zone:
    # n0: low0 gone, z0 keeps 1000m: fits. n1: a and b gone, z1 keeps 1000m (n2: 0): fits;
    # a put back: n1 has 500m, so do z1's nodes, less than 1000m: a stays a victim, so
    # does b. A hook that missed the put-back would reprieve a (victims [b]).
    assert isinstance(_ZoneHeadroom(), ap.PreFilterExtensions)
    assert isinstance(_ZoneFree(np.zeros(1, dtype=np.int64)), ap.StateData)
    registry = installed().adding(ap.declare(_ZoneHeadroom, api_version=ap.API_VERSION))
    profile = profile_with(filter=[*FILTERS, "ZoneHeadroom"], pre_filter=[*FILTERS, "ZoneHeadroom"])
    nodes = [_node(0, "z0"), _node(1, "z1"), _node(2, "z1")]
    placed = [
        _low("low0", "n0"),
        _low("a", "n1", cpu="500m"),
        _low("b", "n1", cpu="500m"),
        make_pod("high", node_name="n2", priority=100, cpu="1"),
    ]
    infos, by_node, _, extras = cluster_inputs(nodes, placed)
    me = pod_info(make_pod("me", priority=10, cpu="500m", **ANTI))
    answers, trials = [], []
    for incremental in (True, False):
        framework = Framework(profile, registry=registry)
        assert framework.pre_filter_extensible()
        table = engine_table(infos, by_node, extras)
        found, trial = _search(framework, table, me, incremental=incremental)
        answers.append(_shown(table, found))
        trials.append(trial)
    assert trials == ["incremental", "fresh"]
    assert answers[0] == answers[1]
    assert sorted(answers[0][0]) == [("n0", ["default/low0"]), ("n1", ["default/a", "default/b"])]
