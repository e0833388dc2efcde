"""The tuner's settings and recommendation rule (asched.tools.bench.tune), as tables.

No timing here: the rule is a pure function of measured runs, fed made-up throughputs.
"""

from __future__ import annotations

import pytest

from asched.tools.bench.tune import Measured, Point, Setting, recommend, settings


def run(percentage: int, speed: float, regret: float | None, *, completed: bool = True) -> Point:
    """One run: ``speed`` pods/s (Average and overall alike), ``regret`` mean points."""
    return Point(
        percentage=percentage,
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
        completed=completed,
    )


def sweep(
    nodes: int, requested: list[int], runs: dict[int, tuple[list[float], float | None]]
) -> list[Measured]:
    """Group ``requested`` on ``nodes`` nodes; ``runs`` gives each group's runs by one member.

    Every group must get exactly one entry: a test that expects two percentages to be one
    setting keys only one of them, and fails here if they were not grouped.
    """
    measured = []
    for setting in settings(requested, nodes):
        keys = [p for p in runs if p in setting.percentages]
        assert len(keys) == 1, f"{setting.label}: runs given for {keys}"
        speeds, regret = runs[keys[0]]
        measured.append(
            Measured(setting, tuple(run(setting.percentage, s, regret) for s in speeds))
        )
    return measured


@pytest.mark.parametrize(
    ("requested", "nodes", "expected", "natural", "label"),
    [
        # Under 100 nodes every percentage scores every node: one setting, named 100.
        pytest.param(
            [10, 50, 100],
            20,
            [((10, 50, 100), 20)],
            100,
            "10 %, 50 %, 100 % -> all 20 nodes",
            id="20 nodes: 10, 50, 100 % are one setting",
        ),
        # Adaptive under 100 nodes is every node too; without 100 in the group, adaptive.
        pytest.param(
            [25, 0], 50, [((0, 25), 50)], 0, "adaptive, 25 % -> all 50 nodes", id="50 nodes"
        ),
        # 1000 nodes: 5 % = 1000 * 5 // 100 = 50, raised to the floor of 100; 10 % = 100:
        # one setting, named 10 (its nominal share is the true one). 50 % = 500, 100 % = all.
        pytest.param(
            [5, 10, 50, 100],
            1000,
            [((5, 10), 100), ((50,), 500), ((100,), 1000)],
            10,
            "5 %, 10 % -> 100 of 1,000 nodes",
            id="the 100-node floor joins 5 and 10 %",
        ),
        # 5000 nodes: adaptive = 50 - 5000 // 125 = 10 %, 500 nodes, the same as 10 %.
        pytest.param(
            [10, 0, 25],
            5000,
            [((0, 10), 500), ((25,), 1250)],
            0,
            "adaptive (10 %), 10 % -> 500 of 5,000 nodes",
            id="5000 nodes: adaptive is 10 %",
        ),
        # 500 nodes: adaptive = 50 - 500 // 125 = 46 %, 500 * 46 // 100 = 230; 50 % = 250.
        pytest.param(
            [0, 50],
            500,
            [((0,), 230), ((50,), 250)],
            0,
            "adaptive (46 %) -> 230 of 500 nodes",
            id="500 nodes: adaptive (46 %) and 50 % differ",
        ),
    ],
)
def test_settings(
    requested: list[int],
    nodes: int,
    expected: list[tuple[tuple[int, ...], int]],
    natural: int,
    label: str,
) -> None:
    groups = settings(requested, nodes)
    assert [(s.percentages, s.scored) for s in groups] == expected
    assert (groups[0].percentage, groups[0].label) == (natural, label)


