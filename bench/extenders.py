"""Summarise the extender benchmark (issue 12): pods/s with and without an extender, ratios, a plot.

Usage::

    python bench/extenders.py bench/results/2026-11-24-issue12 --plot bench/plots/issue12-extenders.png

Reads every ``*.json`` written by ``asched bench run --json`` in the directory and groups
the runs by scheduler (``scheduler.kind``), extender latency (``extender.latency_ms``;
none when the run had no extender) and workload. For each group it prints one markdown
row: the median Average and P50 (scheduler_perf's 1 s samples, pods/s) with every run's
Average, and the medians of the scheduler's CPU per pod, of the extender's CPU per call
and of the most extender calls in flight. Then the two ratios of issue 12's target, from
the medians of the Average:

* asched with the 10 ms extender / asched without one (target >= 0.5), same workload;
* asched with the 10 ms extender / kube-scheduler with it (target >= 10).

And the first ratio round by round: each asched run with the extender against the asched
run without one that started just before it (``started_at``), with their median. The
machine's speed drifts over minutes (a shared VM: the same run's CPU per pod moved by a
third within one series), so two runs side by side compare better than two medians.

Runs that did not complete are left out (and listed).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: (scheduler, extender latency in ms or None, workload name)
Key = tuple[str, float | None, str]
SCHEDULERS = ("asched", "kube-scheduler")


@dataclass
class Group:
    """The runs of one (scheduler, latency, workload)."""

    runs: list[dict[str, Any]] = field(default_factory=list)

    def median(self, read: Any) -> float | None:
        values = [v for r in self.runs if (v := read(r)) is not None]
        return statistics.median(values) if values else None

    def average(self) -> float | None:
        return self.median(lambda r: r["measured"]["throughput"]["average"])

    def p50(self) -> float | None:
        return self.median(lambda r: r["measured"]["throughput"]["p50"])

    def averages(self) -> list[float]:
        return [r["measured"]["throughput"]["average"] or 0.0 for r in self.runs]


def latency_of(result: dict[str, Any]) -> float | None:
    extender = result.get("extender")
    return None if extender is None else float(extender["latency_ms"])


def load(directory: Path) -> tuple[dict[Key, Group], list[str]]:
    """The completed runs of ``directory`` by key, and the names of the incomplete ones."""
    groups: dict[Key, Group] = defaultdict(Group)
    skipped: list[str] = []
    for path in sorted(directory.glob("*.json")):
        result = json.loads(path.read_text())
        if not result.get("measured", {}).get("completed"):
            skipped.append(path.name)
            continue
        key = (result["scheduler"]["kind"], latency_of(result), result["workload"]["name"])
        groups[key].runs.append(result)
    return groups, skipped


def _latency_text(latency: float | None) -> str:
    return "none" if latency is None else f"{latency:g} ms"


def _num(value: float | None, fmt: str = "{:,.0f}") -> str:
    return "-" if value is None else fmt.format(value)


def _extender_figure(run: dict[str, Any], name: str) -> float | None:
    measured = (run.get("extender") or {}).get("measured") or {}
    value = measured.get(name)
    return None if value is None else float(value)


def markdown(groups: dict[Key, Group]) -> str:
    """One row per group, asched first, then by latency."""
    lines = [
        "| scheduler | extender latency | workload | Average (median) | P50 (median) | runs (Average) "
        "| scheduler CPU / pod | extender CPU / call | extender calls in flight (max) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def order(key: Key) -> tuple[int, float, str]:
        scheduler, latency, workload = key
        return (SCHEDULERS.index(scheduler), -1.0 if latency is None else latency, workload)

    for key in sorted(groups, key=order):
        scheduler, latency, workload = key
        group = groups[key]
        cpu = group.median(lambda r: r["measured"]["cpu_ms_per_pod"].get("scheduler"))
        call = group.median(lambda r: _extender_figure(r, "cpu_ms_per_call"))
        flight = group.median(lambda r: _extender_figure(r, "max_in_flight"))
        runs = ", ".join(f"{a:,.0f}" for a in group.averages())
        lines.append(
            f"| {scheduler} | {_latency_text(latency)} | {workload} | **{_num(group.average())}** "
            f"| {_num(group.p50())} | {runs} | {_num(cpu, '{:.2f} ms')} "
            f"| {_num(call, '{:.3f} ms')} | {_num(flight)} |"
        )
    return "\n".join(lines)


def ratios(groups: dict[Key, Group], latency: float = 10.0) -> list[tuple[str, float]]:
    """Issue 12's two ratios (of median Averages), for every pair of runs that has both."""

    def average(scheduler: str, lat: float | None, workload: str) -> float | None:
        group = groups.get((scheduler, lat, workload))
        return group.average() if group is not None else None

    out: list[tuple[str, float]] = []
    workloads = sorted({w for _s, _l, w in groups})
    for workload in workloads:
        ours, bare = average("asched", latency, workload), average("asched", None, workload)
        if ours and bare:
            out.append((f"asched {latency:g} ms / asched none ({workload})", ours / bare))
    for workload in workloads:
        ours = average("asched", latency, workload)
        for other in workloads:
            theirs = average("kube-scheduler", latency, other)
            if ours and theirs:
                name = (
                    f"asched {latency:g} ms ({workload}) / kube-scheduler {latency:g} ms ({other})"
                )
                out.append((name, ours / theirs))
    return out


