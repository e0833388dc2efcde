"""NodeVolumeLimits: CSI attach limits per node and driver.

Transcribed from upstream ``nodevolumelimits/csi_test.go`` (TestCSILimits, v1.33 cases:
the VolumeAttachment cases are later than v1.33; the Node-allocatable limit sources
are gone). The fixture is upstream's: for every driver of a case, PVs
``csi-<driver>-0..3`` (CSI ones; AWS EBS in-tree ones for ``kubernetes.io/aws-ebs``,
non-migratable ones for ``kubernetes.io/hostpath``) each bound by the claim of the same
name; ``csi-4`` an unbound claim of class ``csi-sc`` (provisioner: the case's first
driver), ``csi-5`` an unbound claim without class, ``csi-6`` a claim of class
``csi-sc`` bound to a PV that does not exist. The node's CSINode lists every driver
with ``allocatable.count = maxVols`` ("csinode"), without a count
("csinode-with-no-limit"), or the node has no CSINode (""). Upstream's fake lister
words NotFound as ``persistentvolumeclaims "abc-xyz" not found``; the informer listers
kube-scheduler runs with say ``persistentvolumeclaim``.
"""

from __future__ import annotations

from typing import Any

import pytest

from asched.cluster.volumes import CSINode
from asched.framework.builtin.node_volume_limits import NodeVolumeLimits
from asched.framework.events import ClusterEvent
from asched.framework.status import Code
from tests.builders import FITS, make_node, make_pod, pod_info, profile_with
from tests.unit.volumes.limits._support import (
    claim,
    ebs,
    ephemeral,
    pv,
    pvc,
    rejected,
    snapshot,
    storage_class,
    verdicts,
)

NAME = "NodeVolumeLimits"
NODE = "node-for-max-pd-test-1"
EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
IN_TREE_EBS = "kubernetes.io/aws-ebs"
HOSTPATH = "kubernetes.io/hostpath"
EXCEEDED = rejected(NAME, Code.UNSCHEDULABLE, "node(s) exceed max volume count")


def _pod(*claims: str) -> dict[str, Any]:
    return make_pod(volumes=[pvc(c, f"v{i}") for i, c in enumerate(claims)])


def _ephemeral_pod(uid: str, *names: str) -> dict[str, Any]:
    raw = make_pod("abc", "test", volumes=[ephemeral(n) for n in names])
    raw["metadata"]["uid"] = uid
    return raw


def _ephemeral_claim(name: str, owner: str | None) -> object:
    return claim(name, storage_class="csi-sc", namespace="test", owners=[owner] if owner else [])


RUNNING = _pod(f"csi-{EBS}-3")
PENDING = _pod("csi-4")
UNBOUND_2 = _pod("csi-4")
MISSING_PV = _pod("csi-6")
NO_SC = _pod("csi-5")
GCE_TWO = _pod(f"csi-{GCE}-1", f"csi-{GCE}-2")
IN_TREE_ONE = _pod(f"csi-{IN_TREE_EBS}-0")
IN_TREE_TWO = _pod(f"csi-{IN_TREE_EBS}-1", f"csi-{IN_TREE_EBS}-2")
EBS_ONE = _pod(f"csi-{EBS}-0")
EBS_TWO = _pod(f"csi-{EBS}-1", f"csi-{EBS}-2")
NON_MIGRATABLE = _pod(f"csi-{HOSTPATH}-0")
EPHEMERAL = _ephemeral_pod("12345", "xyz")
EPHEMERAL_TWO = _ephemeral_pod("12345II", "x", "y")
EPHEMERAL_CLAIM = _ephemeral_claim("abc-xyz", "12345")
CONFLICTING_CLAIM = _ephemeral_claim("abc-xyz", None)
EPHEMERAL_X = _ephemeral_claim("abc-x", "12345II")
EPHEMERAL_Y = _ephemeral_claim("abc-y", "12345II")
INLINE = make_pod(volumes=[ebs("aws-inline1")])
INLINE_SAME_ID = make_pod(volumes=[ebs(f"csi-{EBS}-1")])
CONFIGMAP_SECRET = [
    {"name": "cm", "configMap": {"name": "cm"}},
    {"name": "secret", "secret": {"secretName": "s"}},
]
ONLY_CONFIGMAP_SECRET = make_pod(volumes=CONFIGMAP_SECRET)
PVC_WITH_CONFIGMAP = make_pod(volumes=[*CONFIGMAP_SECRET, pvc(f"csi-{EBS}-0")])
EPHEMERAL_WITH_CONFIGMAP = make_pod("abc", "test", volumes=[*CONFIGMAP_SECRET, ephemeral("xyz")])
INLINE_WITH_CONFIGMAP = make_pod(volumes=[*CONFIGMAP_SECRET, ebs("aws-inline1")])


