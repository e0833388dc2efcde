"""VolumeZone: the bound PV's zone and region labels must match the node's.

Transcribed from upstream ``volumezone/volume_zone_test.go`` (TestSingleZone,
TestMultiZone, TestWithBinding and the queueing-hint tests). Upstream's fake listers
word NotFound as ``storageclasses.storage.k8s.io "Class_0" not found``; the informer
listers kube-scheduler runs with (and asched) say ``storageclass.storage.k8s.io``.
Each case runs on both implementations through ``evaluate``.
"""

from __future__ import annotations

import pytest

from asched.cluster.volumes import WAIT_FOR_FIRST_CONSUMER
from asched.framework.builtin.volume_zone import VolumeZone
from asched.framework.events import ClusterEvent
from asched.framework.status import Code
from tests.builders import FITS, make_node, pod_info, profile_with
from tests.unit.volumes.limits._support import (
    claim,
    pod_with,
    pv,
    pvc,
    rejected,
    snapshot,
    storage_class,
    verdicts,
)

NAME = "VolumeZone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
CONFLICT = rejected(
    NAME, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had no available volume zone"
)


def unresolvable(reason: str) -> tuple[str, Code, tuple[str, ...]]:
    return rejected(NAME, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reason)


SINGLE_ZONE_STORAGE = [
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", {BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", {ZONE: "us-west1-a", REGION: "us-west1-a"}),
    claim("PVC_1", volume="Vol_1"),
    claim("PVC_2", volume="Vol_2"),
    claim("PVC_3", volume="Vol_3"),
    claim("PVC_4", volume="Vol_not_exist"),
    claim("PVC_Stable_1", volume="Vol_Stable_1"),
    claim("PVC_Stable_2", volume="Vol_Stable_2"),
    claim("PVC_Stable_3", volume="Vol_Stable_3"),
]

