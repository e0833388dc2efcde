"""VolumeRestrictions: in-tree disk conflicts and ReadWriteOncePod claims.

Transcribed from upstream ``volumerestrictions/volume_restrictions_test.go``
(TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts,
TestISCSIDiskConflicts, TestAccessModeConflicts, and the queueing-hint tests); the
read-only cases are asched's, from the rules upstream's code states. "nothing" and
"one state" (a pod without volumes: PreFilter Skip) are one case per disk kind. Each case
runs on both implementations through ``evaluate``.
"""

from __future__ import annotations

import pytest

from asched.cluster.volumes import READ_WRITE_MANY, READ_WRITE_ONCE_POD
from asched.explain.engine import table_of
from asched.framework.builtin.volume_restrictions import VolumeRestrictions
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.runtime import Framework
from asched.framework.status import Code
from tests.builders import FITS, bound_pod, make_node, pod_info, profile_with
from tests.unit.volumes.limits._support import (
    claim,
    ebs,
    gce,
    iscsi,
    pod_with,
    pvc,
    rbd,
    rejected,
    snapshot,
    verdicts,
)

NAME = "VolumeRestrictions"
DISK = rejected(NAME, Code.UNSCHEDULABLE, "node(s) had no available disk")
RWOP = rejected(
    NAME,
    Code.UNSCHEDULABLE,
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode",
)

GCE_FOO, GCE_BAR = gce("foo"), gce("bar")
EBS_FOO, EBS_BAR = ebs("foo"), ebs("bar")
RBD_AB, RBD_CD = rbd(["a", "b"], "foo", "bar"), rbd(["c", "d"], "foo", "bar")
IQN_16, IQN_17 = "iqn.2016-12.server:storage.target01", "iqn.2017-12.server:storage.target01"
ISCSI_16, ISCSI_17 = iscsi(IQN_16), iscsi(IQN_17)

DISK_CASES = [
    # (the pod's volumes, the volumes of the pod on the node, want)
    pytest.param([], [], FITS, id="nothing"),
    pytest.param([], [GCE_FOO], FITS, id="gce one state"),
    pytest.param([GCE_FOO], [GCE_FOO], DISK, id="gce same state"),
    pytest.param([GCE_BAR], [GCE_FOO], FITS, id="gce different state"),
    pytest.param(
        [{"name": "volume with no restriction", "emptyDir": {}}],
        [],
        FITS,
        id="pod with a volume that doesn't have restrictions",
    ),
    # GCE PD: a conflict unless both mounts are read-only
    pytest.param(
        [gce("foo", read_only=True)], [gce("foo", read_only=True)], FITS, id="gce both read-only"
    ),
    pytest.param([gce("foo", read_only=True)], [GCE_FOO], DISK, id="gce read-only over read-write"),
    pytest.param([GCE_FOO], [gce("foo", read_only=True)], DISK, id="gce read-write over read-only"),
    pytest.param([], [EBS_FOO], FITS, id="aws one state"),
    pytest.param([EBS_FOO], [EBS_FOO], DISK, id="aws same state"),
    pytest.param([EBS_BAR], [EBS_FOO], FITS, id="aws different state"),
    # AWS EBS: the same volume ID conflicts even when both are read-only
    pytest.param(
        [ebs("foo", read_only=True)], [ebs("foo", read_only=True)], DISK, id="aws both read-only"
    ),
    pytest.param([], [RBD_AB], FITS, id="rbd one state"),
    pytest.param([RBD_AB], [RBD_AB], DISK, id="rbd same state"),
    # same pool and image, but no monitor in common
    pytest.param([RBD_CD], [RBD_AB], FITS, id="rbd different state"),
    pytest.param([rbd(["b", "z"], "foo", "bar")], [RBD_AB], DISK, id="rbd one monitor in common"),
    pytest.param([rbd(["a"], "foo", "baz")], [RBD_AB], FITS, id="rbd other image"),
    pytest.param(
        [rbd(["a"], "foo", "bar", read_only=True)],
        [rbd(["a"], "foo", "bar", read_only=True)],
        FITS,
        id="rbd both read-only",
    ),
    pytest.param([], [ISCSI_16], FITS, id="iscsi one state"),
    pytest.param([ISCSI_16], [ISCSI_16], DISK, id="iscsi same state"),
    pytest.param([ISCSI_17], [ISCSI_16], FITS, id="iscsi different state"),
    pytest.param(
        [iscsi(IQN_16, read_only=True)],
        [iscsi(IQN_16, read_only=True)],
        FITS,
        id="iscsi both read-only",
    ),
    pytest.param(
        [iscsi(IQN_16, read_only=True)], [ISCSI_16], DISK, id="iscsi read-only over read-write"
    ),
]


