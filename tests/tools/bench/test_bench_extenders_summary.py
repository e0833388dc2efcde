"""bench/extenders.py: the medians and issue 12's ratios that bench/RESULTS.md quotes."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "bench" / "extenders.py"


@pytest.fixture(scope="module")
def extenders() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_extenders", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def run(
    scheduler: str, latency: float | None, average: float, *, pods: int = 10_000, done: bool = True
) -> dict[str, Any]:
    return {
        "scheduler": {"kind": scheduler},
        "workload": {"name": f"W{pods}", "measured_pods": pods},
        "extender": None
        if latency is None
        else {"latency_ms": latency, "measured": {"cpu_ms_per_call": 0.25, "max_in_flight": 30}},
        "measured": {
            "completed": done,
            "throughput": {"average": average, "p50": average - 1},
            "cpu_ms_per_pod": {"scheduler": 1.0},
        },
    }


def write(directory: Path, runs: dict[str, dict[str, Any]]) -> None:
    for name, document in runs.items():
        (directory / f"{name}.json").write_text(json.dumps(document))


def test_medians_and_ratios(tmp_path: Path, extenders: ModuleType) -> None:
    write(
        tmp_path,
        {
            "a0-r1": run("asched", None, 1000),
            "a0-r2": run("asched", None, 1200),
            "a0-r3": run("asched", None, 1100),
            "a10-r1": run("asched", 10, 400),
            "a10-r2": run("asched", 10, 600),
            "k10-r1": run("kube-scheduler", 10, 40, pods=2000),
            "k10-r2": run("kube-scheduler", 10, 9, pods=2000, done=False),
        },
    )
    groups, skipped = extenders.load(tmp_path)
    assert skipped == ["k10-r2.json"]
    # medians: asched none 1,100 (of 1,000, 1,100, 1,200); asched 10 ms 500 (of 400, 600)
    assert groups[("asched", None, "W10000")].average() == 1100
    assert groups[("asched", 10.0, "W10000")].average() == 500
    ratios = dict(extenders.ratios(groups))
    assert ratios == {
        # 500 / 1,100
        "asched 10 ms / asched none (W10000)": pytest.approx(500 / 1100),
        # 500 / 40 (the incomplete kube-scheduler run is left out)
        "asched 10 ms (W10000) / kube-scheduler 10 ms (W2000)": pytest.approx(12.5),
    }
    table = extenders.markdown(groups).splitlines()
    assert table[2].startswith(
        "| asched | none | W10000 | **1,100** | 1,099 | 1,000, 1,200, 1,100 |"
    )
    assert table[3].startswith(
        "| asched | 10 ms | W10000 | **500** | 499 | 400, 600 | 1.00 ms | 0.250 ms | 30 |"
    )
    assert table[4].startswith("| kube-scheduler | 10 ms | W2000 | **40** |")
    png = tmp_path / "plot.png"
    extenders.plot(groups, png)
    assert png.stat().st_size > 0
