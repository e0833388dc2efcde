"""Differential test for DefaultPreemption: engine against reference, and the engine's two
searches against each other.

Hypothesis builds small clusters (nodes of random size, some tainted; bound pods of
random priority, requests, start time, labels and host ports; PodDisruptionBudgets on
those labels with random allowances and disrupted pods; sometimes pods nominated to a
node) and a preemptor (random priority and requests, sometimes host ports, required
anti-affinity or a hard spread constraint, which send the engine down its exact search);
nominated pods carry labels half the time (the spread and anti-affinity counts see them).
Per example:

* the reference's PostFilter (:func:`asched.tools.reference.preemption.preempt` with its filter
  chain) and the engine's (:class:`DefaultPreemption` over a NodeTable) must return the
  same status, nominated node, victims (in order) and cleared nominations, for the same
  offset;
* the engine's vectorised and exact searches must find the same candidates;
* the exact search must find the same with PreFilter once per preemptor, kept up to date
  by the plugins' PreFilterExtensions hooks, as with PreFilter afresh for every check.

The run is derandomized so CI sees the same examples every time.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from asched.config.types import DefaultPreemptionArgs
from asched.framework.builtin.default_preemption import DefaultPreemption
from asched.framework.cycle_state import CycleState
from asched.framework.runtime import Framework
from asched.tools.reference import preemption
from asched.tools.reference.fits import filter_chain
from tests.builders import (
    affinity_term,
    cluster_inputs,
    engine_table,
    exists,
    make_node,
    make_pod,
    pdb_object,
    pod_affinity_rules,
    pod_info,
    profile_with,
    spread_constraint,
    toleration,
    with_pod_fields,
)
from tests.unit.preemption import engine_adapter

APPS = ("a", "b", "c")
FILTERS = ["NodeUnschedulable", "TaintToleration", "NodePorts", "NodeResourcesFit"]
SIMPLE = profile_with(filter=FILTERS)
CROSS = profile_with(filter=[*FILTERS, "InterPodAffinity", "PodTopologySpread"])


@st.composite
def clusters(draw: st.DrawFn, *, roomy: bool = False) -> dict[str, Any]:
    """A case; ``roomy``: nodes with four times the CPU (inter-pod rules decide more)."""
    n_nodes = draw(st.integers(1, 6))
    nodes = []
    for i in range(n_nodes):
        taints = [("spot", "", "NoSchedule")] if draw(st.booleans()) and i else []
        nodes.append(
            make_node(
                f"n{i}",
                cpu=f"{draw(st.integers(1, 8)) * (1000 if roomy else 250)}m",
                memory=str(draw(st.integers(1, 8)) * 100),
                pods=str(draw(st.integers(1, 6))),
                labels={"kubernetes.io/hostname": f"n{i}", "zone": f"z{i % 2}"},
                taints=taints,
            )
        )
    pods = []
    for j in range(draw(st.integers(0, 14))):
        node = f"n{draw(st.integers(0, n_nodes - 1))}"
        labels = {"app": draw(st.sampled_from(APPS))} if draw(st.booleans()) else {}
        raw = make_pod(
            f"p{j}",
            node_name=node,
            priority=draw(st.sampled_from([-5, 0, 0, 10, 50, 100])),
            cpu=f"{draw(st.integers(0, 6)) * 125}m",
            memory=str(draw(st.integers(0, 4)) * 100),
            labels=labels,
            host_ports=[8080] if draw(st.integers(0, 5)) == 0 else [],
        )
        pods.append(with_pod_fields(raw, started=draw(st.integers(0, 3))))
    pdbs = []
    for k in range(draw(st.integers(0, 2))):
        app = draw(st.sampled_from(APPS))
        disrupted = [f"p{draw(st.integers(0, 13))}"] if draw(st.booleans()) else []
        pdbs.append(
            pdb_object(
                f"pdb{k}",
                {"matchLabels": {"app": app}},
                draw(st.integers(0, 2)),
                disrupted_pods=disrupted,
            )
        )
    kind = draw(st.sampled_from(["plain", "plain", "ports", "anti", "spread"]))
    extra: dict[str, Any] = {}
    if kind == "ports":
        extra["host_ports"] = [8080]
    elif kind == "anti":
        extra["pod_anti_affinity"] = pod_affinity_rules(
            required=[affinity_term(exists("app"), "kubernetes.io/hostname")]
        )
    elif kind == "spread":
        extra["labels"] = {"app": "a"}
        extra["topology_spread"] = [spread_constraint(1, "zone", "DoNotSchedule", exists("app"))]
    if draw(st.booleans()):
        extra["tolerations"] = [toleration("spot", operator="Exists")]
    incoming = make_pod(
        "preemptor",
        priority=draw(st.sampled_from([10, 50, 100])),
        cpu=f"{draw(st.integers(1, 8)) * 125}m",
        memory=str(draw(st.integers(0, 4)) * 100),
        **extra,
    )
    nominated = []
    for m in range(draw(st.integers(0, 2))):
        raw = make_pod(
            f"nom{m}",
            priority=draw(st.sampled_from([0, 10, 100])),
            cpu=f"{draw(st.integers(1, 4)) * 125}m",
            labels={"app": draw(st.sampled_from(APPS))} if draw(st.booleans()) else {},
        )
        nominated.append(
            with_pod_fields(raw, nominated_node=f"n{draw(st.integers(0, n_nodes - 1))}")
        )
    return {
        "nodes": nodes,
        "objects": [*pods, *pdbs],
        "incoming": incoming,
        "profile": SIMPLE if kind in ("plain", "ports") else CROSS,
        "nominated": nominated,
        "offset": draw(st.integers(0, 10)),
        "args": DefaultPreemptionArgs(draw(st.sampled_from([0, 10, 50])), draw(st.integers(1, 4))),
    }


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(clusters())
def test_engine_preemption_matches_the_reference(case: dict[str, Any]) -> None:
    infos, by_node, _, extras = cluster_inputs(case["nodes"], case["objects"])
    me = pod_info(case["incoming"])
    nominated = [pod_info(p) for p in case["nominated"]]
    fits = filter_chain(me, infos, by_node, case["profile"], extras=extras, nominated=nominated)
    statuses = {n.name: fits(n, by_node.get(n.name, ())) for n in infos}
    expected = preemption.preempt(
        infos,
        by_node,
        me,
        statuses,
        fits,
        pdbs=preemption.decode_pdbs(extras.get("PodDisruptionBudget", ())),
        args=case["args"],
        offset=case["offset"],
        nominated_pods=nominated,
    )
    got = engine_adapter.preempt(
        infos,
        by_node,
        me,
        statuses,
        case["profile"],
        extras=extras,
        args=case["args"],
        offset=case["offset"],
        nominated_pods=nominated,
    )
    assert got.status == expected.status
    assert got.nominated_node == expected.nominated_node
    assert [v.key for v in got.victims] == [v.key for v in expected.victims]
    assert got.cleared_nominations == expected.cleared_nominations


def _searched(
    case: dict[str, Any], profile: Any, *, vectorise: bool, plugins: bool = False
) -> tuple[Any, str]:
    """One search over the case's whole table: the candidates (node, victims, PDB
    violations) and, without a candidate, why each visited node is none (the failure
    message is built of it; ``plugins``: with the rejecting plugin's name), and the
    search the plugin took."""
    infos, by_node, _, extras = cluster_inputs(case["nodes"], case["objects"])
    me = pod_info(case["incoming"])
    nominated = [pod_info(p) for p in case["nominated"]]
    table = engine_table(infos, by_node, extras, nominated=nominated)
    plugin = DefaultPreemption(case["args"])
    plugin.vectorise = vectorise
    rows = [int(r) for r in table.order()]
    found = plugin.search(CycleState(), me, table, Framework(profile), rows, len(rows))
    candidates = [
        (table.name_of(c.row), [v.key for v in c.victims], c.num_pdb_violations)
        for c in found.candidates
    ]
    why = {
        table.name_of(r): (s.code, s.reasons, s.plugin) if plugins else (s.code, s.reasons)
        for r, s in found.statuses.items()
    }
    return (candidates, {} if found.candidates else why), plugin.last_search


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(clusters())
def test_vectorised_and_exact_searches_agree(case: dict[str, Any]) -> None:
    me = pod_info(case["incoming"])
    vectorised, how = _searched(case, SIMPLE, vectorise=True)
    exact, how_exact = _searched(case, SIMPLE, vectorise=False)
    assert how == ("exact" if me.host_ports else "resources")
    assert how_exact == "exact"
    assert vectorised == exact


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.booleans().flatmap(lambda roomy: clusters(roomy=roomy)))
def test_incremental_and_fresh_trials_agree(case: dict[str, Any]) -> None:
    """The exact search with PreFilter once and the hooks finds what it finds with
    PreFilter afresh for every check: candidates, and why each visited node is none."""
    infos, by_node, _, extras = cluster_inputs(case["nodes"], case["objects"])
    me = pod_info(case["incoming"])
    nominated = [pod_info(p) for p in case["nominated"]]
    answers = []
    for incremental in (True, False):
        table = engine_table(infos, by_node, extras, nominated=nominated)
        plugin = DefaultPreemption(case["args"])
        plugin.vectorise = False
        plugin.incremental = incremental
        rows = [int(r) for r in table.order()]
        found = plugin.search(CycleState(), me, table, Framework(CROSS), rows, len(rows))
        answers.append(
            (
                [
                    (table.name_of(c.row), [v.key for v in c.victims], c.num_pdb_violations)
                    for c in found.candidates
                ],
                {
                    table.name_of(r): (s.code, s.reasons, s.plugin)
                    for r, s in found.statuses.items()
                },
            )
        )
        assert plugin.last_trial == ("incremental" if incremental else "fresh")
    assert answers[0] == answers[1]


VOLUMES = profile_with(filter=[*FILTERS, "VolumeRestrictions", "NodeVolumeLimits", "VolumeZone"])
DISKS = ("d0", "d1")


def _disk(name: str, *, read_only: bool = False) -> dict[str, Any]:
    return {"name": name, "gcePersistentDisk": {"pdName": name, "readOnly": read_only}}


@st.composite
def volume_clusters(draw: st.DrawFn) -> dict[str, Any]:
    """A case whose preemptor mounts a disk, so the volume filters (cross-row) are active:
    bound pods and nominated pods mount one of the same disks some of the time (a victim
    holding the preemptor's disk is one the vectorised search cannot follow)."""
    case = draw(clusters())

    def mounts() -> list[dict[str, Any]]:
        if draw(st.integers(0, 2)) != 0:
            return []
        return [_disk(draw(st.sampled_from(DISKS)), read_only=draw(st.booleans()))]

    for obj in case["objects"]:
        if obj.get("kind") == "Pod" and (found := mounts()):
            obj["spec"]["volumes"] = found
    for raw in case["nominated"]:
        if found := mounts():
            raw["spec"]["volumes"] = found
    case["incoming"]["spec"]["volumes"] = [
        _disk(draw(st.sampled_from(DISKS)), read_only=draw(st.booleans()))
    ]
    return case


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(volume_clusters())
def test_volume_filters_vectorised_and_exact_agree(case: dict[str, Any]) -> None:
    """With the volume filters active, the vectorised search (the nodes where a pod with
    volumes moves answered node by node) finds what the exact search finds."""
    me = pod_info(case["incoming"])
    vectorised, how = _searched(case, VOLUMES, vectorise=True, plugins=True)
    exact, how_exact = _searched(case, VOLUMES, vectorise=False, plugins=True)
    assert how in (("exact",) if me.host_ports else ("resources", "resources+exact"))
    assert how_exact == "exact"
    assert vectorised == exact