def _storage(drivers: list[str], limit_source: str, max_vols: int) -> list[object]:
    out: list[object] = [storage_class("csi-sc", drivers[0])]
    for driver in drivers:
        for j in range(4):
            name = f"csi-{driver}-{j}"
            if driver == IN_TREE_EBS:
                out.append(pv(name, in_tree=(IN_TREE_EBS, name)))
            elif driver == HOSTPATH:
                out.append(pv(name, in_tree=(HOSTPATH, name)))
            else:
                out.append(pv(name, csi=(driver, name)))
            out.append(claim(name, volume=name))
    out += [
        claim("csi-4", storage_class="csi-sc"),
        claim("csi-5"),
        claim("csi-6", storage_class="csi-sc", volume="missing-in-action"),
    ]
    if limit_source == "csinode":
        out.append(CSINode(NODE, limits=dict.fromkeys(drivers, max_vols)))
    elif limit_source == "csinode-with-no-limit":
        out.append(CSINode(NODE, limits=dict.fromkeys(drivers)))
    return out


def case(
    new: dict[str, Any],
    existing: list[dict[str, Any]],
    max_vols: int,
    drivers: list[str],
    limit_source: str,
    want: object,
    *,
    extra: tuple[object, ...] = (),
    id: str,
) -> Any:
    return pytest.param(new, existing, max_vols, drivers, limit_source, want, extra, id=id)


