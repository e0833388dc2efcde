"""The storage decoders: defaults, the legacy class annotation, and errors naming the
object, the field path and the value."""

from __future__ import annotations

import pytest

from asched.cluster.labelselector import LabelSelector, Requirement
from asched.cluster.records import NodeAffinity, NodeSelectorTerm, Requirement as NodeRequirement
from asched.cluster.volume_decode import (
    decode_claim,
    decode_csi_driver,
    decode_persistent_volume,
    decode_storage_capacity,
    decode_storage_class,
)
from asched.cluster.volumes import ClaimRef
from asched.errors import DecodeError
from tests.unit.volumes.binding._objects import (
    capacity,
    claim,
    csi_driver,
    local_affinity,
    pv,
    storage_class,
)

GI = 1024**3


def test_persistent_volume_fields() -> None:
    raw = pv("pv-1", "5Gi", affinity=local_affinity("n1", "n2"), claim=("ns", "c", "u1"))
    decoded = decode_persistent_volume(raw)
    assert decoded.capacity == 5 * GI  # 5Gi = 5 * 2^30 bytes
    assert decoded.claim_ref == ClaimRef("ns", "c", "u1")
    assert decoded.node_affinity == NodeAffinity(
        (NodeSelectorTerm((NodeRequirement("kubernetes.io/hostname", "In", ("n1", "n2")),)),)
    )
    assert decoded.volume_mode == "Filesystem"  # the API server's default
    assert decoded.raw is raw


def test_legacy_class_annotation_wins() -> None:
    raw = pv("pv-1", storage_class_name="new")
    raw["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "old"}
    assert decode_persistent_volume(raw).storage_class == "old"
    raw = claim("c", storage_class_name="new")
    raw["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"] = "old"
    assert decode_claim(raw).storage_class == "old"


def test_claim_fields() -> None:
    raw = claim("c", "2Gi", None, selector={"matchLabels": {"tier": "fast"}}, owner="pod-uid")
    decoded = decode_claim(raw)
    assert decoded.storage_class is None  # unset, not ""
    assert decoded.request == 2 * GI
    assert decoded.owners == ("pod-uid",)
    assert decoded.selector == LabelSelector((Requirement("tier", "In", frozenset({"fast"})),))


def test_class_driver_and_capacity() -> None:
    decoded = decode_storage_class(storage_class("z", topologies=[{"zone": ["a", "b"]}]))
    assert decoded.binding_mode == "WaitForFirstConsumer"
    assert decoded.allowed_topologies == (
        NodeSelectorTerm((NodeRequirement("zone", "In", ("a", "b")),)),
    )
    raw = storage_class("plain")
    del raw["volumeBindingMode"]
    assert decode_storage_class(raw).binding_mode == "Immediate"  # the API server's default
    assert decode_csi_driver(csi_driver("d", capacity=True)).storage_capacity
    assert decode_csi_driver({"metadata": {"name": "d"}}).attach_required
    decoded_capacity = decode_storage_capacity(capacity("cap", "z", "1Gi", None, maximum="512Mi"))
    assert decoded_capacity.node_topology is None  # nil: no node
    assert (decoded_capacity.capacity, decoded_capacity.maximum_volume_size) == (GI, GI // 2)


def _bad_affinity() -> dict:
    raw = pv("pv-1")
    raw["spec"]["nodeAffinity"] = {
        "required": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Near"}]}]
        }
    }
    return raw


def _absurd_capacity() -> dict:
    raw = pv("pv-1")
    raw["spec"]["capacity"]["storage"] = "lots"
    return raw


def _negative_request() -> dict:
    return claim("c", "-1Gi")


def _bad_access_mode() -> dict:
    return pv("pv-1", modes=["ReadWriteSometimes"])


def _bad_binding_mode() -> dict:
    return storage_class("s", mode="Later")


def _capacity_without_class() -> dict:
    raw = capacity("cap", "x", "1Gi", None)
    del raw["storageClassName"]
    return raw


ERRORS = [
    pytest.param(
        decode_persistent_volume,
        _bad_affinity,
        "PersistentVolume pv-1",
        "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator",
        id="malformed node affinity",
    ),
    pytest.param(
        decode_persistent_volume,
        _absurd_capacity,
        "PersistentVolume pv-1",
        "spec.capacity.storage",
        id="unparsable capacity",
    ),
    pytest.param(
        decode_claim,
        _negative_request,
        "PersistentVolumeClaim default/c",
        "spec.resources.requests.storage",
        id="negative request",
    ),
    pytest.param(
        decode_persistent_volume,
        _bad_access_mode,
        "PersistentVolume pv-1",
        "spec.accessModes[0]",
        id="unknown access mode",
    ),
    pytest.param(
        decode_storage_class, _bad_binding_mode, "StorageClass s", "volumeBindingMode", id="mode"
    ),
    pytest.param(
        decode_storage_capacity,
        _capacity_without_class,
        "CSIStorageCapacity kube-system/cap",
        "storageClassName",
        id="capacity without a class",
    ),
]


@pytest.mark.parametrize(("decoder", "build", "obj", "path"), ERRORS)
def test_decode_errors_name_object_and_field(decoder, build, obj, path) -> None:
    with pytest.raises(DecodeError) as caught:
        decoder(build())
    assert (caught.value.obj, caught.value.path) == (obj, path)