@pytest.mark.parametrize(("mine", "theirs", "want"), DISK_CASES)
def test_disk_conflicts(evaluate, mine, theirs, want) -> None:
    nodes = [make_node("node-1"), make_node("node-2")]
    pods = [bound_pod("node-1", volumes=theirs)] if theirs else []
    pod = pod_info(pod_with(*mine))
    evaluation = evaluate(snapshot(nodes, pods), pod, profile_with(filter=[NAME]))
    # the other node holds nothing: only node-1 can conflict
    assert verdicts(evaluation, ["node-1", "node-2"]) == [want, FITS]


ACCESS_STORAGE = [
    claim("claim-with-rwop-1", modes=[READ_WRITE_ONCE_POD]),
    claim("claim-with-rwop-2", modes=[READ_WRITE_ONCE_POD]),
    claim("claim-with-rwx", modes=[READ_WRITE_MANY]),
]
ONE_PVC = [pvc("claim-with-rwop-1")]
TWO_PVCS = [pvc("claim-with-rwop-1"), pvc("claim-with-rwop-2")]
RWX = [pvc("claim-with-rwx")]

ACCESS_CASES = [
    # (the pod's volumes, the volumes of the pods on node-1, the claims, want)
    pytest.param([], [], [], FITS, id="nothing"),
    pytest.param(
        ONE_PVC,
        [],
        [],
        rejected(
            NAME,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            'persistentvolumeclaim "claim-with-rwop-1" not found',
        ),
        id="failed to get PVC",
    ),
    # the claim is ReadWriteOncePod but nobody uses it: PreFilter Skip
    pytest.param(ONE_PVC, [RWX], ACCESS_STORAGE, FITS, id="no access mode conflict"),
    # in use by a pod on node-1: every node is Unschedulable (preemption may help)
    pytest.param(
        ONE_PVC, [ONE_PVC, RWX], ACCESS_STORAGE, RWOP, id="access mode conflict, unschedulable"
    ),
    pytest.param(
        TWO_PVCS, [TWO_PVCS, RWX], ACCESS_STORAGE, RWOP, id="two conflicts, unschedulable"
    ),
    # a ReadWriteMany claim may be shared
    pytest.param(RWX, [RWX], ACCESS_STORAGE, FITS, id="read-write-many claim in use"),
]


@pytest.mark.parametrize(("mine", "theirs", "storage", "want"), ACCESS_CASES)
def test_access_mode_conflicts(evaluate, mine, theirs, storage, want) -> None:
    nodes = [make_node("node-1"), make_node("node-2")]
    pods = [bound_pod("node-1", volumes=volumes) for volumes in theirs]
    pod = pod_info(pod_with(*mine))
    evaluation = evaluate(snapshot(nodes, pods, storage), pod, profile_with(filter=[NAME]))
    # ReadWriteOncePod is cluster-wide: node-2 fails too
    assert verdicts(evaluation, ["node-1", "node-2"]) == [want, want]


