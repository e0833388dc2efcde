"""`asched bench suite` and `bench run --workload` over a config written here in upstream's
format, on the simulator with asched (tiny workloads; no speed is asserted)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.tools.bench.cli import run_asched

pytestmark = [pytest.mark.sim_only, pytest.mark.timeout(180)]

DATA = Path(__file__).resolve().parent / "data" / "perf"
CONFIG = DATA / "misc" / "performance-config.yaml"
THROUGHPUT_KEYS = {"Average", "Perc50", "Perc90", "Perc95", "Perc99"}


def asched(*args: str) -> subprocess.CompletedProcess[str]:
    return run_asched(*args)


def test_bench_suite_runs_the_small_workloads(tmp_path: Path) -> None:
    out = tmp_path / "suite.json"
    done = asched(
        "bench", "suite", str(CONFIG), "--labels", "integration-test,short", "--json", str(out)
    )
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(out.read_text())["results"]
    by_name = {r["name"]: r for r in results}
    # the performance-labelled SchedulingBasic/5000Nodes_10000Pods is filtered out
    assert list(by_name) == [
        "SchedulingBasic/5Nodes",
        "TopologySpreading/5Nodes",
        "SchedulingWhileGated/1Node_10GatedPods",
        "SchedulingDeletedPodsWithFinalizers/10Node_10DeletingPods",
        "SchedulingAfterDeletes/2Nodes",
        "DefaultTopologySpreading/5Nodes",
        "SchedulingThenDeleting/2Nodes",
        "SchedulingInAMetricsWindow/2Nodes",
    ]
    for name, measured in (
        ("SchedulingWhileGated/1Node_10GatedPods", 10),
        ("SchedulingBasic/5Nodes", 10),
        ("TopologySpreading/5Nodes", 10),
        ("SchedulingDeletedPodsWithFinalizers/10Node_10DeletingPods", 10),
        ("SchedulingAfterDeletes/2Nodes", 5),
        ("DefaultTopologySpreading/5Nodes", 10),
        ("SchedulingThenDeleting/2Nodes", 5),
        ("SchedulingInAMetricsWindow/2Nodes", 6),
    ):
        r = by_name[name]
        assert (r["status"], r["reason"], r["invariants_ok"]) == ("ok", None, True), name
        assert r["measured_pods"] == measured
        run = r["runs"]["asched"]
        assert run["measured"]["bound"] == measured
        throughput = r["SchedulingThroughput"]
        assert throughput is None or throughput.keys() == THROUGHPUT_KEYS
    assert by_name["TopologySpreading/5Nodes"]["threshold"] == 85.0
    assert by_name["SchedulingBasic/5Nodes"]["threshold"] is None
    # the gated pods were attempted (the API server's SchedulingGated condition) and stay
    # gated: asched never binds them, so only the 10 measured pods are bound in their phase
    gated = by_name["SchedulingWhileGated/1Node_10GatedPods"]["runs"]["asched"]
    barrier = next(s for s in gated["init"]["steps"] if s.get("barrier") == "Attempted")
    assert barrier["namespaces"] == ["namespace-1"]
    assert "TopologySpreading/5Nodes" in done.stdout


def test_bench_run_one_workload_of_a_config(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    done = asched(
        "bench",
        "run",
        str(CONFIG),
        "--workload",
        "TopologySpreading/5Nodes",
        "--ceiling",
        "none",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["workload"]["name"] == "TopologySpreading/5Nodes"
    assert (result["workload"]["nodes"], result["workload"]["measured_pods"]) == (5, 10)
    assert result["ok"] is True


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param((), "name one workload with --workload", id="no-workload"),
        pytest.param(
            ("--workload", "SchedulingBasic/6Nodes"),
            "no workload 'SchedulingBasic/6Nodes'",
            id="unknown-workload",
        ),
        pytest.param(
            ("--workload", "Unsupported/1Node"),
            "unsupported: op 2 (updateAny) between op 1 (startCollectingMetrics)",
            id="unsupported",
        ),
    ],
)
def test_bench_run_refuses_with_a_reason(extra: tuple[str, ...], message: str) -> None:
    done = asched("bench", "run", str(CONFIG), *extra)
    assert done.returncode == 2
    assert message in done.stderr


def run_workload(tmp_path: Path, name: str, config: Path = CONFIG) -> dict[str, Any]:
    out = tmp_path / "run.json"
    done = asched(
        "bench", "run", str(config), "--workload", name, "--ceiling", "none", "--json", str(out)
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["ok"] is True
    return result


def test_pods_deleted_and_a_pause_before_measuring(tmp_path: Path) -> None:
    """createPods (waited), deletePods (waited, all at once), sleep, then the measured pods."""
    result = run_workload(tmp_path, "SchedulingAfterDeletes/2Nodes")
    init = result["init"]
    create, delete, pause = init["steps"]
    assert (create["op"], create["createPods"], create["wait"]) == (1, 4, True)
    # every one of the 4 pods of namespace-1 listed and deleted before the next op
    assert (delete["listed"], delete["deleted"]) == (4, 4)
    assert pause == {"op": 3, "sleep_seconds": 0.2}
    # the steps include the 200 ms pause (a lower bound, not a speed)
    assert init["seconds"] >= 0.2
    assert result["measured"]["bound"] == 5


def test_pods_not_waited_for_and_deleted_in_the_background(tmp_path: Path) -> None:
    """Pods with a finalizer created without waiting, deleted at 100/s in the background
    while the measured pods are scheduled."""
    result = run_workload(tmp_path, "SchedulingDeletedPodsWithFinalizers/10Node_10DeletingPods")
    create, delete = result["init"]["steps"]
    assert (create["createPods"], create["wait"]) == (10, False)
    # listed when the op ran: all 10 exist (created, not necessarily bound); the deleting
    # stops when the measured phase ends, as upstream's does when the workload ends
    assert delete["listed"] == 10
    assert delete["deleted"] <= delete["listed"]
    assert result["measured"]["bound"] == 10


def test_a_service_created_before_the_pods(tmp_path: Path) -> None:
    """createAny of a Service (in its own namespace), then pods it selects."""
    result = run_workload(tmp_path, "DefaultTopologySpreading/5Nodes")
    service, init = result["init"]["steps"]
    assert service == {
        "op": 1,
        "createAny": ["Service"],
        "namespaces": ["service-ns"],
        "created": 1,
    }
    assert (init["op"], init["wait"]) == (2, True)
    assert result["measured"]["bound"] == 10


def test_labelled_namespaces_and_pod_sets_before_the_pods(tmp_path: Path) -> None:
    """createNamespaces from a template, createPodSets, then pods whose anti-affinity
    selects those namespaces by label."""
    name = "SchedulingRequiredPodAntiAffinityWithNSSelector/10Nodes"
    result = run_workload(tmp_path, name, DATA / "affinity" / "performance-config.yaml")
    assert result["workload"]["labelled_namespaces"] == ["init-ns-0", "init-ns-1", "measure-ns-0"]
    assert [(s["namespace"], s["createPods"]) for s in result["init"]["steps"]] == [
        ("init-ns-0", 2),
        ("init-ns-1", 2),
    ]
    assert result["measured"]["bound"] == 6


def test_ops_after_the_measured_pods(tmp_path: Path) -> None:
    """deletePods and createPods after the measured createPods run once it has ended."""
    result = run_workload(tmp_path, "SchedulingThenDeleting/2Nodes")
    assert result["measured"]["bound"] == 5
    delete, create = result["init"]["after_measuring"]
    # the 5 measured pods of namespace-1, deleted after measuring
    assert (delete["op"], delete["listed"], delete["deleted"]) == (2, 5, 5)
    assert (create["op"], create["createPods"], create["wait"]) == (3, 3, True)
    assert result["workload"]["after_measuring"][1]["namespace"] == "namespace-3"


def test_bench_suite_list_translates_and_runs_nothing() -> None:
    # --labels "" matches every workload: the runnable ones say "yes", the refused one why
    done = asched("bench", "suite", str(CONFIG), "--labels", "", "--list")
    assert done.returncode == 0, done.stderr
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if "│" in line}
    assert "yes" in rows["SchedulingBasic/5000Nodes_10000Pods"]
    assert "10,000" in rows["SchedulingBasic/5000Nodes_10000Pods"]  # measured pods
    assert "unsupported: op 2 (updateAny)" in rows["Unsupported/1Node"]


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        # one exact name; a shell pattern over the workload part; two patterns
        pytest.param(["SchedulingBasic/5Nodes"], ["SchedulingBasic/5Nodes"], id="exact"),
        pytest.param(["*/5000Nodes*"], ["SchedulingBasic/5000Nodes_10000Pods"], id="pattern"),
        pytest.param(
            ["TopologySpreading/*", "Unsupported/*"],
            ["TopologySpreading/5Nodes", "Unsupported/1Node"],
            id="two-patterns",
        ),
    ],
)
def test_bench_suite_workload_patterns(patterns: list[str], expected: list[str]) -> None:
    args = [a for p in patterns for a in ("--workload", p)]
    done = asched("bench", "suite", str(CONFIG), "--labels", "", "--list", *args)
    assert done.returncode == 0, done.stderr
    cells = [line.split("│")[1].strip() for line in done.stdout.splitlines() if "│" in line]
    names = [name for name in cells if name]  # a wrapped reason continues on unnamed rows
    assert names == expected


def test_bench_suite_workload_pattern_matching_nothing() -> None:
    done = asched("bench", "suite", str(CONFIG), "--labels", "", "--workload", "Nope/*")
    assert done.returncode == 2
    assert "matches '' and 'Nope/*'" in done.stdout
