"""The per-second ring of the "now" page: counts land in their second, old seconds read 0."""

from __future__ import annotations

import pytest

from asched.debug.rates import Rates


class Clock:
    def __init__(self) -> None:
        self.now = 1000.25

    def __call__(self) -> float:
        return self.now


def test_counts_and_latencies_per_second() -> None:
    clock = Clock()
    rates = Rates(window=10, clock=clock)
    rates.attempt("scheduled", 0.002)
    rates.attempt("unschedulable", 0.004)
    rates.bound(1.5)
    clock.now += 1  # second 1001
    rates.attempt("scheduled", 0.010)
    series = rates.series(3)
    assert [row["ago"] for row in series] == [2, 1, 0]
    assert series[0]["scheduled"] == 0
    assert series[0]["attemptMean"] is None
    # second 1000: 2 attempts, (0.002 + 0.004) / 2 = 0.003 s mean, 0.004 s max; 1 bound
    assert series[1]["scheduled"] == 1
    assert series[1]["unschedulable"] == 1
    assert series[1]["attemptMean"] == pytest.approx(0.003)
    assert series[1]["attemptMax"] == pytest.approx(0.004)
    assert series[1]["bound"] == 1
    assert series[1]["e2eMean"] == pytest.approx(1.5)
    assert series[2]["scheduled"] == 1
    totals = rates.totals(3)
    # 3 attempts over 3 seconds = 1/s; mean (0.002 + 0.004 + 0.010) / 3
    assert totals["attemptsPerSecond"] == pytest.approx(1.0)
    assert totals["attemptMean"] == pytest.approx(0.016 / 3)
    assert totals["attemptMax"] == pytest.approx(0.010)
    assert totals["bound"] == 1


def test_a_second_that_comes_round_again_starts_from_zero() -> None:
    clock = Clock()
    rates = Rates(window=10, clock=clock)
    rates.attempt("error", 0.5)
    clock.now += 10  # the same slot, ten seconds later
    assert rates.series(10)[0]["error"] == 0  # the old second is out of the window
    rates.attempt("scheduled", 0.1)
    [current] = rates.series(1)
    assert (current["error"], current["scheduled"]) == (0, 1)
    assert current["attemptMax"] == pytest.approx(0.1)


@pytest.mark.parametrize("window", [pytest.param(0, id="zero"), pytest.param(-5, id="negative")])
def test_window_must_be_positive(window: int) -> None:
    with pytest.raises(ValueError, match="window: expected at least 1 second"):
        Rates(window=window)
