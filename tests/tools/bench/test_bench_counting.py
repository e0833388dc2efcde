"""scheduler_perf's throughput semantics (util.go throughputCollector), as table tests.

Every expected number is derived in the comment above its case.
"""

from __future__ import annotations

import pytest

from asched.tools.bench.counting import (
    ThroughputCollector,
    auto_interval,
    latency_summary,
    overall_rate,
    percentile,
    samples_from_times,
    summarize,
)


@pytest.mark.parametrize(
    ("ticks", "expected"),
    [
        # t=1 sees 50 pods: the first non-zero tick is only the baseline (skipped).
        # Then +100 per 1 s tick: 100, 100, 100 pods/s.
        pytest.param(
            [(1.0, 50), (2.0, 150), (3.0, 250), (4.0, 350)],
            [100.0, 100.0, 100.0],
            id="steady rate, first sample skipped",
        ),
        # Ticks while nothing is scheduled yet are ignored; t=3 (5 pods) is the baseline;
        # t=4: 15 - 5 = 10 pods in 1 s.
        pytest.param(
            [(1.0, 0), (2.0, 0), (3.0, 5), (4.0, 15)],
            [10.0],
            id="zero ticks before the first pod are ignored",
        ),
        # Baseline 10 at t=1; t=2 adds nothing (skipped = 1, no sample); t=3: 70 - 10 = 60
        # pods over 3 - 1 = 2 s = 30 pods/s, recorded skipped + 1 = 2 times; t=4: 30/1 = 30.
        pytest.param(
            [(1.0, 10), (2.0, 10), (3.0, 70), (4.0, 100)],
            [30.0, 30.0, 30.0],
            id="an empty interval is merged into the next and recorded twice",
        ),
        # Baseline 1 at t=1; t=2, t=3 empty (skipped = 2); t=4: 7 - 1 = 6 pods over 3 s
        # = 2 pods/s, recorded 3 times.
        pytest.param(
            [(1.0, 1), (2.0, 1), (3.0, 1), (4.0, 7)],
            [2.0, 2.0, 2.0],
            id="two empty intervals: recorded three times",
        ),
        # A late tick: baseline 10 at t=1.0; t=2.5: 40 - 10 = 30 pods over the actual
        # 1.5 s = 20 pods/s (actual time stamps, not the nominal interval).
        pytest.param(
            [(1.0, 10), (2.5, 40)],
            [20.0],
            id="throughput uses the actual elapsed time",
        ),
        # Only the baseline tick: no sample at all.
        pytest.param([(1.0, 500)], [], id="one tick gives no sample"),
        # Trailing empty ticks are never recorded (nothing follows them).
        pytest.param(
            [(1.0, 5), (2.0, 25), (3.0, 25), (4.0, 25)],
            [20.0],
            id="trailing empty intervals record nothing",
        ),
    ],
)
def test_collector_samples(ticks: list[tuple[float, int]], expected: list[float]) -> None:
    collector = ThroughputCollector()
    for now, scheduled in ticks:
        collector.tick(now, scheduled)
    assert collector.samples == pytest.approx(expected)


def test_merged_interval_is_one_interval_repeated() -> None:
    # As the "merged" case above: (1, 3] with 60 pods, recorded twice; then (3, 4].
    collector = ThroughputCollector()
    for now, scheduled in [(1.0, 10), (2.0, 10), (3.0, 70), (4.0, 100)]:
        collector.tick(now, scheduled)
    assert [(i.start, i.end, i.pods, i.repeat) for i in collector.intervals] == [
        (1.0, 3.0, 60, 2),
        (3.0, 4.0, 30, 1),
    ]
    assert collector.intervals[0].throughput == pytest.approx(30.0)


@pytest.mark.parametrize(
    ("samples", "average", "p50", "p90", "p99"),
    [
        # n = 10, sorted 10..100. Index ceil(n*p/100) - 1: p50 -> ceil(5) - 1 = 4 -> 50;
        # p90 -> ceil(9) - 1 = 8 -> 90; p99 -> ceil(9.9) - 1 = 9 -> 100. Mean 550/10 = 55.
        pytest.param(
            [100, 90, 80, 70, 60, 50, 40, 30, 20, 10], 55.0, 50.0, 90.0, 100.0, id="ten samples"
        ),
        # n = 3, sorted 100, 200, 300: p50 -> ceil(1.5) - 1 = 1 -> 200; p90 -> ceil(2.7) - 1
        # = 2 -> 300; p99 -> ceil(2.97) - 1 = 2 -> 300. Mean 200.
        pytest.param([300, 100, 200], 200.0, 200.0, 300.0, 300.0, id="three samples"),
        # n = 1: every percentile is index ceil(p/100) - 1 = 0.
        pytest.param([42], 42.0, 42.0, 42.0, 42.0, id="one sample"),
        # n = 4, sorted 1, 2, 3, 4: p50 -> ceil(2) - 1 = 1 -> 2 (not the interpolated 2.5);
        # p90 -> ceil(3.6) - 1 = 3 -> 4. Mean 2.5.
        pytest.param([4, 3, 2, 1], 2.5, 2.0, 4.0, 4.0, id="nearest rank, no interpolation"),
    ],
)
def test_summary(samples: list[float], average: float, p50: float, p90: float, p99: float) -> None:
    summary = summarize(samples)
    assert summary.samples == len(samples)
    assert summary.average == pytest.approx(average)
    assert (summary.p50, summary.p90, summary.p99) == (p50, p90, p99)


