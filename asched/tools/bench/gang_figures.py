"""The gang figures of a run, as pure functions over watch-seen bind times.

Inputs are the measured gangs (:class:`GangSpec`: key ``namespace/name``, ``minMember``)
and their member pods (:class:`Member`: the gang, when the watch saw the pod bound, in
seconds after the phase's origin, or None, and its CPU request in millicores). What the
watch shows is all there is: a member waiting at asched's Permit is not bound, so it is
not seen here (the ``asched_permit_waiting_pods`` gauge covers it, when scraped).

* a gang is **completed** when at least ``minMember`` of its members are bound, and
  **partial** when ``0 < bound < minMember`` (with gang scheduling this must be 0 at the
  end: a partial gang holds capacity it cannot use); **unplaced** when none is bound;
* its **completion time** is the bind of its ``minMember``-th member; gangs/s are
  counted over completion times exactly as pods/s are over bind times (scheduler_perf's
  collector, :mod:`asched.tools.bench.counting`);
* its **span** (completed gangs only) is from its first member's bind to its last bound
  member's bind, in seconds;
* the **held capacity** at time ``t`` is the CPU (millicores) of members bound by ``t``
  whose gang has fewer than ``minMember`` members bound by ``t``: capacity taken and not
  yet usable. It also counts the moments between a completing gang's first and last
  binds, which is what the watch sees of a gang whose binds are in flight.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
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


@dataclass(frozen=True, slots=True)
class GangSpec:
    """One measured gang: ``key`` is ``namespace/name``."""

    key: str
    min_member: int


@dataclass(frozen=True, slots=True)
class Member:
    """One member pod: its gang's key, its bind time (seconds after the origin) or None,
    and its CPU request in millicores."""

    gang: str
    bound: float | None
    cpu_milli: int = 0


@dataclass(frozen=True, slots=True)
class GangOutcome:
    """What became of one gang by the end of the phase; times in seconds after the origin."""

    key: str
    min_member: int
    bound: int
    first: float | None = None
    completed_at: float | None = None
    last: float | None = None

    @property
    def completed(self) -> bool:
        return self.bound >= self.min_member

    @property
    def partial(self) -> bool:
        return 0 < self.bound < self.min_member

    @property
    def span(self) -> float | None:
        """First to last member bind, seconds (completed gangs only)."""
        if not self.completed or self.first is None or self.last is None:
            return None
        return self.last - self.first


def outcomes(specs: Iterable[GangSpec], members: Iterable[Member]) -> list[GangOutcome]:
    """Each gang's outcome, in the order of ``specs``; members of unknown gangs are ignored."""
    times: dict[str, list[float]] = defaultdict(list)
    for member in members:
        if member.bound is not None:
            times[member.gang].append(member.bound)
    out: list[GangOutcome] = []
    for spec in specs:
        bound = sorted(times.get(spec.key, ()))
        out.append(
            GangOutcome(
                key=spec.key,
                min_member=spec.min_member,
                bound=len(bound),
                first=bound[0] if bound else None,
                completed_at=bound[spec.min_member - 1] if len(bound) >= spec.min_member else None,
                last=bound[-1] if bound else None,
            )
        )
    return out


def held_capacity(
    specs: Iterable[GangSpec], members: Iterable[Member], times: Sequence[float]
) -> list[int]:
    """Millicores held by bound members of incomplete gangs at each of ``times`` (ascending).

    A sweep over the binds in time order: a member's CPU is added while its gang is short
    of ``minMember``, and the gang's whole bound CPU is released when its ``minMember``-th
    member binds.
    """
    minimum = {spec.key: spec.min_member for spec in specs}
    binds = sorted(
        (m.bound, m.gang, m.cpu_milli) for m in members if m.bound is not None and m.gang in minimum
    )
    count: dict[str, int] = defaultdict(int)
    holding: dict[str, int] = defaultdict(int)
    held = 0
    out: list[int] = []
    position = 0
    for now in times:
        while position < len(binds) and binds[position][0] <= now:
            _when, gang, cpu = binds[position]
            position += 1
            count[gang] += 1
            if count[gang] < minimum[gang]:
                holding[gang] += cpu
                held += cpu
            elif count[gang] == minimum[gang]:
                held -= holding.pop(gang, 0)
        out.append(held)
    return out


def sample_times(duration: float, interval: float) -> list[float]:
    """0, interval, 2 interval, ... up to ``duration``, and ``duration`` itself (seconds)."""
    steps = math.floor(duration / interval + 1e-9) if interval > 0 else 0
    times = [k * interval for k in range(steps + 1)]
    if not times or times[-1] < duration:
        times.append(duration)
    return times


