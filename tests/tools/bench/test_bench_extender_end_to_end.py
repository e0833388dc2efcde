"""`asched bench run --extender-latency-ms`: small live runs of asched and kube-scheduler v1.37.2.

50 nodes, 10 init pods, 100 measured pods, the benchmark extender with 2 ms per call
rejecting the nodes whose crc32 is 0 mod 10 (of node-0..node-49: node-5, node-6 and
node-13). The figures the extender counted while measuring are derived below; speed is
never asserted (benchmarks are not tests).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(240)

WORKLOAD = """\
format: asched.bench/v1
name: SchedulingBasic/50Nodes_100Pods
nodes: [{count: 50, template: node-default}]
initPods: [{count: 10, template: pod-default}]
measuredPods: [{count: 100, template: pod-default}]
"""
NODES, MEASURED, REJECTED = 50, 100, 3


def bench_run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], Any]:
    workload = tmp_path / "workload.yaml"
    workload.write_text(WORKLOAD)
    out = tmp_path / "run.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "asched",
            "bench",
            "run",
            str(workload),
            "--ceiling",
            "none",
            "--extender-latency-ms",
            "2",
            "--json",
            str(out),
            "--workdir",
            str(tmp_path / "work"),
            *args,
        ],
        env={**os.environ, "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=220,
        check=False,
    )
    result = json.loads(out.read_text()) if out.exists() else None
    return done, result


@pytest.mark.parametrize(
    ("scheduler", "backend", "extra"),
    [
        # over HTTPS: the v1beta1 tlsConfig.caData is read by the genuine binary
        pytest.param("kube-scheduler", "sim", ["--extender-tls"], id="kube-scheduler-sim-https"),
        pytest.param(
            "kube-scheduler",
            "kube-apiserver",
            [],
            id="kube-scheduler-kube-apiserver-http",
            marks=pytest.mark.kube_apiserver,
        ),
        pytest.param("asched", "sim", ["--extender-tls"], id="asched-sim-https"),
        pytest.param(
            "asched",
            "kube-apiserver",
            [],
            id="asched-kube-apiserver-http",
            marks=pytest.mark.kube_apiserver,
        ),
    ],
)
def test_the_scheduler_calls_the_benchmark_extender(
    tmp_path: Path, scheduler: str, backend: str, extra: list[str]
) -> None:
    done, result = bench_run(tmp_path, "--scheduler", scheduler, "--backend", backend, *extra)
    assert done.returncode == 0, done.stderr[-3000:]
    assert result is not None
    assert result["ok"] is True
    assert result["measured"]["bound"] == MEASURED
    ext = result["extender"]
    assert ext["latency_ms"] == 2.0
    assert ext["reject_every"] == 10
    assert ext["tls"] is bool(extra)
    assert ext["url"].startswith("https://" if extra else "http://")
    assert result["options"]["extender"]["node_cache_capable"] is True
    calls = ext["measured"]
    # Both call filter, then prioritize, once per pod: every pod fits at the first attempt,
    # and (asched) the nodes the extender accepted still fit when its answer is concluded.
    assert calls["calls"] == {"filter": MEASURED, "prioritize": MEASURED}
    assert calls["calls_per_pod"] == 1.0
    # Under 100 nodes its adaptive percentage looks at every node, and all 50 pass the
    # in-tree filters: 50 names per filter call; 3 fail the extender: 47 per prioritize.
    assert calls["names"] == {
        "filter": MEASURED * NODES,
        "prioritize": MEASURED * (NODES - REJECTED),
    }
    if scheduler == "kube-scheduler":
        assert calls["max_in_flight"] == 1  # one pod at a time, one call at a time
    assert calls["bad_requests"] == 0
    assert calls["cpu_ms_per_call"] > 0
    assert result["measured"]["cpu_ms_per_pod"]["extender"] > 0
    assert result["invariants"]["pods_on_rejected_nodes"] == 0
    assert result["quality"] is None  # the in-tree replay cannot judge extenders: skipped
    assert "+ extender 2 ms" in done.stdout
