"""Reporting a run: the ``--json`` document, the summary table, machine and revision facts.

The JSON keys are documented in ``docs/benchmarks.md`` (and pinned by a test); units are
in the key names or stated there: throughputs in pods/s, times in seconds, CPU in seconds
or milliseconds per pod, memory in bytes, regrets in total-score points.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any, Final

import orjson
from rich.console import Console
from rich.table import Table

from asched.tools.bench import procstat
from asched.tools.bench.gang_figures import GangFigures
from asched.tools.bench.results import Phase, RunResult

SCHEMA: Final = "asched.bench.run/v1"


def machine() -> dict[str, Any]:
    """Platform, CPU count and memory of this machine."""
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": procstat.memory_bytes(),
        "python": platform.python_version(),
    }


def git_revision() -> dict[str, Any]:
    """The git revision of the source tree this package runs from (and whether it is dirty).

    An installed package is not in a work tree: then the current directory's is used.
    """
    for root in (Path(__file__).resolve().parents[2], Path.cwd()):
        try:
            revision = subprocess.run(
                ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
            ).stdout.strip()
            status = subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                cwd=root,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError):
            continue
        return {"revision": revision, "dirty": bool(status.strip()), "tree": str(root)}
    return {"revision": None, "dirty": None, "tree": None}


def phase_json(phase: Phase) -> dict[str, Any]:
    """One phase as JSON: throughput (scheduler_perf), latency, CPU, creation."""
    collector = phase.collector()
    cpu_ms = {name: phase.cpu_ms_per_pod(name) for name in phase.cpu}
    return {
        "mode": phase.mode or None,
        "pods": phase.pods,
        "bound": phase.bound,
        "completed": phase.completed,
        "settled": phase.settled,
        "duration_seconds": phase.duration,
        "throughput": {
            **phase.throughput().to_json(),
            "sample_interval_seconds": phase.interval,
            "overall": phase.overall(),
            "intervals": [[i.start, i.end, i.pods, i.repeat] for i in collector.intervals],
        },
        "latency_seconds": phase.latency().to_json(),
        "cpu_seconds": phase.cpu,
        "cpu_ms_per_pod": cpu_ms,
        "create": None
        if phase.create is None
        else {
            "created": phase.create.created,
            "retries": phase.create.retries,
            "seconds": phase.create.seconds,
            "rate": phase.create.rate(),
        },
    }


def gangs_json(figures: GangFigures) -> dict[str, Any]:
    """The gang figures as JSON: counts, gangs/s (scheduler_perf counting over completion
    times), first-to-last bind spans (seconds), held CPU (millicores) and the Permit gauge
    (pods) over time, timeout rejections."""
    collector = figures.collector()
    return {
        "gangs": len(figures.gangs),
        "completed": figures.completed,
        "partial": figures.partial,
        "unplaced": figures.unplaced,
        "throughput_gangs_per_second": {
            **figures.throughput().to_json(),
            "sample_interval_seconds": figures.interval,
            "overall": figures.overall(),
            "intervals": [[i.start, i.end, i.pods, i.repeat] for i in collector.intervals],
        },
        "span_seconds": figures.spans().to_json(),
        "held_cpu_millicores": {
            "max": figures.held_max(),
            "mean": figures.held_mean(),
            "end": figures.held_end(),
            "samples": [[t, cpu] for t, cpu in figures.held],
        },
        "permit_waiting_pods": None
        if figures.permit_waiting is None
        else {
            "max": figures.permit_waiting_max(),
            "samples": [[t, value] for t, value in figures.permit_waiting],
        },
        "timeout_rejections": figures.timeout_rejections,
        "partial_gangs": [
            {"gang": g.key, "bound": g.bound, "min_member": g.min_member}
            for g in figures.gangs
            if g.partial
        ],
    }


def to_json(result: RunResult) -> dict[str, Any]:
    """The whole result as the documented JSON document."""
    inv = result.invariants
    return {
        "schema": SCHEMA,
        "ok": result.ok,
        "started_at": result.started_at,
        "wall_seconds": result.wall_seconds,
        "workload": result.workload,
        "options": result.options,
        "backend": result.backend,
        "scheduler": {
            "kind": result.scheduler.kind,
            "version": result.scheduler.version,
            "percentage_of_nodes_to_score": result.scheduler.percentage,
            "exit_code": result.scheduler.exit_code,
            "cpu_seconds_total": result.scheduler.cpu_seconds_total,
            "peak_rss_bytes": result.scheduler.peak_rss_bytes,
            "log": result.scheduler.log or None,
            "profile": result.scheduler.profile,
        },
        "init": result.init,
        "measured": phase_json(result.measured),
        "ceiling": phase_json(result.ceiling) if result.ceiling is not None else None,
        "fraction_of_ceiling": result.fraction_of_ceiling(),
        "fraction_of_ceiling_overall": result.fraction_of_ceiling(overall=True),
        "quality": result.quality.to_json() if result.quality is not None else None,
        "invariants": {
            "ok": inv.ok,
            "overcommitted": [
                {
                    "node": o.node,
                    "resource": o.resource,
                    "requested": o.requested,
                    "allocatable": o.allocatable,
                }
                for o in inv.overcommitted
            ],
            "rebinds": [{"pod": p, "from": a, "to": b} for p, a, b in inv.rebinds],
            "pods_on_missing_nodes": inv.pods_on_missing_nodes,
            "pods_on_rejected_nodes": inv.pods_on_rejected_nodes,
            "partial_gangs": inv.partial_gangs,
            "watch_relists": inv.relists,
        },
        "gangs": gangs_json(result.gangs) if result.gangs is not None else None,
        "extender": result.extender,
        "churn": result.churn,
        "harness_cpu_seconds": result.harness_cpu_seconds,
        "versions": result.versions,
        "machine": result.machine,
        "git": result.git,
    }


def write_json(result: RunResult, path: Path) -> None:
    """Write :func:`to_json` to ``path`` (indented)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(to_json(result), option=orjson.OPT_INDENT_2) + b"\n")


