"""Bad objects: 422 Invalid naming each field (``details.causes[].field``), or 400 when the
body cannot even be decoded (a quantity that is not one), as the real server answers."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from asched.tools.sim.apiserver import apierrors, bootstrap
from asched.tools.sim.apiserver.registry import Registry
from asched.tools.sim.apiserver.resources import BY_GVR, STORAGE
from asched.tools.sim.apiserver.store import Store

from .conftest import pod

PODS = BY_GVR[("", "v1", "pods")]
NODES = BY_GVR[("", "v1", "nodes")]


class FakeClock:
    """Fixed timestamps; timers are collected, not run."""

    def __init__(self) -> None:
        self.timers: list[tuple[float, Any]] = []

    def now(self, offset_seconds: float = 0.0) -> str:
        return "2024-01-02T03:04:05Z"

    def later(self, seconds: float, callback: Any) -> None:
        self.timers.append((seconds, callback))


@pytest.fixture
def registry() -> Registry:
    store = Store(STORAGE.keys(), history_limit=100)
    registry = Registry(store, FakeClock(), seed=1)
    bootstrap.builtins(registry)
    return registry


def _with(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    node = out
    *parents, last = path.split(".")
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return out


_DELETE = object()
GOOD = pod("p")


@pytest.mark.parametrize(
    ("change", "fields"),
    [
        pytest.param(("metadata.name", _DELETE), ["metadata.name"], id="missing name"),
        pytest.param(
            ("metadata.name", "Not_A_Name"), ["metadata.name"], id="name not a DNS subdomain"
        ),
        pytest.param(
            ("metadata.labels", {"app": "bad value!"}), ["metadata.labels"], id="bad label value"
        ),
        pytest.param(("metadata.labels", {"-bad": "x"}), ["metadata.labels"], id="bad label key"),
        pytest.param(("spec.containers", []), ["spec.containers"], id="no containers"),
        pytest.param(
            ("spec.containers.0.image", ""),
            ["spec.containers[0].image"],
            id="container without image",
        ),
        pytest.param(
            ("spec.containers.0.resources", {"requests": {"cpu": "-1"}}),
            ["spec.containers[0].resources.requests[cpu]"],
            id="negative request",
        ),
        pytest.param(
            ("spec.containers.0.resources", {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}),
            ["spec.containers[0].resources.requests"],
            id="request above limit",
        ),
        pytest.param(
            ("spec.restartPolicy", "Sometimes"), ["spec.restartPolicy"], id="unknown restart policy"
        ),
        pytest.param(
            ("spec.tolerations", [{"key": "k", "operator": "Maybe"}]),
            ["spec.tolerations[0].operator"],
            id="bad toleration operator",
        ),
    ],
)
def test_invalid_pods_are_422_naming_the_field(registry, change, fields):
    with pytest.raises(apierrors.StatusError) as caught:
        registry.create(PODS, "default", _with(GOOD, *change))
    error = caught.value
    assert (error.code, error.reason) == (422, "Invalid")
    assert [cause["field"] for cause in error.details["causes"]] == fields
    assert error.message.startswith('Pod "')


def test_invalid_message_and_details_match_the_real_server(registry):
    body = _with(GOOD, "metadata.name", _DELETE)
    with pytest.raises(apierrors.StatusError) as caught:
        registry.create(PODS, "default", body)
    assert caught.value.body() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Pod "" is invalid: metadata.name: Required value: name or generateName is required',
        "reason": "Invalid",
        "details": {
            "kind": "Pod",
            "causes": [
                {
                    "reason": "FieldValueRequired",
                    "message": "Required value: name or generateName is required",
                    "field": "metadata.name",
                }
            ],
        },
        "code": 422,
    }


@pytest.mark.parametrize(
    ("spec", "body", "field"),
    [
        pytest.param(
            PODS,
            _with(GOOD, "spec.containers.0.resources", {"requests": {"cpu": "12x"}}),
            "spec.containers[0].resources.requests[cpu]",
            id="pod request 12x",
        ),
        pytest.param(
            NODES,
            {"metadata": {"name": "n"}, "status": {"capacity": {"memory": "12x"}}},
            "status.capacity[memory]",
            id="node capacity 12x",
        ),
    ],
)
def test_a_bad_quantity_fails_decoding_with_400(registry, spec, body, field):
    # A genuine server cannot even decode the object: 400 BadRequest, not 422. v1.37's
    # decoder names no field (``field`` is where the quantity was).
    with pytest.raises(apierrors.StatusError) as caught:
        registry.create(spec, "default" if spec.namespaced else "", body)
    error = caught.value
    assert (error.code, error.reason) == (400, "BadRequest")
    assert error.message == (
        f'{spec.kind} in version "v1" cannot be handled as a {spec.kind}: quantities must match '
        "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


def test_negative_node_capacity_is_422_for_capacity_and_defaulted_allocatable(registry):
    with pytest.raises(apierrors.StatusError) as caught:
        registry.create(
            NODES, "", {"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "-2"}}}
        )
    assert [c["field"] for c in caught.value.details["causes"]] == [
        "status.capacity.cpu",
        "status.allocatable.cpu",
    ]


def test_pod_defaults_and_canonical_quantities(registry):
    body = _with(
        GOOD, "spec.containers.0.resources", {"limits": {"cpu": "0.5", "memory": "1024Mi"}}
    )
    created = registry.create(PODS, "default", body).obj
    container = created["spec"]["containers"][0]
    # Requests default to limits; quantities come back canonical.
    assert container["resources"] == {
        "limits": {"cpu": "500m", "memory": "1Gi"},
        "requests": {"cpu": "500m", "memory": "1Gi"},
    }
    assert created["spec"]["schedulerName"] == "default-scheduler"
    assert created["spec"]["terminationGracePeriodSeconds"] == 30
    assert created["spec"]["priority"] == 0
    assert created["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}


def test_pod_spec_is_immutable_except_images(registry):
    created = registry.create(PODS, "default", copy.deepcopy(GOOD)).obj
    moved = _with(created, "spec.nodeName", "node-1")
    with pytest.raises(apierrors.StatusError) as caught:
        registry.update(PODS, "default", "p", moved)
    assert caught.value.details["causes"][0]["field"] == "spec"
    new_image = _with(created, "spec.containers.0.image", "registry.k8s.io/pause:3.10")
    updated, created_now = registry.update(PODS, "default", "p", new_image)
    assert not created_now
    assert updated.obj["spec"]["containers"][0]["image"] == "registry.k8s.io/pause:3.10"


def test_scheduling_gates_may_be_removed_never_added(registry):
    gates = [{"name": "a.example/hold"}, {"name": "b.example/hold"}]
    created = registry.create(PODS, "default", pod("p", schedulingGates=gates)).obj
    # v1.27+: removing a gate (here one of two, then the last) is an allowed update
    fewer, _ = registry.update(
        PODS, "default", "p", _with(created, "spec.schedulingGates", gates[1:])
    )
    assert fewer.obj["spec"]["schedulingGates"] == gates[1:]
    none, _ = registry.update(
        PODS, "default", "p", _with(fewer.obj, "spec.schedulingGates", _DELETE)
    )
    assert "schedulingGates" not in none.obj["spec"]
    # adding one back is not
    with pytest.raises(apierrors.StatusError) as caught:
        registry.update(PODS, "default", "p", _with(none.obj, "spec.schedulingGates", gates[:1]))
    assert caught.value.details["causes"][0]["field"] == "spec.schedulingGates[0].name"


def test_unknown_priority_class_is_403(registry):
    with pytest.raises(apierrors.StatusError) as caught:
        registry.create(PODS, "default", _with(GOOD, "spec.priorityClassName", "nope"))
    assert (caught.value.code, caught.value.message) == (
        403,
        'pods "p" is forbidden: no PriorityClass with name nope was found',
    )


def test_pod_in_a_missing_namespace_is_404(registry):
    with pytest.raises(apierrors.StatusError) as caught:
        registry.create(PODS, "nope", copy.deepcopy(GOOD))
    assert (caught.value.code, caught.value.message) == (404, 'namespaces "nope" not found')


async def test_node_status_resource_names_are_not_checked(sim_cluster) -> None:
    # kube-apiserver v1.37.2 validates a node status's quantities only: scheduler_perf's
    # CSI workloads put attachable-volumes-csi-<driver> there, and a bogus name passes too
    node = await sim_cluster.create_node(
        sim_cluster.unique_name("n"),
        extended={"attachable-volumes-csi-ebs.csi.aws.com": "39", "bogus": "1"},
    )
    assert node["status"]["allocatable"]["attachable-volumes-csi-ebs.csi.aws.com"] == "39"
