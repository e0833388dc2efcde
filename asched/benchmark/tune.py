"""Choosing percentageOfNodesToScore from measurements: a sweep, and the rule that picks.

Each point of the sweep is one full ``asched bench run`` of the workload (fresh backend,
no bind ceiling) at one percentage. :func:`recommend` then applies, in order:

1. **No gain from sampling.** If scoring 100 % of the nodes is within ``within`` % of the
   best average throughput, recommend 100: sampling buys (almost) no speed here, and
   full scoring has no regret by construction.
2. **Fast enough and good enough.** Otherwise, among the runs within ``within`` % of the
   best throughput, those whose mean regret is at most ``max_regret`` points; of these,
   the one scoring the most nodes (best placements for the same speed).
3. **Nothing acceptable.** Otherwise the fastest run, saying that its regret is above
   the limit.

Settings are ranked by the share of nodes they actually score: the adaptive setting (0)
means ``max(5, 50 - nodes / 125)`` %, and any setting scores at least 100 nodes (upstream's
``minFeasibleNodesToFind``), so on a small cluster every setting may mean "all nodes".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from asched.benchmark.results import RunResult

DEFAULT_PERCENTAGES = (0, 5, 10, 25, 50, 100)


def adaptive_percentage(nodes: int) -> int:
    """What percentageOfNodesToScore 0 means for ``nodes`` nodes (upstream's formula)."""
    if nodes < 100:
        return 100
    return max(5, 50 - nodes // 125)


def effective_percentage(percentage: int, nodes: int) -> int:
    """The share of ``nodes`` actually scored: upstream scores at least 100 nodes."""
    wanted = adaptive_percentage(nodes) if percentage == 0 else percentage
    if nodes <= 0:
        return wanted
    return min(100, max(wanted, math.ceil(100 * 100 / nodes)))


def label(percentage: int, nodes: int) -> str:
    """``"adaptive (10 %)"``, ``"25 %"``, or ``"50 % (all nodes)"`` on a small cluster."""
    text = f"adaptive ({adaptive_percentage(nodes)} %)" if percentage == 0 else f"{percentage} %"
    if percentage != 100 and effective_percentage(percentage, nodes) == 100:
        text += " (all nodes)"
    return text


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    """One run of the sweep, reduced to what the rule and the table need."""

    percentage: int
    effective: int
    label: str
    average: float | None
    overall: float | None
    p50: float | None
    p99: float | None
    latency_p50: float | None
    latency_p99: float | None
    regret_mean: float | None
    regret_p99: float | None
    zero_regret: float | None
    balance: float | None
    cpu_ms_per_pod: float | None
    completed: bool

    @property
    def speed(self) -> float | None:
        """The throughput the rule compares: the Average, else the overall rate."""
        return self.average if self.average is not None else self.overall

    def to_json(self) -> dict[str, Any]:
        return {
            "percentage": self.percentage,
            "effective_percentage": self.effective,
            "label": self.label,
            "average": self.average,
            "overall": self.overall,
            "p50": self.p50,
            "p99": self.p99,
            "latency_p50": self.latency_p50,
            "latency_p99": self.latency_p99,
            "regret_mean": self.regret_mean,
            "regret_p99": self.regret_p99,
            "zero_regret_fraction": self.zero_regret,
            "balance_cpu_stddev": self.balance,
            "scheduler_cpu_ms_per_pod": self.cpu_ms_per_pod,
            "completed": self.completed,
        }


def point(percentage: int, result: RunResult, nodes: int) -> Point:
    """Reduce one run to a :class:`Point`."""
    phase = result.measured
    summary = phase.throughput()
    latency = phase.latency()
    q = result.quality
    return Point(
        percentage=percentage,
        effective=effective_percentage(percentage, nodes),
        label=label(percentage, nodes),
        average=summary.average,
        overall=phase.overall(),
        p50=summary.p50,
        p99=summary.p99,
        latency_p50=latency.p50,
        latency_p99=latency.p99,
        regret_mean=q.regret_mean if q is not None else None,
        regret_p99=q.regret_p99 if q is not None else None,
        zero_regret=q.zero_regret_fraction if q is not None else None,
        balance=q.balance_cpu_stddev if q is not None else None,
        cpu_ms_per_pod=phase.cpu_ms_per_pod("scheduler"),
        completed=phase.completed,
    )


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The chosen percentage (0 = adaptive) and why, in a sentence or two."""

    percentage: int
    label: str
    rule: int
    reason: str


def recommend(points: Sequence[Point], *, within: float, max_regret: float) -> Recommendation:
    """Apply the rule of the module docstring.

    Parameters
    ----------
    within : float
        Percent of the best throughput a run may lose and still count as "as fast".
    max_regret : float
        Largest acceptable mean regret, total-score points.
    """
    measured = [p for p in points if p.completed and p.speed is not None]
    if not measured:
        raise ValueError("no run completed: nothing to recommend")
    best = max(p.speed or 0.0 for p in measured)
    floor = best * (1 - within / 100)
    fast = [p for p in measured if (p.speed or 0.0) >= floor]
    full = [p for p in fast if p.effective == 100]
    if full:
        chosen = max(full, key=lambda p: (p.percentage == 100, p.speed or 0.0))
        return Recommendation(
            chosen.percentage,
            chosen.label,
            1,
            f"scoring every node is within {within:g} % of the best throughput "
            f"({chosen.speed:,.0f} vs {best:,.0f} pods/s): sampling buys no speed here, and "
            "full scoring places every pod on a best node",
        )
    good = [p for p in fast if p.regret_mean is not None and p.regret_mean <= max_regret]
    if good:
        chosen = max(good, key=lambda p: (p.effective, p.speed or 0.0))
        return Recommendation(
            chosen.percentage,
            chosen.label,
            2,
            f"{chosen.label} is within {within:g} % of the best throughput "
            f"({chosen.speed:,.0f} vs {best:,.0f} pods/s) with a mean regret of "
            f"{chosen.regret_mean:.2f} points (limit {max_regret:g}); of such settings it "
            "scores the most nodes",
        )
    chosen = max(measured, key=lambda p: p.speed or 0.0)
    regret = "unknown" if chosen.regret_mean is None else f"{chosen.regret_mean:.2f}"
    return Recommendation(
        chosen.percentage,
        chosen.label,
        3,
        f"no setting near the best throughput keeps the mean regret within {max_regret:g} "
        f"points; {chosen.label} is the fastest ({chosen.speed:,.0f} pods/s, mean regret "
        f"{regret}): raise --max-regret or accept slower scheduling for better placements",
    )
