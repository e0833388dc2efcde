"""``asched bench suite CONFIG``: every matching workload of a scheduler_perf config.

Each workload is translated (:mod:`asched.tools.bench.perf_translate`) and run by the
ordinary runner, once per scheduler asked for; the outcome is one :class:`SuiteEntry`:

* ``ok``: every run bound its measured pods and held its invariants;
* ``unsupported``: asched cannot run it as upstream means it (``reason`` says why);
* ``failed``: a run failed, or the workload's parameters are wrong (``reason``).

Figures are upstream's data item ``SchedulingThroughput`` (Average, Perc50, Perc90,
Perc95, Perc99, pods/s, counted as scheduler_perf counts; None without samples), with
upstream's ``threshold`` beside it for context: upstream's CI machines are far larger.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import orjson
from rich.table import Table

from asched.errors import InputError
from asched.tools.bench import perf_config, perf_translate, report, runner
from asched.tools.bench.perf_config import PerfConfig
from asched.tools.bench.results import RunResult
from asched.tools.bench.workload import Workload

logger = logging.getLogger(__name__)

Status = Literal["ok", "unsupported", "failed"]
SCHEMA: Final = "asched.bench.suite/v1"
#: upstream's default label filter for its integration tests (TestScheduling)
DEFAULT_LABELS: Final = "integration-test,-performance"

RunOne = Callable[[Workload, str], RunResult]


@dataclass(slots=True, kw_only=True)
class SuiteEntry:
    """One workload's outcome; ``runs`` maps a scheduler kind to its run."""

    name: str
    status: Status
    reason: str | None = None
    threshold: float | None = None
    measured_pods: int = 0
    runs: dict[str, RunResult] = field(default_factory=dict)

    @property
    def invariants_ok(self) -> bool:
        return bool(self.runs) and all(r.invariants.ok for r in self.runs.values())

    def average(self, scheduler: str) -> float | None:
        run = self.runs.get(scheduler)
        return None if run is None else run.measured.throughput().average

    def ratio(self) -> float | None:
        """asched's Average / kube-scheduler's, when both ran and both have samples."""
        ours, theirs = self.average("asched"), self.average("kube-scheduler")
        if ours is None or not theirs:
            return None
        return ours / theirs

    def met_threshold(self, scheduler: str) -> bool | None:
        """Whether ``scheduler``'s Average exceeded upstream's threshold (None: no
        threshold or no figure)."""
        average = self.average(scheduler)
        if self.threshold is None or average is None:
            return None
        return average > self.threshold


def scheduling_throughput(run: RunResult) -> dict[str, float] | None:
    """The run's ``SchedulingThroughput`` data item as perf-dash reads it; None without
    samples."""
    summary = run.measured.throughput()
    if summary.average is None:
        return None
    values = {
        "Average": summary.average,
        "Perc50": summary.p50,
        "Perc90": summary.p90,
        "Perc95": summary.p95,
        "Perc99": summary.p99,
    }
    return {k: float(v) for k, v in values.items() if v is not None}


def run_suite(
    config: PerfConfig,
    selectors: Sequence[str],
    schedulers: Sequence[str],
    run_one: RunOne,
    *,
    on_entry: Callable[[SuiteEntry], None] | None = None,
    patterns: Sequence[str] = (),
) -> list[SuiteEntry]:
    """Run every workload of ``config`` whose labels (test case's and its own) pass
    ``selectors`` and whose ``TestCase/Workload`` name matches one of ``patterns`` (shell
    patterns; none: every name), with each of ``schedulers`` through ``run_one`` (none:
    translate only, as ``--list`` does)."""
    entries: list[SuiteEntry] = []
    for case, workload in config.all():
        if not perf_config.enabled(selectors, [*case.labels, *workload.labels]):
            continue
        name = perf_config.full_name(case, workload)
        if patterns and not any(fnmatch.fnmatchcase(name, p) for p in patterns):
            continue
        entry = _run_entry(case, workload, schedulers, run_one)
        entries.append(entry)
        if on_entry is not None:
            on_entry(entry)
    return entries