def round_ratios(groups: dict[Key, Group], latency: float = 10.0) -> list[tuple[str, float]]:
    """Per workload: each asched run with the extender / the asched run without one that
    started last before it (a round), as ``(label, ratio)``, rounds in time order."""
    out: list[tuple[str, float]] = []
    for workload in sorted({w for _s, _l, w in groups}):
        ours = groups.get(("asched", latency, workload))
        bare = groups.get(("asched", None, workload))
        if ours is None or bare is None:
            continue
        before = sorted(bare.runs, key=lambda r: r["started_at"])
        for run in sorted(ours.runs, key=lambda r: r["started_at"]):
            earlier = [r for r in before if r["started_at"] < run["started_at"]]
            if not earlier:
                continue
            pair = earlier[-1]
            with_ = run["measured"]["throughput"]["average"]
            without = pair["measured"]["throughput"]["average"]
            if with_ and without:
                label = f"{workload}, {run['started_at']}: {with_:,.0f} / {without:,.0f}"
                out.append((label, with_ / without))
    return out


def plot(groups: dict[Key, Group], path: Path) -> None:
    """Median Average per scheduler and latency, one bar each (the larger workload per pair)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    latencies = sorted({lat for _s, lat, _w in groups}, key=lambda v: -1.0 if v is None else v)
    figure, axes = plt.subplots(figsize=(8, 5))
    width = 0.4
    for offset, scheduler in ((-width / 2, "asched"), (width / 2, "kube-scheduler")):
        heights: list[float] = []
        notes: list[str] = []
        pods: set[int] = set()
        for latency in latencies:
            found = [
                (len(g.runs), w, g)
                for (s, lat, w), g in groups.items()
                if s == scheduler and lat == latency
            ]
            if not found:
                heights.append(0.0)
                notes.append("")
                continue
            # Prefer the workload with the most measured pods (the main series).
            group = max(found, key=lambda item: item[2].runs[0]["workload"]["measured_pods"])[2]
            pods.add(group.runs[0]["workload"]["measured_pods"])
            heights.append(group.average() or 0.0)
            notes.append(f"{group.average() or 0:,.0f}")
        positions = [i + offset for i in range(len(latencies))]
        sizes = ", ".join(f"{n:,}" for n in sorted(pods))
        label = f"{scheduler} ({sizes} measured pods)" if pods else scheduler
        bars = axes.bar(positions, heights, width=width, label=label)
        for bar, note in zip(bars, notes, strict=True):
            axes.annotate(
                note,
                (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                ha="center",
                va="bottom",
            )
    axes.set_xticks(range(len(latencies)), [f"extender: {_latency_text(lat)}" for lat in latencies])
    axes.set_ylabel("pods/s (Average of 1 s samples, median of runs)")
    axes.set_title("SchedulingBasic 5,000 nodes with a filter + prioritize extender (2 cores)")
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args()
    groups, skipped = load(args.directory)
    print(markdown(groups))
    print()
    for name, value in ratios(groups):
        print(f"- {name}: {value:.2f}")
    rounds = round_ratios(groups)
    if rounds:
        print()
        print("Round by round (asched with the extender / without it, the run just before):")
        for name, value in rounds:
            print(f"- {name} = {value:.2f}")
        print(f"- median of {len(rounds)} rounds: {statistics.median(v for _n, v in rounds):.2f}")
    if skipped:
        print(f"\nleft out (not completed): {', '.join(skipped)}")
    if args.plot is not None:
        plot(groups, args.plot)


if __name__ == "__main__":
    main()
