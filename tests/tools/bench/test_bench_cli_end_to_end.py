"""`asched bench run` and `asched tune` end to end on the simulator, tiny workload only.

These keep the harness working; they never assert speed (benchmarks are not tests).
The keys checked are the ones docs/benchmarks.md documents.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.sim_only, pytest.mark.timeout(120)]

TOP_KEYS = {
    "schema",
    "ok",
    "started_at",
    "wall_seconds",
    "workload",
    "options",
    "backend",
    "scheduler",
    "init",
    "measured",
    "ceiling",
    "fraction_of_ceiling",
    "fraction_of_ceiling_overall",
    "quality",
    "invariants",
    "churn",
    "harness_cpu_seconds",
    "versions",
    "machine",
    "git",
}
PHASE_KEYS = {
    "mode",
    "pods",
    "bound",
    "completed",
    "duration_seconds",
    "throughput",
    "latency_seconds",
    "cpu_seconds",
    "cpu_ms_per_pod",
    "create",
}
THROUGHPUT_KEYS = {
    "samples",
    "average",
    "p50",
    "p90",
    "p95",
    "p99",
    "overall",
    "intervals",
    "sample_interval_seconds",
}
QUALITY_KEYS = {
    "evaluated",
    "infeasible_at_replay",
    "max_total",
    "regret_mean",
    "regret_p99",
    "regret_max",
    "zero_regret_fraction",
    "cpu_utilisation_mean",
    "balance_cpu_stddev",
    "fragmentation",
}


def asched(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, "-m", "asched", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )


def test_bench_run_tiny(tmp_path: Path) -> None:
    out, png = tmp_path / "run.json", tmp_path / "run.png"
    done = asched(
        "bench",
        "run",
        "tiny",
        "--scheduler",
        "asched",
        "--json",
        str(out),
        "--plot",
        str(png),
        cwd=Path(__file__).resolve().parents[3],
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    assert result.keys() >= TOP_KEYS
    assert result["ok"] is True
    assert result["backend"] == "sim"
    assert result["scheduler"]["kind"] == "asched"
    assert result["scheduler"]["exit_code"] == 0
    # no --workdir: the run's directory went with its success, so no log is named
    assert result["scheduler"]["log"] is None
    measured = result["measured"]
    assert measured.keys() >= PHASE_KEYS
    assert measured["throughput"].keys() >= THROUGHPUT_KEYS
    assert (measured["pods"], measured["bound"], measured["completed"]) == (100, 100, True)
    assert measured["latency_seconds"]["count"] == 100
    ceiling = result["ceiling"]
    assert ceiling.keys() >= PHASE_KEYS
    assert ceiling["mode"] == "bind"
    assert ceiling["bound"] == ceiling["pods"] == 100
    invariants = result["invariants"]
    assert invariants["ok"] is True
    assert invariants["overcommitted"] == invariants["rebinds"] == []
    assert result["quality"].keys() >= QUALITY_KEYS
    assert result["quality"]["evaluated"] + result["quality"]["infeasible_at_replay"] == 100
    assert result["workload"]["measured_pods"] == 100
    assert result["machine"]["cpu_count"] >= 1
    assert {"asched", "python", "numpy", "api_server", "scheduler"} <= result["versions"].keys()
    assert "revision" in result["git"]
    assert png.stat().st_size > 0
    assert "SchedulingBasic/20Nodes_100Pods" in done.stdout
    # a run of well under 6 s is sampled finer than 1 s, so its first table has figures
    # (at 1 s it would have no sample at all and read "average -")
    assert measured["duration_seconds"] < 6.0
    assert measured["throughput"]["sample_interval_seconds"] < 1.0
    assert measured["throughput"]["samples"] >= 1
    assert measured["throughput"]["average"] is not None
    assert "too few binds" not in done.stdout
    assert f"plot: {png}" in done.stdout
    assert f"figures (JSON): {out}" in done.stdout
    assert "Invariants held" in done.stdout
    # one unit per row: the spread of utilisations in percentage points, as the mean is in %
    assert re.search(r"CPU utilisation mean / std-dev\W+\d+ % / \d+\.\d\d points", done.stdout)


def test_tune_tiny_two_percentages(tmp_path: Path) -> None:
    out, png = tmp_path / "tune.json", tmp_path / "tune.png"
    done = asched(
        "tune",
        "tiny",
        "--percentages",
        "10,100",
        "--json",
        str(out),
        "--plot",
        str(png),
        cwd=Path(__file__).resolve().parents[3],
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    assert [p["percentage"] for p in result["points"]] == [10, 100]
    assert all(p["completed"] for p in result["points"])
    assert result["recommendation"]["percentage"] in (10, 100)
    assert result["recommendation"]["reason"]
    assert "recommended percentageOfNodesToScore" in done.stdout
    assert png.stat().st_size > 0


def test_a_bad_workload_is_exit_status_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("format: asched.bench/v1\nname: x\nmeasuredPods: [{count: 0}]\n")
    done = asched("bench", "run", str(bad), cwd=tmp_path)
    assert done.returncode == 2
    assert "measuredPods[0].count: must be an integer >= 1, got 0" in done.stderr
