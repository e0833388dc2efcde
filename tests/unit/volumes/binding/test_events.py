"""VolumeBinding's registered events and queueing hints (upstream's EventsToRegister)."""

from __future__ import annotations

import dataclasses

import pytest

from asched.cluster.volume_decode import decode_claim, decode_csi_driver
from asched.cluster.volumes import PodVolume
from asched.config.types import VolumeBindingArgs
from asched.framework.builtin.volume_binding import VolumeBinding
from asched.framework.events import ClusterEvent
from tests.builders import make_pod, pod_info, pvc_volume
from tests.unit.volumes.binding._objects import claim, csi_driver

PLUGIN = VolumeBinding(VolumeBindingArgs())


def test_registered_events() -> None:
    # queueing hints on (v1.33): Add|UpdateNodeLabel for nodes, no taint event; CSIDriver
    # only on update
    assert PLUGIN.events == {
        ClusterEvent.NODE_ADD,
        ClusterEvent.NODE_LABEL,
        ClusterEvent.PVC_ADD,
        ClusterEvent.PVC_UPDATE,
        ClusterEvent.PV_ADD,
        ClusterEvent.PV_UPDATE,
        ClusterEvent.STORAGE_CLASS_ADD,
        ClusterEvent.STORAGE_CLASS_UPDATE,
        ClusterEvent.CSI_NODE_ADD,
        ClusterEvent.CSI_NODE_UPDATE,
        ClusterEvent.CSI_DRIVER_UPDATE,
        ClusterEvent.CSI_CAPACITY_ADD,
        ClusterEvent.CSI_CAPACITY_UPDATE,
    }


POD = pod_info(make_pod("p", "ns", volumes=[pvc_volume("data")]))

HINTS = [
    pytest.param(ClusterEvent.PVC_ADD, claim("data", namespace="ns"), True, id="the pod's claim"),
    pytest.param(
        ClusterEvent.PVC_UPDATE, claim("data", namespace="other"), False, id="same name elsewhere"
    ),
    pytest.param(ClusterEvent.PVC_UPDATE, claim("logs", namespace="ns"), False, id="another claim"),
]


@pytest.mark.parametrize(("event", "raw", "want"), HINTS)
def test_claim_hint(event, raw, want) -> None:
    assert PLUGIN.queueing_hint(event, POD, decode_claim(raw)) is want


def test_csi_driver_hint_needs_an_inline_volume_of_the_driver() -> None:
    inline = dataclasses.replace(POD, volumes=(PodVolume("v", "csi", driver="d.example.com"),))
    off = decode_csi_driver(csi_driver("d.example.com", capacity=False))
    on = decode_csi_driver(csi_driver("d.example.com", capacity=True))
    assert PLUGIN.queueing_hint(ClusterEvent.CSI_DRIVER_UPDATE, inline, off)
    assert not PLUGIN.queueing_hint(ClusterEvent.CSI_DRIVER_UPDATE, inline, on)
    assert not PLUGIN.queueing_hint(ClusterEvent.CSI_DRIVER_UPDATE, POD, off)