def _num(value: float | None, fmt: str = "{:,.0f}") -> str:
    return "-" if value is None else fmt.format(value)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f} %"


def _points(value: float | None) -> str:
    """A spread of fractions in percentage points: 0.0016 is "0.16 points"."""
    return "-" if value is None else f"{100 * value:.2f} points"


def summary_table(result: RunResult) -> Table:
    """The human summary: throughput side by side with the ceiling, then the rest."""
    wl = result.workload
    title = (
        f"{wl['name']}: {wl['nodes']:,} nodes / {wl['init_pods']:,} init / "
        f"{wl['measured_pods']:,} measured, backend {result.backend}"
    )
    table = Table(
        title=title,
        title_justify="left",
        caption=f"pods/s over {_widths(result)} samples (scheduler_perf counting); "
        "overall = pods / seconds to the last bind",
        caption_justify="left",
    )
    table.add_column("")
    table.add_column("average", justify="right")
    table.add_column("p50", justify="right")
    table.add_column("p90", justify="right")
    table.add_column("p99", justify="right")
    table.add_column("overall", justify="right")
    table.add_column("latency p50 / p99", justify="right")
    phases = [(scheduler_label(result), result.measured)]
    if result.ceiling is not None:
        phases.append((f"bind ceiling ({result.ceiling.mode})", result.ceiling))
    for name, phase in phases:
        t = phase.throughput()
        lat = phase.latency()
        latency = (
            "-"
            if phase.mode == "bind"
            else f"{_num(lat.p50, '{:.2f}')} / {_num(lat.p99, '{:.2f}')} s"
        )
        table.add_row(
            name,
            _num(t.average),
            _num(t.p50),
            _num(t.p90),
            _num(t.p99),
            _num(phase.overall()),
            latency,
        )
    return table


def _phases(result: RunResult) -> list[Phase]:
    return [result.measured] + ([result.ceiling] if result.ceiling is not None else [])


def _widths(result: RunResult) -> str:
    """``1 s``, or ``0.05 s / 0.01 s`` (measured / ceiling) when the phases differ."""
    widths = [f"{phase.interval:g} s" for phase in _phases(result)]
    return widths[0] if len(set(widths)) == 1 else " / ".join(widths) + " (measured / ceiling)"


