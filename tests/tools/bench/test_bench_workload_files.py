"""Workload files: every shipped file loads; either format is recognised; every mistake is
reported with its field path."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from asched.errors import InputError
from asched.tools.bench import objects, run_command, tune_command
from asched.tools.bench.workload_files import load_workload_file, resolve
from asched.tools.bench.workload_format import WorkloadError, load_workload
from tests.tools.bench.documents import DELETE as _DELETE, changed, field_errors

WORKLOADS = Path(__file__).resolve().parents[3] / "bench" / "workloads"

VALID: dict[str, Any] = {
    "format": "asched.bench/v1",
    "name": "t",
    "nodes": [{"count": 3, "template": "node-default"}],
    "initPods": [{"count": 1}],
    "measuredPods": [{"count": 2, "template": "pod-default"}],
}


def with_change(path: list[Any], value: Any) -> dict[str, Any]:
    """VALID with the value at ``path`` replaced (or deleted, with ``_DELETE``)."""
    return changed(VALID, path, value)


@pytest.mark.parametrize("path", sorted(WORKLOADS.glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_workloads_load(path: Path) -> None:
    workload = load_workload_file(path)
    assert workload.n_measured > 0
    assert workload.source == str(path)


#: A scheduler_perf config (upstream's format) in the folder ``tmp``: its test cases'
#: workloads, each a SchedulingBasic of ``nodes`` nodes and ``pods`` measured pods.
POD_TEMPLATE = """\
apiVersion: v1
kind: Pod
metadata: {generateName: pod-}
spec:
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.9
    resources: {requests: {cpu: 250m, memory: 100Mi}, limits: {cpu: 250m, memory: 100Mi}}
