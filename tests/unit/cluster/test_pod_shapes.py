"""Pods of one shape share the spec-derived part of their records (asched.cluster.pod_shapes).

Every answer must equal a full ``decode_pod``; two pods that differ in anything the
decoder reads of the spec never share a record; the per-pod token volume an API server
adds does not defeat the cache.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from asched.cluster import pod_shapes
from asched.cluster.decode import decode_pod
from asched.cluster.pod_shapes import PodShapes, shape_key
from asched.errors import DecodeError
from asched.tools.bench import templates

Raw = dict[str, Any]


def real_pod(name: str, token: str = "abcde") -> Raw:
    """scheduler_perf's pod as a real API server returns it: uid, status, a projected
    service-account token volume with a name of its own, mounted in the container."""
    raw = copy.deepcopy(templates.pod(name))
    raw["metadata"].update(uid=f"uid-{name}", creationTimestamp="2026-11-25T06:00:00Z")
    volume = f"kube-api-access-{token}"
    raw["spec"]["volumes"] = [
        {"name": volume, "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}}
    ]
    raw["spec"]["containers"][0]["volumeMounts"] = [
        {"name": volume, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
    ]
    raw["status"] = {"phase": "Pending", "qosClass": "Guaranteed"}
    return raw


def test_pods_of_one_shape_share_the_spec_part_and_equal_a_full_decode() -> None:
    shapes = PodShapes()
    first, second = real_pod("a", "aaaaa"), real_pod("b", "bbbbb")
    second["metadata"]["labels"] = {"app": "other"}
    second["status"] = {"phase": "Running", "nominatedNodeName": "n9"}
    a, b = shapes.decode(first), shapes.decode(second)
    assert (shapes.hits, shapes.misses) == (1, 1)  # the token volume did not defeat the key
    assert a == decode_pod(first)
    assert b == decode_pod(second)
    assert b.requests is a.requests  # shared, not decoded again
    assert (b.name, b.uid, b.labels, b.phase) == ("b", "uid-b", {"app": "other"}, "Running")
    assert b.nominated_node_name == "n9"
    assert [v.name for v in b.volumes] == ["kube-api-access-bbbbb"]  # its own, not a's


def test_a_bound_copy_of_a_pod_shares_its_shape_and_reads_its_node() -> None:
    shapes = PodShapes()
    pending = real_pod("a")
    bound = copy.deepcopy(pending)
    bound["spec"]["nodeName"] = "node-7"
    shapes.decode(pending)
    pod = shapes.decode(bound)
    assert shapes.hits == 1
    assert pod.node_name == "node-7"
    assert pod == decode_pod(bound)


def test_ephemeral_and_claim_volumes_are_decoded_per_pod() -> None:
    """An ephemeral volume's claim is named after its pod: two pods of one shape get
    their own claims."""
    shapes = PodShapes()
    pods = []
    for name in ("a", "b"):
        raw = real_pod(name)
        raw["spec"]["volumes"] += [
            {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}},
            {"name": "data", "persistentVolumeClaim": {"claimName": f"data-{name}"}},
        ]
        pods.append(raw)
    a, b = (shapes.decode(raw) for raw in pods)
    assert shapes.hits == 1
    assert b.pvc_names == ("b-scratch", "data-b")
    assert (a, b) == (decode_pod(pods[0]), decode_pod(pods[1]))


def _container(raw: Raw) -> Raw:
    container: Raw = raw["spec"]["containers"][0]
    return container


def _set_spec(field: str, value: Any) -> Callable[[Raw], None]:
    def edit(raw: Raw) -> None:
        raw["spec"][field] = value

    return edit


def _set_container(field: str, value: Any) -> Callable[[Raw], None]:
    def edit(raw: Raw) -> None:
        _container(raw)[field] = value

    return edit


def _cpu(value: Any) -> Callable[[Raw], None]:
    def edit(raw: Raw) -> None:
        _container(raw)["resources"]["requests"]["cpu"] = value

    return edit


def _init(restart: str | None) -> Callable[[Raw], None]:
    def edit(raw: Raw) -> None:
        init: Raw = {"name": "init", "image": "busybox", "resources": {"requests": {"cpu": "2"}}}
        if restart is not None:
            init["restartPolicy"] = restart
        raw["spec"]["initContainers"] = [init]

    return edit


def _namespace(raw: Raw) -> None:
    raw["metadata"]["namespace"] = "other"


def _no_limits(raw: Raw) -> None:
    del _container(raw)["resources"]["limits"]["memory"]


_TERM = {"labelSelector": {"matchLabels": {"app": "bench"}}, "topologyKey": "zone"}
_NODE_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
            ]
        }
    }
}


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(_cpu("200m"), id="a container's request"),
        pytest.param(_cpu("0.1"), id="the same amount spelled otherwise"),
        pytest.param(_no_limits, id="a container's limit"),
        pytest.param(_set_container("image", "nginx"), id="a container's image"),
        pytest.param(
            _set_container("ports", [{"containerPort": 80, "hostPort": 8080}]), id="a host port"
        ),
        pytest.param(_set_container("restartPolicy", "Always"), id="a container's restartPolicy"),
        pytest.param(_init(None), id="an init container"),
        pytest.param(_init("Always"), id="a sidecar"),
        pytest.param(_set_spec("hostNetwork", True), id="hostNetwork"),
        pytest.param(_set_spec("overhead", {"cpu": "10m"}), id="overhead"),
        pytest.param(
            _set_spec("tolerations", [{"key": "k", "operator": "Exists"}]), id="tolerations"
        ),
        pytest.param(_set_spec("nodeSelector", {"zone": "a"}), id="nodeSelector"),
        pytest.param(_set_spec("affinity", _NODE_AFFINITY), id="node affinity"),
        pytest.param(
            _set_spec(
                "affinity",
                {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}},
            ),
            id="pod affinity",
        ),
        pytest.param(
            _set_spec(
                "affinity",
                {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_TERM]}},
            ),
            id="pod anti-affinity",
        ),
        pytest.param(_namespace, id="the namespace (affinity terms default to it)"),
        pytest.param(_set_spec("priority", 10), id="priority"),
        pytest.param(_set_spec("preemptionPolicy", "Never"), id="preemptionPolicy"),
        pytest.param(_set_spec("schedulerName", "other"), id="schedulerName"),
        pytest.param(_set_spec("schedulingGates", [{"name": "wait"}]), id="schedulingGates"),
        pytest.param(
            _set_spec(
                "topologySpreadConstraints",
                [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
            ),
            id="topologySpreadConstraints",
        ),
    ],
)
def test_pods_differing_in_what_the_decoder_reads_do_not_share(
    edit: Callable[[Raw], None],
) -> None:
    shapes = PodShapes()
    first = real_pod("a")
    second = real_pod("b")
    edit(second)
    shapes.decode(first)
    pod = shapes.decode(second)
    assert (shapes.hits, shapes.misses) == (0, 2)
    assert pod == decode_pod(second)
    assert shape_key(first) != shape_key(second)


class _Recording(Mapping[str, Any]):
    """A mapping that notes the keys read of it."""

    def __init__(self, data: Mapping[str, Any], seen: set[str]) -> None:
        self._data = data
        self._seen = seen

    def __getitem__(self, key: str) -> Any:
        self._seen.add(key)
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        self._seen.add(key)
        return self._data.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def test_every_spec_field_the_decoder_reads_is_keyed_or_read_per_pod() -> None:
    """The guard for the next field decode_pod learns to read: it must join the key
    (SHAPE_FIELDS, CONTAINER_FIELDS) or the per-pod part (decode_pod_like)."""
    spec_seen: set[str] = set()
    container_seen: set[str] = set()
    raw = real_pod("a")
    _init("Always")(raw)
    spec = raw["spec"]
    spec["initContainers"] = [_Recording(c, container_seen) for c in spec["initContainers"]]
    spec["containers"] = [_Recording(c, container_seen) for c in spec["containers"]]
    raw["spec"] = _Recording(spec, spec_seen)
    decode_pod(raw)
    keyed = {"hostNetwork", "containers", "initContainers", *pod_shapes.SHAPE_FIELDS}
    assert spec_seen <= keyed | set(pod_shapes.PER_POD_SPEC_FIELDS)
    assert container_seen <= set(pod_shapes.CONTAINER_FIELDS)


def test_a_malformed_per_pod_field_raises_what_a_full_decode_raises() -> None:
    shapes = PodShapes()
    shapes.decode(real_pod("a"))
    bad = real_pod("b")
    bad["metadata"]["labels"] = {"app": 7}
    with pytest.raises(DecodeError) as full:
        decode_pod(bad)
    with pytest.raises(DecodeError) as cached:
        shapes.decode(bad)
    assert shapes.hits == 1
    assert str(cached.value) == str(full.value)
    assert "Pod default/b" in str(cached.value)


def test_a_pod_that_does_not_decode_is_never_a_shape() -> None:
    shapes = PodShapes()
    for name in ("a", "b"):
        raw = real_pod(name)
        raw["spec"]["tolerations"] = [{"key": "k", "operator": "Maybe"}]
        with pytest.raises(DecodeError, match=rf"Pod default/{name}: spec.tolerations\[0\]"):
            shapes.decode(raw)
    assert (shapes.hits, shapes.misses, len(shapes)) == (0, 2, 0)


def test_an_unkeyable_pod_is_decoded_in_full() -> None:
    raw = real_pod("a")
    raw["spec"]["containers"] = "pause"
    assert shape_key(raw) is None
    with pytest.raises(DecodeError, match=r"spec.containers: must be a list"):
        PodShapes().decode(raw)


def test_past_its_limit_the_cache_starts_over() -> None:
    shapes = PodShapes(limit=2)
    for index in range(3):  # three shapes: the third clears the first two
        raw = real_pod(f"p{index}")
        _cpu(f"{index + 1}")(raw)
        shapes.decode(raw)
    assert len(shapes) == 1
