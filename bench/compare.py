"""Summarise repeated `asched bench run --json` results: medians, ratios and a bar plot.

Usage::

    python bench/compare.py bench/results/2026-11-21-issue6-final --plot bench/plots/issue6.png

Files are named ``<workload>-<backend>-<scheduler>-r<k>.json`` (``backend`` is ``sim`` or
``kube-apiserver``, ``scheduler`` is ``asched`` or ``kube-scheduler``). For every
(workload, backend) pair the script prints one markdown row: each scheduler's median
overall throughput (measured pods / measuring time) with the individual runs, the median
scheduler CPU per pod, and the ratio of the medians. The machine is noisy, so repeated
runs and medians are the figures worth comparing.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

NAME = re.compile(
    r"^(?P<workload>.+)-(?P<backend>sim|kube-apiserver)-(?P<scheduler>asched|kube-scheduler)-r\d+\.json$"
)


def load(directory: Path) -> dict[tuple[str, str], dict[str, list[dict[str, Any]]]]:
    runs: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for path in sorted(directory.glob("*.json")):
        match = NAME.match(path.name)
        if match is None:
            continue
        result = json.loads(path.read_text())
        if not result.get("measured", {}).get("completed"):
            continue
        key = (match["workload"], match["backend"])
        runs[key][match["scheduler"]].append(result)
    return runs


def _overall(result: dict[str, Any]) -> float:
    return float(result["measured"]["throughput"]["overall"])


def _cpu_ms(result: dict[str, Any]) -> float | None:
    cpu = result["measured"].get("cpu_ms_per_pod", {}).get("scheduler")
    return None if cpu is None else float(cpu)


def summarise(directory: Path) -> list[dict[str, Any]]:
    rows = []
    for (workload, backend), by_scheduler in sorted(load(directory).items()):
        row: dict[str, Any] = {"workload": workload, "backend": backend}
        for scheduler, results in by_scheduler.items():
            rates = [_overall(r) for r in results]
            cpus = [c for r in results if (c := _cpu_ms(r)) is not None]
            row[scheduler] = {
                "median": statistics.median(rates),
                "runs": rates,
                "cpu_ms": statistics.median(cpus) if cpus else None,
            }
        if "asched" in row and "kube-scheduler" in row:
            row["ratio"] = row["asched"]["median"] / row["kube-scheduler"]["median"]
        rows.append(row)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| workload | backend | asched 100 % (median; runs) | kube-scheduler adaptive (median; runs) | ratio | scheduler CPU / pod (asched, kube-scheduler) |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = []
        for scheduler in ("asched", "kube-scheduler"):
            found = row.get(scheduler)
            if found is None:
                cells.append("-")
                continue
            runs = ", ".join(f"{r:,.0f}" for r in found["runs"])
            cells.append(f"**{found['median']:,.0f}** ({runs})")
        ratio = f"**{row['ratio']:.1f}x**" if "ratio" in row else "-"
        cpu = ", ".join(
            f"{row[s]['cpu_ms']:.2f} ms" if row.get(s, {}).get("cpu_ms") is not None else "-"
            for s in ("asched", "kube-scheduler")
        )
        lines.append(
            f"| {row['workload']} | {row['backend']} | {cells[0]} | {cells[1]} | {ratio} | {cpu} |"
        )
    return "\n".join(lines)


def _short(workload: str) -> str:
    """``scheduling-pod-anti-affinity-5000n-2000p`` -> ``pod-anti-affinity``."""
    name = re.sub(r"-\d+n(-\d+p)?$", "", workload)
    return name.removeprefix("scheduling-").replace("preferred-topology", "preferred")


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{_short(r['workload'])}\n{r['backend']}" for r in rows]
    ours = [r.get("asched", {}).get("median", 0.0) for r in rows]
    theirs = [r.get("kube-scheduler", {}).get("median", 0.0) for r in rows]
    positions = range(len(rows))
    figure, axes = plt.subplots(figsize=(max(8, 1.6 * len(rows)), 5))
    axes.bar([p - 0.2 for p in positions], ours, width=0.4, label="asched (100 % scored)")
    axes.bar(
        [p + 0.2 for p in positions], theirs, width=0.4, label="kube-scheduler v1.37 (adaptive)"
    )
    for p, row in zip(positions, rows, strict=True):
        if "ratio" in row:
            axes.annotate(
                f"{row['ratio']:.1f}x", (p - 0.2, row["asched"]["median"]), ha="center", va="bottom"
            )
    axes.set_xticks(list(positions), labels, fontsize=8)
    axes.set_ylabel("measured pods / s (median of runs)")
    axes.set_title("Inter-pod constraints and preemption: asched vs kube-scheduler (2 cores)")
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args()
    rows = summarise(args.directory)
    print(markdown(rows))
    if args.plot is not None:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