CASES = [
    # ebs: attached 3 (running -3, two-vol -1 -2) + new 1 (-0) = 4 <= 4
    case(
        EBS_ONE,
        [RUNNING, EBS_TWO],
        4,
        [EBS],
        "csinode",
        FITS,
        id="fits when node volume limit >= new pods CSI volume",
    ),
    # 3 + 1 = 4 > 2
    case(
        EBS_ONE,
        [RUNNING, EBS_TWO],
        2,
        [EBS],
        "csinode",
        EXCEEDED,
        id="doesn't when node volume limit <= pods CSI volume",
    ),
    case(
        EBS_ONE,
        [RUNNING, EBS_TWO],
        2,
        [EBS],
        "csinode-with-no-limit",
        FITS,
        id="should when driver does not support volume limits",
    ),
    # the pending claim csi-4 counts under the class's provisioner: 1 + 2 + 1 = 4 > 2
    case(
        EBS_ONE,
        [PENDING, EBS_TWO],
        2,
        [EBS],
        "csinode",
        EXCEEDED,
        id="count pending PVCs towards volume limit <= pods CSI volume",
    ),
    # two pods with the same pending claim count it once: 1 + 2 + 1 = 4 <= 4
    case(
        EBS_ONE,
        [PENDING, UNBOUND_2, EBS_TWO],
        4,
        [EBS],
        "csinode",
        FITS,
        id="count multiple pending pvcs towards volume limit >= pods CSI volume",
    ),
    # csi-6's PV is missing: counted by its class: 1 + 2 + 1 = 4 > 2
    case(
        EBS_ONE,
        [MISSING_PV, EBS_TWO],
        2,
        [EBS],
        "csinode",
        EXCEEDED,
        id="should count PVCs with invalid PV name but valid SC",
    ),
    # csi-5 has no class: not counted: 1 (running) + 1 = 2 <= 2
    case(
        EBS_ONE,
        [RUNNING, NO_SC],
        2,
        [EBS],
        "csinode",
        FITS,
        id="don't count pvcs with missing SC towards volume limit",
    ),
    # ebs: 2 attached + 1 = 3 > 2 (the gce volumes count under their own driver)
    case(
        EBS_ONE,
        [GCE_TWO, EBS_TWO],
        2,
        [EBS, GCE],
        "csinode",
        EXCEEDED,
        id="count pvcs with the same type towards volume limit",
    ),
    # gce: 0 attached + 2 = 2 <= 2
    case(
        GCE_TWO,
        [EBS_TWO, RUNNING],
        2,
        [EBS, GCE],
        "csinode",
        FITS,
        id="don't count pvcs with different type towards volume limit",
    ),
    # in-tree EBS PVs count under ebs.csi.aws.com: 2 + 1 = 3 > 2
    case(
        IN_TREE_ONE,
        [IN_TREE_TWO],
        2,
        [IN_TREE_EBS, EBS],
        "csinode",
        EXCEEDED,
        id="should count in-tree volumes if migration is enabled",
    ),
    # no CSINode: no limits, and in-tree volumes are not migrated
    case(INLINE, [IN_TREE_TWO], 0, [IN_TREE_EBS, EBS], "", FITS, id="nil csi node"),
    # the pending claim's class provisioner is kubernetes.io/aws-ebs, migrated: 2 + 1 = 3 > 2
    case(
        PENDING,
        [IN_TREE_TWO],
        2,
        [IN_TREE_EBS, EBS],
        "csinode",
        EXCEEDED,
        id="should count unbound in-tree volumes if migration is enabled",
    ),
    case(
        IN_TREE_ONE,
        [IN_TREE_TWO],
        2,
        [IN_TREE_EBS, EBS],
        "csinode-with-no-limit",
        FITS,
        id="should not limit pod if volume used does not report limits",
    ),
    # hostpath is not migratable: nothing new to count
    case(
        NON_MIGRATABLE,
        [EBS_TWO],
        2,
        [HOSTPATH, EBS],
        "csinode",
        FITS,
        id="should not count non-migratable in-tree volumes",
    ),
    # inline EBS counts under ebs.csi.aws.com: 2 + 1 = 3 > 2
    case(
        INLINE,
        [IN_TREE_TWO],
        2,
        [IN_TREE_EBS, EBS],
        "csinode",
        EXCEEDED,
        id="should count in-tree inline volumes if migration is enabled",
    ),
    # 2 (csi) + 1 (in-tree) = 3 > 2
    case(
        IN_TREE_ONE,
        [EBS_TWO],
        2,
        [IN_TREE_EBS, EBS],
        "csinode",
        EXCEEDED,
        id="should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
    ),
    # 2 (csi) + 1 (in-tree PV) + 1 (inline) = 4 > 3
    case(
        INLINE,
        [EBS_TWO, IN_TREE_ONE],
        3,
        [IN_TREE_EBS, EBS],
        "csinode",
        EXCEEDED,
        id="should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
    ),
    # the inline volume translates to ebs.csi.aws.com/csi-ebs.csi.aws.com-1, already attached: 3 + 0 <= 3
    case(
        INLINE_SAME_ID,
        [EBS_TWO, IN_TREE_ONE],
        3,
        [IN_TREE_EBS, EBS],
        "csinode",
        FITS,
        id="should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
    ),
    # 2 (in-tree) + 1 (csi) = 3 > 2
    case(
        EBS_ONE,
        [IN_TREE_TWO],
        2,
        [IN_TREE_EBS, EBS],
        "csinode",
        EXCEEDED,
        id="should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
    ),
    case(
        EPHEMERAL,
        [],
        0,
        [EBS],
        "csinode-with-no-limit",
        rejected(
            NAME,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',
        ),
        id="ephemeral volume missing",
    ),
    case(
        EPHEMERAL,
        [],
        0,
        [EBS],
        "csinode-with-no-limit",
        FITS,
        extra=(EPHEMERAL_CLAIM,),
        id="ephemeral volume unbound",
    ),
    # 1 (running) + 2 (two-vol) + 1 (the ephemeral claim, by its class) = 4 > 2
    case(
        EPHEMERAL,
        [RUNNING, EBS_TWO],
        2,
        [EBS],
        "csinode",
        EXCEEDED,
        extra=(EPHEMERAL_CLAIM,),
        id="ephemeral doesn't when node volume limit <= pods CSI volume",
    ),
    # 1 (running) + 2 (abc-x, abc-y) + 1 = 4 > 2
    case(
        EBS_ONE,
        [RUNNING, EPHEMERAL_TWO],
        2,
        [EBS],
        "csinode",
        EXCEEDED,
        extra=(EPHEMERAL_X, EPHEMERAL_Y),
        id="ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
    ),
    # 1 + 1 (abc-xyz) + 2 + 1 = 5 > 3
    case(
        EBS_ONE,
        [RUNNING, EPHEMERAL, EBS_TWO],
        3,
        [EBS],
        "csinode",
        EXCEEDED,
        extra=(EPHEMERAL_CLAIM,),
        id="persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
    ),
    # 5 <= 5
    case(
        EBS_ONE,
        [RUNNING, EPHEMERAL, EBS_TWO],
        5,
        [EBS],
        "csinode",
        FITS,
        extra=(EPHEMERAL_CLAIM,),
        id="persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
    ),
    # PreFilter Skip: Filter does not run
    case(
        ONLY_CONFIGMAP_SECRET,
        [],
        2,
        [EBS],
        "csinode",
        FITS,
        id="skip Filter when the pod only uses secrets and configmaps",
    ),
    case(
        PVC_WITH_CONFIGMAP,
        [],
        2,
        [EBS],
        "csinode",
        FITS,
        id="don't skip Filter when the pod has pvcs",
    ),
    case(
        EPHEMERAL_WITH_CONFIGMAP,
        [],
        0,
        [EBS],
        "csinode-with-no-limit",
        rejected(
            NAME,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',
        ),
        id="don't skip Filter when the pod has ephemeral volumes",
    ),
    # 2 (in-tree) + 1 (inline) = 3 > 2
    case(
        INLINE_WITH_CONFIGMAP,
        [IN_TREE_TWO],
        2,
        [IN_TREE_EBS, EBS],
        "csinode",
        EXCEEDED,
        id="don't skip Filter when the pod has inline migratable volumes",
    ),
]


