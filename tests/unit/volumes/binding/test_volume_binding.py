"""VolumeBinding PreFilter and Filter, on the scalar and the vectorised implementation.

Cases transcribed from upstream ``volumebinding/volume_binding_test.go`` (TestVolumeBinding)
and ``binder_test.go`` (TestFindPodVolumesWithoutProvisioning, ...WithProvisioning,
...WithCSIMigration is not: asched does not translate in-tree PVs). Three nodes, each
its own ``kubernetes.io/hostname``, zones ``a``, ``a`` and ``b``. Classes: ``wait``
(WaitForFirstConsumer, no provisioner), ``immediate``, ``provision`` (WaitForFirstConsumer,
provisioner ``example.com/p``) and ``zoned`` (the same, allowedTopologies zone ``a``).
"""

from __future__ import annotations

import dataclasses

import pytest

from asched.cluster.volumes import PodVolume
from asched.framework.status import Code
from tests.builders import FITS, make_node, make_pod, outcome, pod_info, profile_with, pvc_volume
from tests.unit.volumes.binding._objects import (
    IMMEDIATE,
    capacity,
    claim,
    csi_driver,
    local_affinity,
    pv,
    storage_class,
    storage_snapshot,
)

NODES = ("node-a", "node-b", "node-c")
ZONE = "topology.kubernetes.io/zone"
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
CLASSES = [
    storage_class("wait"),
    storage_class("immediate", IMMEDIATE),
    storage_class("provision", provisioner="example.com/p"),
    storage_class("zoned", provisioner="example.com/p", topologies=[{ZONE: ["a"]}]),
]
#: VolumeBinding alone (the other volume plugins read the same claims and PVs and would
#: answer some cases first; their own tests cover them)
PROFILE = profile_with(filter=["VolumeBinding"])
NODE_CONFLICT = "node(s) had volume node affinity conflict"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


def rejected(*reasons: str):
    return ("VolumeBinding", UNRESOLVABLE, reasons)


def everywhere(want):
    return [want] * len(NODES)


def nodes():
    zones = {"node-a": "a", "node-b": "a", "node-c": "b"}
    return [
        make_node(name, labels={"kubernetes.io/hostname": name, ZONE: zones[name]})
        for name in NODES
    ]


