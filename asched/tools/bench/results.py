"""What a benchmark run produces, as plain dataclasses (JSON in :mod:`asched.tools.bench.report`).

Times inside a phase are seconds relative to the phase's origin (when its pods started to
be created, or when the ceiling binder started); throughputs are pods per second; CPU in
seconds; memory in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from asched.tools.bench.counting import (
    LatencySummary,
    Summary,
    ThroughputCollector,
    auto_interval,
    latency_summary,
    overall_rate,
    samples_from_times,
    summarize,
)
from asched.tools.bench.gang_figures import GangFigures
from asched.tools.bench.loadgen import CreateStats
from asched.tools.bench.quality import Overcommit, Quality


@dataclass(slots=True, kw_only=True)
class Phase:
    """One timed phase: ``measured`` (the scheduler) or ``ceiling`` (the trivial binder).

    Attributes
    ----------
    pods : int
        Pods the phase had to bind.
    bind_times : list of float
        When each was seen bound, seconds after the origin (unsorted).
    latencies : list of float
        Creation-to-bound seconds, per bound pod (watch-seen ADDED to watch-seen bound).
    duration : float
        Origin to the end of the phase, seconds.
    cpu : dict
        CPU seconds each process used during the phase (None: not measured).
    completed : bool
        Every pod bound before the timeout or stall limit.
    settled : bool
        The phase ended on the workload's ``settleSeconds`` (every pod created, no bind for
        that long, nothing waiting at Permit): the pods that could fit are bound.
    sample_width : float or None
        The throughput sample width in seconds; None picks it from the time to the last
        bind (:func:`~asched.tools.bench.counting.auto_interval`: scheduler_perf's 1 s when
        that is 6 s or more).
    """

    name: str
    pods: int
    bind_times: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    duration: float = 0.0
    cpu: dict[str, float | None] = field(default_factory=dict)
    create: CreateStats | None = None
    completed: bool = False
    settled: bool = False
    mode: str = ""
    sample_width: float | None = None

    @property
    def bound(self) -> int:
        return len(self.bind_times)

    @property
    def interval(self) -> float:
        """The sample width in seconds this phase's throughput figures use."""
        if self.sample_width is not None:
            return self.sample_width
        if self.settled:  # the settle wait after the last bind is not scheduling time
            return auto_interval(max(self.bind_times, default=self.duration))
        return auto_interval(self.duration)

    def collector(self) -> ThroughputCollector:
        """scheduler_perf's samples over this phase (origin 0), :attr:`interval` wide."""
        return samples_from_times(self.bind_times, origin=0.0, interval=self.interval)

    def throughput(self) -> Summary:
        return summarize(self.collector().samples)

    def overall(self) -> float | None:
        return overall_rate(self.bind_times, 0.0)

    def latency(self) -> LatencySummary:
        return latency_summary(self.latencies)

    def cpu_ms_per_pod(self, process: str) -> float | None:
        """CPU milliseconds ``process`` spent per bound pod in this phase."""
        seconds = self.cpu.get(process)
        if seconds is None or not self.bound:
            return None
        return 1000.0 * seconds / self.bound


@dataclass(slots=True, kw_only=True)
class SchedulerInfo:
    """The scheduler process: what ran, its exit status and resource use."""

    kind: str
    version: str
    percentage: int
    pid: int | None = None
    exit_code: int | None = None
    cpu_seconds_total: float | None = None
    peak_rss_bytes: int | None = None
    #: the scheduler's log file; "" when it was removed with the run's work directory
    #: (a successful run without ``--workdir``)
    log: str = ""
    profile: str | None = None


@dataclass(slots=True, kw_only=True)
class Invariants:
    """End-of-measurement checks."""

    overcommitted: list[Overcommit] = field(default_factory=list)
    rebinds: list[tuple[str, str, str]] = field(default_factory=list)
    pods_on_missing_nodes: int = 0
    relists: int = 0
    #: init and measured pods bound to a node the benchmark extender's filter rejects
    pods_on_rejected_nodes: int = 0
    #: gangs left with 0 < bound < minMember, counted only where gang scheduling was in
    #: force (asched with the Coscheduling profile); kube-scheduler's are a figure, not a fault
    partial_gangs: int = 0

    @property
    def ok(self) -> bool:
        return (
            not self.overcommitted
            and not self.rebinds
            and not self.pods_on_rejected_nodes
            and not self.partial_gangs
        )


@dataclass(slots=True, kw_only=True)
class RunResult:
    """Everything one ``asched bench run`` measured."""

    workload: dict[str, Any]
    options: dict[str, Any]
    backend: str
    scheduler: SchedulerInfo
    measured: Phase
    ceiling: Phase | None = None
    quality: Quality | None = None
    invariants: Invariants = field(default_factory=Invariants)
    churn: dict[str, int] = field(default_factory=dict)
    init: dict[str, Any] = field(default_factory=dict)
    harness_cpu_seconds: float | None = None
    versions: dict[str, str] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)
    git: dict[str, Any] = field(default_factory=dict)
    started_at: str = ""
    wall_seconds: float = 0.0
    #: the benchmark extender's settings and calls (None: the run had none)
    extender: dict[str, Any] | None = None
    #: the gang figures (None: the workload has no measured gangs)
    gangs: GangFigures | None = None

    @property
    def ok(self) -> bool:
        """All measured pods bound (or the phase settled), invariants hold, the scheduler
        exited cleanly."""
        return (
            (self.measured.completed or self.measured.settled)
            and self.invariants.ok
            and self.scheduler.exit_code in (0, None)
        )

    def fraction_of_ceiling(self, *, overall: bool = False) -> float | None:
        """Our average throughput / the ceiling's (``overall``: the overall rates instead)."""
        if self.ceiling is None:
            return None
        if overall:
            ours, ceiling = self.measured.overall(), self.ceiling.overall()
        else:
            ours, ceiling = self.measured.throughput().average, self.ceiling.throughput().average
        if ours is None or not ceiling:
            return None
        return ours / ceiling
