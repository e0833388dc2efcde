"""Decoding a pod's volumes and a CSINode: what the plugins read, and the field errors."""

from __future__ import annotations

from typing import Any

import pytest

from asched.cluster.csi_decode import decode_csi_node
from asched.cluster.decode import decode_pod
from asched.cluster.volumes import CSINode, PodVolume
from asched.errors import DecodeError
from tests.builders import make_pod


def _pod(*volumes: Any) -> dict[str, Any]:
    return make_pod("web", volumes=list(volumes))


VOLUMES = [
    pytest.param(
        {"name": "d", "persistentVolumeClaim": {"claimName": "data", "readOnly": True}},
        PodVolume("d", "claim", claim="data", read_only=True),
        id="claim",
    ),
    # the generic ephemeral volume's claim is <pod>-<volume>
    pytest.param(
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        PodVolume("scratch", "ephemeral", claim="web-scratch"),
        id="ephemeral",
    ),
    pytest.param(
        {"name": "g", "gcePersistentDisk": {"pdName": "pd-1", "readOnly": True}},
        PodVolume("g", "gce-pd", handle="pd-1", read_only=True),
        id="gce pd",
    ),
    pytest.param(
        {"name": "e", "awsElasticBlockStore": {"volumeID": "vol-1"}},
        PodVolume("e", "aws-ebs", handle="vol-1"),
        id="aws ebs",
    ),
    # pool defaults to "rbd", as the API server defaults it
    pytest.param(
        {"name": "r", "rbd": {"monitors": ["m1", "m2"], "image": "img"}},
        PodVolume("r", "rbd", handle="rbd/img", monitors=frozenset({"m1", "m2"})),
        id="rbd",
    ),
    # conflicts compare the iqn only
    pytest.param(
        {"name": "i", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.x:t", "lun": 1}},
        PodVolume("i", "iscsi", handle="iqn.x:t"),
        id="iscsi",
    ),
    pytest.param(
        {"name": "a", "azureDisk": {"diskName": "d", "diskURI": "uri"}},
        PodVolume("a", "azure-disk", handle="uri"),
        id="azure disk",
    ),
    pytest.param(
        {"name": "c", "cinder": {"volumeID": "v"}},
        PodVolume("c", "cinder", handle="v"),
        id="cinder",
    ),
    pytest.param(
        {"name": "s", "csi": {"driver": "hostpath.csi.k8s.io"}},
        PodVolume("s", "csi", driver="hostpath.csi.k8s.io"),
        id="inline csi",
    ),
    pytest.param({"name": "cm", "configMap": {"name": "x"}}, PodVolume("cm", "other"), id="other"),
]


@pytest.mark.parametrize(("raw", "want"), VOLUMES)
def test_pod_volumes(raw, want) -> None:
    assert decode_pod(_pod(raw)).volumes == (want,)


VOLUME_ERRORS = [
    pytest.param(
        {"name": "g", "gcePersistentDisk": {}},
        "Pod default/web: spec.volumes[0].gcePersistentDisk.pdName: Required value",
        id="gce pd without pdName",
    ),
    pytest.param(
        {"name": "e", "awsElasticBlockStore": {"volumeID": "v", "readOnly": "yes"}},
        "Pod default/web: spec.volumes[0].awsElasticBlockStore.readOnly: must be a boolean, got 'yes'",
        id="readOnly not a boolean",
    ),
    pytest.param(
        {"name": "r", "rbd": {"image": "img"}},
        "Pod default/web: spec.volumes[0].rbd.monitors: Required value",
        id="rbd without monitors",
    ),
    pytest.param(
        {"name": "r", "rbd": {"monitors": [1], "image": "img"}},
        "Pod default/web: spec.volumes[0].rbd.monitors[0]: must be a string, got 1",
        id="rbd monitor not a string",
    ),
    pytest.param(
        {"name": "i", "iscsi": {"targetPortal": "p"}},
        "Pod default/web: spec.volumes[0].iscsi.iqn: Required value",
        id="iscsi without iqn",
    ),
    pytest.param(
        {"name": "d", "persistentVolumeClaim": "data"},
        "Pod default/web: spec.volumes[0].persistentVolumeClaim: must be an object, got str",
        id="claim source not an object",
    ),
    pytest.param(
        {"name": "s", "csi": {}},
        "Pod default/web: spec.volumes[0].csi.driver: Required value",
        id="inline csi without driver",
    ),
]


@pytest.mark.parametrize(("raw", "message"), VOLUME_ERRORS)
def test_pod_volume_errors(raw, message) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_pod(_pod(raw))
    assert str(caught.value) == message


def _csi_node(*drivers: Any, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "node-1"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"kind": "CSINode", "metadata": meta, "spec": {"drivers": list(drivers)}}


def test_csi_node() -> None:
    raw = _csi_node(
        {"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25}},
        # a driver without allocatable, or without a count, has no limit
        {"name": "hostpath.csi.k8s.io", "nodeID": "n"},
        {"name": "pd.csi.storage.gke.io", "nodeID": "n", "allocatable": {}},
        annotations={
            "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs,kubernetes.io/gce-pd"
        },
    )
    assert decode_csi_node(raw) == CSINode(
        "node-1",
        limits={"ebs.csi.aws.com": 25, "hostpath.csi.k8s.io": None, "pd.csi.storage.gke.io": None},
        migrated_plugins=frozenset({"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd"}),
    )


CSI_NODE_ERRORS = [
    pytest.param(
        _csi_node({"name": "d", "allocatable": {"count": -1}}),
        "CSINode node-1: spec.drivers[0].allocatable.count: must be a non-negative integer, got -1",
        id="negative count",
    ),
    pytest.param(
        _csi_node({"name": "d", "allocatable": {"count": "25"}}),
        "CSINode node-1: spec.drivers[0].allocatable.count: must be a non-negative integer, got '25'",
        id="count not an integer",
    ),
    pytest.param(
        _csi_node({"name": "d", "allocatable": {"count": True}}),
        "CSINode node-1: spec.drivers[0].allocatable.count: must be a non-negative integer, got True",
        id="count a boolean",
    ),
    pytest.param(
        _csi_node({"allocatable": {"count": 1}}),
        "CSINode node-1: spec.drivers[0].name: Required value",
        id="driver without name",
    ),
    pytest.param(
        _csi_node({"name": "d"}, {"name": "d"}),
        "CSINode node-1: spec.drivers[1].name: Duplicate value: 'd'",
        id="driver listed twice",
    ),
    pytest.param(
        {"kind": "CSINode", "metadata": {}, "spec": {}},
        "CSINode <unnamed>: metadata.name: Required value: name is required",
        id="no name",
    ),
    pytest.param(
        {"kind": "CSINode", "metadata": {"name": "node-1"}, "spec": {"drivers": {}}},
        "CSINode node-1: spec.drivers: must be a list, got dict",
        id="drivers not a list",
    ),
]


@pytest.mark.parametrize(("raw", "message"), CSI_NODE_ERRORS)
def test_csi_node_errors(raw, message) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_csi_node(raw)
    assert str(caught.value) == message
