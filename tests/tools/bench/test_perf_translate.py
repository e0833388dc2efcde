"""Upstream scheduler_perf workloads as asched workloads: the translation, the objects built
from template files, and the shapes refused with their reason."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from asched.errors import InputError
from asched.tools.bench import loadgen, objects
from asched.tools.bench.perf_config import load_config, load_config_file
from asched.tools.bench.perf_steps import CreatePods, StepsWorkload, describe
from asched.tools.bench.perf_translate import INTERNAL_FEATURE_GATES, Unsupported, translate
from asched.tools.bench.workload import Workload

DATA = Path(__file__).resolve().parent / "data" / "perf"
MISC = DATA / "misc"
CONFIG = MISC / "performance-config.yaml"


def run_shape(name: str) -> Workload:
    case, workload = load_config_file(CONFIG).find(name)
    return translate(case, workload)


def test_scheduling_basic_becomes_nodes_init_and_measured_pods() -> None:
    w = run_shape("SchedulingBasic/5Nodes")
    assert w.name == "SchedulingBasic/5Nodes"
    assert (w.n_nodes, w.n_init, w.n_measured) == (5, 5, 10)
    # upstream's default namespaces: namespace-<op index> (ops 1 and 2)
    assert [g.namespace for g in (*w.init_pods, *w.measured_pods)] == [
        "namespace-1",
        "namespace-2",
    ]
    assert w.churn is None


def test_nodes_follow_the_template_and_the_label_strategy() -> None:
    w = run_shape("TopologySpreading/5Nodes")
    nodes = list(loadgen.node_objects(w.nodes))
    zones = [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes]
    # labelValues round-robin over the 5 nodes
    assert zones == ["moon-1", "moon-2", "moon-3", "moon-1", "moon-2"]
    first = nodes[0]
    assert "generateName" not in first["metadata"]
    assert first["metadata"]["name"] == "scheduler-perf-0-0"
    # the API server defaults allocatable to capacity; the sim is given it explicitly
    assert first["status"]["allocatable"] == {"pods": "110", "cpu": "4", "memory": "32Gi"}
    # upstream's node preparer labels every node it creates with its hostname
    assert first["metadata"]["labels"]["kubernetes.io/hostname"] == "scheduler-perf-0-0"


def test_pods_follow_the_template() -> None:
    w = run_shape("TopologySpreading/5Nodes")
    pod = next(loadgen.pod_objects(w.measured_pods, "measured", scheduler_name="asched"))
    assert pod["metadata"]["name"] == "measured-0-0"
    assert pod["metadata"]["namespace"] == "namespace-2"
    assert pod["metadata"]["labels"]["color"] == "blue"
    assert pod["spec"]["schedulerName"] == "asched"
    assert pod["spec"]["topologySpreadConstraints"][0]["maxSkew"] == 5
    assert "generateName" not in pod["metadata"]


def config_with(ops: list[dict[str, Any]], **workload: Any) -> Workload:
    data = [
        {
            "name": "Case",
            "defaultPodTemplatePath": "../templates/pod-default.yaml",
            "workloadTemplate": ops,
            "workloads": [{"name": "W", "params": {}, **workload}],
        }
    ]
    config = load_config(data, folder=MISC)
    return translate(config.test_cases[0], config.test_cases[0].workloads[0])


MEASURED = {"opcode": "createPods", "count": 3, "collectMetrics": True}
NODES = {"opcode": "createNodes", "count": 2}
START = {"opcode": "startCollectingMetrics", "namespaces": ["a"]}
STOP = {"opcode": "stopCollectingMetrics"}
PODS = {"opcode": "createPods", "count": 3}
CHURN = {
    "opcode": "churn",
    "mode": "recreate",
    "number": 1,
    "templatePaths": ["../templates/churn/service-default.yaml"],
}


def test_a_bare_priority_becomes_a_priority_class() -> None:
    w = config_with([NODES, {**MEASURED, "podTemplatePath": "../templates/pod-high-priority.yaml"}])
    assert w.priorities() == {10}
    pod = objects.pod(w.measured_pods[0], "p", scheduler_name="asched")
    # the genuine API server's Priority admission refuses a bare spec.priority
    assert "priority" not in pod["spec"]
    assert pod["spec"]["priorityClassName"] == objects.priority_class_name(10)


def test_a_fixed_node_name_is_kept() -> None:
    w = config_with(
        [
            {
                "opcode": "createNodes",
                "count": 1,
                "nodeTemplatePath": "../templates/node-with-name.yaml",
            },
            NODES,
            {**MEASURED, "podTemplatePath": "../templates/pod-with-node-name-affinity.yaml"},
        ]
    )
    names = [n["metadata"]["name"] for n in loadgen.node_objects(w.nodes)]
    assert names == ["scheduler-perf-node", "scheduler-perf-1-0", "scheduler-perf-1-1"]


ALLOCATABLE = {"nodeAllocatable": {"cpu": "2", "memory": "8Gi"}}
ZONES = {"labelKey": "zone", "labelValues": ["z1", "z2"]}
UNIQUE = {"labelKey": "unique"}


@pytest.mark.parametrize(
    ("strategies", "allocatable", "labels"),
    [
        # upstream's getNodePreparer applies ONE strategy: the first given of
        # nodeAllocatableStrategy, labelNodePrepareStrategy, uniqueNodeLabelStrategy
        pytest.param(
            {"nodeAllocatableStrategy": ALLOCATABLE, "uniqueNodeLabelStrategy": UNIQUE},
            {"pods": "110", "cpu": "2", "memory": "8Gi"},  # pods stay the template's 110
            {},
            id="allocatable-wins-over-unique",
        ),
        pytest.param(
            {"nodeAllocatableStrategy": ALLOCATABLE, "labelNodePrepareStrategy": ZONES},
            {"pods": "110", "cpu": "2", "memory": "8Gi"},
            {},
            id="allocatable-wins-over-labels",
        ),
        pytest.param(
            {"labelNodePrepareStrategy": ZONES, "uniqueNodeLabelStrategy": UNIQUE},
            {"pods": "110", "cpu": "4", "memory": "32Gi"},  # the template's capacity
            {"zone": "z1"},
            id="labels-win-over-unique",
        ),
        pytest.param(
            {"uniqueNodeLabelStrategy": UNIQUE},
            {"pods": "110", "cpu": "4", "memory": "32Gi"},
            {"unique": "scheduler-perf-0-0"},  # the node's own name
            id="unique-alone",
        ),
    ],
)
def test_one_node_strategy_applies(
    strategies: dict[str, Any], allocatable: dict[str, str], labels: dict[str, str]
) -> None:
    w = config_with([{**NODES, **strategies}, MEASURED])
    node = next(loadgen.node_objects(w.nodes))
    assert node["status"]["allocatable"] == allocatable
    strategy_labels = {
        k: v for k, v in node["metadata"].get("labels", {}).items() if k in ("zone", "unique")
    }
    assert strategy_labels == labels


def test_mixed_churn_translates_to_the_runners_churn() -> None:
    w = config_with(
        [
            NODES,
            {
                "opcode": "churn",
                "mode": "recreate",
                "number": 1,
                "intervalMilliseconds": 1000,
                "templatePaths": [
                    "../templates/churn/node-default.yaml",
                    "../templates/pod-high-priority.yaml",
                    "../templates/churn/service-default.yaml",
                ],
            },
            MEASURED,
        ]
    )
    assert w.churn is not None
    assert (w.churn.mode, w.churn.interval, w.churn.number) == ("recreate", 1.0, 1)
    assert [o.kind for o in w.churn.objects] == ["Node", "Pod", "Service"]
    churn_pod = w.churn.objects[1].pod
    assert churn_pod is not None
    assert churn_pod.namespace == "namespace-1"
    assert w.priorities() == {10}


def test_accepted_gates_and_a_scheduled_barrier_run() -> None:
    gates = dict.fromkeys(sorted(INTERNAL_FEATURE_GATES), True)
    w = config_with(
        [NODES, {"opcode": "createPods", "count": 2}, {"opcode": "barrier"}, MEASURED],
        featureGates=gates,
    )
    assert (w.n_init, w.n_measured) == (2, 3)


@pytest.mark.parametrize(
    ("ops", "workload", "reason"),
    [
        pytest.param(
            [NODES, {"opcode": "sleep", "duration": "1s"}, NODES, MEASURED],
            {},
            "op 2 (createNodes): nodes created after pods, sleep or churn",
            id="nodes-after-sleep",
        ),
        pytest.param(
            [NODES, CHURN, {"opcode": "sleep", "duration": "1s"}, MEASURED],
            {},
            "op 2 (sleep): while churning",
            id="sleep-while-churning",
        ),
        pytest.param(
            [NODES, CHURN, {"opcode": "deletePods", "namespace": "namespace-1"}, MEASURED],
            {},
            "op 2 (deletePods): while churning",
            id="delete-while-churning",
        ),
        pytest.param(
            [NODES, MEASURED, NODES],
            {},
            "op 2 (createNodes) after the measured createPods: only barrier, createAny, "
            "createPodSets, createPods, deletePods, sleep, updateAny run there",
            id="nodes-after-measured",
        ),
        pytest.param(
            [NODES, CHURN, MEASURED, {"opcode": "sleep", "duration": "1s"}],
            {},
            "op 3 (sleep) after the measured createPods of a churning workload",
            id="op-after-measured-while-churning",
        ),
        pytest.param(
            [NODES, MEASURED, MEASURED],
            {},
            "op 2 (createPods): a second createPods with collectMetrics",
            id="second-measured",
        ),
        pytest.param(
            [NODES, {"opcode": "createResourceDriver", "driverName": "x"}, MEASURED],
            {},
            "op 1 (createResourceDriver): dynamic resource allocation (DRA) is out of scope",
            id="dra-op",
        ),
        pytest.param(
            [NODES, MEASURED],
            {"featureGates": {"DynamicResourceAllocation": True}},
            "feature gate DynamicResourceAllocation: changes scheduling semantics",
            id="semantic-gate",
        ),
        pytest.param(
            # node inclusion policies are always honoured (GA, locked on in v1.33)
            [NODES, MEASURED],
            {"featureGates": {"NodeInclusionPolicyInPodTopologySpread": False}},
            "feature gate NodeInclusionPolicyInPodTopologySpread: changes scheduling "
            "semantics asched does not switch",
            id="fixed-gate-switched-off",
        ),
        pytest.param(
            [
                NODES,
                {
                    "opcode": "createPodGroups",
                    "count": 2,
                    "namespace": "g",
                    "templatePath": "../templates/pod-default.yaml",
                },
                MEASURED,
            ],
            {},
            "op 1 (createPodGroups): workload-aware PodGroups",
            id="create-pod-groups",
        ),
        pytest.param(
            [NODES, {**MEASURED, "podTemplatePath": "../templates/pod-with-range.yaml"}],
            {},
            "op 1 (createPods): pod-with-range.yaml:7: the action 'range' in {{ range .ports }}",
            id="text-template-beyond-the-subset",
        ),
        pytest.param(
            [
                NODES,
                {
                    "opcode": "createPods",
                    "count": 2,
                    "persistentVolumeTemplatePath": "../templates/pv-csi.yaml",
                    "persistentVolumeClaimTemplatePath": "../templates/pvc-templated.yaml",
                },
                MEASURED,
            ],
            {},
            "op 1 (createPods): pvc-templated.yaml has Go text/template expressions, which "
            "upstream does not render in this kind of template",
            id="text-template-in-a-claim-template",
        ),
        pytest.param(
            [NODES, {**MEASURED, "steadyState": True, "duration": "1s"}],
            {},
            "op 1 (createPods): steadyState (keeping count pods for a duration",
            id="steady-state",
        ),
        pytest.param(
            [
                NODES,
                {
                    "opcode": "churn",
                    "mode": "create",
                    "number": 5,
                    "templatePaths": ["../templates/pod-default.yaml"],
                },
                MEASURED,
            ],
            {},
            "op 1 (churn): churn create with a limit (number: 5)",
            id="churn-create-limit",
        ),
        pytest.param(
            [NODES, {**MEASURED, "podTemplatePath": "../templates/pod-with-claim.yaml"}],
            {},
            "op 1 (createPods): pods whose template names claims (the config creates none; "
            "persistentVolumeClaimTemplatePath does)",
            id="template-names-a-claim",
        ),
        pytest.param(
            [NODES, START, PODS, STOP],
            {},
            "op 2 (createPods): pods in namespace-2, outside the namespaces op 1 "
            "(startCollectingMetrics) collects (a)",
            id="window-pods-outside-its-namespaces",
        ),
        pytest.param(
            [NODES, START, {**PODS, "namespace": "a"}, {**PODS, "namespace": "a"}, STOP],
            {},
            "op 3 (createPods): a second createPods between op 1 (startCollectingMetrics)",
            id="window-with-two-creates",
        ),
        pytest.param(
            [NODES, START, {"opcode": "sleep", "duration": "1s"}, STOP],
            {},
            "op 2 (sleep) between op 1 (startCollectingMetrics) and stopCollectingMetrics",
            id="window-with-a-sleep",
        ),
        pytest.param(
            [NODES, {**START, "labelSelector": {"a": "b"}}, PODS, STOP],
            {},
            "op 1 (startCollectingMetrics): metrics of pods chosen by a label selector",
            id="window-label-selector",
        ),
        pytest.param(
            [NODES, START, STOP],
            {},
            "op 2 (stopCollectingMetrics): no pods created since op 1",
            id="empty-window",
        ),
        pytest.param(
            [NODES, MEASURED, START, {**PODS, "namespace": "a"}, STOP],
            {},
            "op 2 (startCollectingMetrics): a second span of measured ops",
            id="window-after-measured",
        ),
    ],
)
def test_unsupported_shapes_say_why(
    ops: list[dict[str, Any]], workload: dict[str, Any], reason: str
) -> None:
    with pytest.raises(Unsupported) as caught:
        config_with(copy.deepcopy(ops), **workload)
    assert reason in caught.value.reason


def test_an_attempted_barrier_waits_for_the_pods_created_before_it() -> None:
    # upstream's SchedulingWhileGated: gated pods not waited for (op 1), then a barrier
    # until they were attempted (op 2: a gated pod gets PodScheduled=False/SchedulingGated
    # from the API server on create), then pods (op 3) deleted in the background (op 4)
    w = run_shape("SchedulingWhileGated/1Node_10GatedPods")
    assert isinstance(w, StepsWorkload)
    assert steps_of(w)[:2] == [
        {"op": 1, "createPods": 10, "namespace": "namespace-1", "wait": False},
        {"op": 2, "barrier": "Attempted", "namespaces": ["namespace-1"]},
    ]


def test_a_missing_template_fails_that_workload_only() -> None:
    from asched.tools.bench import perf_suite

    data = [
        {
            "name": "Missing",
            "workloadTemplate": [
                NODES,
                {**MEASURED, "podTemplatePath": "../templates/no-such-pod.yaml"},
            ],
            "workloads": [{"name": "W"}],
        },
        {
            "name": "Present",
            "workloadTemplate": [
                NODES,
                {"opcode": "createResourceDriver", "driverName": "x"},
                MEASURED,
            ],
            "workloads": [{"name": "W"}],
        },
    ]
    config = load_config(data, folder=MISC)
    entries = perf_suite.run_suite(config, [], ["asched"], run_one=_never_run)
    assert [(e.name, e.status) for e in entries] == [
        ("Missing/W", "failed"),
        ("Present/W", "unsupported"),
    ]
    assert "no-such-pod.yaml" in (entries[0].reason or "")


def _never_run(workload: Workload, scheduler: str) -> Any:
    raise AssertionError(f"{workload.name} should not run with {scheduler}")


def steps_of(w: Workload) -> list[dict[str, Any]]:
    assert isinstance(w, StepsWorkload)
    return [describe(step) for step in w.steps]


@pytest.mark.parametrize(
    ("ops", "steps", "n_init"),
    [
        pytest.param(
            [NODES, {"opcode": "createPods", "count": 2}, {"opcode": "sleep", "duration": "1m30s"}],
            [
                {"op": 1, "createPods": 2, "namespace": "namespace-1", "wait": True},
                # 1m30s = 60 + 30 seconds
                {"op": 2, "sleep_seconds": 90.0},
            ],
            2,
            id="sleep",
        ),
        pytest.param(
            [NODES, {"opcode": "createPods", "count": 4, "skipWaitToCompletion": True}],
            [{"op": 1, "createPods": 4, "namespace": "namespace-1", "wait": False}],
            4,
            id="skip-wait",
        ),
        pytest.param(
            [
                NODES,
                {"opcode": "createPods", "count": 2, "namespace": "gone"},
                {
                    "opcode": "deletePods",
                    "namespace": "gone",
                    "labelSelector": {"app": "x", "tier": "y"},
                    "deletePodsPerSecond": 50,
                    "skipWaitToCompletion": True,
                },
            ],
            [
                {"op": 1, "createPods": 2, "namespace": "gone", "wait": True},
                {
                    "op": 2,
                    "deletePods": "gone",
                    "label_selector": "app=x,tier=y",
                    "per_second": 50,
                    "wait": False,
                },
            ],
            2,
            id="delete-pods-in-background",
        ),
        pytest.param(
            [NODES, {"opcode": "deletePods", "namespace": "other"}],
            [
                {
                    "op": 1,
                    "deletePods": "other",
                    "label_selector": "",
                    # upstream: 0 deletes all at once; waited for unless skipWaitToCompletion
                    "per_second": 0,
                    "wait": True,
                }
            ],
            0,
            id="delete-pods-waited",
        ),
    ],
)
def test_ops_before_the_measured_pods_become_ordered_steps(
    ops: list[dict[str, Any]], steps: list[dict[str, Any]], n_init: int
) -> None:
    w = config_with([*copy.deepcopy(ops), MEASURED])
    assert steps_of(w) == steps
    assert (w.n_init, w.n_measured) == (n_init, 3)
    assert w.init_pods == ()  # the steps replace the init phase
    assert w.to_json()["steps"] == steps


def test_a_workload_without_timed_ops_keeps_the_fixed_phases() -> None:
    w = run_shape("SchedulingBasic/5Nodes")
    assert not isinstance(w, StepsWorkload)
    assert w.n_init == 5


def test_the_step_shapes_of_the_test_config() -> None:
    w = run_shape("SchedulingDeletedPodsWithFinalizers/10Node_10DeletingPods")
    assert [(s["op"], s["wait"]) for s in steps_of(w)] == [(1, False), (2, False)]
    assert isinstance(w, StepsWorkload)
    create = w.steps[0]
    assert isinstance(create, CreatePods)
    assert create.name_prefix == "init-op1"
    pod = next(
        loadgen.pod_objects(create.groups, "init", scheduler_name="a", name_prefix="init-op1")
    )
    assert pod["metadata"]["name"] == "init-op1-0-0"
    assert pod["metadata"]["finalizers"] == ["test.k8s.io/finalizer"]


SERVICE = "../templates/service.yaml"


@pytest.mark.parametrize(
    ("op", "step"),
    [
        pytest.param(
            {"opcode": "createAny", "namespace": "svc", "templatePath": SERVICE},
            {"op": 1, "createAny": ["Service"], "namespaces": ["svc"]},
            id="service-in-the-op-namespace",
        ),
        pytest.param(
            {"opcode": "createAny", "templatePath": "../templates/namespace.yaml", "count": 2},
            # a generateName template: two namespaces, named by the API server
            {"op": 1, "createAny": ["Namespace", "Namespace"], "namespaces": []},
            id="two-namespaces",
        ),
    ],
)
def test_create_any_becomes_a_step(op: dict[str, Any], step: dict[str, Any]) -> None:
    w = config_with([NODES, op, MEASURED])
    assert steps_of(w) == [step]
    assert set(step["namespaces"]) <= set(w.namespaces())


@pytest.mark.parametrize(
    ("op", "error", "message"),
    [
        pytest.param(
            {"opcode": "createAny", "templatePath": "../templates/pod-with-range.yaml"},
            Unsupported,
            "op 1 (createAny): pod-with-range.yaml:7: the action 'range'",
            id="beyond-the-template-subset",
        ),
        pytest.param(
            {"opcode": "createAny", "namespace": "a"},
            InputError,
            "Case/W: op 1 (createAny).templatePath: required",
            id="no-template",
        ),
        pytest.param(
            {"opcode": "updateAny", "templatePath": "../templates/pod-default.yaml"},
            InputError,
            "pod-default.yaml: op 1 (updateAny) object 0 has no metadata.name",
            id="update-without-a-name",
        ),
        pytest.param(
            {"opcode": "createAny", "namespace": "svc", "templatePath": SERVICE, "count": 2},
            InputError,
            "op 1 (createAny).count: 2 objects from a template with the fixed name service1",
            id="fixed-name-twice",
        ),
    ],
)
def test_create_any_refusals(op: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        config_with([NODES, op, MEASURED])
    assert message in str(caught.value)


AFFINITY = DATA / "affinity" / "performance-config.yaml"


def test_labelled_namespaces_and_pod_sets() -> None:
    case, workload = load_config_file(AFFINITY).find(
        "SchedulingRequiredPodAntiAffinityWithNSSelector/10Nodes"
    )
    w = translate(case, workload)
    assert isinstance(w, StepsWorkload)
    # createNamespaces: <prefix>-<i> from the template, labels kept
    assert [(o["metadata"]["name"], o["metadata"]["labels"]) for o in w.namespace_objects] == [
        ("init-ns-0", {"team": "devops"}),
        ("init-ns-1", {"team": "devops"}),
        ("measure-ns-0", {"team": "devops"}),
    ]
    # createPodSets: initNamespaces (2) createPods ops of initPodsPerNamespace (2) pods
    assert steps_of(w) == [
        {"op": 3, "createPods": 2, "namespace": "init-ns-0", "wait": True},
        {"op": 3, "createPods": 2, "namespace": "init-ns-1", "wait": True},
    ]
    assert (w.n_init, w.n_measured) == (4, 6)  # 2 x 2 init pods
    assert w.namespaces()[:3] == ["init-ns-0", "init-ns-1", "measure-ns-0"]


@pytest.mark.parametrize(
    ("op", "message"),
    [
        pytest.param(
            {"opcode": "createPodSets", "count": 2, "createPodsOp": {"opcode": "createPods"}},
            "op 1 (createPodSets): needs namespacePrefix and createPodsOp",
            id="pod-sets-without-prefix",
        ),
        pytest.param(
            {
                "opcode": "createNamespaces",
                "prefix": "x",
                "count": 1,
                "namespaceTemplatePath": "../templates/pod-default.yaml",
            },
            "op 1 (createNamespaces) needs a Namespace, the file has 'Pod'",
            id="namespace-template-of-another-kind",
        ),
    ],
)
def test_namespace_and_pod_set_errors(op: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as caught:
        config_with([NODES, op, MEASURED])
    assert message in str(caught.value)


def test_ops_after_the_measured_pods_run_after_the_measured_phase() -> None:
    w = config_with(
        [
            NODES,
            {"opcode": "createPods", "count": 2},
            MEASURED,
            {"opcode": "createPods", "count": 4, "namespace": "later"},
            {"opcode": "deletePods", "namespace": "later"},
        ]
    )
    assert isinstance(w, StepsWorkload)
    assert steps_of(w) == [{"op": 1, "createPods": 2, "namespace": "namespace-1", "wait": True}]
    assert [describe(s) for s in w.after] == [
        {"op": 3, "createPods": 4, "namespace": "later", "wait": True},
        {"op": 4, "deletePods": "later", "label_selector": "", "per_second": 0, "wait": True},
    ]
    # init pods are the ones before measuring; the later ones' namespace is created too
    assert (w.n_init, w.n_measured) == (2, 3)
    assert "later" in w.namespaces()


def test_a_metrics_window_around_one_create_pods_is_the_measured_phase() -> None:
    w = config_with(
        [
            NODES,
            {"opcode": "createPods", "count": 2},
            {"opcode": "startCollectingMetrics"},  # no namespaces: every namespace
            PODS,
            {"opcode": "barrier"},
            STOP,
            {"opcode": "createPods", "count": 1, "skipWaitToCompletion": True},
        ]
    )
    assert (w.n_init, w.n_measured) == (2, 3)
    assert [g.namespace for g in w.measured_pods] == ["namespace-3"]
    assert isinstance(w, StepsWorkload)
    assert [describe(s) for s in w.after] == [
        {"op": 6, "createPods": 1, "namespace": "namespace-6", "wait": False}
    ]


def test_a_window_left_open_is_refused() -> None:
    with pytest.raises(Unsupported, match=r"op 1 \(startCollectingMetrics\): no stop"):
        # (the parser wants an op that collects metrics: here the createPods)
        config_with([NODES, START, {**MEASURED, "namespace": "a"}])


def test_a_gate_asched_always_has_is_accepted_at_that_value() -> None:
    w = config_with(
        [copy.deepcopy(NODES), copy.deepcopy(MEASURED)],
        featureGates={"NodeInclusionPolicyInPodTopologySpread": True},
    )
    assert w.n_measured == 3  # MEASURED creates 3 pods
