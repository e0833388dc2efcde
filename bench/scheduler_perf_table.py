"""Summarise the suite JSONs of bench/scheduler_perf.sh: one markdown row per workload and
backend, upstream's threshold in its own column, and a bar plot.

Usage::

    python bench/scheduler_perf_table.py bench/results/2026-11-25-issue16 \\
        --plot bench/plots/scheduler-perf-issue16.png

Every ``*.json`` in the folder is an ``asched bench suite --json`` document (schema
``asched.bench.suite/v1``) holding one workload run by one scheduler. Rows pair
asched's and kube-scheduler's results for the same workload and backend (the backend is
read from the run); repeated runs are summarised by their median, the runs in brackets. Figures are ``SchedulingThroughput`` Average (pods/s, scheduler_perf's
counting), the scheduler's CPU per measured pod, and whether every invariant held.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

SCHEDULERS = ("asched", "kube-scheduler")


Entry = list[dict[str, Any]]  # the runs of one workload by one scheduler (repetitions)


def load(directory: Path) -> dict[tuple[str, str], dict[str, Entry]]:
    """(workload, backend) -> scheduler -> its suite results, one per run."""
    rows: dict[tuple[str, str], dict[str, Entry]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(directory.glob("*.json")):
        document = json.loads(path.read_text())
        if document.get("schema") != "asched.bench.suite/v1":
            continue
        for result in document["results"]:
            for scheduler, run in result["runs"].items():
                backend = str(run.get("backend", "?"))
                rows[(result["name"], backend)][scheduler].append({**result, "run": run})
    return rows


def _averages(entry: Entry | None) -> list[float]:
    out = []
    for result in entry or ():
        throughput = result["run"].get("SchedulingThroughput")
        if throughput is not None:
            out.append(float(throughput["Average"]))
    return out


def _average(entry: Entry | None) -> float | None:
    """The median of the runs' SchedulingThroughput Average."""
    values = _averages(entry)
    return statistics.median(values) if values else None


#: the API server's processes, whose CPU per pod is the "API server + etcd" column
SERVER_PROCESSES = ("sim", "kube-apiserver", "etcd")


def _cpu_value(entry: Entry | None, processes: tuple[str, ...] = ("scheduler",)) -> float | None:
    """The median over runs of the summed CPU ms per measured pod of ``processes``."""
    values = []
    for result in entry or ():
        per_pod = result["run"]["measured"].get("cpu_ms_per_pod", {})
        parts = [per_pod.get(p) for p in processes if per_pod.get(p) is not None]
        if parts:
            values.append(float(sum(parts)))
    return statistics.median(values) if values else None


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _cell(entry: Entry | None) -> str:
    if not entry:
        return "-"
    bad = [r for r in entry if r["status"] != "ok"]
    if bad:
        return f"{bad[0]['status']}: {bad[0]['reason']}"
    values = _averages(entry)
    if not values:
        return "no samples"
    median = f"{statistics.median(values):,.0f}"
    if len(values) == 1:
        return median
    return f"{median} ({', '.join(f'{v:,.0f}' for v in values)})"


def table(rows: dict[tuple[str, str], dict[str, Entry]]) -> str:
    """One markdown row per workload and backend. Targets (issue 28): asched at least 2x
    kube-scheduler's pods/s with at most 0.33x its scheduler CPU per pod (marked)."""
    lines = [
        "| workload | backend | upstream threshold | asched pods/s | kube-scheduler pods/s "
        "| ratio | scheduler CPU / pod, ms (asched, kube-scheduler, ratio) "
        "| API server + etcd CPU / pod, ms (asched, kube-scheduler) | invariants |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (name, backend), by in rows.items():
        ours, theirs = by.get("asched"), by.get("kube-scheduler")
        first = ours or theirs
        assert first
        threshold = first[0]["threshold"]
        a, k = _average(ours), _average(theirs)
        ratio = f"**{a / k:.1f}x**{'' if a / k >= 2 else ' (below 2x)'}" if a and k else "-"
        ca, ck = _cpu_value(ours), _cpu_value(theirs)
        cpu_ratio = (
            f"{ca / ck:.2f}x{'' if ca / ck <= 0.33 else ' (above 0.33x)'}" if ca and ck else "-"
        )
        sa, sk = _cpu_value(ours, SERVER_PROCESSES), _cpu_value(theirs, SERVER_PROCESSES)
        held = all(r["invariants_ok"] for e in by.values() for r in e)
        lines.append(
            f"| {name} | {backend} | {'-' if threshold is None else f'{threshold:g}'} "
            f"| {_cell(ours)} | {_cell(theirs)} | {ratio} | {_ms(ca)}, {_ms(ck)}, {cpu_ratio} "
            f"| {_ms(sa)}, {_ms(sk)} | {'held' if held else 'BROKEN'} |"
        )
    return "\n".join(lines)


def plot(rows: dict[tuple[str, str], dict[str, Entry]], path: Path) -> None:
    import matplotlib.pyplot as plt
    import numpy as np

    keys = list(rows)
    labels = [f"{name}\n({backend})" for name, backend in keys]
    x = np.arange(len(keys))
    fig, ax = plt.subplots(figsize=(max(8.0, 1.6 * len(keys)), 5.5))
    width = 0.27
    for i, scheduler in enumerate(SCHEDULERS):
        values = [_average(rows[k].get(scheduler)) or 0.0 for k in keys]
        ax.bar(x + (i - 1) * width, values, width, label=scheduler)
    thresholds = [next(iter(rows[k].values()))[0]["threshold"] or 0.0 for k in keys]
    ax.bar(x + width, thresholds, width, label="upstream threshold (CI machines)", color="0.75")
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("SchedulingThroughput Average (pods/s)")
    ax.set_title("upstream scheduler_perf workloads: asched vs kube-scheduler v1.37")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args()
    rows = load(args.directory)
    print(table(rows))
    if args.plot is not None:
        plot(rows, args.plot)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
