"""Differential test: the vectorised VolumeBinding agrees with the scalar one on every node.

Hypothesis builds a few nodes (hostname, zone, sometimes a ``disk`` label), PVs of two
classes with random size, access modes, volume mode, phase, claimRef (free, pre-bound to
one of the pod's claims, or to another claim), labels and node affinity (none, a
hostname ``In`` list, a zone ``In``, or a two-expression term), a pod of one to three
claims (bound, WaitForFirstConsumer with or without a selector or selected node,
provisioned, immediate), capacities and a CSIDriver. Both implementations evaluate the
pod with the default profile; the whole Evaluation must be equal. Derandomized.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from asched.config.types import VolumeBindingArgs
from asched.explain.engine import evaluate as vectorised, table_of
from asched.framework.builtin.volume_binding import VolumeBinding
from asched.framework.cycle_state import CycleState
from asched.tools.reference import evaluate as reference
from tests.builders import default_profile, make_node, make_pod, pod_info, pvc_volume
from tests.unit.volumes.binding._objects import (
    capacity,
    claim,
    csi_driver,
    local_affinity,
    pv,
    storage_class,
    storage_snapshot,
)

ZONE = "topology.kubernetes.io/zone"
HOSTS = ("n0", "n1", "n2", "n3")
SIZES = ("1Gi", "2Gi", "3Gi", "5Gi")
MODES = (["ReadWriteOnce"], ["ReadOnlyMany"], ["ReadWriteOnce", "ReadWriteMany"])
CLAIMS = ("c0", "c1", "c2")


@st.composite
def nodes(draw: Any) -> list[dict[str, Any]]:
    count = draw(st.integers(1, len(HOSTS)))
    out = []
    for name in HOSTS[:count]:
        labels = {"kubernetes.io/hostname": name, ZONE: draw(st.sampled_from("ab"))}
        if draw(st.booleans()):
            labels["disk"] = draw(st.sampled_from(["ssd", "hdd"]))
        out.append(make_node(name, labels=labels))
    return out


@st.composite
def affinities(draw: Any) -> dict[str, Any] | None:
    kind = draw(st.sampled_from(["none", "host", "zone", "two"]))
    if kind == "none":
        return None
    if kind == "host":
        hosts = draw(st.lists(st.sampled_from(HOSTS), min_size=1, max_size=3))
        return local_affinity(*hosts)
    if kind == "zone":
        return local_affinity(draw(st.sampled_from("ab")), key=ZONE)
    return {
        "required": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": ZONE, "operator": "In", "values": ["a"]},
                        {"key": "disk", "operator": "Exists"},
                    ]
                }
            ]
        }
    }


@st.composite
def volumes(draw: Any) -> list[dict[str, Any]]:
    out = []
    for index in range(draw(st.integers(0, 8))):
        ref = draw(st.sampled_from([None, None, None, "mine", "other"]))
        claim_ref = None
        if ref == "mine":
            claim_ref = ("default", draw(st.sampled_from(CLAIMS)))
        elif ref == "other":
            claim_ref = ("default", "someone")
        out.append(
            pv(
                f"pv-{index}",
                draw(st.sampled_from(SIZES)),
                draw(st.sampled_from(["wait", "wait", "zoned"])),
                affinity=draw(affinities()),
                claim=claim_ref,
                phase=draw(st.sampled_from(["Available", "Available", "Available", "Released"])),
                modes=draw(st.sampled_from(MODES)),
                volume_mode=draw(st.sampled_from([None, None, "Block"])),
                labels=draw(st.sampled_from([{}, {"tier": "fast"}])),
                deleting=draw(st.booleans()) and draw(st.booleans()),
            )
        )
    return out


@st.composite
def claims(draw: Any) -> list[dict[str, Any]]:
    out = []
    for name in CLAIMS[: draw(st.integers(1, len(CLAIMS)))]:
        kind = draw(st.sampled_from(["wait", "wait", "wait", "zoned", "bound", "provision"]))
        size = draw(st.sampled_from(SIZES))
        if kind == "bound":
            out.append(
                claim(
                    name, size, volume=draw(st.sampled_from(["pv-0", "pv-1", "gone"])), bound=True
                )
            )
            continue
        selector = (
            {"matchLabels": {"tier": "fast"}}
            if draw(st.booleans()) and draw(st.booleans())
            else None
        )
        selected = draw(st.sampled_from([None, None, None, "n0", "n1"]))
        out.append(
            claim(
                name,
                size,
                kind,
                selector=selector,
                selected_node=selected,
                modes=draw(st.sampled_from(MODES[:2])),
            )
        )
    return out


@st.composite
def extras(draw: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if draw(st.booleans()):
        out.append(csi_driver("example.com/p", capacity=True))
        for index in range(draw(st.integers(0, 3))):
            topology = draw(
                st.sampled_from(
                    [None, {ZONE: "a"}, {ZONE: "b"}, {"disk": "ssd"}, {ZONE: "a", "disk": "ssd"}]
                )
            )
            out.append(
                capacity(
                    f"cap-{index}",
                    draw(st.sampled_from(["provision", "zoned"])),
                    draw(st.sampled_from([None, "1Gi", "4Gi"])),
                    topology,
                    maximum=draw(st.sampled_from([None, None, "2Gi"])),
                )
            )
    return out


CLASSES = [
    storage_class("wait"),
    storage_class("provision", provisioner="example.com/p"),
    storage_class("zoned", provisioner="example.com/p", topologies=[{ZONE: ["a"]}]),
]


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(nodes(), volumes(), claims(), extras())
def test_vectorised_matches_reference(node_list, pv_list, claim_list, extra) -> None:
    names = [c["metadata"]["name"] for c in claim_list]
    pod = pod_info(make_pod("p", volumes=[pvc_volume(n, f"v{i}") for i, n in enumerate(names)]))
    objects = [*CLASSES, *pv_list, *claim_list, *extra]
    want = reference(storage_snapshot(node_list, objects), pod, default_profile())
    got = vectorised(storage_snapshot(node_list, objects), pod, default_profile())
    assert got == want


@st.composite
def free_volumes(draw: Any) -> list[dict[str, Any]]:
    """Mostly free PVs that fit the claims below (so that pods compete for them)."""
    return [
        pv(
            f"pv-{index}",
            draw(st.sampled_from(SIZES)),
            "wait",
            affinity=draw(st.one_of(st.none(), affinities())),
            modes=["ReadWriteOnce"],
        )
        for index in range(draw(st.integers(1, 8)))
    ]


@st.composite
def competing_claims(draw: Any) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 2))
    return [claim(CLAIMS[i], draw(st.sampled_from(SIZES[:3]))) for i in range(count)]


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(nodes(), free_volumes(), st.lists(competing_claims(), min_size=2, max_size=4))
def test_agreement_holds_as_reservations_change_the_index(node_list, pv_list, pods) -> None:
    """Pods one after the other on one catalog: each is evaluated by both, then reserved
    on the selected node (the catalog's index is updated incrementally in between)."""
    claim_objects = []
    specs = []
    for number, claim_list in enumerate(pods):
        names = []
        for raw in claim_list:
            raw["metadata"]["name"] = f"{raw['metadata']['name']}-{number}"
            names.append(raw["metadata"]["name"])
            claim_objects.append(raw)
        specs.append(names)
    snapshot = storage_snapshot(node_list, [*CLASSES, *pv_list, *claim_objects])
    plugin = VolumeBinding(VolumeBindingArgs())
    for number, names in enumerate(specs):
        raw_pod = make_pod(
            f"p{number}", volumes=[pvc_volume(n, f"v{i}") for i, n in enumerate(names)]
        )
        pod = pod_info(raw_pod)
        want = reference(snapshot, pod, default_profile())
        assert vectorised(snapshot, pod, default_profile()) == want
        if want.selected is not None:
            table = table_of(snapshot)
            state = CycleState()
            assert plugin.pre_filter(state, pod, table).status.ok
            assert plugin.filter(state, pod, table, table.rows)[table.row_of(want.selected)]
            assert plugin.reserve(state, pod, want.selected).ok
