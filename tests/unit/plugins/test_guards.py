"""The temporary guard for the feature asched does not model yet (volumes): PreFilter
rejects the pods that use it, with a fixed reason, and skips every other pod; the plugin
never scores. (Inter-pod affinity and topology spreading are modelled: their own tests
are in tests/unit/interpod, tests/unit/spread and the differential tests.)
"""

from __future__ import annotations

import pytest

from asched.cluster.volumes import PersistentVolumeClaim
from asched.framework.plugins._guards import PVC_UNSUPPORTED
from asched.framework.status import Code
from tests.builders import (
    FITS,
    default_profile,
    make_node,
    make_pod,
    outcome,
    pod_info,
    pvc_volume,
    snapshot_of,
)

SELECTOR = {
    "labelSelector": {"matchLabels": {"app": "web"}},
    "topologyKey": "kubernetes.io/hostname",
}


def rejected(plugin: str, reason: str) -> tuple[str, Code, tuple[str, ...]]:
    return (plugin, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))


CASES = [
    pytest.param(
        make_pod(volumes=[pvc_volume("data-0")]),
        rejected("VolumeBinding", PVC_UNSUPPORTED),
        id="a pod with a PersistentVolumeClaim is rejected by VolumeBinding",
    ),
    pytest.param(
        make_pod(volumes=[{"name": "scratch", "emptyDir": {}}]),
        FITS,
        id="a pod with only an emptyDir volume passes",
    ),
    # no pod carries label app=web: nothing for required anti-affinity to avoid
    pytest.param(
        make_pod(pod_anti_affinity={"requiredDuringSchedulingIgnoredDuringExecution": [SELECTOR]}),
        FITS,
        id="required pod anti-affinity with nothing to avoid passes",
    ),
    # PreFilter order: VolumeBinding runs before InterPodAffinity and stops at the first
    # UnschedulableAndUnresolvable (no pod carries app=web: the affinity would fail too)
    pytest.param(
        make_pod(
            volumes=[pvc_volume("data-0")],
            pod_affinity={"requiredDuringSchedulingIgnoredDuringExecution": [SELECTOR]},
        ),
        rejected("VolumeBinding", PVC_UNSUPPORTED),
        id="the first rejecting PreFilter wins",
    ),
]


@pytest.mark.parametrize(("pod", "want"), CASES)
def test_guards_in_the_default_profile(evaluate, pod, want) -> None:
    nodes = [make_node("node1"), make_node("node2")]
    snapshot = snapshot_of(nodes)
    # the claim exists: VolumeRestrictions' PreFilter (before VolumeBinding's) finds it
    snapshot.volumes.put_claim(PersistentVolumeClaim("default", "data-0"))
    evaluation = evaluate(snapshot, pod_info(pod), default_profile())
    assert [outcome(evaluation, n) for n in ("node1", "node2")] == [want, want]
    if want is FITS:
        scored = {name for v in evaluation.nodes.values() for name in v.scores}
        assert "VolumeBinding" not in scored
        assert evaluation.message is None
    else:
        # the default profile's preemption cannot help an UnschedulableAndUnresolvable pod
        assert evaluation.message == (
            f"0/2 nodes are available: {want[2][0]}. preemption: 0/2 nodes are available: "
            "2 Preemption is not helpful for scheduling."
        )
        assert evaluation.selected is None
