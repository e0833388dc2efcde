"""Choosing percentageOfNodesToScore from measurements: settings, repeats, and the rule.

**Settings, not percentages.** What a percentage does on a cluster is decided by the
sampler's own function, :func:`asched.engine.selection.num_feasible_nodes_to_find`
(upstream's ``numFeasibleNodesToFind``; the rule lives there and only there): below 100
nodes, or at 100 %, every node; otherwise ``nodes * percentage // 100`` feasible nodes but
at least 100, adaptive (0) meaning ``max(5, 50 - nodes // 125)`` %. Percentages that look
for the same number of nodes are one setting (:func:`settings`): on 20 nodes 10 %, 50 %
and 100 % all score all 20. A setting is measured once per repeat, not once per member, and
is recommended by its most natural member (:attr:`Setting.percentage`: 100, else adaptive,
else the largest, whose nominal share is the true one).

**The rule** (:func:`recommend`, a pure function of the measured runs; docs/benchmarks.md
states it for users). Per setting, over its runs: throughput = the median, noise = the
range (max - min), quality = the median of the runs' mean regret. The choice starts at the
setting that scores the most nodes (the best placements), and the settings that score
fewer are taken in turn, most nodes first; one replaces the current choice only when

1. it is **clearly faster**: its median beats the choice's by more than
   ``max(its range, the choice's range, min_gain % of the choice's median)``; and
2. its **placements are good enough**: its mean regret is at most ``max_regret`` points.

Otherwise the choice stays, and the reason says why (the difference is within noise, the
setting is slower, or its regret is too high). Settings whose runs did not all complete
are not considered. Throughput is scheduler_perf's Average when every run has one, else
the overall rate (measured pods / measuring time) for all: like is compared with like.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from asched.engine import selection
from asched.tools.bench.results import RunResult

Metric = Literal["average", "overall"]
Outcome = Literal["faster", "noise", "slower", "regret"]

#: How a metric is named in the reason: scheduler_perf's Average, or pods / measuring time.
METRIC_NAMES: dict[Metric, str] = {"average": "Average", "overall": "overall rate"}


def nodes_scored(percentage: int, nodes: int) -> int:
    """Feasible nodes the scheduler looks for among ``nodes`` at ``percentage`` (0 = adaptive)."""
    return selection.num_feasible_nodes_to_find(nodes, percentage)


def percentage_text(percentage: int, nodes: int) -> str:
    """``"25 %"``, ``"adaptive (10 %)"``, or ``"adaptive"`` where it means every node."""
    if percentage != 0:
        return f"{percentage} %"
    if nodes < selection.MIN_FEASIBLE_NODES_TO_FIND:
        return "adaptive"
    return f"adaptive ({selection.adaptive_percentage(nodes)} %)"


def setting_value(percentage: int) -> str:
    """The value to configure: ``"0 (adaptive)"`` or ``"25"``."""
    return "0 (adaptive)" if percentage == 0 else str(percentage)


@dataclass(frozen=True, slots=True)
class Setting:
    """Requested percentages (ascending) that look for the same ``scored`` of ``nodes`` nodes."""

    percentages: tuple[int, ...]
    nodes: int
    scored: int

    @property
    def percentage(self) -> int:
        """The member to recommend: 100, else adaptive (0, the default), else the largest."""
        for natural in (100, 0):
            if natural in self.percentages:
                return natural
        return max(self.percentages)

    @property
    def scope(self) -> str:
        """``"all 20 nodes"`` or ``"500 of 5,000 nodes"``."""
        if self.scored >= self.nodes:
            return f"all {self.nodes:,} nodes"
        return f"{self.scored:,} of {self.nodes:,} nodes"

    @property
    def label(self) -> str:
        """``"10 %, 50 %, 100 % -> all 20 nodes"``."""
        members = ", ".join(percentage_text(p, self.nodes) for p in self.percentages)
        return f"{members} -> {self.scope}"


def settings(percentages: Iterable[int], nodes: int) -> list[Setting]:
    """Group ``percentages`` by the nodes they score on ``nodes`` nodes; fewest nodes first."""
    groups: dict[int, list[int]] = {}
    for pct in dict.fromkeys(percentages):
        groups.setdefault(nodes_scored(pct, nodes), []).append(pct)
    return [Setting(tuple(sorted(pcts)), nodes, scored) for scored, pcts in sorted(groups.items())]


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    """One run at ``percentage``, reduced to what the rule and the table need.

    Throughputs in pods/s, latencies in seconds, regrets in total-score points;
    ``nodes`` is the count of ready nodes the run saw at its start (None: not recorded).
    """

    percentage: int
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
    nodes: int | None = None

    def speed(self, metric: Metric) -> float | None:
        """The throughput the rule compares, pods/s."""
        return self.average if metric == "average" else self.overall

    def to_json(self) -> dict[str, Any]:
        return {
            "percentage": self.percentage,
            "nodes": self.nodes,
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


def point(percentage: int, result: RunResult) -> Point:
    """Reduce one run at ``percentage`` to a :class:`Point`."""
    phase = result.measured
    summary = phase.throughput()
    latency = phase.latency()
    q = result.quality
    nodes = result.init.get("nodes")
    return Point(
        percentage=percentage,
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
        nodes=int(nodes) if nodes is not None else None,
    )


@dataclass(frozen=True, slots=True)
class Measured:
    """A setting and its runs (one :class:`Point` per repeat)."""

    setting: Setting
    runs: tuple[Point, ...]

    @property
    def completed(self) -> bool:
        """At least one run, and every run bound every measured pod."""
        return bool(self.runs) and all(r.completed for r in self.runs)

    def figure(self, get: Callable[[Point], float | None]) -> float | None:
        """The median of ``get`` over the runs that have it (None: none has)."""
        values = [v for v in map(get, self.runs) if v is not None]
        return statistics.median(values) if values else None

    def speeds(self, metric: Metric) -> list[float]:
        """Each run's throughput, pods/s (runs without one left out)."""
        return [v for v in (r.speed(metric) for r in self.runs) if v is not None]

    def speed(self, metric: Metric) -> float | None:
        """Median throughput over the runs, pods/s."""
        return self.figure(lambda r: r.speed(metric))

    def spread(self, metric: Metric) -> float:
        """Run-to-run range of the throughput (max - min), pods/s; 0 for one run."""
        values = self.speeds(metric)
        return max(values) - min(values) if values else 0.0

    @property
    def regret(self) -> float | None:
        """Median of the runs' mean regrets, points; None if any run lacks one."""
        if not self.runs or any(r.regret_mean is None for r in self.runs):
            return None
        return self.figure(lambda r: r.regret_mean)


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """A setting that scores fewer nodes (``lower``) against the current choice (``higher``).

    Speeds and ranges in pods/s; ``floor`` = min_gain % of the higher median; ``regret``
    is the lower setting's median mean regret in points.
    """

    lower: Setting
    higher: Setting
    metric: Metric
    lower_speed: float
    higher_speed: float
    lower_range: float
    higher_range: float
    floor: float
    min_gain: float
    regret: float | None
    max_regret: float
    outcome: Outcome

    @property
    def gain(self) -> float:
        """Lower median minus higher median, pods/s."""
        return self.lower_speed - self.higher_speed

    @property
    def noise(self) -> float:
        """The gain a setting must beat: the larger range, at least the floor, pods/s."""
        return max(self.lower_range, self.higher_range, self.floor)

    def text(self) -> str:
        """One clause naming every number compared."""
        versus = f"{self.lower.label} vs {self.higher.label}"
        medians = (
            f"median {METRIC_NAMES[self.metric]} {self.lower_speed:,.0f} vs "
            f"{self.higher_speed:,.0f} pods/s, "
            f"{self.gain:+,.0f}"
        )
        noise = (
            f"the noise of {self.noise:,.0f} (the largest of the run-to-run ranges "
            f"{self.lower_range:,.0f} and {self.higher_range:,.0f} and {self.min_gain:g} % of "
            f"{self.higher_speed:,.0f} = {self.floor:,.0f})"
        )
        if self.outcome == "faster":
            return (
                f"{versus}: {medians}, above {noise}, and a mean regret of "
                f"{self.regret:.2f} points (limit {self.max_regret:g}): clearly faster, "
                "good enough placements"
            )
        if self.outcome == "regret":
            quality = (
                "its placement quality was not measured"
                if self.regret is None
                else f"its mean regret of {self.regret:.2f} points is above the limit of "
                f"{self.max_regret:g}"
            )
            return f"{versus}: {medians}, above {noise}, but {quality}"
        if self.outcome == "slower":
            return f"{versus}: {medians}, beyond {noise}: slower"
        return f"{versus}: {medians}, within {noise}: not clearly faster"


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The chosen setting and why; :attr:`percentage` is the value to configure."""

    setting: Setting
    clauses: tuple[str, ...]
    comparisons: tuple[Comparison, ...]

    @property
    def percentage(self) -> int:
        """The setting's natural member (0 = adaptive)."""
        return self.setting.percentage

    @property
    def reason(self) -> str:
        """The clauses as one sentence."""
        return "; ".join(self.clauses)


