"""Plots of runs and tuning sweeps (matplotlib, Agg backend: no display needed).

* :func:`plot_run`: scheduler_perf's throughput samples (1 s, finer for short phases) over time for the scheduler
  and the bind ceiling, with the averages as dashed lines and the cumulative count of
  bound pods as light lines (a run too short for samples still shows its pace); and the
  creation-to-bound latency distribution (CDF; not for a ``bind``-mode ceiling, whose
  pods were all created before the binder started).
  A gang workload adds a third panel: the CPU held by bound members of incomplete gangs
  over time and, when asched exports it, the pods waiting at Permit.
* :func:`plot_tune`: average throughput against mean regret, one point per
  ``percentageOfNodesToScore``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from asched.tools.bench.gang_figures import GangFigures
from asched.tools.bench.report import scheduler_label
from asched.tools.bench.results import Phase, RunResult


def _steps(phase: Phase) -> tuple[list[float], list[float]]:
    """Step-plot coordinates of the recorded intervals."""
    xs: list[float] = []
    ys: list[float] = []
    for interval in phase.collector().intervals:
        xs += [interval.start, interval.end]
        ys += [interval.throughput, interval.throughput]
    return xs, ys


def plot_run(result: RunResult, path: Path) -> None:
    """Write the figure of one run to ``path`` (PNG): two panels, three with gangs."""
    if result.gangs is not None:
        fig, (left, right, gangs) = plt.subplots(1, 3, figsize=(18, 4.5))
        _gang_panel(gangs, result.gangs)
    else:
        fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    series: list[tuple[str, Phase, str]] = [(scheduler_label(result), result.measured, "tab:blue")]
    if result.ceiling is not None:
        series.append((f"bind ceiling ({result.ceiling.mode})", result.ceiling, "tab:gray"))
    for name, phase, colour in series:
        xs, ys = _steps(phase)
        if xs:
            left.plot(xs, ys, color=colour, label=name)
        average = phase.throughput().average
        if average is not None:
            left.axhline(average, color=colour, linestyle="--", linewidth=1)
    counts = left.twinx()
    for _name, phase, colour in series:
        times = np.sort(np.asarray(phase.bind_times, dtype=np.float64))
        if times.size:
            counts.plot(times, np.arange(1, times.size + 1), color=colour, alpha=0.3, linewidth=1)
    counts.set_ylabel("pods bound so far (light lines)")
    counts.set_ylim(bottom=0)
    left.set_xlabel("seconds since the phase started")
    widths = sorted({f"{phase.interval:g} s" for _name, phase, _colour in series})
    left.set_ylabel(f"pods/s ({' / '.join(widths)} samples, scheduler_perf counting)")
    left.set_title("throughput")
    left.set_ylim(bottom=0)
    if left.get_legend_handles_labels()[0]:
        left.legend(loc="lower right")
    else:
        left.text(0.5, 0.5, "too short for a sample", ha="center", transform=left.transAxes)
    for name, phase, colour in series:
        if phase.mode == "bind":
            continue  # pre-created pods: their wait before the binder started means nothing
        latencies = np.sort(np.asarray(phase.latencies, dtype=np.float64))
        if latencies.size:
            fraction = np.arange(1, latencies.size + 1) / latencies.size
            right.plot(latencies, fraction, color=colour, label=name)
    right.set_xlabel("creation to bound, seconds")
    right.set_ylabel("fraction of pods")
    right.set_title("latency (CDF)")
    right.set_ylim(0, 1)
    if right.get_legend_handles_labels()[0]:
        right.legend(loc="lower right")
    wl = result.workload
    fig.suptitle(
        f"{wl['name']} on {result.backend}: {wl['nodes']:,} nodes, "
        f"{wl['measured_pods']:,} measured pods ({result.machine.get('cpu_count')} CPUs)"
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _gang_panel(ax: Any, figures: GangFigures) -> None:
    """Held CPU (cores) over time; the Permit gauge (pods) on a second axis."""
    if figures.held:
        times, held = zip(*figures.held, strict=True)
        ax.step(
            times,
            [cpu / 1000 for cpu in held],
            where="post",
            color="tab:red",
            label="CPU held by incomplete gangs",
        )
    ax.set_xlabel("seconds since the phase started")
    ax.set_ylabel("CPU (cores)")
    ax.set_ylim(bottom=0)
    ax.set_title(
        f"gangs: {figures.completed} completed, {figures.partial} partial of {len(figures.gangs)}"
    )
    if figures.permit_waiting:
        waiting = ax.twinx()
        times, pods = zip(*figures.permit_waiting, strict=True)
        waiting.step(times, pods, where="post", color="tab:purple", alpha=0.6)
        waiting.set_ylabel("pods waiting at Permit (purple)")
        waiting.set_ylim(bottom=0)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper right")


#: Label geometry of :func:`plot_tune`, in display points: a label's height, how far
#: right of its point it starts, and how wide one is taken to be when looking for overlaps.
LABEL_HEIGHT: Final = 13.0
LABEL_GAP: Final = 8.0
LABEL_WIDTH: Final = 90.0


def label_offsets(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Where each point's label goes, as ``(dx, dy)`` from the point, in display points.

    Every label starts :data:`LABEL_GAP` right of its point, at its height, unless that
    would overlap a label already placed (one within :data:`LABEL_WIDTH` to the side) or
    another point's marker: then it moves up to the first free height. A leader line joins each label to its own
    point, so a moved label can never be read as another point's. Pure, for tests.
    """
    placed: list[tuple[float, float]] = []  # (x, y) of each label's lower-left corner
    offsets: list[tuple[float, float]] = [(0.0, 0.0)] * len(points)
    for index in sorted(range(len(points)), key=lambda i: (points[i][1], points[i][0])):
        x, y = points[index]
        left = x + LABEL_GAP
        bottom = y - LABEL_HEIGHT / 2
        crowded = sorted(
            [b for (a, b) in placed if abs(a - left) < LABEL_WIDTH]
            # the other points' markers, where a label starting here would cover them
            + [py - LABEL_HEIGHT / 2 for px, py in points if 0 < px - x < LABEL_WIDTH]
        )
        for other in crowded:
            if abs(other - bottom) < LABEL_HEIGHT:
                bottom = other + LABEL_HEIGHT
        placed.append((left, bottom))
        offsets[index] = (LABEL_GAP, bottom + LABEL_HEIGHT / 2 - y)
    return offsets


