"""scheduler_perf's throughput semantics, as pure functions over watch-seen bind times.

What scheduler_perf does (``test/integration/scheduler_perf/util.go``,
``throughputCollector``), and what :class:`ThroughputCollector` reproduces:

* a pod counts as scheduled when the informer (here: our watch) sees ``spec.nodeName`` set;
* a ticker fires every second (``throughputSampleInterval``) and reads the count;
* ticks while the count is still 0 are ignored; the first tick with a non-zero count only
  sets the baseline (it is "likely to be an outlier because sampling and creating pods get
  started independently");
* a tick with no newly scheduled pod records nothing and is *merged* into the next
  non-zero interval, whose throughput (pods / actual elapsed seconds) is then recorded
  ``skipped + 1`` times "to keep percentiles accurate";
* the summary is ``Average`` = mean of the samples and ``PercN`` = the sorted sample at
  index ``ceil(n * N / 100) - 1``.

The collector stops when the last measured pod is scheduled, so the partial interval after
the last tick is never a sample (:func:`samples_from_times`).

Times are seconds on one monotonic clock; throughputs are pods per second.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

#: scheduler_perf's throughputSampleInterval, seconds.
SAMPLE_INTERVAL = 1.0
PERCENTILES = (50, 90, 95, 99)
#: A phase at least this long is sampled at scheduler_perf's 1 s (5 samples or more).
LONG_ENOUGH_SECONDS = 6.0
#: The finer widths a shorter phase may use, widest first, seconds.
FINER_INTERVALS = (0.5, 0.2, 0.1, 0.05, 0.02, 0.01)
#: A shorter phase gets the widest finer width that still yields this many ticks.
MIN_TICKS = 10


def auto_interval(duration: float) -> float:
    """The sample width for a phase of ``duration`` seconds.

    scheduler_perf's 1 s whenever the phase lasts :data:`LONG_ENOUGH_SECONDS` or more, so
    benchmark-sized runs count exactly as upstream does. A shorter phase would have few or
    no 1 s samples (a 0.9 s run has none, and its table would read ``average -``): it gets
    the widest of :data:`FINER_INTERVALS` giving at least :data:`MIN_TICKS` ticks, the
    finest one at worst. The width is reported beside every figure it produced.

    >>> auto_interval(12.0), auto_interval(3.0), auto_interval(0.9), auto_interval(0.001)
    (1.0, 0.2, 0.05, 0.01)
    """
    if duration >= LONG_ENOUGH_SECONDS:
        return SAMPLE_INTERVAL
    for width in FINER_INTERVALS:
        if duration / width >= MIN_TICKS:
            return width
    return FINER_INTERVALS[-1]


@dataclass(frozen=True, slots=True)
class Interval:
    """One recorded interval: ``pods`` scheduled in ``(start, end]``, recorded ``repeat`` times."""

    start: float
    end: float
    pods: int
    repeat: int

    @property
    def throughput(self) -> float:
        """Pods per second over the interval."""
        return self.pods / (self.end - self.start)


@dataclass(slots=True)
class ThroughputCollector:
    """Feed it ticks (:meth:`tick`); it keeps scheduler_perf's samples.

    Attributes
    ----------
    samples : list of float
        Recorded throughputs in pods/s, in recording order (merged intervals repeated).
    intervals : list of Interval
        The same, one entry per recorded interval (for plots).
    """

    samples: list[float] = field(default_factory=list)
    intervals: list[Interval] = field(default_factory=list)
    _started: bool = False
    _last_count: int = 0
    _last_time: float = 0.0
    _skipped: int = 0

    def tick(self, now: float, scheduled: int) -> None:
        """One ticker event at time ``now`` with ``scheduled`` pods counted so far."""
        if scheduled == 0:
            return
        if not self._started:
            self._started = True
            self._last_count = scheduled
            self._last_time = now
            return
        new = scheduled - self._last_count
        if new == 0:
            self._skipped += 1
            return
        duration = now - self._last_time
        throughput = new / duration
        self.samples.extend([throughput] * (self._skipped + 1))
        self.intervals.append(Interval(self._last_time, now, new, self._skipped + 1))
        self._last_count = scheduled
        self._last_time = now
        self._skipped = 0


@dataclass(frozen=True, slots=True)
class Summary:
    """scheduler_perf's ``SchedulingThroughput`` data item (pods/s); None without samples."""

    samples: int
    average: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None

    def to_json(self) -> dict[str, float | int | None]:
        return {
            "samples": self.samples,
            "average": self.average,
            "p50": self.p50,
            "p90": self.p90,
            "p95": self.p95,
            "p99": self.p99,
        }


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """The value at index ``ceil(n * p / 100) - 1`` of an ascending sequence (n >= 1)."""
    n = len(sorted_values)
    index = max(0, math.ceil(n * p / 100) - 1)
    return float(sorted_values[index])


def summarize(samples: Sequence[float]) -> Summary:
    """Average and percentiles of throughput samples, as scheduler_perf computes them."""
    if not samples:
        return Summary(0, None, None, None, None, None)
    ordered = sorted(samples)
    p50, p90, p95, p99 = (percentile(ordered, p) for p in PERCENTILES)
    return Summary(len(ordered), sum(ordered) / len(ordered), p50, p90, p95, p99)


def samples_from_times(
    bind_times: Sequence[float] | npt.NDArray[np.float64],
    *,
    origin: float,
    interval: float = SAMPLE_INTERVAL,
    end: float | None = None,
) -> ThroughputCollector:
    """Replay a perfect ticker over watch-seen bind times.

    Parameters
    ----------
    bind_times : sequence of float
        When each measured pod was seen bound (any order), seconds.
    origin : float
        When the collector started (the ticker's zero): the start of pod creation.
    interval : float
        Tick period in seconds.
    end : float, optional
        When the collector stopped; defaults to the last bind time (the run ends when the
        last measured pod is scheduled). Ticks after ``end`` never happen.
    """
    times = np.sort(np.asarray(bind_times, dtype=np.float64))
    collector = ThroughputCollector()
    if times.size == 0:
        return collector
    stop = float(times[-1]) if end is None else end
    n_ticks = math.floor((stop - origin) / interval + 1e-9)
    for k in range(1, n_ticks + 1):
        now = origin + k * interval
        collector.tick(now, int(np.searchsorted(times, now, side="right")))
    return collector


@dataclass(frozen=True, slots=True)
class LatencySummary:
    """Creation-to-bound latency in seconds (nearest-rank percentiles, as above)."""

    count: int
    mean: float | None
    p50: float | None
    p90: float | None
    p99: float | None
    max: float | None

    def to_json(self) -> dict[str, float | int | None]:
        return {
            "count": self.count,
            "mean": self.mean,
            "p50": self.p50,
            "p90": self.p90,
            "p99": self.p99,
            "max": self.max,
        }


def latency_summary(latencies: Sequence[float]) -> LatencySummary:
    """Summarize latencies (seconds)."""
    if not latencies:
        return LatencySummary(0, None, None, None, None, None)
    ordered = sorted(latencies)
    return LatencySummary(
        len(ordered),
        sum(ordered) / len(ordered),
        percentile(ordered, 50),
        percentile(ordered, 90),
        percentile(ordered, 99),
        ordered[-1],
    )


def overall_rate(bind_times: Sequence[float], origin: float) -> float | None:
    """Pods per second from ``origin`` to the last bind (not a scheduler_perf figure)."""
    if not bind_times:
        return None
    span = max(bind_times) - origin
    return len(bind_times) / span if span > 0 else None