def metric_for(measured: Sequence[Measured]) -> Metric:
    """``average`` when every run has scheduler_perf's Average, else ``overall``."""
    runs = [r for m in measured for r in m.runs]
    return "average" if runs and all(r.average is not None for r in runs) else "overall"


def compare(
    lower: Measured, higher: Measured, metric: Metric, *, min_gain: float, max_regret: float
) -> Comparison:
    """Judge ``lower`` (fewer nodes scored) against the current choice ``higher``."""
    lower_speed, higher_speed = lower.speed(metric), higher.speed(metric)
    if lower_speed is None or higher_speed is None:
        raise ValueError("compare: both settings need a measured throughput")
    comparison = Comparison(
        lower=lower.setting,
        higher=higher.setting,
        metric=metric,
        lower_speed=lower_speed,
        higher_speed=higher_speed,
        lower_range=lower.spread(metric),
        higher_range=higher.spread(metric),
        floor=higher_speed * min_gain / 100,
        min_gain=min_gain,
        regret=lower.regret,
        max_regret=max_regret,
        outcome="noise",
    )
    gain, noise = comparison.gain, comparison.noise
    outcome: Outcome
    if gain > noise:
        good = lower.regret is not None and lower.regret <= max_regret
        outcome = "faster" if good else "regret"
    elif gain < -noise:
        outcome = "slower"
    else:
        outcome = "noise"
    return dataclasses.replace(comparison, outcome=outcome)


