"""The gang figures' arithmetic: pure functions over synthetic bind times (seconds after
the phase's origin) and CPU requests (millicores)."""

from __future__ import annotations

from typing import Any

import pytest

from asched.tools.bench.gang_figures import (
    GangSpec,
    Member,
    figures,
    held_capacity,
    outcomes,
    rejections_by_gang,
    sample_times,
)
from asched.tools.bench.gang_observe import TIMEOUT_MARKER, parse_gauge

A, B, C = "ns/a", "ns/b", "ns/c"


def members(gang: str, *binds: float | None, cpu: int = 1000) -> list[Member]:
    return [Member(gang, bound, cpu) for bound in binds]


@pytest.mark.parametrize(
    ("specs", "pods", "expected"),
    [
        pytest.param(
            [GangSpec(A, 3)],
            members(A, 0.5, 0.2, 0.9),
            # sorted binds 0.2, 0.5, 0.9: complete at the 3rd (0.9), span 0.9 - 0.2
            [(A, 3, 0.2, 0.9, 0.9, True, False)],
            id="complete gang",
        ),
        pytest.param(
            [GangSpec(A, 3)],
            members(A, 0.5, None, 0.2),
            [(A, 2, 0.2, None, 0.5, False, True)],
            id="partial gang: 2 of minMember 3",
        ),
        pytest.param(
            [GangSpec(A, 2)],
            members(A, None, None),
            [(A, 0, None, None, None, False, False)],
            id="unplaced gang is not partial",
        ),
        pytest.param(
            [GangSpec(A, 2)],
            members(A, 1.0, 3.0, 2.0),
            # minMember 2 of 3 members: complete at the 2nd bind (2.0); span to the last (3.0)
            [(A, 3, 1.0, 2.0, 3.0, True, False)],
            id="more members than minMember",
        ),
        pytest.param(
            [GangSpec(A, 1), GangSpec(B, 1)],
            [*members(A, 0.1), *members("other/x", 0.3)],
            [(A, 1, 0.1, 0.1, 0.1, True, False), (B, 0, None, None, None, False, False)],
            id="members of unknown gangs ignored; a gang without pods is unplaced",
        ),
    ],
)
def test_outcomes(
    specs: list[GangSpec], pods: list[Member], expected: list[tuple[Any, ...]]
) -> None:
    got = [
        (o.key, o.bound, o.first, o.completed_at, o.last, o.completed, o.partial)
        for o in outcomes(specs, pods)
    ]
    assert got == expected


def test_span_is_first_to_last_bind_of_completed_gangs() -> None:
    result = outcomes([GangSpec(A, 2), GangSpec(B, 2)], [*members(A, 1.0, 1.25), *members(B, 2.0)])
    assert [o.span for o in result] == [0.25, None]  # B is partial: no span


@pytest.mark.parametrize(
    ("pods", "times", "expected"),
    [
        pytest.param(
            members(A, 1.0, 2.0, 3.0, cpu=500),
            [0.0, 1.0, 2.0, 2.5, 3.0, 4.0],
            # minMember 3: 0, 500, 1000 held, then the 3rd bind releases the whole gang
            [0, 500, 1000, 1000, 0, 0],
            id="a gang holds its bound members' CPU until it completes",
        ),
        pytest.param(
            [*members(A, 1.0, 2.0, cpu=500), *members(B, 1.5, cpu=900)],
            [1.0, 1.5, 2.0],
            # A: 500 at 1.0, 1,000 at 2.0; B: 900 from 1.5 (1 of 3): 500, 1,400, 1,900
            [500, 1400, 1900],
            id="two partial gangs add up",
        ),
        pytest.param(
            members(A, 1.0, 1.0, 1.0, 4.0),
            [1.0, 5.0],
            # three binds at 1.0 complete it; a 4th member changes nothing
            [0, 0],
            id="simultaneous binds that complete the gang hold nothing",
        ),
        pytest.param(
            members(A, None, 1.0),
            [2.0],
            [1000],
            id="unbound members hold nothing",
        ),
    ],
)
def test_held_capacity(pods: list[Member], times: list[float], expected: list[int]) -> None:
    assert held_capacity([GangSpec(A, 3), GangSpec(B, 3)], pods, times) == expected


