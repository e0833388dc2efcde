"""PreFilterExtensions are sound: PreFilter once, then the hooks for each pod added to or
removed from a row, answers as PreFilter afresh on the table as it then is.

Hypothesis builds small tables (a few nodes in two or three zones, some lacking the zone
label, some tainted; pods of two namespaces with random labels, some terminating, some
carrying required affinity or anti-affinity terms, of their namespace, of both, or of
those a namespace selector picks), an incoming pod (required affinity
and anti-affinity terms, hard spread constraints with the inclusion policies, a node
selector and tolerations) and a sequence of changes: a counted pod removed, a removed
one put back, or a new pod (possibly with its own anti-affinity terms) added to a row.
After every change, for the plugin under test, on every row: whether it is skipped, its
Filter answer (all rows at once, and each row alone) and, where it rejects, ``explain``'s
status, must be those of a fresh PreFilter. The runs are derandomized for CI.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework.cycle_state import CycleState, copy_state
from asched.framework.runtime import Framework
from asched.framework.status import Status
from tests.builders import (
    affinity_term,
    cluster_inputs,
    engine_table,
    exists,
    label_selector,
    make_node,
    make_pod,
    pod_affinity_rules,
    pod_info,
    profile_with,
    spread_constraint,
    toleration,
    with_pod_fields,
)

APPS = ("a", "b", "c")
KEYS = ("kubernetes.io/hostname", "zone")
HOOKED = ("InterPodAffinity", "PodTopologySpread")


def selectors() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.just(exists("app")),
        st.sampled_from(APPS[:2]).map(lambda app: label_selector({"app": app})),
        st.just(label_selector({"tier": "db"})),
    )


@st.composite
def terms(draw: st.DrawFn) -> Any:
    """A required term; its namespaces the owner's, both, or those labelled team=x."""
    namespaces = draw(st.sampled_from([None, None, None, ["default", "other"], []]))
    if namespaces == []:
        return affinity_term(
            draw(selectors()),
            draw(st.sampled_from(KEYS)),
            namespace_selector=label_selector({"team": "x"}),
        )
    return affinity_term(draw(selectors()), draw(st.sampled_from(KEYS)), namespaces=namespaces)


@st.composite
def placed_pods(draw: st.DrawFn, name: str) -> PodInfo:
    labels: dict[str, str] = {}
    if draw(st.integers(0, 3)):
        labels["app"] = draw(st.sampled_from(APPS[:2]))
    if draw(st.booleans()):
        labels["tier"] = "db"
    extra: dict[str, Any] = {}
    if draw(st.booleans()):
        extra["pod_anti_affinity"] = pod_affinity_rules(
            required=draw(st.lists(terms(), min_size=1, max_size=2))
        )
    if draw(st.integers(0, 5)) == 0:
        extra["pod_affinity"] = pod_affinity_rules(required=[draw(terms())])
    namespace = draw(st.sampled_from(["default", "default", "default", "other"]))
    raw = make_pod(name, namespace, cpu="100m", labels=labels, **extra)
    return pod_info(with_pod_fields(raw, terminating=draw(st.integers(0, 3)) == 0))


@st.composite
def incoming_pods(draw: st.DrawFn) -> PodInfo:
    extra: dict[str, Any] = {}
    own = draw(st.sampled_from(["none", "affinity", "anti", "both"]))
    if own in ("affinity", "both"):
        extra["pod_affinity"] = pod_affinity_rules(
            required=draw(st.lists(terms(), min_size=1, max_size=2))
        )
    if own in ("anti", "both"):
        extra["pod_anti_affinity"] = pod_affinity_rules(
            required=draw(st.lists(terms(), min_size=1, max_size=2))
        )
    constraints = [
        spread_constraint(
            draw(st.integers(1, 2)),
            draw(st.sampled_from(KEYS)),
            "DoNotSchedule",
            draw(selectors()),
            min_domains=draw(st.sampled_from([None, 1, 3])),
            node_affinity_policy=draw(st.sampled_from([None, "Honor", "Ignore"])),
            node_taints_policy=draw(st.sampled_from([None, "Honor", "Ignore"])),
        )
        for _ in range(draw(st.integers(0, 2)))
    ]
    if constraints:
        extra["topology_spread"] = constraints
    if draw(st.booleans()):
        extra["node_selector"] = {"disk": "ssd"}
    if draw(st.booleans()):
        extra["tolerations"] = [toleration("spot", operator="Exists")]
    labels = {"app": draw(st.sampled_from(APPS))} if draw(st.integers(0, 4)) else {}
    if draw(st.booleans()):
        labels["tier"] = "db"
    return pod_info(make_pod("incoming", cpu="100m", labels=labels, **extra))


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    n_zones = draw(st.integers(2, 3))
    nodes = []
    for i in range(draw(st.integers(2, 6))):
        labels = {"kubernetes.io/hostname": f"n{i}"}
        if draw(st.integers(0, 4)):
            labels["zone"] = f"z{i % n_zones}"
        if draw(st.booleans()):
            labels["disk"] = "ssd"
        taints = [("spot", "", "NoSchedule")] if draw(st.integers(0, 3)) == 0 else []
        nodes.append(make_node(f"n{i}", labels=labels, taints=taints))
    n_nodes = len(nodes)
    placed = [
        (draw(placed_pods(f"p{j}")), f"n{draw(st.integers(0, n_nodes - 1))}")
        for j in range(draw(st.integers(0, 10)))
    ]
    changes = []
    for k in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["remove", "remove", "back", "new"]))
        changes.append(
            (kind, draw(st.integers(0, 100)), draw(placed_pods(f"q{k}")), draw(st.integers(0, 99)))
        )
    return {"nodes": nodes, "placed": placed, "incoming": draw(incoming_pods()), "changes": changes}


