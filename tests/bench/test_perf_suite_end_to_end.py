"""`asched bench suite` and `bench run --workload` over a config written here in upstream's
format, on the simulator with asched (tiny workloads; no speed is asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.sim_only, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).resolve().parent / "data" / "perf" / "misc" / "performance-config.yaml"
THROUGHPUT_KEYS = {"Average", "Perc50", "Perc90", "Perc95", "Perc99"}


def asched(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, "-m", "asched", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=170,
        check=False,
    )


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
    ]
    for name in ("SchedulingBasic/5Nodes", "TopologySpreading/5Nodes"):
        r = by_name[name]
        assert (r["status"], r["reason"], r["invariants_ok"]) == ("ok", None, True)
        assert r["measured_pods"] == 10
        run = r["runs"]["asched"]
        assert run["measured"]["bound"] == 10
        throughput = r["SchedulingThroughput"]
        assert throughput is None or throughput.keys() == THROUGHPUT_KEYS
    assert by_name["TopologySpreading/5Nodes"]["threshold"] == 85.0
    assert by_name["SchedulingBasic/5Nodes"]["threshold"] is None
    gated = by_name["SchedulingWhileGated/1Node_10GatedPods"]
    assert gated["status"] == "unsupported"
    assert "skipWaitToCompletion" in gated["reason"]
    assert gated["SchedulingThroughput"] is None
    assert "unsupported" in done.stdout
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
            ("--workload", "SchedulingWhileGated/1Node_10GatedPods"),
            "unsupported: op 1 (createPods): pods not waited for",
            id="unsupported",
        ),
    ],
)
def test_bench_run_refuses_with_a_reason(extra: tuple[str, ...], message: str) -> None:
    done = asched("bench", "run", str(CONFIG), *extra)
    assert done.returncode == 2
    assert message in done.stderr