CASES = [
    # The finding: on 20 nodes 10, 50 and 100 % all score all 20 nodes. One setting, run
    # three times; the old tool ran each percentage once (640, 610, 515 pods/s) and named
    # the fastest, 10 %, "scoring every node".
    pytest.param(
        20,
        [10, 50, 100],
        {100: ([640, 610, 515], 0.0)},
        100,
        "every percentage measured scores all 20 nodes here (10 %, 50 %, 100 % -> all 20 nodes)",
        id="equivalent settings collapse: 100, all 20 nodes",
    ),
    # 25 %: median of 1300, 1000, 1250 = 1250, range 300. 100 %: median of 1000, 1280, 1200
    # = 1200, range 280. Gain +50 <= max(300, 280, 5 % of 1200 = 60) = 300: noise, 100 %.
    pytest.param(
        5000,
        [25, 100],
        {25: ([1300, 1000, 1250], 0.2), 100: ([1000, 1280, 1200], 0.0)},
        100,
        "+50, within the noise of 300 (the largest of the run-to-run ranges 300 and 280 and "
        "5 % of 1,200 = 60): not clearly faster",
        id="difference within noise: the higher percentage",
    ),
    # 10 %: median 1085, range 10. 100 %: median 1005, range 10. Gain +80 > max(10, 10,
    # 5 % of 1005 = 50.25) = 50.25, regret 0.0 <= 1.0: 10 % wins (an 8 % gain, far above
    # the noise).
    pytest.param(
        5000,
        [10, 100],
        {10: ([1080, 1085, 1090], 0.0), 100: ([1000, 1005, 1010], 0.0)},
        10,
        "10 % -> 500 of 5,000 nodes vs 100 % -> all 5,000 nodes: median Average 1,085 vs "
        "1,005 pods/s, +80, above the noise of 50",
        id="genuine win: the lower percentage",
    ),
    # 10 %: median 1400 vs 1000, +400 > max(20, 20, 50) = 50, but mean regret 2.5 > 1.0.
    pytest.param(
        5000,
        [10, 100],
        {10: ([1400, 1390, 1410], 2.5), 100: ([1000, 990, 1010], 0.0)},
        100,
        "but its mean regret of 2.50 points is above the limit of 1",
        id="faster but placements too poor: the higher percentage",
    ),
    # 5000 nodes: adaptive and 10 % both score 500 nodes: one setting, named adaptive
    # (the old tool measured them apart and named whichever ran faster: 0, then 10).
    # Median 1355 vs 1025, +330 > max(20, 40, 5 % of 1025 = 51.25), regret 0.0: it wins.
    pytest.param(
        5000,
        [0, 10, 100],
        {0: ([1360, 1350, 1350, 1370], 0.0), 100: ([1020, 1000, 1040, 1030], 0.0)},
        0,
        "so 0 (adaptive), which scores 500 of 5,000 nodes",
        id="adaptive and 10 % are one setting: adaptive",
    ),
    # Walk down from 100 % (median 1010, range 20). 50 %: 1050, +40 <= max(20, 20, 50.5):
    # noise, 100 % stays. 10 %: 1125 vs 1010, +115 > max(10, 20, 50.5): 10 % wins.
    pytest.param(
        5000,
        [10, 50, 100],
        {
            10: ([1120, 1125, 1130], 0.5),
            50: ([1040, 1050, 1060], 0.0),
            100: ([1000, 1010, 1020], 0.0),
        },
        10,
        "so 10, which scores 500 of 5,000 nodes",
        id="step down only for a clear gain, skipping a setting within noise",
    ),
]


@pytest.mark.parametrize(("nodes", "requested", "runs", "percentage", "phrase"), CASES)
def test_recommend(
    nodes: int,
    requested: list[int],
    runs: dict[int, tuple[list[float], float | None]],
    percentage: int,
    phrase: str,
) -> None:
    choice = recommend(sweep(nodes, requested, runs), min_gain=5, max_regret=1.0)
    assert choice.percentage == percentage
    assert phrase in choice.reason
    # The reason and the number agree: the reason states the chosen setting's node count.
    assert choice.setting.scope in choice.reason


def test_an_incomplete_setting_is_not_considered() -> None:
    # 10 % is far faster but one of its runs did not bind every pod.
    fast = Measured(
        Setting((10,), 5000, 500), (run(10, 2000, 0.0), run(10, 2000, 0.0, completed=False))
    )
    full = Measured(Setting((100,), 5000, 5000), (run(100, 1000, 0.0), run(100, 1000, 0.0)))
    choice = recommend([fast, full], min_gain=5, max_regret=1.0)
    assert choice.percentage == 100
    assert "not considered (runs incomplete): 10 % -> 500 of 5,000 nodes" in choice.reason


def test_nothing_completed() -> None:
    with pytest.raises(ValueError, match="no setting completed all its runs"):
        recommend([], min_gain=5, max_regret=1)