CASES = [
    # no claim: PreFilter skips, Filter does not run
    pytest.param([], [], everywhere(FITS), id="pod has no claims"),
    # bound claim, PV without node affinity: every node
    pytest.param(
        [
            claim("c1", volume="pv-1", bound=True),
            pv("pv-1", claim=("default", "c1"), phase="Bound"),
        ],
        ["c1"],
        everywhere(FITS),
        id="all bound",
    ),
    # upstream "PVC does not exist": the lister's NotFound message, at PreFilter
    pytest.param(
        [],
        ["c1"],
        everywhere(rejected('persistentvolumeclaim "c1" not found')),
        id="claim does not exist",
    ),
    # upstream "Part of PVCs do not exist": the first missing one is named
    pytest.param(
        [
            claim("c1", volume="pv-1", bound=True),
            pv("pv-1", claim=("default", "c1"), phase="Bound"),
        ],
        ["c1", "c2"],
        everywhere(rejected('persistentvolumeclaim "c2" not found')),
        id="part of the claims do not exist",
    ),
    # upstream "immediate claims not bound"
    pytest.param(
        [claim("c1", storage_class_name="immediate")],
        ["c1"],
        everywhere(rejected("pod has unbound immediate PersistentVolumeClaims")),
        id="immediate claim not bound",
    ),
    # a class that does not exist is not WaitForFirstConsumer (IsDelayBindingMode): immediate
    pytest.param(
        [claim("c1", storage_class_name="missing")],
        ["c1"],
        everywhere(rejected("pod has unbound immediate PersistentVolumeClaims")),
        id="claim of a missing class is treated as immediate",
    ),
    # a pre-bound claim (volumeName set, not bound yet) is treated as immediate
    pytest.param(
        [claim("c1", volume="pv-1"), pv("pv-1")],
        ["c1"],
        everywhere(rejected("pod has unbound immediate PersistentVolumeClaims")),
        id="prebound claim not bound yet is immediate",
    ),
    # upstream "unbound claims no matches": no PV of the class, no provisioner
    pytest.param(
        [claim("c1")],
        ["c1"],
        everywhere(rejected(BIND_CONFLICT)),
        id="unbound claim no matches",
    ),
    # upstream "bound and unbound unsatisfied": PV affinity for node-a only; no PV for c2
    pytest.param(
        [
            claim("c1", volume="pv-1", bound=True),
            pv("pv-1", claim=("default", "c1"), phase="Bound", affinity=local_affinity("node-a")),
            claim("c2"),
        ],
        ["c1", "c2"],
        [
            rejected(BIND_CONFLICT),
            rejected(NODE_CONFLICT, BIND_CONFLICT),
            rejected(NODE_CONFLICT, BIND_CONFLICT),
        ],
        id="bound and unbound unsatisfied",
    ),
    # upstream "pv not found": the claim's PV is gone
    pytest.param(
        [claim("c1", volume="pv-1", bound=True)],
        ["c1"],
        everywhere(rejected(PV_NOT_EXIST)),
        id="bound claim's PV not found",
    ),
    # upstream "pv not found claim lost": status.phase Lost, at PreFilter
    pytest.param(
        [claim("c1", volume="pv-1", bound=True, phase="Lost")],
        ["c1"],
        everywhere(
            rejected('persistentvolumeclaim "c1" bound to non-existent persistentvolume "pv-1"')
        ),
        id="claim lost",
    ),
    pytest.param(
        [claim("c1", deleting=True)],
        ["c1"],
        everywhere(rejected('persistentvolumeclaim "c1" is being deleted')),
        id="claim being deleted",
    ),
    # local PVs: only the node whose hostname the free PV names
    pytest.param(
        [claim("c1"), pv("pv-b", affinity=local_affinity("node-b"))],
        ["c1"],
        [rejected(BIND_CONFLICT), FITS, rejected(BIND_CONFLICT)],
        id="local PV binds on its node only",
    ),
    # too small (1Gi < 2Gi), wrong access mode, claimed by another: none fits
    pytest.param(
        [
            claim("c1", "2Gi"),
            pv("pv-a", "1Gi", affinity=local_affinity("node-a")),
            pv("pv-b", "5Gi", affinity=local_affinity("node-b"), modes=["ReadOnlyMany"]),
            pv("pv-c", "5Gi", affinity=local_affinity("node-c"), claim=("default", "other")),
        ],
        ["c1"],
        everywhere(rejected(BIND_CONFLICT)),
        id="PVs too small, of another access mode or claimed by another claim",
    ),
    # phase not Available, Block mode, being deleted, another class: none fits
    pytest.param(
        [
            claim("c1"),
            pv("pv-a", affinity=local_affinity("node-a"), phase="Released"),
            pv("pv-b", affinity=local_affinity("node-b"), volume_mode="Block"),
            pv("pv-c", affinity=local_affinity("node-c"), deleting=True),
            pv("pv-x", storage_class_name="provision"),
        ],
        ["c1"],
        everywhere(rejected(BIND_CONFLICT)),
        id="PVs released, of block mode, deleting or of another class",
    ),
    # selector: only pv-b carries the label the claim selects
    pytest.param(
        [
            claim("c1", selector={"matchLabels": {"tier": "fast"}}),
            pv("pv-a", affinity=local_affinity("node-a")),
            pv("pv-b", affinity=local_affinity("node-b"), labels={"tier": "fast"}),
        ],
        ["c1"],
        [rejected(BIND_CONFLICT), FITS, rejected(BIND_CONFLICT)],
        id="claim selector",
    ),
    # two claims, node-a has one PV, node-b two: a PV chosen for c1 is not reused for c2
    pytest.param(
        [
            claim("c1"),
            claim("c2"),
            pv("pv-a1", affinity=local_affinity("node-a")),
            pv("pv-b1", affinity=local_affinity("node-b")),
            pv("pv-b2", affinity=local_affinity("node-b")),
        ],
        ["c1", "c2"],
        [rejected(BIND_CONFLICT), FITS, rejected(BIND_CONFLICT)],
        id="chosen PVs are not reused within the pod",
    ),
    # sorted by size: c-small (1Gi) first takes the smallest fitting PV (1Gi) on node-a,
    # leaving 5Gi for c-big (3Gi); the other order would fail (5Gi to 1Gi, 1Gi < 3Gi)
    pytest.param(
        [
            claim("c-big", "3Gi"),
            claim("c-small", "1Gi"),
            pv("pv-a1", "1Gi", affinity=local_affinity("node-a")),
            pv("pv-a5", "5Gi", affinity=local_affinity("node-a")),
        ],
        ["c-big", "c-small"],
        [FITS, rejected(BIND_CONFLICT), rejected(BIND_CONFLICT)],
        id="claims matched smallest first",
    ),
    # a PV with a zone affinity (a general placement) mixes with local ones
    pytest.param(
        [
            claim("c1"),
            claim("c2"),
            pv("pv-zone", affinity=local_affinity("b", key=ZONE)),
            pv("pv-c", affinity=local_affinity("node-c")),
            pv("pv-any"),
        ],
        ["c1", "c2"],
        # node-c: pv-any, pv-c, pv-zone (3 fits 2); node-a/b: pv-any only (1 < 2)
        [rejected(BIND_CONFLICT), rejected(BIND_CONFLICT), FITS],
        id="local, zonal and unrestricted PVs together",
    ),
    # pre-bound PV (claimRef to c1) with affinity to node-c: it wins even where a free PV
    # would fit, and elsewhere the claim matches nothing
    pytest.param(
        [
            claim("c1"),
            pv("pv-pre", "5Gi", affinity=local_affinity("node-c"), claim=("default", "c1")),
            pv("pv-a", affinity=local_affinity("node-a")),
        ],
        ["c1"],
        [rejected(BIND_CONFLICT), rejected(BIND_CONFLICT), FITS],
        id="PV pre-bound to the claim wins",
    ),
    # provisioning: no static PV, the class has a provisioner: every node
    pytest.param(
        [claim("c1", storage_class_name="provision")],
        ["c1"],
        everywhere(FITS),
        id="dynamic provisioning",
    ),
    # allowedTopologies zone a: node-c is in zone b
    pytest.param(
        [claim("c1", storage_class_name="zoned")],
        ["c1"],
        [FITS, FITS, rejected(BIND_CONFLICT)],
        id="provisioning with allowed topologies",
    ),
    # selected-node annotation for node-b: the other nodes are skipped (fast path)
    pytest.param(
        [claim("c1", storage_class_name="provision", selected_node="node-b")],
        ["c1"],
        [rejected(BIND_CONFLICT), FITS, rejected(BIND_CONFLICT)],
        id="claim with a selected node",
    ),
    # CSIStorageCapacity: driver opts in; 10Gi in zone a, 1Gi in zone b; claim 5Gi
    pytest.param(
        [
            claim("c1", "5Gi", storage_class_name="provision"),
            csi_driver("example.com/p", capacity=True),
            capacity("cap-a", "provision", "10Gi", {ZONE: "a"}),
            capacity("cap-b", "provision", "1Gi", {ZONE: "b"}),
        ],
        ["c1"],
        [FITS, FITS, rejected(NOT_ENOUGH_SPACE)],
        id="storage capacity",
    ),
    # maximumVolumeSize wins over capacity (4Gi < 5Gi); a nil nodeTopology matches nothing
    pytest.param(
        [
            claim("c1", "5Gi", storage_class_name="provision"),
            csi_driver("example.com/p", capacity=True),
            capacity("cap-a", "provision", "10Gi", {ZONE: "a"}, maximum="4Gi"),
            capacity("cap-any", "provision", "10Gi", None),
        ],
        ["c1"],
        everywhere(rejected(NOT_ENOUGH_SPACE)),
        id="maximum volume size and nil topology",
    ),
    # the driver does not opt in: capacity objects are not consulted
    pytest.param(
        [
            claim("c1", "5Gi", storage_class_name="provision"),
            csi_driver("example.com/p", capacity=False),
        ],
        ["c1"],
        everywhere(FITS),
        id="driver without storage capacity tracking",
    ),
    # static match fails on node-a/b, so c1 is provisioned there; zoned class: zone a only
    pytest.param(
        [
            claim("c1", storage_class_name="zoned"),
            pv("pv-c", "1Gi", "zoned", affinity=local_affinity("node-c")),
        ],
        ["c1"],
        everywhere(FITS),
        id="static match else provisioning",
    ),
]


