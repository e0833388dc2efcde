"""Issue 14's figures as one picture: this checkout against 24a9163, medians of the runs.

Usage::

    python bench/issue14_plot.py bench/results/2026-11-25-issue14 --plot bench/plots/issue14.png

Reads what ``bench/issue14.sh`` wrote: ``core/``, ``sim-https/`` and ``sim-http/`` (the JSON
of ``bench/side_by_side.py``: ``<kind>-base-<commit>-rK.json`` and ``<kind>-new-...``) and
``genuine-{new,base,ks}-rK.json``. Four panels: decisions/s of the core, the scheduler's CPU
per bound pod, Average pods/s, and on the genuine kube-apiserver the CPU per pod of each
process, kube-scheduler included.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def _runs(folder: Path, side: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob(f"*-{side}-*-r*.json"))]


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--plot", type=Path, required=True)
    args = parser.parse_args()
    out = args.results
    fig, axes = plt.subplots(1, 4, figsize=(18, 4.8))
    width = 0.38

    # the core: decisions/s at 100 %
    cases = [(5000, "uniform"), (5000, "distinct"), (50000, "uniform"), (50000, "distinct")]
    for offset, side in ((-width / 2, "base"), (width / 2, "new")):
        values = []
        for nodes, pods in cases:
            rates = [
                row["decisions_per_second"]
                for run in _runs(out / "core", side)
                for row in run["results"]
                if row["nodes"] == nodes and row["pods"] == pods and row["percentage"] == 100
            ]
            values.append(_median(rates))
        axes[0].bar([i + offset for i in range(len(cases))], values, width, label=side)
    axes[0].set_xticks(range(len(cases)), [f"{n // 1000}k {p}" for n, p in cases])
    axes[0].set_title("core: decisions/s (100 % scored)")

    # the simulator: scheduler CPU per pod and Average pods/s, HTTPS and HTTP
    transports = ["sim-https", "sim-http"]
    for offset, side in ((-width / 2, "base"), (width / 2, "new")):
        cpu, rate = [], []
        for transport in transports:
            runs = _runs(out / transport, side)
            cpu.append(_median([r["measured"]["cpu_ms_per_pod"]["scheduler"] for r in runs]))
            rate.append(_median([r["measured"]["throughput"]["average"] for r in runs]))
        positions = [i + offset for i in range(len(transports))]
        axes[1].bar(positions, cpu, width, label=side)
        axes[2].bar(positions, rate, width, label=side)
    for axis, title in ((axes[1], "scheduler CPU per bound pod (ms)"), (axes[2], "Average pods/s")):
        axis.set_xticks(range(len(transports)), ["simulator HTTPS", "simulator HTTP"])
        axis.set_title(title)

    # the genuine kube-apiserver: CPU per pod of each process, stacked
    who = [("new", "asched now"), ("base", "asched 24a9163"), ("ks", "kube-scheduler")]
    bottom = [0.0] * len(who)
    for process in ("scheduler", "kube-apiserver", "etcd", "harness"):
        values = []
        for name, _ in who:
            runs = [json.loads(p.read_text()) for p in sorted(out.glob(f"genuine-{name}-r*.json"))]
            values.append(_median([r["measured"]["cpu_ms_per_pod"][process] for r in runs]))
        axes[3].bar(range(len(who)), values, 0.6, bottom=bottom, label=process)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    axes[3].set_xticks(range(len(who)), [label for _, label in who])
    axes[3].set_title("kube-apiserver v1.20.2: CPU per bound pod (ms)")
    for axis in axes:
        axis.legend(fontsize=8)
    fig.suptitle("issue 14: this checkout (new) against 24a9163 (base), medians of 3 runs")
    fig.tight_layout()
    args.plot.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.plot, dpi=110)
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