@pytest.mark.parametrize(
    ("new", "existing", "max_vols", "drivers", "source", "want", "extra"), CASES
)
def test_csi_limits(evaluate, new, existing, max_vols, drivers, source, want, extra) -> None:
    nodes = [make_node(NODE)]
    pods = []
    for index, raw in enumerate(existing):
        bound = {**raw, "metadata": {**raw["metadata"]}, "spec": {**raw["spec"], "nodeName": NODE}}
        if raw["metadata"]["namespace"] == "default":
            bound["metadata"]["name"] = f"existing-{index}"
        pods.append(bound)
    storage = [*_storage(drivers, source, max_vols), *extra]
    evaluation = evaluate(
        snapshot(nodes, pods, storage), pod_info(new), profile_with(filter=[NAME])
    )
    assert verdicts(evaluation, [NODE]) == [want]


def test_ephemeral_volume_not_owned(evaluate) -> None:
    # the claim abc-xyz exists but the pod is not its controller: an error (upstream's
    # Filter error; asched's PreFilter), the attempt fails with the message
    storage = [*_storage([EBS], "csinode-with-no-limit", 0), CONFLICTING_CLAIM]
    evaluation = evaluate(
        snapshot([make_node(NODE)], (), storage), pod_info(EPHEMERAL), profile_with(filter=[NAME])
    )
    verdict = evaluation.nodes[NODE]
    assert (verdict.feasible, verdict.code, verdict.reasons) == (
        False,
        Code.ERROR,
        ("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)",),
    )


def test_limits_per_node(evaluate) -> None:
    # three nodes, limit 2 for ebs: n1 holds two ebs volumes, n2 one, n3 none and no CSINode
    # (no limit); the new pod adds one: n1 2 + 1 > 2, n2 1 + 1 <= 2, n3 unlimited
    nodes = [make_node("n1"), make_node("n2"), make_node("n3")]
    pods = [
        make_pod("a", volumes=[pvc(f"csi-{EBS}-1"), pvc(f"csi-{EBS}-2")], node_name="n1"),
        make_pod("b", volumes=[pvc(f"csi-{EBS}-3")], node_name="n2"),
    ]
    storage = [
        *_storage([EBS], "", 0),
        CSINode("n1", limits={EBS: 2}),
        CSINode("n2", limits={EBS: 2}),
    ]
    evaluation = evaluate(
        snapshot(nodes, pods, storage), pod_info(EBS_ONE), profile_with(filter=[NAME])
    )
    assert verdicts(evaluation, ["n1", "n2", "n3"]) == [EXCEEDED, FITS, FITS]


