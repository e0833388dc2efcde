"""Reserve and Unreserve: the chosen node's matches are assumed in the catalog (the next
pod cannot take the same PV), and reverted exactly."""

from __future__ import annotations

import numpy as np

from asched.config.types import VolumeBindingArgs
from asched.explain.engine import table_of
from asched.framework.builtin.volume_binding import VolumeBinding
from asched.framework.cycle_state import CycleState
from asched.framework.status import Code
from tests.builders import make_node, make_pod, pod_info, pvc_volume
from tests.unit.volumes.binding._objects import (
    claim,
    local_affinity,
    pv,
    storage_class,
    storage_snapshot,
)

SELECTED = "volume.kubernetes.io/selected-node"


def setup(objects):
    nodes = [make_node(n, labels={"kubernetes.io/hostname": n}) for n in ("n1", "n2")]
    classes = [storage_class("wait"), storage_class("provision", provisioner="example.com/p")]
    table = table_of(storage_snapshot(nodes, [*classes, *objects]))
    return table, VolumeBinding(VolumeBindingArgs())


def run_filter(plugin, table, pod):
    state = CycleState()
    assert plugin.pre_filter(state, pod, table).status.ok
    return state, plugin.filter(state, pod, table, table.rows)


def test_reserve_takes_the_smallest_fitting_pv_and_unreserve_gives_it_back() -> None:
    # n1 holds a 5Gi and a 2Gi PV; the claim asks 1Gi: the smallest that fits is 2Gi
    table, plugin = setup(
        [
            claim("c1"),
            claim("c2"),
            pv("pv-big", "5Gi", affinity=local_affinity("n1")),
            pv("pv-small", "2Gi", affinity=local_affinity("n1")),
        ]
    )
    catalog = table.volumes
    first = pod_info(make_pod("p1", volumes=[pvc_volume("c1")]))
    second = pod_info(make_pod("p2", volumes=[pvc_volume("c2")]))
    state, mask = run_filter(plugin, table, first)
    assert mask.tolist() == [True, False]
    assert plugin.reserve(state, first, "n1").ok
    assumed = catalog.pvs["pv-small"]
    assert assumed.claim_ref is not None
    assert assumed.claim_ref.key == "default/c1"
    assert catalog.pvs["pv-big"].claim_ref is None
    # the next pod's claim fits only the PV left (5Gi), still on n1
    state2, mask2 = run_filter(plugin, table, second)
    assert mask2.tolist() == [True, False]
    assert plugin.reserve(state2, second, "n1").ok
    assert catalog.pvs["pv-big"].claim_ref.key == "default/c2"
    # a third pod with either claim's twin would find nothing now
    plugin.unreserve(state, first, "n1")
    plugin.unreserve(state, first, "n1")  # idempotent
    assert catalog.pvs["pv-small"].claim_ref is None
    assert catalog.pv_api.keys() == {"pv-big"}
    plugin.unreserve(state2, second, "n1")
    assert catalog.pv_api == {}
    assert catalog.pvs["pv-big"].claim_ref is None


def test_reserve_assumes_the_selected_node_of_claims_to_provision() -> None:
    table, plugin = setup([claim("c1", storage_class_name="provision")])
    pod = pod_info(make_pod("p", volumes=[pvc_volume("c1")]))
    state, mask = run_filter(plugin, table, pod)
    assert mask.tolist() == [True, True]
    assert plugin.reserve(state, pod, "n2").ok
    assert table.volumes.claims["default/c1"].annotations[SELECTED] == "n2"
    # another pod with the same claim now must go to n2 (the selected-node fast path)
    other = pod_info(make_pod("q", volumes=[pvc_volume("c1")]))
    _, mask = run_filter(plugin, table, other)
    assert mask.tolist() == [False, True]
    plugin.unreserve(state, pod, "n2")
    assert SELECTED not in table.volumes.claims["default/c1"].annotations


def test_all_bound_pod_assumes_nothing() -> None:
    table, plugin = setup(
        [claim("c1", volume="pv-1", bound=True), pv("pv-1", claim=("default", "c1"), phase="Bound")]
    )
    pod = pod_info(make_pod("p", volumes=[pvc_volume("c1")]))
    state, _ = run_filter(plugin, table, pod)
    generation = table.volumes.generation
    assert plugin.reserve(state, pod, "n1").ok
    assert table.volumes.generation == generation


def test_pod_without_claims_is_skipped() -> None:
    table, plugin = setup([])
    result = plugin.pre_filter(CycleState(), pod_info(make_pod("p")), table)
    assert result.status.code == Code.SKIP


def test_explain_names_upstream_reasons() -> None:
    table, plugin = setup([claim("c1"), pv("pv-1", affinity=local_affinity("n2"))])
    pod = pod_info(make_pod("p", volumes=[pvc_volume("c1")]))
    state, mask = run_filter(plugin, table, pod)
    assert mask.tolist() == [False, True]
    status = plugin.explain(state, pod, table, int(np.flatnonzero(~mask)[0]))
    assert status.reasons == ("node(s) didn't find available persistent volumes to bind",)


def test_explain_rows_agrees_with_explain() -> None:
    # n1: no PV (bind conflict); n2: the PV; the bound claim's PV is for n2 only
    table, plugin = setup(
        [
            claim("c1"),
            pv("pv-1", affinity=local_affinity("n2")),
            claim("c0", volume="pv-0", bound=True),
            pv("pv-0", claim=("default", "c0"), phase="Bound", affinity=local_affinity("n1")),
        ]
    )
    pod = pod_info(make_pod("p", volumes=[pvc_volume("c0", "a"), pvc_volume("c1", "b")]))
    state, mask = run_filter(plugin, table, pod)
    assert mask.tolist() == [False, False]
    rows = np.array([0, 1], dtype=np.intp)
    many = plugin.explain_rows(state, pod, table, rows)
    assert many == [plugin.explain(state, pod, table, r) for r in (0, 1)]
    assert [s.reasons for s in many] == [
        ("node(s) didn't find available persistent volumes to bind",),
        ("node(s) had volume node affinity conflict",),
    ]
