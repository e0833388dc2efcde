"""`asched tune` end to end on the simulator, tiny workload: the recommendation agrees with its reason.

Like test_bench_cli_end_to_end.py, this keeps the harness honest and never asserts speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.sim_only, pytest.mark.timeout(120)]


def test_tune_tiny_names_one_setting_and_says_all_20_nodes(tmp_path: Path) -> None:
    # tiny has 20 nodes: under upstream's 100-node minimum every percentage scores all of
    # them, so 10, 50 and 100 % are one setting, run twice, and named 100.
    out = tmp_path / "tune.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "asched",
            "tune",
            "tiny",
            "--percentages",
            "10,50,100",
            "--repeat",
            "2",
            "--json",
            str(out),
        ],
        cwd=Path(__file__).resolve().parents[3],
        env={**os.environ, "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["nodes"] == 20
    [setting] = result["settings"]
    assert (setting["percentages"], setting["nodes_scored"]) == ([10, 50, 100], 20)
    assert len(setting["runs"]) == 2
    assert all(run["completed"] and run["nodes"] == 20 for run in setting["runs"])
    recommendation = result["recommendation"]
    assert (recommendation["percentage"], recommendation["nodes_scored"]) == (100, 20)
    assert "all 20 nodes" in recommendation["reason"]
    assert (
        "recommended percentageOfNodesToScore: 100 (10 %, 50 %, 100 % -> all 20 nodes)"
        in done.stdout
    )