def test_read_write_once_pod_preemption_frees_the_claim(evaluate) -> None:
    # a priority-0 pod on node-1 holds the claim; the pod (priority 10) may preempt it:
    # removing it frees the claim, so node-1 is a preemption candidate
    nodes = [make_node("node-1"), make_node("node-2")]
    holder = bound_pod("node-1", volumes=ONE_PVC, priority=0)
    raw = pod_with(*ONE_PVC)
    raw["spec"]["priority"] = 10
    evaluation = evaluate(
        snapshot(nodes, [holder], ACCESS_STORAGE),
        pod_info(raw),
        profile_with(filter=[NAME], post_filter=["DefaultPreemption"]),
    )
    assert verdicts(evaluation, ["node-1", "node-2"]) == [RWOP, RWOP]
    assert evaluation.preemption is not None
    assert evaluation.preemption.node == "node-1"
    assert [v.pod for v in evaluation.preemption.victims] == [
        f"default/{holder['metadata']['name']}"
    ]


POD = pod_info(pod_with(pvc("pvc1"), GCE_FOO))

HINTS = [
    pytest.param(ClusterEvent.PVC_ADD, claim("pvc1"), True, id="pvc of the pod added"),
    pytest.param(ClusterEvent.PVC_ADD, claim("pvc2"), False, id="another pvc added"),
    pytest.param(
        ClusterEvent.PVC_ADD, claim("pvc1", namespace="ns1"), False, id="pvc in another namespace"
    ),
    pytest.param(
        ClusterEvent.ASSIGNED_POD_DELETE,
        pod_info(pod_with(GCE_FOO, name="other", node="n")),
        True,
        id="deleted pod had the conflicting disk",
    ),
    pytest.param(
        ClusterEvent.ASSIGNED_POD_DELETE,
        pod_info(pod_with(pvc("pvc1"), name="other", node="n")),
        True,
        id="deleted pod used the same claim",
    ),
    pytest.param(
        ClusterEvent.ASSIGNED_POD_DELETE,
        pod_info(pod_with(GCE_BAR, name="other", node="n")),
        False,
        id="deleted pod is irrelevant",
    ),
    pytest.param(ClusterEvent.NODE_ADD, None, True, id="a new node"),
]


@pytest.mark.parametrize(("event", "changed", "want"), HINTS)
def test_queueing_hints(event, changed, want) -> None:
    assert event in VolumeRestrictions.events
    assert VolumeRestrictions().queueing_hint(event, POD, changed) is want


HOOK_CASES = [
    # (the other pod's volumes, PreFilter skips before, skips once it is counted on node-1)
    # the claim unused: Skip; once the other pod mounts it, every node is rejected
    pytest.param(ONE_PVC, True, False, id="a-user-of-the-claim-added"),
    # a ReadWriteMany claim in use changes nothing
    pytest.param(RWX, True, True, id="a-user-of-another-claim-added"),
]


@pytest.mark.parametrize(("theirs", "skips_before", "skips_after"), HOOK_CASES)
def test_hooks_follow_the_claims_users(
    theirs: list[dict[str, object]], *, skips_before: bool, skips_after: bool
) -> None:
    # PreFilterExtensions: after the hook, the same skip and Filter answers as a fresh
    # PreFilter; after the matching remove hook, as before
    framework = Framework(profile_with(filter=[NAME]))
    table = table_of(snapshot([make_node("node-1"), make_node("node-2")], [], ACCESS_STORAGE))
    pod = pod_info(pod_with(*ONE_PVC))
    other = pod_info(pod_with(*theirs, name="other"))

    def answers(state: CycleState) -> tuple[bool, list[bool]]:
        if NAME in state.skip_filter:
            return True, [True, True]
        return False, framework.plugins[NAME].filter(state, pod, table, table.rows).tolist()

    def fresh() -> CycleState:
        state = CycleState()
        assert framework.run_pre_filter(state, pod, table).status.ok
        return state

    state = fresh()
    assert answers(state)[0] == skips_before
    table.add_pod(other, "node-1")
    assert framework.run_pre_filter_add_pod(state, pod, table, other, 0).ok
    assert answers(state) == answers(fresh())
    assert answers(state)[0] == skips_after
    table.remove_pod(other.key)
    assert framework.run_pre_filter_remove_pod(state, pod, table, other, 0).ok
    assert answers(state) == answers(fresh()) == (skips_before, [True, True])