def _run_entry(
    case: perf_config.TestCase,
    workload: perf_config.PerfWorkload,
    schedulers: Sequence[str],
    run_one: RunOne,
) -> SuiteEntry:
    name = perf_config.full_name(case, workload)
    entry = SuiteEntry(name=name, status="ok", threshold=workload.threshold)
    try:
        translated = perf_translate.translate(case, workload)
    except perf_translate.Unsupported as exc:
        entry.status, entry.reason = "unsupported", exc.reason
        return entry
    except perf_config.PerfConfigError as exc:
        entry.status, entry.reason = "failed", "; ".join(exc.problems)
        return entry
    except InputError as exc:  # a template file missing or of the wrong kind
        entry.status, entry.reason = "failed", str(exc)
        return entry
    entry.measured_pods = translated.n_measured
    for scheduler in schedulers:
        try:
            result = run_one(translated, scheduler)
        except runner.BenchmarkError as exc:
            entry.status, entry.reason = "failed", f"{scheduler}: {exc}"
            return entry
        entry.runs[scheduler] = result
        if not result.ok:
            entry.status = "failed"
            entry.reason = (
                f"{scheduler}: measured pods not all bound, invariants broken, or the "
                f"scheduler exited with {result.scheduler.exit_code}"
            )
    return entry


def to_json(entries: Sequence[SuiteEntry], config: PerfConfig) -> dict[str, Any]:
    """The ``--json`` document: ``results`` as the issue specifies, each with ``runs``
    (what ``bench run --json`` writes, per scheduler)."""
    results = []
    for e in entries:
        primary = next(iter(e.runs.values()), None)
        results.append(
            {
                "name": e.name,
                "status": e.status,
                "reason": e.reason,
                "threshold": e.threshold,
                "measured_pods": e.measured_pods,
                "SchedulingThroughput": None if primary is None else scheduling_throughput(primary),
                "invariants_ok": e.invariants_ok,
                "met_threshold": {k: e.met_threshold(k) for k in e.runs},
                "ratio_to_kube_scheduler": e.ratio(),
                "runs": {
                    k: {**report.to_json(r), "SchedulingThroughput": scheduling_throughput(r)}
                    for k, r in e.runs.items()
                },
            }
        )
    return {"schema": SCHEMA, "config": config.source, "results": results}


def write_json(entries: Sequence[SuiteEntry], config: PerfConfig, path: Path) -> None:
    path.write_bytes(orjson.dumps(to_json(entries, config), option=orjson.OPT_INDENT_2))


def listing(entries: Sequence[SuiteEntry]) -> Table:
    """``--list``: workload | measured pods | upstream threshold | runnable, or why not
    (entries translated, not run)."""
    out = Table(title="asched bench suite --list")
    out.add_column("workload")
    out.add_column("measured pods", justify="right")
    out.add_column("upstream threshold", justify="right")
    out.add_column("runs here")
    for e in entries:
        threshold = "-" if e.threshold is None else f"{e.threshold:g}"
        verdict = "yes" if e.status == "ok" else f"{e.status}: {e.reason}"
        out.add_row(e.name, f"{e.measured_pods:,}", threshold, verdict)
    return out


def _figure(entry: SuiteEntry, scheduler: str) -> str:
    average = entry.average(scheduler)
    if average is None:
        run = entry.runs.get(scheduler)
        return "-" if run is None else no_samples(run)
    met = entry.met_threshold(scheduler)
    mark = "" if met is None else (" (met)" if met else " (below)")
    return f"{average:,.1f}{mark}"


def no_samples(run: RunResult) -> str:
    """Why a run has no throughput sample: too few pods, bound too fast to fill two
    samples (the first is skipped, as upstream skips it), or none bound."""
    times = sorted(run.measured.bind_times)
    if not times:
        return "no samples: no pod bound"
    span = times[-1] - times[0]
    return (
        f"no samples: {len(times)} pod{'s' if len(times) != 1 else ''} bound within"
        f" {span * 1000:,.0f} ms, too few for two samples"
    )


def table(entries: Sequence[SuiteEntry], schedulers: Sequence[str]) -> Table:
    """workload | upstream threshold | one column per scheduler (Average pods/s) | ratio |
    invariants; unsupported and failed workloads say why."""
    out = Table(title="asched bench suite (SchedulingThroughput Average, pods/s)")
    out.add_column("workload")
    out.add_column("upstream threshold", justify="right")
    for scheduler in schedulers:
        out.add_column(scheduler, justify="right")
    out.add_column("ratio", justify="right")
    out.add_column("invariants")
    for e in entries:
        threshold = "-" if e.threshold is None else f"{e.threshold:g}"
        if e.status == "unsupported":
            cells = [f"unsupported: {e.reason}"] + [""] * (len(schedulers) - 1)
            out.add_row(e.name, threshold, *cells, "", "-")
            continue
        ratio = e.ratio()
        invariants = "held" if e.invariants_ok else ("-" if not e.runs else "BROKEN")
        if e.status == "failed":
            invariants = f"{invariants}; FAILED: {e.reason}"
        out.add_row(
            e.name,
            threshold,
            *(_figure(e, s) for s in schedulers),
            "-" if ratio is None else f"{ratio:.2f}x",
            invariants,
        )
    return out
