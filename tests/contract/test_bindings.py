"""``pods/binding`` semantics of kube-apiserver v1.37.2 (what a scheduler's bind call sees)."""

from __future__ import annotations

import pytest

from asched.tools.backends.rest import pods_path

from ._support import conditions_by_type


async def test_binding_sets_node_name_and_pod_scheduled_condition(cluster):
    rest, ns = cluster.rest, cluster.namespace
    node = (await cluster.create_node())["metadata"]["name"]
    await cluster.create_pod("p")

    answer = await rest.bind_raw(ns, "p", node)

    assert answer.status == 201
    assert answer.body["kind"] == "Status"
    assert answer.body["status"] == "Success"
    assert answer.body["code"] == 201
    pod = await rest.get(pods_path(ns, "p"))
    assert pod["spec"]["nodeName"] == node
    scheduled = conditions_by_type(pod)["PodScheduled"]
    assert scheduled["status"] == "True"
    assert scheduled["lastTransitionTime"]  # set by the server
    assert pod["status"]["phase"] == "Pending"  # no kubelet: the phase does not move


async def test_binding_an_already_bound_pod_is_409_and_changes_nothing(cluster):
    rest, ns = cluster.rest, cluster.namespace
    first = (await cluster.create_node())["metadata"]["name"]
    second = (await cluster.create_node())["metadata"]["name"]
    await cluster.create_pod("p")
    assert await rest.bind(ns, "p", first) == 201
    before = await rest.get(pods_path(ns, "p"))

    answer = await rest.bind_raw(ns, "p", second)

    assert answer.status == 409
    assert answer.body["reason"] == "Conflict"
    assert answer.body["details"] == {"name": "p", "kind": "pods/binding"}
    assert answer.body["message"] == (
        f'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "{first}"'
    )
    after = await rest.get(pods_path(ns, "p"))
    assert after["spec"]["nodeName"] == first
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


async def test_binding_a_pod_created_with_a_node_name_is_409(cluster):
    rest, ns = cluster.rest, cluster.namespace
    first = (await cluster.create_node())["metadata"]["name"]
    second = (await cluster.create_node())["metadata"]["name"]
    await cluster.create_pod("p", node_name=first)

    assert await rest.bind(ns, "p", second) == 409


async def test_binding_a_deleted_pod_is_404(cluster):
    rest, ns = cluster.rest, cluster.namespace
    node = (await cluster.create_node())["metadata"]["name"]
    await cluster.create_pod("p")
    await rest.delete(pods_path(ns, "p"), grace_period_seconds=0)

    answer = await rest.bind_raw(ns, "p", node)

    assert answer.status == 404
    assert answer.body["reason"] == "NotFound"
    assert answer.body["message"] == 'pods "p" not found'
    assert answer.body["details"] == {"name": "p", "kind": "pods"}


async def test_binding_to_a_node_that_does_not_exist_is_accepted(cluster):
    # The server does not look the node up: binding is only a write of spec.nodeName.
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")
    ghost = cluster.unique_name("no-such-node")

    assert await rest.bind(ns, "p", ghost) == 201
    assert (await rest.get(pods_path(ns, "p")))["spec"]["nodeName"] == ghost


BINDING_DECODE = 'Binding in version "v1" cannot be handled as a Binding: '
KIND_POD = 'target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"'


def _binding(**fields):
    return {"apiVersion": "v1", "kind": "Binding", **fields}


@pytest.mark.parametrize(
    ("body", "status", "reason", "message"),
    [
        # ValidatePodBinding's errors are returned as a plain aggregate, not NewInvalid: every
        # kube-apiserver answers 500 without a reason here (measured on v1.20.2 and v1.37.2).
        pytest.param(
            _binding(metadata={"name": "p"}),
            500,
            None,
            "target.name: Required value",
            id="no target",
        ),
        pytest.param(
            _binding(metadata={"name": "p"}, target=None),
            500,
            None,
            "target.name: Required value",
            id="null target",
        ),
        pytest.param(
            _binding(metadata={"name": "p"}, target={"kind": "Node", "name": ""}),
            500,
            None,
            "target.name: Required value",
            id="empty target name",
        ),
        pytest.param(
            _binding(metadata={"name": "p"}, target={"kind": "Pod", "name": "n"}),
            500,
            None,
            KIND_POD,
            id="target kind Pod",
        ),
        pytest.param(
            _binding(metadata={"name": "p"}, target={"kind": "Pod"}),
            500,
            None,
            f"[{KIND_POD}, target.name: Required value]",
            id="two errors, one aggregate",
        ),
        pytest.param(
            _binding(target={"name": "n"}),
            400,
            "BadRequest",
            "name in URL does not match name in Binding object",
            id="no metadata: the name is empty",
        ),
        pytest.param(
            _binding(metadata={"name": "other"}, target={"name": "n"}),
            400,
            "BadRequest",
            "name in URL does not match name in Binding object",
            id="another pod's name",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
            400,
            "BadRequest",
            'Pod in version "v1" cannot be handled as a Binding: '
            "converting (v1.Pod) to (core.Binding): unknown conversion",
            id="a Pod body",
        ),
        pytest.param(
            {"apiVersion": "v2", "kind": "Binding", "metadata": {"name": "p"}},
            400,
            "BadRequest",
            # v1.37's scheme is named after NewScheme's caller as a Go-modules build sees it
            # (v1.20: "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30")
            'Binding in version "v2" cannot be handled as a Binding: no kind "Binding" is '
            'registered for version "v2" in scheme "pkg/runtime/scheme.go:111"',
            id="unknown version",
        ),
    ],
)
async def test_a_malformed_binding_is_refused_and_binds_nothing(
    cluster, body, status, reason, message
):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")

    answer = await rest.request("POST", f"{pods_path(ns, 'p')}/binding", body=body, check=False)

    assert (answer.status, answer.body.get("reason"), answer.body["message"]) == (
        status,
        reason,
        message,
    )
    assert "details" not in answer.body
    assert "nodeName" not in (await rest.get(pods_path(ns, "p")))["spec"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(_binding(metadata={"name": "p"}, target="node-1"), id="target a string"),
        pytest.param(
            _binding(metadata={"name": "p"}, target={"name": 5}), id="target.name a number"
        ),
        pytest.param(_binding(metadata="p", target={"name": "n"}), id="metadata a string"),
        pytest.param(
            _binding(metadata={"name": "p", "annotations": {"a": 5}}, target={"name": "n"}),
            id="an annotation a number",
        ),
    ],
)
async def test_a_binding_field_of_the_wrong_type_is_400(cluster, body):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")

    answer = await rest.request("POST", f"{pods_path(ns, 'p')}/binding", body=body, check=False)

    assert (answer.status, answer.body["reason"]) == (400, "BadRequest")
    assert answer.body["message"].startswith(BINDING_DECODE)
    assert "nodeName" not in (await rest.get(pods_path(ns, "p")))["spec"]


