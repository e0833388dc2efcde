"""The temporary guards for features asched does not model yet (volumes, hard topology
spread): PreFilter rejects the pods that use them, with a fixed reason, and skips every
other pod; their plugins never score. (Inter-pod affinity is modelled: its own tests are
in tests/unit/interpod and the differential tests.)
"""

from __future__ import annotations

import pytest

from asched.framework.plugins._guards import PVC_UNSUPPORTED, SPREAD_UNSUPPORTED
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
SOFT_SPREAD = {
    "maxSkew": 1,
    "topologyKey": "topology.kubernetes.io/zone",
    "whenUnsatisfiable": "ScheduleAnyway",
    "labelSelector": {"matchLabels": {"app": "web"}},
}
HARD_SPREAD = {**SOFT_SPREAD, "whenUnsatisfiable": "DoNotSchedule"}


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
    pytest.param(
        make_pod(topology_spread=[HARD_SPREAD]),
        rejected("PodTopologySpread", SPREAD_UNSUPPORTED),
        id="a DoNotSchedule spread constraint is rejected by PodTopologySpread",
    ),
    pytest.param(
        make_pod(topology_spread=[SOFT_SPREAD]),
        FITS,
        id="a ScheduleAnyway spread constraint passes (and is not scored)",
    ),
    # PreFilter order: PodTopologySpread runs before InterPodAffinity and stops at the
    # first UnschedulableAndUnresolvable
    pytest.param(
        make_pod(
            topology_spread=[HARD_SPREAD],
            pod_affinity={"requiredDuringSchedulingIgnoredDuringExecution": [SELECTOR]},
        ),
        rejected("PodTopologySpread", SPREAD_UNSUPPORTED),
        id="the first rejecting PreFilter wins",
    ),
]


@pytest.mark.parametrize(("pod", "want"), CASES)
def test_guards_in_the_default_profile(evaluate, pod, want) -> None:
    nodes = [make_node("node1"), make_node("node2")]
    evaluation = evaluate(snapshot_of(nodes), pod_info(pod), default_profile())
    assert [outcome(evaluation, n) for n in ("node1", "node2")] == [want, want]
    if want is FITS:
        scored = {name for v in evaluation.nodes.values() for name in v.scores}
        assert "PodTopologySpread" not in scored
        assert evaluation.message is None
    else:
        assert evaluation.message == f"0/2 nodes are available: {want[2][0]}."
        assert evaluation.selected is None
