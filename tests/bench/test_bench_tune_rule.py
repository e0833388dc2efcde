"""The tuner's recommendation rule (asched.benchmark.tune), as a table."""

from __future__ import annotations

import pytest

from asched.benchmark.tune import Point, adaptive_percentage, effective_percentage, recommend


def pt(percentage: int, speed: float, regret: float | None, *, nodes: int = 5000) -> Point:
    effective = adaptive_percentage(nodes) if percentage == 0 else percentage
    return Point(
        percentage=percentage,
        effective=effective,
        label=f"{percentage}",
        average=speed,
        overall=speed,
        p50=None,
        p99=None,
        latency_p50=None,
        latency_p99=None,
        regret_mean=regret,
        regret_p99=None,
        zero_regret=None,
        balance=None,
        cpu_ms_per_pod=None,
        completed=True,
    )


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        # upstream: 50 - nodes/125, at least 5; every node below 100 nodes.
        pytest.param(50, 100, id="tiny cluster"),
        pytest.param(500, 46, id="500 nodes: 50 - 4"),
        pytest.param(5000, 10, id="5000 nodes: 50 - 40"),
        pytest.param(15000, 5, id="15000 nodes: 50 - 120 < 5"),
    ],
)
def test_adaptive_percentage(nodes: int, expected: int) -> None:
    assert adaptive_percentage(nodes) == expected


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        # At least 100 nodes are scored: 5 % of 1000 = 50 < 100, so 100/1000 = 10 %.
        pytest.param(5, 1000, 10, id="the 100-node floor"),
        # 10 % of 5000 = 500 nodes >= 100: as asked.
        pytest.param(10, 5000, 10, id="as asked"),
        # 7 nodes: every setting scores all of them.
        pytest.param(50, 7, 100, id="small cluster"),
        # Adaptive at 5000 nodes: 10 % (500 nodes).
        pytest.param(0, 5000, 10, id="adaptive"),
    ],
)
def test_effective_percentage(percentage: int, nodes: int, expected: int) -> None:
    assert effective_percentage(percentage, nodes) == expected


@pytest.mark.parametrize(
    ("points", "within", "max_regret", "percentage", "rule"),
    [
        # Best 1000; 100 % runs at 950 >= 1000 * (1 - 0.10) = 900: rule 1 picks 100.
        pytest.param(
            [pt(0, 1000, 2.0), pt(50, 980, 0.5), pt(100, 950, 0.0)],
            10,
            1.0,
            100,
            1,
            id="sampling buys nothing: 100",
        ),
        # Best 1000; 100 % at 600 < 900. Within 900: adaptive (10 %, regret 2.0 > 1.0) and
        # 25 (regret 0.4): the acceptable one scoring the most nodes is 25.
        pytest.param(
            [pt(0, 1000, 2.0), pt(25, 920, 0.4), pt(50, 800, 0.1), pt(100, 600, 0.0)],
            10,
            1.0,
            25,
            2,
            id="fast and good enough",
        ),
        # Same, but 5 % and 10 % both qualify: the larger percentage wins.
        pytest.param(
            [pt(5, 1000, 0.5), pt(10, 990, 0.2), pt(100, 500, 0.0)],
            10,
            1.0,
            10,
            2,
            id="among acceptable, the most nodes",
        ),
        # Nothing near the best (5 %, 1000) has regret <= 1.0: rule 3 picks the fastest.
        pytest.param(
            [pt(5, 1000, 3.0), pt(10, 950, 2.0), pt(100, 400, 0.0)],
            10,
            1.0,
            5,
            3,
            id="nothing acceptable: the fastest, with a warning",
        ),
        # A looser limit (within 60 %: floor 400) lets 100 % count as fast.
        pytest.param(
            [pt(5, 1000, 3.0), pt(100, 400, 0.0)],
            60,
            1.0,
            100,
            1,
            id="looser speed tolerance",
        ),
    ],
)
def test_recommend(
    points: list[Point], within: float, max_regret: float, percentage: int, rule: int
) -> None:
    choice = recommend(points, within=within, max_regret=max_regret)
    assert (choice.percentage, choice.rule) == (percentage, rule)
    assert choice.reason


def test_nothing_completed() -> None:
    with pytest.raises(ValueError, match="no run completed"):
        recommend([], within=10, max_regret=1)
