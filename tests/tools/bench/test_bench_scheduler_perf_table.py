"""bench/scheduler_perf_table.py: the medians, ratios and thresholds RESULTS.md quotes
for upstream's scheduler_perf workloads (issue 16)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "bench" / "scheduler_perf_table.py"


@pytest.fixture(scope="module")
def summary() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_scheduler_perf_table", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def suite(
    name: str, scheduler: str, average: float, *, backend: str = "sim", ok: bool = True
) -> dict[str, Any]:
    """A `bench suite --json` document with one workload run by one scheduler."""
    run = {
        "backend": backend,
        "measured": {
            "cpu_ms_per_pod": {
                "scheduler": 1.0 if scheduler == "asched" else 4.0,
                "sim": 0.5 if scheduler == "asched" else 0.8,
            }
        },
        "SchedulingThroughput": {"Average": average},
    }
    return {
        "schema": "asched.bench.suite/v1",
        "results": [
            {
                "name": name,
                "status": "ok",
                "reason": None,
                "threshold": 270.0,
                "invariants_ok": ok,
                "runs": {scheduler: run},
            }
        ],
    }


def test_medians_ratio_and_invariants(tmp_path: Path, summary: ModuleType) -> None:
    documents = {
        "basic-asched-r1": suite("Basic/5000Nodes", "asched", 1200.0),
        "basic-asched-r2": suite("Basic/5000Nodes", "asched", 900.0),
        "basic-asched-r3": suite("Basic/5000Nodes", "asched", 1300.0),
        "basic-ks": suite("Basic/5000Nodes", "kube-scheduler", 400.0),
        "spread-asched": suite("Spread/5000Nodes", "asched", 500.0, ok=False),
        "not-a-suite": {"schema": "asched.bench/v1"},
    }
    for stem, document in documents.items():
        (tmp_path / f"{stem}.json").write_text(json.dumps(document))

    lines = summary.table(summary.load(tmp_path)).splitlines()

    # runs in file (run) order; their median is 1,200; 1,200 / 400 = 3.0x (>= 2x: unmarked);
    # scheduler CPU 1.00 / 4.00 = 0.25x (<= 0.33x: unmarked); the server's 0.50 and 0.80
    assert lines[2] == (
        "| Basic/5000Nodes | sim | 270 | 1,200 (1,200, 900, 1,300) | 400 | **3.0x** "
        "| 1.00, 4.00, 0.25x | 0.50, 0.80 | held |"
    )
    # no kube-scheduler run: no ratio; one run broke an invariant
    assert lines[3] == (
        "| Spread/5000Nodes | sim | 270 | 500 | - | - | 1.00, -, - | 0.50, - | BROKEN |"
    )
    assert len(lines) == 4  # the header, its rule and the two workloads


def test_targets_missed_are_marked(tmp_path: Path, summary: ModuleType) -> None:
    # 700 / 400 = 1.75x < 2x; 1.00 / 2.00 = 0.50x > 0.33x
    ours = suite("Basic/5000Nodes", "asched", 700.0)
    theirs = suite("Basic/5000Nodes", "kube-scheduler", 400.0)
    theirs["results"][0]["runs"]["kube-scheduler"]["measured"]["cpu_ms_per_pod"]["scheduler"] = 2.0
    (tmp_path / "a.json").write_text(json.dumps(ours))
    (tmp_path / "k.json").write_text(json.dumps(theirs))

    row = summary.table(summary.load(tmp_path)).splitlines()[2]

    assert "| **1.8x** (below 2x) |" in row
    assert "| 1.00, 2.00, 0.50x (above 0.33x) |" in row