@dataclass(slots=True, kw_only=True)
class GangFigures:
    """Every gang figure of one measured phase (see the module docstring).

    Attributes
    ----------
    gangs : list of GangOutcome
    held : list of (float, int)
        (seconds after the origin, millicores held) samples.
    permit_waiting : list of (float, float) or None
        (seconds, pods) samples of asched's ``asched_permit_waiting_pods`` gauge; None when
        it was not scraped (kube-scheduler, or an asched that does not export it).
    timeout_rejections : dict or None
        FailedScheduling events whose message says the Permit timeout rejected the pod:
        ``events`` in all, ``gangs`` affected and ``by_gang``; None when the events could
        not be listed.
    duration : float
        The phase's length in seconds.
    sample_width : float or None
        The gangs/s sample width in seconds (None: from the duration, as for pods/s).
    """

    gangs: list[GangOutcome] = field(default_factory=list)
    held: list[tuple[float, int]] = field(default_factory=list)
    permit_waiting: list[tuple[float, float]] | None = None
    timeout_rejections: dict[str, Any] | None = None
    duration: float = 0.0
    sample_width: float | None = None

    @property
    def completed(self) -> int:
        return sum(g.completed for g in self.gangs)

    @property
    def partial(self) -> int:
        return sum(g.partial for g in self.gangs)

    @property
    def unplaced(self) -> int:
        return sum(g.bound == 0 for g in self.gangs)

    @property
    def interval(self) -> float:
        """The sample width in seconds of the gangs/s figures."""
        return self.sample_width if self.sample_width is not None else auto_interval(self.duration)

    def completion_times(self) -> list[float]:
        return [g.completed_at for g in self.gangs if g.completed_at is not None]

    def collector(self) -> ThroughputCollector:
        return samples_from_times(self.completion_times(), origin=0.0, interval=self.interval)

    def throughput(self) -> Summary:
        """Gangs/s, scheduler_perf's counting over completion times."""
        return summarize(self.collector().samples)

    def overall(self) -> float | None:
        """Completed gangs / seconds to the last completion."""
        return overall_rate(self.completion_times(), 0.0)

    def spans(self) -> LatencySummary:
        """First-to-last member bind of the completed gangs, seconds."""
        return latency_summary([g.span for g in self.gangs if g.span is not None])

    def held_max(self) -> int:
        return max((cpu for _t, cpu in self.held), default=0)

    def held_end(self) -> int:
        return self.held[-1][1] if self.held else 0

    def held_mean(self) -> float | None:
        """Time-weighted mean of the held millicores (step function over the samples)."""
        if len(self.held) < 2 or self.held[-1][0] <= self.held[0][0]:
            return None
        area = sum(
            (t1 - t0) * cpu
            for (t0, cpu), (t1, _next) in zip(self.held, self.held[1:], strict=False)
        )
        return area / (self.held[-1][0] - self.held[0][0])

    def permit_waiting_max(self) -> float | None:
        if self.permit_waiting is None:
            return None
        return max((value for _t, value in self.permit_waiting), default=0.0)


def figures(
    specs: Sequence[GangSpec],
    members: Sequence[Member],
    *,
    duration: float,
    sample_width: float | None = None,
    permit_waiting: list[tuple[float, float]] | None = None,
    timeout_rejections: dict[str, Any] | None = None,
) -> GangFigures:
    """The gang figures of a phase ``duration`` seconds long (binds after it are ignored)."""
    within = [
        m if m.bound is None or m.bound <= duration else Member(m.gang, None, m.cpu_milli)
        for m in members
    ]
    result = GangFigures(
        gangs=outcomes(specs, within),
        permit_waiting=permit_waiting,
        timeout_rejections=timeout_rejections,
        duration=duration,
        sample_width=sample_width,
    )
    times = sample_times(duration, result.interval)
    result.held = list(zip(times, held_capacity(specs, within, times), strict=True))
    return result


def rejections_by_gang(
    events: Iterable[Mapping[str, Any]], pod_gang: Mapping[str, str], marker: str
) -> dict[str, Any]:
    """Count FailedScheduling events whose message contains ``marker``, by gang.

    ``pod_gang`` maps ``namespace/pod`` to its gang's key; an event's ``count`` (core/v1
    deduplication) or ``series.count`` is the number of occurrences it stands for.
    """
    by_gang: dict[str, int] = defaultdict(int)
    for event in events:
        if event.get("reason") != "FailedScheduling" or marker not in str(
            event.get("message") or event.get("note") or ""
        ):
            continue
        involved = event.get("involvedObject") or event.get("regarding") or {}
        pod = f"{involved.get('namespace', '')}/{involved.get('name', '')}"
        gang = pod_gang.get(pod)
        if gang is None:
            continue
        series = event.get("series") or {}
        by_gang[gang] += int(series.get("count") or event.get("count") or 1)
    return {
        "events": sum(by_gang.values()),
        "gangs": len(by_gang),
        "by_gang": dict(sorted(by_gang.items())),
    }
