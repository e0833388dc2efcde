"""Pod scheduling gates (``spec.schedulingGates``, GA in v1.30) as kube-apiserver v1.37.2 keeps
them: a gated pod says so in its PodScheduled condition, cannot be bound, and may lose gates
but never gain one."""

from __future__ import annotations

import pytest

from asched.tools.backends.rest import pods_path

GATES = [{"name": "example.com/quota"}, {"name": "example.com/hold"}]
NAME = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def _pod(name: str = "p", **spec) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
    }


async def _gated(cluster, gates=GATES) -> dict:
    return await cluster.create_pod("p", spec={"schedulingGates": gates})


async def test_a_gated_pod_is_created_with_a_scheduling_gated_condition(cluster):
    pod = await _gated(cluster)

    assert pod["spec"]["schedulingGates"] == GATES
    [condition] = pod["status"]["conditions"]
    assert condition == {
        "type": "PodScheduled",
        "status": "False",
        "lastProbeTime": None,
        "lastTransitionTime": pod["metadata"]["creationTimestamp"],
        "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates",
    }


async def test_binding_a_gated_pod_is_409_and_binds_nothing(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await _gated(cluster)

    answer = await rest.bind_raw(ns, "p", "n1")

    assert (answer.status, answer.body["reason"], answer.body["message"]) == (
        409,
        "Conflict",
        'Operation cannot be fulfilled on pods/binding "p": pod p has non-empty '
        ".spec.schedulingGates",
    )
    assert answer.body["details"] == {"name": "p", "kind": "pods/binding"}
    assert "nodeName" not in (await rest.get(pods_path(ns, "p")))["spec"]


async def test_gates_may_be_removed_then_the_pod_binds(cluster):
    rest, ns = cluster.rest, cluster.namespace
    created = await _gated(cluster)

    fewer = await rest.patch(pods_path(ns, "p"), {"spec": {"schedulingGates": GATES[1:]}})
    none = await rest.patch(pods_path(ns, "p"), {"spec": {"schedulingGates": None}})

    assert fewer["spec"]["schedulingGates"] == GATES[1:]
    assert "schedulingGates" not in none["spec"]
    # each spec change counts in metadata.generation (v1.35+)
    generations = [pod["metadata"]["generation"] for pod in (created, fewer, none)]
    assert generations == [1, 2, 3]
    # the condition stays until a scheduler (here the binding) changes it
    assert none["status"]["conditions"][0]["reason"] == "SchedulingGated"
    assert await rest.bind(ns, "p", "n1") == 201
    bound = await rest.get(pods_path(ns, "p"))
    assert bound["status"]["conditions"][0]["status"] == "True"
    assert bound["metadata"]["generation"] == 3  # a binding is no spec update


@pytest.mark.parametrize(
    ("gates", "field", "added"),
    [
        pytest.param(
            [*GATES, {"name": "example.com/new"}], "[2]", "example.com/new", id="one more"
        ),
        pytest.param([{"name": "example.com/new"}], "[0]", "example.com/new", id="another one"),
    ],
)
async def test_adding_a_gate_is_422(cluster, gates, field, added):
    rest, ns = cluster.rest, cluster.namespace
    await _gated(cluster)

    answer = await rest.request(
        "PATCH",
        pods_path(ns, "p"),
        body={"spec": {"schedulingGates": gates}},
        content_type="application/merge-patch+json",
        check=False,
    )

    message = f"Forbidden: only deletion is allowed, but found new scheduling gate '{added}'"
    assert (answer.status, answer.body["reason"]) == (422, "Invalid")
    assert answer.body["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": message,
            "field": f"spec.schedulingGates{field}.name",
        }
    ]


async def test_a_gate_may_not_come_back_once_all_are_gone(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await _gated(cluster, GATES[:1])
    await rest.patch(pods_path(ns, "p"), {"spec": {"schedulingGates": None}})

    answer = await rest.request(
        "PATCH",
        pods_path(ns, "p"),
        body={"spec": {"schedulingGates": GATES[:1]}},
        content_type="application/merge-patch+json",
        check=False,
    )

    assert (answer.status, [c["field"] for c in answer.body["details"]["causes"]]) == (
        422,
        ["spec.schedulingGates[0].name"],
    )


async def test_a_gated_pod_may_gain_node_selector_entries_only(cluster):
    rest, ns = cluster.rest, cluster.namespace
    await cluster.create_pod("p", spec={"schedulingGates": GATES, "nodeSelector": {"a": "1"}})

    grown = await rest.patch(pods_path(ns, "p"), {"spec": {"nodeSelector": {"b": "2"}}})
    answer = await rest.request(
        "PATCH",
        pods_path(ns, "p"),
        body={"spec": {"nodeSelector": {"a": "3"}}},
        content_type="application/merge-patch+json",
        check=False,
    )

    assert grown["spec"]["nodeSelector"] == {"a": "1", "b": "2"}
    assert (answer.status, answer.body["details"]["causes"]) == (
        422,
        [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: {"a":"3","b":"2"}: only additions to spec.nodeSelector '
                "are allowed (no mutations or deletions)",
                "field": "spec.nodeSelector",
            }
        ],
    )


async def test_a_pod_may_not_be_created_gated_and_on_a_node(cluster):
    answer = await cluster.rest.request(
        "POST",
        pods_path(cluster.namespace),
        body=_pod(nodeName="n1", schedulingGates=GATES),
        check=False,
    )

    assert (answer.status, answer.body["message"]) == (
        422,
        'Pod "p" is invalid: spec.nodeName: Forbidden: cannot be set until all schedulingGates '
        "have been cleared",
    )


async def test_gate_names_are_qualified_and_unique(cluster):
    gates = [{"name": "x"}, {"name": "x"}, {"name": ""}]

    answer = await cluster.rest.request(
        "POST", pods_path(cluster.namespace), body=_pod(schedulingGates=gates), check=False
    )

    assert answer.status == 422
    assert [(c["field"], c["message"]) for c in answer.body["details"]["causes"]] == [
        ("spec.schedulingGates[1]", 'Duplicate value: "x"'),
        ("spec.schedulingGates[2]", 'Invalid value: "": name part must be non-empty'),
        ("spec.schedulingGates[2]", f'Invalid value: "": {NAME}'),
    ]