def test_summary_of_nothing() -> None:
    summary = summarize([])
    assert summary.samples == 0
    assert summary.average is None
    assert summary.p99 is None


def test_percentile_index() -> None:
    # n = 200, p = 99: ceil(198) - 1 = 197 (the 198th smallest).
    values = list(range(200))
    assert percentile(values, 99) == 197


@pytest.mark.parametrize(
    ("times", "expected"),
    [
        # The last bind is at 3.3, so ticks are at 1, 2, 3 (the partial interval after 3
        # is dropped: the collector stops when the last pod is scheduled).
        # t=1: 1 pod (0.5) -> baseline; t=2: 3 (1.2, 1.3) -> 2/1 = 2; t=3: 4 (2.9) -> 1.
        pytest.param([0.5, 1.2, 1.3, 2.9, 3.1, 3.2, 3.3], [2.0, 1.0], id="tail dropped"),
        # t=1: 2 pods -> baseline; t=2, t=3: still 2 (skipped twice); t=4: 5 (3.5, 3.6 and
        # 4.0, bound exactly at the tick, counts) -> 3 pods over 3 s = 1, recorded 3 times.
        pytest.param([0.5, 0.6, 3.5, 3.6, 4.0], [1.0, 1.0, 1.0], id="gap merged"),
        # Everything bound before the first tick: no tick happens at all.
        pytest.param([0.1, 0.2, 0.9], [], id="shorter than one interval"),
        # Unsorted input is fine: same as the first case.
        pytest.param([3.3, 0.5, 3.1, 1.3, 2.9, 1.2, 3.2], [2.0, 1.0], id="any order"),
    ],
)
def test_samples_from_bind_times(times: list[float], expected: list[float]) -> None:
    assert samples_from_times(times, origin=0.0).samples == pytest.approx(expected)


def test_samples_from_bind_times_with_an_origin() -> None:
    # Origin 10, last bind 12.0: ticks at 11 and 12. t=11: 1 pod (10.5) is the baseline;
    # t=12: 4 pods (11.5, 11.7 and 12.0, bound at the tick) -> 3 pods in 1 s.
    times = [10.5, 11.5, 11.7, 12.0]
    assert samples_from_times(times, origin=10.0).samples == pytest.approx([3.0])


def test_latency_summary() -> None:
    # Sorted 0.1 .. 1.0 (n = 10): p50 -> index 4 -> 0.5; p99 -> index 9 -> 1.0; mean 0.55.
    latencies = [round(0.1 * k, 1) for k in range(10, 0, -1)]
    summary = latency_summary(latencies)
    assert summary.p50 == pytest.approx(0.5)
    assert summary.p99 == pytest.approx(1.0)
    assert summary.mean == pytest.approx(0.55)
    assert summary.max == pytest.approx(1.0)


def test_overall_rate() -> None:
    # 4 pods, last bound 2 s after the origin: 2 pods/s.
    assert overall_rate([0.5, 1.0, 1.5, 2.0], 0.0) == pytest.approx(2.0)
    assert overall_rate([], 0.0) is None


@pytest.mark.parametrize(
    ("duration", "expected"),
    [
        # 6 s or more: scheduler_perf's own 1 s, whatever the length
        pytest.param(6.0, 1.0, id="6 s is long enough for 1 s samples"),
        pytest.param(120.0, 1.0, id="a benchmark-sized run keeps 1 s"),
        # 5.9 s: the widest finer width with >= 10 ticks: 5.9 / 0.5 = 11.8 ticks
        pytest.param(5.9, 0.5, id="just under 6 s: half-second samples"),
        # 4.9 s: 4.9 / 0.5 = 9.8 < 10, 4.9 / 0.2 = 24.5 ticks
        pytest.param(4.9, 0.2, id="under 5 s: 0.2 s"),
        # 0.9 s (the README's first run): 0.9 / 0.1 = 9 < 10, 0.9 / 0.05 = 18 ticks
        pytest.param(0.9, 0.05, id="the README's first run"),
        # 0.1 s (a fast bind ceiling): 0.1 / 0.01 = 10 ticks
        pytest.param(0.1, 0.01, id="a 0.1 s ceiling phase"),
        # 0.02 s: even 0.01 s gives 2 ticks; the finest width is the floor
        pytest.param(0.02, 0.01, id="shorter still: the finest width"),
    ],
)
def test_auto_interval(duration: float, expected: float) -> None:
    assert auto_interval(duration) == expected


def test_short_phase_gets_samples_at_its_width() -> None:
    # 100 pods bound evenly over 0.9 s (one every 9 ms): at 1 s there is no tick at all;
    # at auto_interval(0.9) = 0.05 s there are floor(0.9 / 0.05) = 18 ticks, the first is
    # the baseline, so 17 samples of about 0.05 / 0.009 = 5.6 pods each = ~111 pods/s.
    times = [0.009 * (k + 1) for k in range(100)]
    assert samples_from_times(times, origin=0.0).samples == []
    width = auto_interval(times[-1])
    collector = samples_from_times(times, origin=0.0, interval=width)
    assert len(collector.samples) == 17
    assert summarize(collector.samples).average == pytest.approx(100 / 0.9, rel=0.1)