def _table(case: dict[str, Any]) -> NodeTable:
    infos, _, _, extras = cluster_inputs(case["nodes"])
    table = engine_table(infos, {}, extras, namespace_labels={"other": {"team": "x"}})
    for pod, node in case["placed"]:
        table.add_pod(pod, node)
    return table


def _answers(
    framework: Framework, name: str, state: CycleState, pod: PodInfo, table: NodeTable
) -> tuple[bool, list[bool], list[bool], dict[int, Status]]:
    """(skipped, the mask over all rows, each row's answer alone, rejected rows' statuses)."""
    if name in state.skip_filter:
        return True, [], [], {}
    plugin = framework.plugins[name]
    everything = plugin.filter(state, pod, table, table.rows).tolist()
    alone = [
        bool(plugin.filter(state, pod, table, np.array([row], dtype=np.intp))[0])
        for row in range(table.size)
    ]
    reasons = {
        row: plugin.explain(state, pod, table, row)
        for row in range(table.size)
        if not everything[row]
    }
    return False, everything, alone, reasons


def _fresh(framework: Framework, pod: PodInfo, table: NodeTable) -> CycleState:
    state = CycleState()
    assert framework.run_pre_filter(state, pod, table).status.ok
    return state


@pytest.mark.parametrize("name", HOOKED)
@settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=cases())
def test_hooks_answer_as_a_fresh_pre_filter(name: str, case: dict[str, Any]) -> None:
    framework = Framework(profile_with(filter=[name]))
    assert framework.pre_filter_extensible()
    pod = case["incoming"]
    table = _table(case)
    base = _fresh(framework, pod, table)
    untouched = copy.deepcopy(base)  # the base as it was (not through the plugins' clone)
    state = copy_state(base)
    before = _answers(framework, name, base, pod, table)
    removed: list[tuple[PodInfo, int]] = []
    for kind, pick, new, where in case["changes"]:
        counted = list(table.pods.values())
        if kind == "remove" and counted:
            placed = counted[pick % len(counted)]
            table.remove_pod(placed.info.key)
            removed.append((placed.info, placed.row))
            status = framework.run_pre_filter_remove_pod(state, pod, table, placed.info, placed.row)
        elif kind == "back" and removed:
            info, row = removed.pop(pick % len(removed))
            table.add_pod(info, table.name_of(row))
            status = framework.run_pre_filter_add_pod(state, pod, table, info, row)
        else:
            row = where % table.size
            table.add_pod(new, table.name_of(row))
            status = framework.run_pre_filter_add_pod(state, pod, table, new, row)
        assert status.ok
        fresh = _fresh(framework, pod, table)
        assert _answers(framework, name, state, pod, table) == _answers(
            framework, name, fresh, pod, table
        )
    # the base state was copied, never changed: every value it holds (the counts, not
    # only the masks it cached) equals its clone from before the changes
    assert base.skip_filter == untouched.skip_filter
    assert base._data.keys() == untouched._data.keys()
    for key, value in base._data.items():
        assert _same(value, untouched._data[key]), key
    for info, row in removed:
        table.add_pod(info, table.name_of(row))
    for _, _, new, _ in case["changes"]:
        table.remove_pod(new.key)
    assert _answers(framework, name, base, pod, table) == before


def _same(a: Any, b: Any) -> bool:
    """Deep equality of stored state: dataclasses field by field, arrays by value."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            _same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