def in_short(result: RunResult) -> list[str]:
    """The run in a few plain sentences, for someone who has never read scheduler_perf."""
    m = result.measured
    who = result.scheduler.kind
    t = m.throughput()
    if t.average is not None:
        pace = f": {t.average:,.0f} pods/s on average over {t.samples} samples of {m.interval:g} s."
    else:
        pace = ", too few binds for a single throughput sample."
    lines = [f"{who} bound {m.bound:,} of {m.pods:,} measured pods in {m.duration:.1f} s{pace}"]
    if m.settled:
        lines.append(
            "The phase ended when binding settled (the workload's settleSeconds without a "
            "bind): the rest of its pods could not fit."
        )
    if result.gangs is not None:
        lines.append(gang_sentence(result))
    c = result.ceiling
    if c is not None and c.throughput().average is not None:
        fraction = result.fraction_of_ceiling()
        lines.append(
            f"The bind ceiling (the same API server binding pods that need no scheduling: "
            f"the most it and the load generator take) reached {c.throughput().average:,.0f} "
            f"pods/s; {who} ran at {_percent(fraction)} of it."
        )
    inv = result.invariants
    lines.append(
        "Invariants held: no node over-committed, no pod bound twice."
        if inv.ok
        else "INVARIANTS BROKEN: see the table above."
    )
    return lines


def gang_sentence(result: RunResult) -> str:
    """The gang outcome in one sentence."""
    g = result.gangs
    assert g is not None
    text = (
        f"Gangs: {g.completed:,} of {len(g.gangs):,} completed, {g.partial:,} partial "
        f"(some members bound, fewer than minMember), {g.unplaced:,} with no member bound; "
        f"bound members of incomplete gangs held {g.held_end() / 1000:g} CPU at the end."
    )
    if g.partial and result.invariants.partial_gangs:
        text += " PARTIAL GANGS under gang scheduling: the invariant is broken."
    return text


def gang_rows(table: Table, g: GangFigures) -> None:
    """The gang figures as rows of the details table."""
    t = g.throughput()
    span = g.spans()
    table.add_row(
        "gangs completed / partial / unplaced",
        f"{g.completed:,} / {g.partial:,} / {g.unplaced:,} of {len(g.gangs):,}",
    )
    table.add_row(
        "gangs/s average / p50 / p99 (overall)",
        f"{_num(t.average, '{:,.1f}')} / {_num(t.p50, '{:,.1f}')} / {_num(t.p99, '{:,.1f}')} "
        f"({_num(g.overall(), '{:,.1f}')}) over {t.samples} samples of {g.interval:g} s",
    )
    table.add_row(
        "gang first-to-last bind p50 / p90 / p99 / max",
        f"{_num(span.p50, '{:.3f}')} / {_num(span.p90, '{:.3f}')} / "
        f"{_num(span.p99, '{:.3f}')} / {_num(span.max, '{:.3f}')} s",
    )
    mean = g.held_mean()
    table.add_row(
        "CPU held by incomplete gangs max / mean / end",
        f"{g.held_max() / 1000:g} / {_num(None if mean is None else mean / 1000, '{:.2f}')} / "
        f"{g.held_end() / 1000:g} CPU",
    )
    waiting = g.permit_waiting_max()
    table.add_row(
        "pods waiting at Permit (max)",
        "not exported" if waiting is None else f"{waiting:g}",
    )
    rej = g.timeout_rejections
    table.add_row(
        "deadlocks broken only by timeout",
        "events not listed"
        if rej is None
        else f"{rej['gangs']:,} gangs ({rej['events']:,} Permit-timeout rejections)",
    )


def scheduler_label(result: RunResult) -> str:
    """``asched (adaptive)``, ``kube-scheduler (100 %) + extender 10 ms``."""
    pct = result.scheduler.percentage
    label = f"{result.scheduler.kind} ({'adaptive' if pct == 0 else f'{pct} %'})"
    if result.extender is not None:
        label += f" + extender {result.extender['latency_ms']:g} ms"
    return label