def test_sample_times_end_at_the_duration() -> None:
    assert sample_times(2.5, 1.0) == [0.0, 1.0, 2.0, 2.5]
    assert sample_times(2.0, 1.0) == [0.0, 1.0, 2.0]


def test_figures_of_a_contention_run() -> None:
    # 3 gangs of minMember 4 (1,000m each): a complete at 0.5 s, b partial (2 bound),
    # c unplaced; b's member bound at 3.0 s is after the 2.0 s phase and does not count.
    specs = [GangSpec(A, 4), GangSpec(B, 4), GangSpec(C, 4)]
    pods = [
        *members(A, 0.1, 0.2, 0.3, 0.5),
        *members(B, 0.15, 0.25, 3.0, None),
        *members(C, None, None, None, None),
    ]
    got = figures(specs, pods, duration=2.0, sample_width=0.5)
    assert (got.completed, got.partial, got.unplaced) == (1, 1, 1)
    assert got.completion_times() == [0.5]
    assert got.spans().max == pytest.approx(0.4)  # 0.5 - 0.1
    # held at 0, 0.5, 1.0, 1.5, 2.0: at 0 nothing; from 0.5 on only b's 2 x 1,000m
    assert got.held == [(0.0, 0), (0.5, 2000), (1.0, 2000), (1.5, 2000), (2.0, 2000)]
    assert (got.held_max(), got.held_end()) == (2000, 2000)
    # the step function: 0 for 0.5 s, then 2,000 for 1.5 s, over 2 s: 1,500 mean
    assert got.held_mean() == pytest.approx(1500.0)
    assert got.permit_waiting is None
    assert got.permit_waiting_max() is None


def test_gangs_per_second_counts_completions_like_pods() -> None:
    # 4 one-member gangs complete at 0.5, 1.5, 1.7, 2.5 s; 1 s ticks at 1, 2 (collector
    # stops at the last completion, 2.5): the tick at 1 s is the baseline (1 done), the tick
    # at 2 s records (3 - 1) / 1 s = 2 gangs/s: one sample.
    specs = [GangSpec(f"ns/g{i}", 1) for i in range(4)]
    pods = [Member(f"ns/g{i}", t) for i, t in enumerate([0.5, 1.5, 1.7, 2.5])]
    got = figures(specs, pods, duration=3.0, sample_width=1.0)
    summary = got.throughput()
    assert (summary.samples, summary.average) == (1, 2.0)
    assert got.overall() == pytest.approx(4 / 2.5)


def _event(pod: str, message: str, **extra: Any) -> dict[str, Any]:
    namespace, name = pod.split("/")
    return {
        "reason": "FailedScheduling",
        "message": message,
        "involvedObject": {"kind": "Pod", "namespace": namespace, "name": name},
        **extra,
    }


def test_timeout_rejections_are_counted_by_gang() -> None:
    timeout = f"{TIMEOUT_MARKER} after waiting 1m0s at plugin Coscheduling"
    events = [
        _event("ns/a-0", timeout),
        _event("ns/a-1", timeout, count=3),  # deduplicated: stands for 3
        _event("ns/b-0", timeout, series={"count": 2}),
        _event("ns/b-1", "0/4 nodes are available: 4 Insufficient cpu."),  # not a timeout
        {**_event("ns/c-0", timeout), "reason": "Scheduled"},  # not FailedScheduling
        _event("ns/stranger", timeout),  # not a gang member
    ]
    pod_gang = {"ns/a-0": A, "ns/a-1": A, "ns/b-0": B, "ns/b-1": B, "ns/c-0": C}
    assert rejections_by_gang(events, pod_gang, TIMEOUT_MARKER) == {
        "events": 6,  # a: 1 + 3, b: 2
        "gangs": 2,
        "by_gang": {A: 4, B: 2},
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "# HELP asched_permit_waiting_pods x\n# TYPE asched_permit_waiting_pods gauge\n"
            "asched_permit_waiting_pods 7.0\n",
            7.0,
            id="plain",
        ),
        pytest.param(
            'asched_permit_waiting_pods{profile="a"} 2\nasched_permit_waiting_pods{profile="b"} 3\n',
            5.0,
            id="label sets summed",
        ),
        pytest.param("asched_permit_waiting_pods_total 4\nother 1\n", None, id="absent"),
    ],
)
def test_parse_gauge(text: str, expected: float | None) -> None:
    assert parse_gauge(text, "asched_permit_waiting_pods") == expected
