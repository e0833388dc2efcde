"""`asched bench run gang-tiny` end to end on the simulator, with each scheduler.

gang-tiny (see its description): 4 nodes hold 16 members of 900m; 3 gangs of 8
(minMember 8) arrive interleaved, 24 members, 150 % of the room: asched as scheduler-plugins'
PodGroups with Coscheduling, kube-scheduler v1.37 as its own v1beta1 PodGroups. These keep
the gang harness working; they never assert speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from asched.framework.registry import installed

pytestmark = [pytest.mark.sim_only, pytest.mark.timeout(150)]

ROOT = Path(__file__).resolve().parents[3]
GANG_KEYS = {
    "gangs",
    "completed",
    "partial",
    "unplaced",
    "throughput_gangs_per_second",
    "span_seconds",
    "held_cpu_millicores",
    "permit_waiting_pods",
    "timeout_rejections",
    "partial_gangs",
}


def bench_run(
    scheduler: str, out: Path, png: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    done = subprocess.run(
        [
            sys.executable, "-m", "asched", "bench", "run", "gang-tiny",
            "--scheduler", scheduler, "--json", str(out), "--plot", str(png),
        ],
        cwd=ROOT,
        env={**os.environ, "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=140,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    return done, json.loads(out.read_text())


def test_kube_scheduler_gang_schedules_its_own_podgroups(tmp_path: Path) -> None:
    # kube-scheduler v1.37 with GenericWorkload: the gangs as scheduling.k8s.io/v1beta1
    # PodGroups (minCount 8), its members naming them; its GangScheduling plugin holds
    # members at Permit until 8 of a gang are placed
    done, result = bench_run("kube-scheduler", tmp_path / "run.json", tmp_path / "run.png")
    assert result["ok"] is True
    measured = result["measured"]
    # room for 16 members of 24: two whole gangs, then binding settles
    assert (measured["pods"], measured["bound"]) == (24, 16)
    assert (measured["completed"], measured["settled"]) == (False, True)
    gangs = result["gangs"]
    assert gangs.keys() >= GANG_KEYS
    assert gangs["gangs"] == 3
    # all or nothing, as asched's: no member of the third gang ends bound
    assert (gangs["completed"], gangs["partial"], gangs["unplaced"]) == (2, 0, 1)
    assert gangs["held_cpu_millicores"]["end"] == 0
    assert gangs["permit_waiting_pods"] is None  # kube-scheduler is never scraped
    assert result["invariants"]["partial_gangs"] == 0
    assert result["invariants"]["ok"] is True
    assert result["workload"]["scheduler_profile"] == "coscheduling"
    assert "Gangs: 2 of 3 completed, 0 partial" in done.stdout
    assert (tmp_path / "run.png").stat().st_size > 0


@pytest.mark.skipif(
    "Coscheduling" not in installed(), reason="asched's Coscheduling plugin is not in yet"
)
def test_asched_completes_whole_gangs_only(tmp_path: Path) -> None:
    _done, result = bench_run("asched", tmp_path / "run.json", tmp_path / "run.png")
    assert result["ok"] is True
    gangs = result["gangs"]
    # room for 16 members: 2 whole gangs bound, the third waits with none bound
    assert (gangs["completed"], gangs["partial"], gangs["unplaced"]) == (2, 0, 1)
    assert (result["measured"]["bound"], result["measured"]["settled"]) == (16, True)
    assert gangs["held_cpu_millicores"]["end"] == 0
    assert gangs["span_seconds"]["count"] == 2
    assert gangs["timeout_rejections"]["events"] == 0  # whole-gang feasibility: no deadlock
    assert result["invariants"]["partial_gangs"] == 0