SINGLE_ZONE = [
    # no claims: PreFilter Skip, the node passes
    pytest.param(None, {BETA_ZONE: "us-west1-a"}, FITS, id="pod without volume"),
    # a node with none of the four topology labels passes (single-zone clusters)
    pytest.param("PVC_1", {}, FITS, id="node without labels"),
    pytest.param(
        "PVC_1",
        {BETA_ZONE: "us-west1-a", "uselessLabel": "none"},
        FITS,
        id="beta zone label matched",
    ),
    pytest.param(
        "PVC_2",
        {BETA_REGION: "us-west1", "uselessLabel": "none"},
        FITS,
        id="beta region label matched",
    ),
    pytest.param(
        "PVC_2",
        {BETA_REGION: "no_us-west1", "uselessLabel": "none"},
        CONFLICT,
        id="beta region label doesn't match",
    ),
    pytest.param(
        "PVC_1",
        {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"},
        CONFLICT,
        id="beta zone label doesn't match",
    ),
    pytest.param("PVC_Stable_1", {ZONE: "us-west1-a"}, FITS, id="zone label matched"),
    pytest.param("PVC_Stable_2", {REGION: "us-west1"}, FITS, id="region label matched"),
    pytest.param(
        "PVC_Stable_2", {REGION: "no_us-west1"}, CONFLICT, id="region label doesn't match"
    ),
    pytest.param("PVC_Stable_1", {ZONE: "no_us-west1-a"}, CONFLICT, id="zone label doesn't match"),
    # the PV's region label has no counterpart on the node
    pytest.param(
        "PVC_Stable_3",
        {ZONE: "us-west1-a"},
        CONFLICT,
        id="pv with zone and region, node with only zone",
    ),
    # a GA PV label does not fall back to the node's beta label
    pytest.param(
        "PVC_Stable_1", {BETA_ZONE: "us-west1-a"}, CONFLICT, id="pv with zone,node with beta zone"
    ),
    # a beta PV label falls back to the node's GA label
    pytest.param(
        "PVC_1", {ZONE: "us-west1-a"}, FITS, id="pv with beta label,node with ga label, matched"
    ),
    pytest.param(
        "PVC_1",
        {ZONE: "us-west1-b"},
        CONFLICT,
        id="pv with beta label,node with ga label, don't match",
    ),
    # not transcribed upstream, same rules: the bound PV does not exist
    pytest.param(
        "PVC_4",
        {ZONE: "us-west1-a"},
        unresolvable('persistentvolume "Vol_not_exist" not found'),
        id="bound pv missing",
    ),
    pytest.param(
        "PVC_missing",
        {ZONE: "us-west1-a"},
        unresolvable('persistentvolumeclaim "PVC_missing" not found'),
        id="claim missing",
    ),
    pytest.param(
        "",
        {ZONE: "us-west1-a"},
        unresolvable("PersistentVolumeClaim had no name"),
        id="claim had no name",
    ),
]


def _evaluate(evaluate, claim_name, labels, storage):
    volumes = [] if claim_name is None else [pvc(claim_name, "data")]
    pod = pod_info(pod_with(*volumes, name="pod_1"))
    nodes = [make_node("host1", labels=labels)]
    return evaluate(snapshot(nodes, storage=storage), pod, profile_with(filter=[NAME]))


@pytest.mark.parametrize(("claim_name", "labels", "want"), SINGLE_ZONE)
def test_single_zone(evaluate, claim_name, labels, want) -> None:
    evaluation = _evaluate(evaluate, claim_name, labels, SINGLE_ZONE_STORAGE)
    assert verdicts(evaluation, ["host1"]) == [want]


MULTI_ZONE_STORAGE = [
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", {BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {ZONE: "us-west1-c__us-west1-a"}),
    # not upstream: a value with an empty part cannot be parsed and is ignored
    pv("Vol_Bad", {ZONE: "us-west1-c____us-west1-a"}),
    claim("PVC_1", volume="Vol_1"),
    claim("PVC_2", volume="Vol_2"),
    claim("PVC_3", volume="Vol_3"),
    claim("PVC_Stable_1", volume="Vol_Stable_1"),
    claim("PVC_Stable_2", volume="Vol_Stable_2"),
    claim("PVC_Bad", volume="Vol_Bad"),
]

MULTI_ZONE = [
    pytest.param("PVC_3", {}, FITS, id="node without labels"),
    # "us-west1-c__us-west1-a" allows either zone
    pytest.param("PVC_3", {BETA_ZONE: "us-west1-a"}, FITS, id="beta zone label matched"),
    pytest.param("PVC_1", {BETA_ZONE: "us-west1-b"}, CONFLICT, id="beta zone label doesn't match"),
    pytest.param("PVC_Stable_2", {ZONE: "us-west1-a"}, FITS, id="zone label matched"),
    pytest.param("PVC_Stable_1", {ZONE: "us-west1-b"}, CONFLICT, id="zone label doesn't match"),
    # the only label is ignored: no topology, PreFilter Skip
    pytest.param("PVC_Bad", {ZONE: "us-west1-b"}, FITS, id="unparsable multi-zone value ignored"),
]


@pytest.mark.parametrize(("claim_name", "labels", "want"), MULTI_ZONE)
def test_multi_zone(evaluate, claim_name, labels, want) -> None:
    evaluation = _evaluate(evaluate, claim_name, labels, MULTI_ZONE_STORAGE)
    assert verdicts(evaluation, ["host1"]) == [want]


BINDING_STORAGE = [
    storage_class("Class_Immediate"),
    storage_class("Class_Wait", mode=WAIT_FOR_FIRST_CONSUMER),
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    claim("PVC_1", volume="Vol_1"),
    claim("PVC_NoSC", storage_class="Class_0"),
    claim("PVC_EmptySC"),
    claim("PVC_WaitSC", storage_class="Class_Wait"),
    claim("PVC_ImmediateSC", storage_class="Class_Immediate"),
]

WITH_BINDING = [
    pytest.param("PVC_1", FITS, id="label zone failure domain matched"),
    pytest.param(
        "PVC_EmptySC",
        unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
        id="unbound volume empty storage class",
    ),
    pytest.param(
        "PVC_NoSC",
        unresolvable('storageclass.storage.k8s.io "Class_0" not found'),
        id="unbound volume no storage class",
    ),
    # upstream's class has no binding mode ("VolumeBindingMode not set"); a decoded class
    # always has one (the API server defaults it to Immediate): an unbound Immediate claim
    pytest.param(
        "PVC_ImmediateSC",
        unresolvable("PersistentVolume had no name"),
        id="unbound volume immediate binding mode",
    ),
    # unbound WaitForFirstConsumer claims are skipped: no topology, PreFilter Skip
    pytest.param("PVC_WaitSC", FITS, id="unbound volume wait binding mode"),
]


@pytest.mark.parametrize(("claim_name", "want"), WITH_BINDING)
def test_with_binding(evaluate, claim_name, want) -> None:
    labels = {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}
    evaluation = _evaluate(evaluate, claim_name, labels, BINDING_STORAGE)
    assert verdicts(evaluation, ["host1"]) == [want]


def test_label_ids_over_many_nodes(evaluate) -> None:
    # one PV in zone b of region r1: rows differ in zone, region and which labels exist
    nodes = [
        make_node("a", labels={ZONE: "b", REGION: "r1"}),  # both match
        make_node("b", labels={ZONE: "c", REGION: "r1"}),  # zone differs
        make_node("c", labels={REGION: "r1"}),  # zone label missing
        make_node("d", labels={"other": "x"}),  # no topology label at all: passes
        make_node("e", labels={BETA_ZONE: "b", BETA_REGION: "r1"}),  # GA PV keys, beta node
    ]
    storage = [pv("v", {ZONE: "b", REGION: "r1"}), claim("c", volume="v")]
    pod = pod_info(pod_with(pvc("c")))
    evaluation = evaluate(snapshot(nodes, storage=storage), pod, profile_with(filter=[NAME]))
    assert verdicts(evaluation, "abcde") == [FITS, CONFLICT, CONFLICT, FITS, CONFLICT]


POD = pod_info(pod_with(pvc("PVC_1"), name="pod_1"))

HINTS = [
    pytest.param(
        ClusterEvent.PVC_ADD,
        claim("PVC_1", volume="Vol_1"),
        True,
        id="pvc-was-added-and-pod-was-bound-to-the-pvc",
    ),
    pytest.param(
        ClusterEvent.PVC_UPDATE,
        claim("PVC_1", volume="Vol_1"),
        True,
        id="pvc-was-updated-and-pod-was-bound-to-the-pvc",
    ),
    pytest.param(
        ClusterEvent.PVC_ADD,
        claim("PVC_2", volume="Vol_1"),
        False,
        id="pvc-was-added-and-pod-was-bound-to-different-pvc",
    ),
    pytest.param(
        ClusterEvent.PVC_ADD,
        claim("PVC_1", namespace="ns1"),
        False,
        id="pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns",
    ),
    pytest.param(
        ClusterEvent.STORAGE_CLASS_ADD,
        storage_class("SC_1"),
        False,
        id="sc-is-not-wait-for-first-consumer",
    ),
    pytest.param(
        ClusterEvent.STORAGE_CLASS_ADD,
        storage_class("SC_1", mode=WAIT_FOR_FIRST_CONSUMER),
        True,
        id="new-sc-is-wait-for-first-consumer-mode",
    ),
    pytest.param(
        ClusterEvent.PV_ADD, pv("Vol_1", {BETA_ZONE: "us-west1-b"}), True, id="new-pv-was-added"
    ),
]


@pytest.mark.parametrize(("event", "changed", "want"), HINTS)
def test_queueing_hints(event, changed, want) -> None:
    assert event in VolumeZone.events
    assert VolumeZone().queueing_hint(event, POD, changed) is want


def test_pvc_hint_when_pod_refers_no_pvc() -> None:
    pod = pod_info(pod_with(name="pod_1"))
    assert VolumeZone().queueing_hint(ClusterEvent.PVC_ADD, pod, claim("PVC_1")) is False