def test_a_volume_already_attached_is_not_new(evaluate) -> None:
    # n1 attaches csi-...-0 (the new pod's own claim) and -1: 2 + 0 <= 2
    nodes = [make_node("n1")]
    pods = [make_pod("a", volumes=[pvc(f"csi-{EBS}-0"), pvc(f"csi-{EBS}-1")], node_name="n1")]
    storage = [*_storage([EBS], "", 0), CSINode("n1", limits={EBS: 2})]
    evaluation = evaluate(
        snapshot(nodes, pods, storage), pod_info(EBS_ONE), profile_with(filter=[NAME])
    )
    assert verdicts(evaluation, ["n1"]) == [FITS]


def test_a_full_node_passes_a_pod_adding_nothing(evaluate) -> None:
    # found by the differential test: n1 attaches 2 ebs volumes over a limit of 1, but the
    # pod's only volume is one of them: no new volume of the driver, nothing to compare
    # (upstream checks only the drivers with new volumes)
    nodes = [make_node("n1")]
    pods = [make_pod("a", volumes=[pvc(f"csi-{EBS}-0"), pvc(f"csi-{EBS}-1")], node_name="n1")]
    storage = [*_storage([EBS], "", 0), CSINode("n1", limits={EBS: 1})]
    evaluation = evaluate(
        snapshot(nodes, pods, storage), pod_info(EBS_ONE), profile_with(filter=[NAME])
    )
    assert verdicts(evaluation, ["n1"]) == [FITS]


POD = pod_info(make_pod("pod1", "ns1", volumes=[pvc("pvc1"), ephemeral("ephemeral")]))

HINTS = [
    pytest.param(
        ClusterEvent.PVC_ADD,
        claim("pvc1", namespace="ns2"),
        False,
        id="a pod isn't in the same namespace as an added PVC",
    ),
    pytest.param(
        ClusterEvent.PVC_ADD,
        claim("pvc1", namespace="ns1"),
        True,
        id="a pod is in the same namespace as an added PVC",
    ),
    pytest.param(
        ClusterEvent.PVC_ADD,
        claim("pod1-ephemeral", namespace="ns1"),
        True,
        id="a pod has an ephemeral volume related to an added PVC",
    ),
    pytest.param(
        ClusterEvent.PVC_ADD,
        claim("pvc2", namespace="ns1"),
        False,
        id="a pod doesn't have the same PVC as an added PVC",
    ),
    pytest.param(
        ClusterEvent.ASSIGNED_POD_DELETE,
        pod_info(make_pod(volumes=[pvc("placeholder")], node_name="n")),
        True,
        id="return a Queue when a deleted pod has a PVC",
    ),
    pytest.param(
        ClusterEvent.ASSIGNED_POD_DELETE,
        pod_info(make_pod(volumes=[ebs("x")], node_name="n")),
        True,
        id="return a Queue when a deleted pod has a inline migratable volume",
    ),
    pytest.param(
        ClusterEvent.ASSIGNED_POD_DELETE,
        pod_info(make_pod(node_name="n")),
        False,
        id="return a QueueSkip when a deleted pod doesn't have any volume",
    ),
    pytest.param(ClusterEvent.CSI_NODE_ADD, None, True, id="a new CSINode"),
]


@pytest.mark.parametrize(("event", "changed", "want"), HINTS)
def test_queueing_hints(event, changed, want) -> None:
    assert event in NodeVolumeLimits.events
    assert NodeVolumeLimits().queueing_hint(event, POD, changed) is want


def test_no_volumes_pod_is_signed_alike() -> None:
    # pods without volumes share one fragment (the PreFilter skips them all)
    one, two = pod_info(make_pod("a")), pod_info(make_pod("b", "other"))
    assert NodeVolumeLimits().sign(one) == NodeVolumeLimits().sign(two) == ()
