"""asched.metrics: names, buckets and what each one-line helper records.

Values are read back with ``REGISTRY.get_sample_value`` as differences (the registry is
module-level and shared by every test in the session).
"""

from __future__ import annotations

import pytest

from asched import metrics


def value(name: str, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


def test_names_mirror_kube_scheduler_with_the_asched_prefix() -> None:
    names = {family.name for family in metrics.REGISTRY.collect()}
    # prometheus-client reports counters without their _total suffix.
    assert names == {
        "asched_schedule_attempts",
        "asched_scheduling_attempt_duration_seconds",
        "asched_pod_scheduling_sli_duration_seconds",
        "asched_pod_scheduling_attempts",
        "asched_pending_pods",
        "asched_framework_extension_point_duration_seconds",
        "asched_binds_inflight",
        "asched_extender_request_duration_seconds",
        "asched_extender_consultations_inflight",
        "asched_permit_waiting_pods",
        "asched_scheduler_cache_size",
        "asched_preemption_attempts",
        "asched_preemption_victims",
        "asched_events",
        "asched_undecodable_objects",
        "asched_internal_errors",
        "asched_leader",
    }


@pytest.mark.parametrize(
    ("histogram", "first", "last", "count"),
    [
        # 1 ms x 2^k, k = 0..14: last = 0.001 * 2**14 = 16.384 s.
        (metrics.SCHEDULING_ATTEMPT_DURATION, 0.001, 16.384, 15),
        # 10 ms x 2^k, k = 0..19: last = 0.01 * 2**19 = 5242.88 s.
        (metrics.POD_SCHEDULING_SLI_DURATION, 0.01, 5242.88, 20),
        # 1, 2, 4, 8, 16.
        (metrics.POD_SCHEDULING_ATTEMPTS, 1, 16, 5),
        # 0.1 ms x 2^k, k = 0..11: last = 0.0001 * 2**11 = 0.2048 s.
        (metrics.FRAMEWORK_EXTENSION_POINT_DURATION, 0.0001, 0.2048, 12),
    ],
)
def test_histogram_buckets_match_upstream(histogram, first, last, count) -> None:
    bounds = histogram._upper_bounds  # +Inf appended by prometheus-client
    assert len(bounds) == count + 1
    assert bounds[0] == pytest.approx(first)
    assert bounds[-2] == pytest.approx(last)


def test_observe_attempt_counts_and_times() -> None:
    labels = {"result": "unschedulable", "profile": "p-attempt"}
    metrics.observe_attempt("unschedulable", "p-attempt", 0.0015)
    metrics.observe_attempt("unschedulable", "p-attempt", 0.0025)
    assert value("asched_schedule_attempts_total", **labels) == 2
    assert value("asched_scheduling_attempt_duration_seconds_count", **labels) == 2
    assert value("asched_scheduling_attempt_duration_seconds_sum", **labels) == pytest.approx(0.004)
    # 0.0015 falls in le=0.002, 0.0025 in le=0.004.
    assert value("asched_scheduling_attempt_duration_seconds_bucket", le="0.002", **labels) == 1
    assert value("asched_scheduling_attempt_duration_seconds_bucket", le="0.004", **labels) == 2


def test_unknown_result_is_a_bug() -> None:
    with pytest.raises(ValueError, match="result must be one of"):
        metrics.observe_attempt("bound", "p", 0.1)  # type: ignore[arg-type]


def test_observe_scheduled_labels_attempts_like_upstream() -> None:
    before_3 = value("asched_pod_scheduling_sli_duration_seconds_count", attempts="3")
    before_cap = value("asched_pod_scheduling_sli_duration_seconds_count", attempts="15+")
    before_hist = value("asched_pod_scheduling_attempts_count")

    metrics.observe_scheduled("p", 3, 1.5)
    metrics.observe_scheduled("p", 40, 60.0)

    assert value("asched_pod_scheduling_sli_duration_seconds_count", attempts="3") == before_3 + 1
    assert (
        value("asched_pod_scheduling_sli_duration_seconds_count", attempts="15+") == before_cap + 1
    )
    assert value("asched_pod_scheduling_attempts_count") == before_hist + 2


@pytest.mark.parametrize(("attempts", "label"), [(1, "1"), (15, "15"), (16, "15+")])
def test_attempts_label(attempts, label) -> None:
    assert metrics.attempts_label(attempts) == label


def test_set_pending_sets_every_queue() -> None:
    metrics.set_pending({"active": 3, "backoff": 2, "unschedulable": 7, "gated": 1})
    metrics.set_pending({"active": 4})
    # Queues missing from the mapping are empty, not stale.
    assert [value("asched_pending_pods", queue=q) for q in metrics.QUEUES] == [4, 0, 0, 0]
    with pytest.raises(ValueError, match="unknown queue"):
        metrics.set_pending({"activeQ": 1})


def test_extension_point_cache_events_preemption_leader() -> None:
    metrics.observe_extension_point("Filter", "Success", "p-ext", 0.00015)
    assert (
        value(
            "asched_framework_extension_point_duration_seconds_count",
            extension_point="Filter",
            status="Success",
            profile="p-ext",
        )
        == 1
    )

    metrics.set_cache_size(nodes=5, pods=40, assumed=2)
    assert [
        value("asched_scheduler_cache_size", type=t) for t in ("nodes", "pods", "assumed_pods")
    ] == [5, 40, 2]

    before = value("asched_events_total", type="Warning", reason="FailedScheduling")
    metrics.count_event("Warning", "FailedScheduling")
    assert value("asched_events_total", type="Warning", reason="FailedScheduling") == before + 1

    before = value("asched_preemption_attempts_total")
    metrics.count_preemption_attempt()
    assert value("asched_preemption_attempts_total") == before + 1

    # three victims land in the le=4 bucket (and every larger one), not in le=2
    two, four = (
        value("asched_preemption_victims_bucket", le="2.0"),
        value("asched_preemption_victims_bucket", le="4.0"),
    )
    metrics.observe_preemption_victims(3)
    assert value("asched_preemption_victims_bucket", le="2.0") == two
    assert value("asched_preemption_victims_bucket", le="4.0") == four + 1

    metrics.set_leader(leading=True)
    assert value("asched_leader") == 1
    metrics.set_leader(leading=False)
    assert value("asched_leader") == 0


def test_cached_label_children_still_count_each_call_and_check_their_labels() -> None:
    """The helpers keep their label children (no ``labels()`` per call): the same
    figures, and a bad label still raises after good ones were cached."""
    labels = {"result": "scheduled", "profile": "p-cached"}
    for _ in range(3):
        metrics.observe_attempt("scheduled", "p-cached", 0.001)
    assert value("asched_schedule_attempts_total", **labels) == 3
    assert value("asched_scheduling_attempt_duration_seconds_count", **labels) == 3
    with pytest.raises(ValueError, match="result must be one of"):
        metrics.observe_attempt("bound", "p-cached", 0.1)  # type: ignore[arg-type]
    cap = value("asched_pod_scheduling_sli_duration_seconds_count", attempts="15+")
    metrics.observe_scheduled("p", 16, 1.0)
    metrics.observe_scheduled("p", 99, 1.0)  # one child for every count past 15
    assert value("asched_pod_scheduling_sli_duration_seconds_count", attempts="15+") == cap + 2
    with pytest.raises(ValueError, match="attempts must be >= 1"):
        metrics.observe_scheduled("p", 0, 1.0)