def plot_tune(rows: Sequence[dict[str, Any]], path: Path, title: str) -> None:
    """Throughput against mean regret; ``rows`` have ``label``, ``average``, ``regret_mean``.

    One point per setting, its label to the right, moved up where labels would overlap
    (:func:`label_offsets`) and joined to its point by a leader line.
    """
    fig, ax = plt.subplots(figsize=(7, 5))
    shown = [
        (str(row["label"]), float(row["regret_mean"]), float(row["average"]))
        for row in rows
        if row.get("regret_mean") is not None and row.get("average") is not None
    ]
    xs = [x for _, x, _ in shown]
    ys = [y for _, _, y in shown]
    ax.scatter(xs, ys, s=40, color="tab:blue", clip_on=False, zorder=3)
    ax.set_ylim(0, 1.15 * max(ys, default=1.0))
    ax.set_xlim(-0.02 * max([1.0, *xs]), 1.3 * max([1.0, *xs]))
    # display points (1/72 inch) of each data point, with the limits final
    scale = 72.0 / fig.dpi
    pixels: list[tuple[float, float]] = [
        (float(px) * scale, float(py) * scale)
        for px, py in (ax.transData.transform(list(zip(xs, ys, strict=True))) if shown else ())
    ]
    offsets = label_offsets(pixels)
    for (label, x, y), (dx, dy) in zip(shown, offsets, strict=True):
        ax.annotate(
            label,
            (x, y),
            textcoords="offset points",
            xytext=(dx, dy),
            va="center",
            fontsize=9,
            arrowprops={"arrowstyle": "-", "color": "0.5", "lw": 0.6, "shrinkA": 0, "shrinkB": 3},
        )
    ax.set_xlabel("mean regret (total-score points; lower is better)")
    ax.set_ylabel("average throughput, pods/s (higher is better)")
    ax.set_title(title, fontsize=10, wrap=True)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
