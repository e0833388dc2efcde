"""Decoding errors name the object, the field path and the offending value."""

from __future__ import annotations

import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.snapshot import build_snapshot
from asched.errors import DecodeError, InputError
from tests.builders import container, expr, make_node, make_pod, node_affinity, term, toleration

POD_CASES = [
    pytest.param(
        make_pod("web", containers=[container("a"), container("b", requests={"cpu": "lots"})]),
        "spec.containers[1].resources.requests.cpu",
        "lots",
        id="bad quantity in the second container's cpu request",
    ),
    pytest.param(
        make_pod("web", containers=[container(limits={"memory": "-1Gi"})]),
        "spec.containers[0].resources.limits.memory",
        "-1Gi",
        id="negative limit",
    ),
    pytest.param(
        make_pod("web", init=[{"cpu": "1x"}]),
        "spec.initContainers[0].resources.requests.cpu",
        "1x",
        id="bad quantity in an init container",
    ),
    pytest.param(
        make_pod("web", affinity=node_affinity(required=[term(expr("zone", "Near", "a"))])),
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        ".nodeSelectorTerms[0].matchExpressions[0].operator",
        "Near",
        id="bad operator in node affinity",
    ),
    pytest.param(
        make_pod("web", affinity=node_affinity(preferred=[(5, term(expr("gen", "Gt", "new")))])),
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
        ".preference.matchExpressions[0].values",
        "Gt",
        id="Gt with a non-integer value",
    ),
    pytest.param(
        make_pod("web", tolerations=[toleration("k", "Maybe")]),
        "spec.tolerations[0].operator",
        "Maybe",
        id="bad toleration operator",
    ),
    pytest.param(
        make_pod("web", tolerations=[toleration("k", "Exists", effect="Sometimes")]),
        "spec.tolerations[0].effect",
        "Sometimes",
        id="bad toleration effect",
    ),
]


@pytest.mark.parametrize(("raw", "path", "mentioned"), POD_CASES)
def test_pod_decode_errors(raw, path, mentioned) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_pod(raw)
    error = caught.value
    assert (error.obj, error.path) == ("Pod default/web", path)
    assert mentioned in str(error)
    assert str(error).startswith(f"Pod default/web: {path}: ")


@pytest.mark.parametrize(
    ("raw", "path", "mentioned"),
    [
        pytest.param(
            make_node("n1", taints=[("dedicated", "x", "NoScheduleMaybe")]),
            "spec.taints[0].effect",
            "NoScheduleMaybe",
            id="bad taint effect",
        ),
        pytest.param(
            make_node("n1", taints=[("", "x", "NoSchedule")]),
            "spec.taints[0].key",
            "Required",
            id="taint without a key",
        ),
        pytest.param(
            make_node("n1", cpu="four"),
            "status.allocatable.cpu",
            "four",
            id="bad allocatable quantity",
        ),
    ],
)
def test_node_decode_errors(raw, path, mentioned) -> None:
    with pytest.raises(DecodeError) as caught:
        decode_node(raw)
    assert (caught.value.obj, caught.value.path) == ("Node n1", path)
    assert mentioned in str(caught.value)


def test_snapshot_errors_name_the_source() -> None:
    with pytest.raises(DecodeError) as caught:
        build_snapshot([make_node("n1", memory="lots")], "cluster.yaml")
    assert str(caught.value).startswith("cluster.yaml: Node n1: status.allocatable.memory: ")
    assert isinstance(caught.value, InputError)


def test_allocatable_defaults_to_capacity() -> None:
    raw = make_node("n1")
    raw["status"] = {"capacity": {"cpu": "2", "memory": "1Gi", "pods": "10"}}
    assert dict(decode_node(raw).allocatable) == {"cpu": 2000, "memory": 2**30, "pods": 10}