@pytest.mark.parametrize(("objects", "claims", "want"), CASES)
def test_volume_binding(evaluate, objects, claims, want) -> None:
    volumes = [pvc_volume(name, f"v{i}") for i, name in enumerate(claims)]
    pod = pod_info(make_pod("p", volumes=volumes))
    snapshot = storage_snapshot(nodes(), [*CLASSES, *objects])
    evaluation = evaluate(snapshot, pod, PROFILE)
    assert [outcome(evaluation, n) for n in NODES] == want


EPHEMERAL_CASES = [
    pytest.param(
        [],
        rejected(
            'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"'
        ),
        id="ephemeral claim not created yet",
    ),
    pytest.param(
        [claim("p-scratch", storage_class_name="provision", owner="someone-else")],
        rejected("PVC default/p-scratch was not created for pod default/p (pod is not owner)"),
        id="ephemeral claim not owned by the pod",
    ),
    pytest.param(
        [claim("p-scratch", storage_class_name="provision", owner="pod-uid")],
        FITS,
        id="ephemeral claim owned by the pod",
    ),
]


@pytest.mark.parametrize(("objects", "want"), EPHEMERAL_CASES)
def test_generic_ephemeral_volume(evaluate, objects, want) -> None:
    raw = make_pod("p", volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}])
    pod = dataclasses.replace(
        pod_info(raw), uid="pod-uid", volumes=(PodVolume("scratch", "ephemeral"),)
    )
    snapshot = storage_snapshot(nodes(), [*CLASSES, *objects])
    evaluation = evaluate(snapshot, pod, PROFILE)
    assert [outcome(evaluation, n) for n in NODES] == everywhere(want)