async def test_the_legacy_bindings_collection_needs_a_name(cluster):
    answer = await cluster.rest.request(
        "POST",
        f"/api/v1/namespaces/{cluster.namespace}/bindings",
        body=_binding(target={"name": "n"}),
        check=False,
    )

    assert (answer.status, answer.body["reason"], answer.body["message"]) == (
        400,
        "BadRequest",
        "Name parameter required.",
    )


async def test_a_dry_run_binding_answers_201_and_binds_nothing(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p")
    before = await rest.get(pods_path(ns, "p"))

    answer = await rest.request(
        "POST",
        f"{pods_path(ns, 'p')}/binding",
        params={"dryRun": "All"},
        body=_binding(metadata={"name": "p"}, target={"name": "n"}),
        check=False,
    )

    assert answer.status == 201
    after = await rest.get(pods_path(ns, "p"))
    assert "nodeName" not in after["spec"]
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


async def test_binding_clears_the_nominated_node_and_merges_labels_and_annotations(cluster):
    # v1.35+ (ClearingNominatedNodeNameAfterBinding, PodTopologyLabelsAdmission): the binding
    # clears status.nominatedNodeName and copies its own labels onto the pod
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p", labels={"app": "web"})
    await rest.patch(f"{pods_path(ns, 'p')}/status", {"status": {"nominatedNodeName": "n9"}})
    body = _binding(
        metadata={"name": "p", "labels": {"zone": "z1"}, "annotations": {"a": "b"}},
        target={"name": "n1"},
    )

    answer = await rest.request("POST", f"{pods_path(ns, 'p')}/binding", body=body, check=False)

    assert answer.status == 201
    pod = await rest.get(pods_path(ns, "p"))
    assert "nominatedNodeName" not in pod["status"]
    assert pod["metadata"]["labels"] == {"app": "web", "zone": "z1"}
    assert pod["metadata"]["annotations"] == {"a": "b"}


@pytest.mark.parametrize(
    ("field", "value", "what"),
    [
        pytest.param("uid", "not-the-uid", "UID", id="uid"),
        pytest.param("resourceVersion", "1", "ResourceVersion", id="resourceVersion"),
    ],
)
async def test_a_binding_precondition_that_fails_is_409_and_binds_nothing(
    cluster, field, value, what
):
    rest, ns = cluster.rest, cluster.namespace
    created = await cluster.create_pod("p")
    body = _binding(metadata={"name": "p", field: value}, target={"name": "n1"})

    answer = await rest.request("POST", f"{pods_path(ns, 'p')}/binding", body=body, check=False)

    actual = created["metadata"]["uid" if field == "uid" else "resourceVersion"]
    assert (answer.status, answer.body["reason"], answer.body["details"]) == (
        409,
        "Conflict",
        {"name": "p", "kind": "pods"},
    )
    assert answer.body["message"] == (
        f'Operation cannot be fulfilled on pods "p": StorageError: invalid object, Code: 4, '
        f"Key: /registry/pods/{ns}/p, ResourceVersion: 0, AdditionalErrorMsg: Precondition "
        f"failed: {what} in precondition: {value}, {what} in object meta: {actual}"
    )
    assert "nodeName" not in (await rest.get(pods_path(ns, "p")))["spec"]


async def test_a_binding_with_the_right_uid_binds(cluster):
    rest, ns = cluster.rest, cluster.namespace
    created = await cluster.create_pod("p")
    body = _binding(
        metadata={"name": "p", "uid": created["metadata"]["uid"]}, target={"name": "n1"}
    )

    answer = await rest.request("POST", f"{pods_path(ns, 'p')}/binding", body=body, check=False)

    assert answer.status == 201
    assert (await rest.get(pods_path(ns, "p")))["spec"]["nodeName"] == "n1"