"""


def upstream_config(tmp: Path, *workloads: tuple[str, int, int], extra: str = "") -> Path:
    """A one-test-case config ``Basic`` with ``(name, nodes, pods)`` workloads; ``extra``
    fields of its measured createPods op."""
    (tmp / "templates").mkdir(exist_ok=True)
    (tmp / "templates" / "pod.yaml").write_text(POD_TEMPLATE)
    lines = [
        "- name: Basic",
        "  defaultPodTemplatePath: templates/pod.yaml",
        "  workloadTemplate:",
        "  - {opcode: createNodes, countParam: $nodes}",
        f"  - {{opcode: createPods, countParam: $pods, collectMetrics: true{extra}}}",
        "  workloads:",
    ]
    lines += [f"  - {{name: {n}, params: {{nodes: {c}, pods: {p}}}}}" for n, c, p in workloads]
    path = tmp / "config.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_an_upstream_file_with_one_workload_needs_no_name(tmp_path: Path) -> None:
    path = upstream_config(tmp_path, ("3Nodes", 3, 7))
    workload = load_workload_file(path)
    # Basic/3Nodes: 3 nodes, 7 measured pods of templates/pod.yaml (resolved beside the file)
    assert (workload.name, workload.n_nodes, workload.n_measured) == ("Basic/3Nodes", 3, 7)
    assert workload.source == str(path)
    pod = objects.pod(workload.measured_pods[0], "p", scheduler_name="s")
    assert pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "250m"
    assert pod["metadata"]["namespace"] == "namespace-1"  # upstream's namespace-<op index>


def test_an_upstream_file_with_several_workloads_needs_one_named(tmp_path: Path) -> None:
    path = upstream_config(tmp_path, ("3Nodes", 3, 7), ("5Nodes", 5, 9))
    with pytest.raises(InputError) as caught:
        load_workload_file(path)
    assert str(caught.value) == (
        f"{path}: a scheduler_perf config with 2 workloads; name one workload with "
        "--workload 'TestCase/Workload' (or run them all with `asched bench suite`)"
    )
    chosen = load_workload_file(path, perf_workload="Basic/5Nodes")
    assert (chosen.name, chosen.n_nodes, chosen.n_measured) == ("Basic/5Nodes", 5, 9)
    with pytest.raises(InputError, match=r"no workload 'Basic/4Nodes' \(workloads: "):
        load_workload_file(path, perf_workload="Basic/4Nodes")


def test_an_unsupported_upstream_workload_says_why(tmp_path: Path) -> None:
    path = upstream_config(tmp_path, ("1Node", 1, 1), extra=", steadyState: true")
    with pytest.raises(InputError) as caught:
        load_workload_file(path)
    assert str(caught.value) == (
        f"{path}: Basic/1Node: unsupported: op 1 (createPods): steadyState (keeping count "
        "pods for a duration, deleting scheduled ones and creating new ones: the runner's "
        "phases have no such loop)"
    )


def test_a_workload_name_for_a_home_grown_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text("format: asched.bench/v1\nname: t\nmeasuredPods: [{count: 1}]\n")
    with pytest.raises(InputError) as caught:
        load_workload_file(path, perf_workload="Basic/3Nodes")
    assert str(caught.value) == (
        f"{path}: --workload Basic/3Nodes: only an upstream scheduler_perf config (a list of "
        "test cases) has workloads to choose from; this file is one asched.bench/v1 workload"
    )


@pytest.mark.parametrize(
    "configure",
    [
        pytest.param(run_command.configure, id="bench run"),
        pytest.param(tune_command.configure, id="tune"),
    ],
)
def test_bench_run_and_tune_take_either_format(configure: Any, tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    configure(parser)
    one = upstream_config(tmp_path, ("3Nodes", 3, 7))
    assert run_command.load_workload(parser.parse_args([str(one)])).name == "Basic/3Nodes"
    home = tmp_path / "home.yaml"
    home.write_text("format: asched.bench/v1\nname: home\nmeasuredPods: [{count: 2}]\n")
    assert run_command.load_workload(parser.parse_args([str(home)])).name == "home"
    two = upstream_config(tmp_path, ("3Nodes", 3, 7), ("5Nodes", 5, 9))
    args = parser.parse_args([str(two), "--workload", "Basic/5Nodes"])
    assert run_command.load_workload(args).n_nodes == 5
    with pytest.raises(InputError, match="name one workload with --workload"):
        run_command.load_workload(parser.parse_args([str(two)]))


def test_the_valid_document_loads() -> None:
    workload = load_workload(VALID)
    assert (workload.n_nodes, workload.n_init, workload.n_measured) == (3, 1, 2)
    assert workload.measured_pods[0].namespace == "bench-measured"
    assert workload.init_pods[0].namespace == "bench-init"


@pytest.mark.parametrize(
    ("document", "path", "message"),
    [
        pytest.param(
            with_change(["format"], "v2"), "format", "must be 'asched.bench/v1'", id="format"
        ),
        pytest.param(with_change(["name"], _DELETE), "name", "required", id="name missing"),
        pytest.param(
            with_change(["measuredPods", 0, "count"], 0),
            "measuredPods[0].count",
            "must be an integer >= 1, got 0",
            id="count zero",
        ),
        pytest.param(
            with_change(["measuredPods", 0, "count"], "ten"),
            "measuredPods[0].count",
            "must be an integer",
            id="count not a number",
        ),
        pytest.param(
            with_change(["nodes", 0, "count"], _DELETE),
            "nodes[0].count",
            "required",
            id="count missing",
        ),
        pytest.param(
            with_change(["measuredPods", 0, "cpus"], "1"),
            "measuredPods[0].cpus",
            "unknown field (did you mean 'cpu'?)",
            id="unknown field with a hint",
        ),
        pytest.param(
            with_change(["initPods", 0, "template"], "pod-defualt"),
            "initPods[0].template",
            "unknown template 'pod-defualt' (did you mean 'pod-default'?)",
            id="unknown template",
        ),
        pytest.param(
            with_change(["nodes", 0, "cpu"], "4 cores"),
            "nodes[0].cpu",
            "not a valid quantity '4 cores'",
            id="bad quantity",
        ),
        pytest.param(
            with_change(["nodes", 0, "taints"], [{"key": "a", "effect": "Never"}]),
            "nodes[0].taints[0].effect",
            "must be one of NoSchedule, PreferNoSchedule, NoExecute",
            id="taint effect",
        ),
        pytest.param(
            with_change(["nodes", 0, "labels"], {"zone": 3}),
            "nodes[0].labels.zone",
            "label values are strings",
            id="label value",
        ),
        pytest.param(
            with_change(["measuredPods", 0, "namespace"], "Not_A_Label"),
            "measuredPods[0].namespace",
            "must be a DNS label",
            id="namespace",
        ),
        pytest.param(
            with_change(["measuredPods"], []),
            "measuredPods",
            "required: at least one group of measured pods",
            id="no measured pods",
        ),
        pytest.param(
            with_change(["nodes"], [{"count": 1}, {"count": 2}]),
            "nodes[1].namePrefix",
            "'node' is already used by nodes[0]",
            id="node names would collide",
        ),
        pytest.param(
            with_change(["churn"], {"mode": "create", "objects": [{"kind": "Pod"}]}),
            "churn.intervalMilliseconds",
            "required",
            id="churn interval missing",
        ),
        pytest.param(
            with_change(["churn"], {"mode": "rotate", "intervalMilliseconds": 100, "objects": []}),
            "churn.mode",
            "must be create or recreate, got 'rotate'",
            id="churn mode",
        ),
        pytest.param(
            with_change(
                ["churn"], {"intervalMilliseconds": 100, "objects": [{"kind": "Deployment"}]}
            ),
            "churn.objects[0].kind",
            "must be one of Node, Pod, Service",
            id="churn kind",
        ),
        pytest.param(
            with_change(
                ["churn"],
                {"intervalMilliseconds": 100, "objects": [{"kind": "Pod", "count": 3}]},
            ),
            "churn.objects[0].count",
            "unknown field",
            id="churned objects have no count",
        ),
        pytest.param(
            with_change(["timeoutSeconds"], -5),
            "timeoutSeconds",
            "must be a positive number",
            id="timeout",
        ),
    ],
)
def test_errors_name_the_field(document: dict[str, Any], path: str, message: str) -> None:
    error, found = field_errors(document, "w.yaml")
    assert path in found, found
    assert message in found[path]
    assert str(error).startswith("w.yaml: invalid workload:")


def test_every_error_is_reported_at_once() -> None:
    document = with_change(["measuredPods", 0, "count"], -1)
    document["nodes"][0]["memory"] = "lots"
    document["bogus"] = True
    with pytest.raises(WorkloadError) as caught:
        load_workload(document)
    paths = [error.path for error in caught.value.errors]
    assert paths == ["bogus", "nodes[0].memory", "measuredPods[0].count"]


def test_not_a_mapping() -> None:
    with pytest.raises(WorkloadError) as caught:
        load_workload(["a list"])
    assert caught.value.errors[0].path == "(document)"


def test_resolve_by_name_and_unknown_names(tmp_path: Path) -> None:
    (tmp_path / "small.yaml").write_text("format: asched.bench/v1\n")
    assert resolve("small", tmp_path) == tmp_path / "small.yaml"
    with pytest.raises(
        InputError, match=r"^big: no such workload file or name \(workloads: small\)$"
    ):
        resolve("big", tmp_path)


def test_pod_objects_follow_template_then_group_then_patch() -> None:
    document = with_change(
        ["measuredPods", 0],
        {
            "count": 1,
            "template": "pod-with-node-affinity",
            "cpu": "250m",
            "labels": {"team": "a"},
            "priority": 10,
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "patch": {"spec": {"containers": None, "hostNetwork": True}},
        },
    )
    group = load_workload(document).measured_pods[0]
    pod = objects.pod(group, "p-1", scheduler_name="s")
    spec = pod["spec"]
    assert "containers" not in spec  # null in a merge patch deletes
    assert spec["hostNetwork"] is True
    assert spec["schedulerName"] == "s"
    assert spec["priorityClassName"] == "bench-priority-10"
    assert spec["affinity"]["nodeAffinity"]  # from the template
    assert spec["tolerations"] == [{"key": "k", "operator": "Exists"}]
    assert pod["metadata"]["labels"]["team"] == "a"


def test_group_cpu_overrides_the_template() -> None:
    group = load_workload(with_change(["measuredPods", 0, "cpu"], "250m")).measured_pods[0]
    pod = objects.pod(group, "p", scheduler_name="s")
    resources = pod["spec"]["containers"][0]["resources"]
    assert resources["requests"] == resources["limits"] == {"cpu": "250m", "memory": "500Mi"}


def test_template_priority_needs_a_class() -> None:
    # pod-high-priority-large-cpu has priority 10 (scheduler_perf's template), so the
    # workload asks for PriorityClass bench-priority-10.
    document = with_change(["measuredPods", 0, "template"], "pod-high-priority-large-cpu")
    workload = load_workload(document)
    assert workload.priorities() == {10}


def test_node_objects_spread_labels_and_taints() -> None:
    document = with_change(
        ["nodes", 0],
        {
            "count": 3,
            "spreadLabels": {"topology.kubernetes.io/zone": ["z0", "z1"]},
            "taints": [{"key": "d", "value": "x", "effect": "NoSchedule"}],
        },
    )
    group = load_workload(document).nodes[0]
    nodes = [objects.node(group, f"n-{i}", i) for i in range(3)]
    assert [n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes] == [
        "z0",
        "z1",
        "z0",
    ]
    assert nodes[0]["spec"]["taints"] == [{"key": "d", "value": "x", "effect": "NoSchedule"}]
    assert nodes[0]["status"]["allocatable"] == {"cpu": "4", "memory": "32Gi", "pods": "110"}


def test_node_default_has_no_zone_label() -> None:
    group = load_workload(VALID).nodes[0]
    labels = objects.node(group, "n-0", 0)["metadata"]["labels"]
    assert labels == {"kubernetes.io/hostname": "n-0"}
