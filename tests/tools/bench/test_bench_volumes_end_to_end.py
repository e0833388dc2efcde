"""`asched bench run` of upstream's SchedulingInTreePVs/5Nodes end to end on the simulator,
with kube-scheduler v1.37.2 (which schedules pods with claims; asched's volume plugins
land apart): the pairs are created with their pods, the counts are of pods, the ceiling's
pods have no claims. No speed is asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.sim_only, pytest.mark.timeout(150)]

ROOT = Path(__file__).resolve().parents[3]
STORAGE = Path(__file__).resolve().parent / "data" / "perf" / "storage" / "performance-config.yaml"


def test_in_tree_pvs_with_kube_scheduler(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "asched",
            "bench",
            "run",
            str(STORAGE),
            "--workload",
            "SchedulingInTreePVs/5Nodes",
            "--scheduler",
            "kube-scheduler",
            "--ceiling-pods",
            "20",
            "--stall",
            "60",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        env={**os.environ, "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=140,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["ok"] is True
    # 5 init + 10 measured pods, each with its pair
    assert result["workload"]["volumes"] == {
        "storage_classes": [],
        "csi_nodes": 0,
        "local_pvs": 0,
        "prebound_pairs": 15,
        "unbound_claims": 0,
    }
    measured = result["measured"]
    # the create figures count pods (a pod's claim and PV are part of its chain)
    assert (measured["pods"], measured["bound"], measured["create"]["created"]) == (10, 10, 10)
    assert result["ceiling"]["bound"] == 20
    assert result["invariants"]["ok"] is True
