"""Templates rendered per object, createAny of any kind found by API discovery, updateAny
and barriers after pods not waited for: a config written here in upstream's format, run on
the simulator with asched (tiny workloads; no speed is asserted)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.tools.bench.cli import run_asched

pytestmark = [pytest.mark.sim_only, pytest.mark.timeout(180)]

CONFIG = Path(__file__).resolve().parent / "data" / "perf" / "updates" / "performance-config.yaml"


def asched(*args: str) -> subprocess.CompletedProcess[str]:
    return run_asched(*args)


def test_pods_wait_for_node_updates_then_the_measured_pods_run(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    done = asched(
        "bench",
        "run",
        str(CONFIG),
        "--workload",
        "SchedulingAfterNodeUpdates/2Nodes",
        "--ceiling",
        "none",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["ok"] is True
    configmaps, priority_class, waiting, attempted, update, scheduled = result["init"]["steps"]
    # createAny: 2 ConfigMaps in their namespace (one per node), 1 cluster-scoped class
    assert (configmaps["createAny"], configmaps["namespaces"]) == (
        ["ConfigMap", "ConfigMap"],
        ["objects"],
    )
    assert configmaps["created"] == 2
    assert (priority_class["createAny"], priority_class["created"]) == (["PriorityClass"], 1)
    # the 4 pods fit only the 2 unschedulable nodes: created, not waited for, attempted
    assert (waiting["createPods"], waiting["wait"]) == (4, False)
    assert (attempted["barrier"], attempted["namespaces"]) == ("Attempted", ["waiting"])
    # updateAny made both nodes schedulable; the barrier then saw every waiting pod bound
    assert (update["updateAny"], update["updated"]) == (["Node", "Node"], 2)
    assert (scheduled["barrier"], scheduled["label_selector"]) == ("Scheduled", "type=waiting")
    assert result["measured"]["bound"] == 3


def test_gated_pods_bound_once_update_any_removes_their_gates(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    done = asched(
        "bench",
        "run",
        str(CONFIG),
        "--workload",
        "SchedulingAfterUngating/1Node",
        "--ceiling",
        "none",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["ok"] is True
    gated, attempted, update, scheduled = result["init"]["steps"]
    assert (gated["createPods"], gated["wait"]) == (5, False)
    assert attempted["barrier"] == "Attempted"
    # each of the 5 pods PUT without its gate (and its status PUT), found by its name
    assert (update["updateAny"], update["updated"]) == (["Pod"] * 5, 5)
    # then all 5 bound: the barrier on type=unsched ends
    assert (scheduled["barrier"], scheduled["label_selector"]) == ("Scheduled", "type=unsched")
    assert result["measured"]["bound"] == 3


def test_create_any_in_the_wrong_scope_fails_with_upstreams_error(tmp_path: Path) -> None:
    done = asched(
        "bench",
        "run",
        str(CONFIG),
        "--workload",
        "CreateAnyInTheWrongScope/1Node",
        "--ceiling",
        "none",
        "--json",
        str(tmp_path / "run.json"),
    )
    assert done.returncode != 0
    assert (
        "op 1: priorityclass.yaml: namespace 'objects' set for 'priorityclass.yaml', but "
        "'PriorityClass.scheduling.k8s.io' has scope 'root'"
    ) in done.stderr