def recommend(
    measured: Sequence[Measured], *, min_gain: float, max_regret: float
) -> Recommendation:
    """Apply the rule of the module docstring.

    Parameters
    ----------
    measured : sequence of Measured
        Every setting with its runs, in any order.
    min_gain : float
        Percent of the current choice's median throughput that a gain must exceed even
        when the runs agree closely (the noise floor; it alone applies to single runs).
    max_regret : float
        Largest acceptable mean regret of a setting that scores fewer nodes, in
        total-score points.

    Raises
    ------
    ValueError
        No setting completed all its runs.
    """
    complete = [m for m in measured if m.completed]
    metric = metric_for(complete)
    considered = [m for m in complete if len(m.speeds(metric)) == len(m.runs)]
    if not considered:
        raise ValueError("no setting completed all its runs: nothing to recommend")
    order = sorted(considered, key=lambda m: m.setting.scored, reverse=True)
    choice = order[0]
    comparisons: list[Comparison] = []
    for lower in order[1:]:
        comparison = compare(lower, choice, metric, min_gain=min_gain, max_regret=max_regret)
        comparisons.append(comparison)
        if comparison.outcome == "faster":
            choice = lower
    top = order[0].setting
    value = setting_value(choice.setting.percentage)
    if len(measured) == 1:
        head = (
            f"every percentage measured scores {top.scope} here ({top.label}): one setting, "
            f"nothing to compare; {value} names it most plainly"
        )
    elif not comparisons:
        head = f"{top.label} is the only setting whose runs all completed"
    else:
        head = (
            f"starting from {top.label} (the most nodes scored: the best placements), a "
            "setting that scores fewer replaces the choice only when it is clearly faster "
            "with good enough placements"
        )
    clauses = [head, *(c.text() for c in comparisons)]
    if comparisons:
        clauses.append(f"so {value}, which scores {choice.setting.scope}")
    kept = {id(m) for m in considered}
    left_out = [m.setting.label for m in measured if id(m) not in kept]
    if left_out:
        clauses.append(f"not considered (runs incomplete): {', '.join(left_out)}")
    if choice.regret is not None and choice.regret > max_regret:
        clauses.append(
            f"note: {choice.setting.label} itself has a mean regret of {choice.regret:.2f} "
            f"points, above the limit of {max_regret:g}: add higher percentages to the sweep"
        )
    return Recommendation(choice.setting, tuple(clauses), tuple(comparisons))
