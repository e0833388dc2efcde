"""scheduler_perf templates rendered per object (Go text/template), createAny of any kind,
updateAny and barrier steps: the translation, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asched.tools.bench import loadgen, objects, perf_objects
from asched.tools.bench.perf_config import load_config
from asched.tools.bench.perf_steps import (
    Barrier,
    CreateAny,
    CreatePods,
    StepsWorkload,
    UpdateAny,
    describe,
)
from asched.tools.bench.perf_translate import translate
from asched.tools.bench.workload import Workload

MISC = Path(__file__).resolve().parent / "data" / "perf" / "misc"
NODES = {"opcode": "createNodes", "count": 2}
MEASURED = {"opcode": "createPods", "count": 3, "collectMetrics": True}


def config_with(ops: list[dict[str, Any]], **params: Any) -> Workload:
    data = [
        {
            "name": "Case",
            "defaultPodTemplatePath": "../templates/pod-default.yaml",
            "workloadTemplate": ops,
            "workloads": [{"name": "W", "params": params}],
        }
    ]
    config = load_config(data, folder=MISC)
    return translate(config.test_cases[0], config.test_cases[0].workloads[0])


def steps_of(w: Workload) -> list[Any]:
    assert isinstance(w, StepsWorkload)
    return list(w.steps)


def test_pods_render_per_index_and_keep_their_names() -> None:
    w = config_with(
        [
            NODES,
            {
                **MEASURED,
                "count": 4,
                "podTemplatePath": "../templates/pod-indexed.yaml",
                "templateParams": {"type": "unsched"},
            },
        ]
    )
    pods = list(loadgen.pod_objects(w.measured_pods, "measured", scheduler_name="asched"))
    # one object per index: the template reads .Index
    assert [p["metadata"]["name"] for p in pods] == [f"pod-indexed-{i}" for i in range(4)]
    # hostPort 8 then .Index mod 3: 80, 81, 82, 80
    ports = [p["spec"]["containers"][0]["ports"][0]["containerPort"] for p in pods]
    assert ports == [80, 81, 82, 80]
    # 3000 / .Count = 3000 / 4 = 750 (Mi), in every pod
    memory = {p["spec"]["containers"][0]["resources"]["requests"]["memory"] for p in pods}
    assert memory == {"750Mi"}
    assert {p["metadata"]["labels"]["type"] for p in pods} == {"unsched"}
    assert w.n_measured == 4


def test_a_template_without_index_is_one_group() -> None:
    w = config_with(
        [
            NODES,
            {
                **MEASURED,
                "count": 5,
                "podTemplatePath": "../templates/pod-priority-param.yaml",
                "templateParams": {"priority": "$prio"},
            },
        ],
        prio=200,
    )
    # the text never reads .Index: rendered once, one group of 5 pods
    assert [g.count for g in w.measured_pods] == [5]
    # AddInt 0 .priority: the float64 parameter 200 becomes the int 200
    assert w.priorities() == {200}


def test_a_template_param_left_out_takes_the_else_branch() -> None:
    w = config_with(
        [NODES, {**MEASURED, "podTemplatePath": "../templates/pod-priority-param.yaml"}]
    )
    # no priority parameter: {{if .priority}} is false, the else branch gives 1000
    assert w.priorities() == {1000}


def test_the_old_generate_name_template_renders_into_one_run() -> None:
    # generateName pod-{{.Index}}- differs per index, but asched names its pods itself:
    # the 3 objects are alike otherwise and share one group
    w = config_with([NODES, {**MEASURED, "podTemplatePath": "../templates/pod-templated.yaml"}])
    assert [g.count for g in w.measured_pods] == [3]


def test_nodes_render_per_index() -> None:
    w = config_with(
        [
            {
                "opcode": "createNodes",
                "count": 3,
                "nodeTemplatePath": "../templates/node-indexed-unschedulable.yaml",
            },
            MEASURED,
        ]
    )
    nodes = list(loadgen.node_objects(w.nodes))
    assert [n["metadata"]["name"] for n in nodes] == [
        "node-indexed-0",
        "node-indexed-1",
        "node-indexed-2",
    ]
    assert all(n["spec"]["unschedulable"] for n in nodes)


def test_unwaited_pods_then_update_any_then_a_barrier() -> None:
    w = config_with(
        [
            NODES,
            {
                "opcode": "createPods",
                "count": 3,
                "namespace": "gated",
                "podTemplatePath": "../templates/pod-gated-indexed.yaml",
                "skipWaitToCompletion": True,
            },
            {"opcode": "barrier", "stageRequirement": "Attempted"},
            {
                "opcode": "updateAny",
                "countParam": "$n",
                "namespace": "gated",
                "templatePath": "../templates/pod-gated-indexed-update.yaml",
                "updatePerSecond": 100,
            },
            {"opcode": "barrier", "labelSelector": {"type": "unsched"}},
            MEASURED,
        ],
        n=3,
    )
    create, attempted, update, scheduled = steps_of(w)
    assert isinstance(create, CreatePods)
    assert (create.count, create.wait, create.namespace) == (3, False, "gated")
    assert attempted == Barrier(op=2, namespaces=("gated",), stage="Attempted")
    assert isinstance(update, UpdateAny)
    assert [o["metadata"]["name"] for o in update.objects] == [
        "pod-gated-0",
        "pod-gated-1",
        "pod-gated-2",
    ]
    assert "schedulingGates" not in update.objects[0]["spec"]
    assert (update.namespace, update.per_second, update.template) == (
        "gated",
        100,
        "pod-gated-indexed-update.yaml",
    )
    assert scheduled == Barrier(
        op=4, namespaces=("gated",), stage="Scheduled", label_selector="type=unsched"
    )
    assert describe(update) == {
        "op": 3,
        "updateAny": ["Pod", "Pod", "Pod"],
        "namespaces": ["gated"],
        "per_second": 100,
        "subresources": [],
    }
    assert "gated" in w.namespaces()


def test_a_plain_barrier_after_unwaited_pods_waits_for_them() -> None:
    w = config_with(
        [
            NODES,
            {"opcode": "createPods", "count": 2, "skipWaitToCompletion": True},
            {"opcode": "barrier"},
            {"opcode": "barrier"},
            MEASURED,
        ]
    )
    # the first barrier waits for the unwaited pods of op 1; the second has nothing left
    # to wait for (every pod so far is bound by then) and adds no step
    assert [describe(s) for s in steps_of(w)] == [
        {"op": 1, "createPods": 2, "namespace": "namespace-1", "wait": False},
        {"op": 2, "barrier": "Scheduled", "namespaces": ["namespace-1"]},
    ]


def test_update_any_after_the_measured_pods() -> None:
    w = config_with(
        [
            {
                "opcode": "createNodes",
                "count": 2,
                "nodeTemplatePath": "../templates/node-indexed-unschedulable.yaml",
            },
            NODES,
            MEASURED,
            {
                "opcode": "updateAny",
                "count": 2,
                "templatePath": "../templates/node-indexed-update.yaml",
                "subresources": ["status"],
            },
        ]
    )
    assert isinstance(w, StepsWorkload)
    (update,) = w.after
    assert isinstance(update, UpdateAny)
    assert (update.namespace, update.per_second, update.subresources) == ("", 0, ("status",))
    assert [o["metadata"]["name"] for o in update.objects] == ["node-indexed-0", "node-indexed-1"]


@pytest.mark.parametrize(
    ("op", "names", "namespace"),
    [
        pytest.param(
            {
                "opcode": "createAny",
                "count": 2,
                "namespace": "cms",
                "templatePath": "../templates/configmap-indexed.yaml",
                "templateParams": {"color": "blue"},
            },
            ["cm-0", "cm-1"],
            "cms",
            id="namespaced-configmaps",
        ),
        pytest.param(
            {"opcode": "createAny", "count": 2, "templatePath": "../templates/priorityclass.yaml"},
            ["perf-high-0", "perf-high-1"],
            "",
            id="cluster-scoped-priority-classes",
        ),
    ],
)
def test_create_any_renders_each_object(
    op: dict[str, Any], names: list[str], namespace: str
) -> None:
    w = config_with([NODES, op, MEASURED])
    (step,) = steps_of(w)
    assert isinstance(step, CreateAny)
    assert [o["metadata"]["name"] for o in step.objects] == names
    assert step.namespace == namespace
    assert step.namespaces == ([namespace] if namespace else [])


def test_create_any_values_come_from_index_count_and_params() -> None:
    w = config_with(
        [
            NODES,
            {
                "opcode": "createAny",
                "count": 2,
                "namespace": "cms",
                "templatePath": "../templates/configmap-indexed.yaml",
                "templateParams": {"color": "blue"},
            },
            MEASURED,
        ]
    )
    (step,) = steps_of(w)
    assert isinstance(step, CreateAny)
    assert [dict(o["data"]) for o in step.objects] == [{"count": "2", "color": "blue"}] * 2
    pc = config_with(
        [
            NODES,
            {"opcode": "createAny", "count": 2, "templatePath": "../templates/priorityclass.yaml"},
            MEASURED,
        ]
    )
    (classes,) = steps_of(pc)
    assert isinstance(classes, CreateAny)
    # AddInt 100 .Index: 100 + 0, 100 + 1
    assert [o["value"] for o in classes.objects] == [100, 101]


@pytest.mark.parametrize(
    ("resource", "namespace", "problem"),
    [
        pytest.param(
            perf_objects.Resource(
                "scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", False
            ),
            "ns",
            "namespace 'ns' set for 'pc.yaml', but 'PriorityClass.scheduling.k8s.io' has scope "
            "'root'",
            id="namespace-for-cluster-scoped",
        ),
        pytest.param(
            perf_objects.Resource("v1", "ConfigMap", "configmaps", True),
            "",
            "namespace not set for 'pc.yaml', but 'ConfigMap' has scope 'namespace'",
            id="no-namespace-for-namespaced",
        ),
        pytest.param(
            perf_objects.Resource("apps/v1", "Deployment", "deployments", True),
            "ns",
            None,
            id="fits",
        ),
    ],
)
def test_scope_errors_read_as_upstreams(
    resource: perf_objects.Resource, namespace: str, problem: str | None
) -> None:
    assert perf_objects.scope_error(resource, namespace, "pc.yaml") == problem


@pytest.mark.parametrize(
    ("resource", "namespace", "path"),
    [
        pytest.param(
            perf_objects.Resource("v1", "ConfigMap", "configmaps", True),
            "a",
            "/api/v1/namespaces/a/configmaps",
            id="core-namespaced",
        ),
        pytest.param(
            perf_objects.Resource("storage.k8s.io/v1", "StorageClass", "storageclasses", False),
            "",
            "/apis/storage.k8s.io/v1/storageclasses",
            id="group-cluster",
        ),
        pytest.param(
            perf_objects.Resource(
                "policy/v1beta1", "PodDisruptionBudget", "poddisruptionbudgets", True
            ),
            "b",
            "/apis/policy/v1beta1/namespaces/b/poddisruptionbudgets",
            id="group-namespaced",
        ),
    ],
)
def test_collections_of_resources(
    resource: perf_objects.Resource, namespace: str, path: str
) -> None:
    assert resource.collection(namespace) == path


def test_discovery_paths() -> None:
    assert perf_objects.discovery_path("v1") == "/api/v1"
    assert perf_objects.discovery_path("apps/v1") == "/apis/apps/v1"


def test_pod_objects_of_rendered_groups_keep_asched_fields() -> None:
    w = config_with(
        [NODES, {**MEASURED, "count": 2, "podTemplatePath": "../templates/pod-indexed.yaml"}]
    )
    pod = objects.pod(w.measured_pods[1], "ignored", scheduler_name="asched")
    assert pod["metadata"]["name"] == "pod-indexed-1"
    assert pod["spec"]["schedulerName"] == "asched"
    # a missing parameter prints Go's <no value>
    assert pod["metadata"]["labels"]["type"] == "<no value>"