def details_table(result: RunResult) -> Table:
    """Resources, quality and invariants, one per line."""
    table = Table(show_header=False, title_justify="left")
    table.add_column("what")
    table.add_column("value")
    m = result.measured
    settled = " (settled)" if m.settled else ""
    table.add_row(
        "measured pods bound", f"{m.bound:,} of {m.pods:,} in {m.duration:.1f} s{settled}"
    )
    table.add_row(
        "throughput samples", f"{m.throughput().samples} of {m.interval:g} s (measured phase)"
    )
    if result.ceiling is not None:
        table.add_row(
            "fraction of the bind ceiling",
            f"{_percent(result.fraction_of_ceiling())} of its average "
            f"({_percent(result.fraction_of_ceiling(overall=True))} of its overall rate)",
        )
    sched = result.scheduler
    table.add_row(
        "scheduler CPU",
        f"{_num(m.cpu.get('scheduler'), '{:.1f}')} s while measuring "
        f"({_num(m.cpu_ms_per_pod('scheduler'), '{:.2f}')} ms/pod); exit {sched.exit_code}",
    )
    rss = sched.peak_rss_bytes
    table.add_row("scheduler peak RSS", "-" if rss is None else f"{rss / 2**20:,.0f} MiB")
    for name in m.cpu:
        if name != "scheduler":
            table.add_row(
                f"{name} CPU",
                f"{_num(m.cpu[name], '{:.1f}')} s ({_num(m.cpu_ms_per_pod(name), '{:.2f}')} ms/pod)",
            )
    q = result.quality
    if q is not None:
        table.add_row(
            "regret mean / p99 / max",
            f"{_num(q.regret_mean, '{:.2f}')} / {_num(q.regret_p99, '{:.0f}')} / "
            f"{_num(q.regret_max, '{:.0f}')} points of {q.max_total} "
            f"({_percent(q.zero_regret_fraction)} at 0; {q.infeasible_at_replay} not replayable)",
        )
        table.add_row(
            "CPU utilisation mean / std-dev",
            f"{_percent(q.cpu_utilisation_mean)} / {_points(q.balance_cpu_stddev)}",
        )
        table.add_row(
            "fragmentation",
            f"{_num(q.fits_more)} more pods of {shape_text(q.largest_shape)} fit "
            f"({_num(q.fits_if_pooled)} if pooled; {_percent(q.fragmentation)} lost)",
        )
    ext = result.extender
    if ext is not None:
        table.add_row("extender", extender_text(ext))
    if result.gangs is not None:
        gang_rows(table, result.gangs)
    inv = result.invariants
    table.add_row(
        "invariants",
        "ok"
        if inv.ok
        else f"{len(inv.overcommitted)} over-committed (node, resource); "
        f"{len(inv.rebinds)} pods bound twice; "
        f"{inv.pods_on_rejected_nodes} pods on nodes the extender rejects; "
        f"{inv.partial_gangs} partial gangs under gang scheduling",
    )
    return table


def extender_text(ext: dict[str, Any]) -> str:
    """The extender's settings and, when measured, its calls and CPU, in one line."""
    text = (
        f"{ext['latency_ms']:g} ms per call, rejects 1 in {ext['reject_every']} nodes"
        if ext["reject_every"]
        else f"{ext['latency_ms']:g} ms per call, rejects none"
    )
    calls = ext.get("measured")
    if calls:
        text += (
            f"; while measuring {calls['calls']['filter']:,} filter + "
            f"{calls['calls']['prioritize']:,} prioritize calls "
            f"({_num(calls['names_per_call'], '{:.0f}')} names each, "
            f"at most {calls['max_in_flight']} in flight), "
            f"{_num(calls['cpu_ms_per_call'], '{:.3f}')} ms CPU per call"
        )
    return text


def shape_text(shape: dict[str, int]) -> str:
    """``{"cpu": 100, "memory": 524288000}`` as ``100m CPU, 500Mi``."""
    parts = []
    for resource, amount in shape.items():
        if resource == "cpu":
            parts.append(f"{amount}m CPU")
        elif resource == "memory":
            parts.append(f"{amount / 2**20:g}Mi")
        else:
            parts.append(f"{amount} {resource}")
    return ", ".join(parts) or "nothing"


def stdout_console() -> Console:
    """A console for results: the terminal's width, or 160 columns when piped to a file."""
    import sys

    return Console() if sys.stdout.isatty() else Console(width=160)


def print_summary(result: RunResult, console: Console | None = None) -> None:
    """Print both tables."""
    out = console or stdout_console()
    out.print(summary_table(result))
    out.print(details_table(result))
    out.print("\n".join(in_short(result)), highlight=False)
