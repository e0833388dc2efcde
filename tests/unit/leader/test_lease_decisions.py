"""``decide()``: tryAcquireOrRenew's decision as a table, no I/O, exact loop times.

The first eight cases transcribe client-go's ``TestTryAcquireOrRenew`` (leases): identity
"baz", lease duration 10 s, another holder "bing". Upstream's ``past``/``future`` are
``now -/+ 1000 h``; here ``now`` is loop time 5000.0 s and the same offsets are used.
Upstream asserts holder, transitions (0 or 1) and the number of API calls; the decision's
action encodes the calls (create = get + create, update = get + update, wait = get only).
"""

from __future__ import annotations

import datetime as dt

import pytest

from asched.scheduler.leader import (
    Decision,
    LeaseRecord,
    Observation,
    decide,
    default_identity,
    micro_time,
    released,
)

ME = "baz"
OTHER = "bing"
NOW = 5000.0
STAMP = "2024-05-01T12:00:00.123456Z"
EARLIER = "2024-05-01T11:00:00.000000Z"
LEASE = 10
HOUR = 3600.0
PAST = NOW - 1000 * HOUR
FUTURE = NOW + 1000 * HOUR


def run(current: LeaseRecord | None, observed: Observation | None, now: float = NOW) -> Decision:
    return decide(
        current, observed, identity=ME, now=now, stamp=STAMP, lease_duration_seconds=LEASE
    )


def acquired(transitions: int) -> LeaseRecord:
    """What a take-over writes: me, our duration, acquire = renew = now."""
    return LeaseRecord(ME, LEASE, STAMP, STAMP, transitions)


UPSTREAM_CASES = [
    pytest.param(
        None,
        None,
        Decision("create", acquired(0), Observation(acquired(0), NOW)),
        id="acquire from no object",
    ),
    pytest.param(
        LeaseRecord(),
        None,
        # Empty holder: free to take; transitions 0 -> 1.
        Decision("update", acquired(1), Observation(LeaseRecord(), NOW)),
        id="acquire from object without holder",
    ),
    pytest.param(
        LeaseRecord(),
        None,
        Decision("update", acquired(1), Observation(LeaseRecord(), NOW)),
        id="acquire from unled object",
    ),
    pytest.param(
        LeaseRecord(OTHER),
        Observation(LeaseRecord(OTHER), PAST),
        # Same record seen 1000 h ago: PAST + 10 s <= NOW, expired.
        Decision("update", acquired(1), Observation(LeaseRecord(OTHER), PAST)),
        id="acquire from led, unacked object",
    ),
    pytest.param(
        LeaseRecord(""),
        Observation(LeaseRecord(""), FUTURE),
        # Not expired, but nobody holds it.
        Decision("update", acquired(1), Observation(LeaseRecord(""), FUTURE)),
        id="acquire from empty led, acked object",
    ),
    pytest.param(
        LeaseRecord(OTHER),
        None,
        # First sight: observed at NOW, record has no duration -> ours, 10 s: until 5010.
        Decision(
            "wait", LeaseRecord(OTHER), Observation(LeaseRecord(OTHER), NOW), expires_at=NOW + 10
        ),
        id="don't acquire from led, acked object",
    ),
    pytest.param(
        LeaseRecord(ME),
        Observation(LeaseRecord(ME), FUTURE),
        # Renewal keeps acquireTime ("" here) and transitions (0); renewTime = now.
        Decision(
            "update", LeaseRecord(ME, LEASE, "", STAMP, 0), Observation(LeaseRecord(ME), FUTURE)
        ),
        id="renew already acquired object",
    ),
]


@pytest.mark.parametrize(("current", "observed", "expected"), UPSTREAM_CASES)
def test_upstream_try_acquire_or_renew_cases(current, observed, expected) -> None:
    assert run(current, observed) == expected


def test_led_object_with_lease_duration_is_acquired_exactly_when_it_expires() -> None:
    # Upstream "acquire from led object with the lease duration seconds": 3 s lease held by
    # bing; the first try fails, a retry 3 s later (record unchanged) succeeds.
    held = LeaseRecord(OTHER, 3)
    first = run(held, None, now=100.0)
    # First sight at 100.0 -> may take over from 100.0 + 3 = 103.0 (the record's duration).
    assert first == Decision("wait", held, Observation(held, 100.0), expires_at=103.0)

    almost = run(held, first.observation, now=102.999)
    assert almost.action == "wait"
    assert almost.observation == Observation(held, 100.0)  # unchanged record: time kept

    # At exactly 103.0, "observed + duration > now" is false: expired.
    taken = run(held, almost.observation, now=103.0)
    assert taken == Decision("update", acquired(1), Observation(held, 100.0))


def test_a_renewed_record_restarts_the_wait() -> None:
    # Seen at 100 with renewTime T1; at 109 the holder has renewed (T2): the 10 s start again
    # from 109, so the lease cannot be taken before 119 although 100 + 10 = 110 has passed.
    seen = run(LeaseRecord(OTHER, 10, EARLIER, "T1"), None, now=100.0)
    renewed = LeaseRecord(OTHER, 10, EARLIER, "T2")
    later = run(renewed, seen.observation, now=109.0)
    assert later == Decision("wait", renewed, Observation(renewed, 109.0), expires_at=119.0)
    assert run(renewed, later.observation, now=118.9).action == "wait"
    assert run(renewed, later.observation, now=119.0).action == "update"


def test_remote_timestamps_are_never_compared_with_local_time() -> None:
    # A renewTime from 1970 means nothing: only its *change* is evidence of life.
    ancient = LeaseRecord(OTHER, 10, "1970-01-01T00:00:00.000000Z", "1970-01-01T00:00:00.000000Z")
    assert run(ancient, None).action == "wait"


def test_record_duration_wins_over_ours() -> None:
    # The holder declared 30 s; our own 10 s does not shorten its lease: 200 + 30 = 230.
    held = LeaseRecord(OTHER, 30)
    decision = run(held, Observation(held, 200.0), now=229.0)
    assert decision.expires_at == 230.0
    assert decision.action == "wait"


def test_take_over_counts_a_transition_and_renew_keeps_history() -> None:
    expired = LeaseRecord(OTHER, 10, EARLIER, EARLIER, 5)
    # Seen unchanged since PAST: taken; transitions 5 -> 6, acquireTime = now.
    assert run(expired, Observation(expired, PAST)).record == acquired(6)

    mine = LeaseRecord(ME, 10, EARLIER, EARLIER, 6)
    # Our own lease: acquireTime and transitions kept, only renewTime moves.
    assert run(mine, Observation(mine, NOW - 1)).record == LeaseRecord(ME, LEASE, EARLIER, STAMP, 6)


def test_our_own_lease_is_renewed_even_if_observed_long_ago() -> None:
    # Expiry only protects other holders; our own record is always renewable.
    mine = LeaseRecord(ME, 10, EARLIER, EARLIER, 2)
    assert run(mine, Observation(mine, PAST)).action == "update"


def test_release_clears_holder_keeps_transitions() -> None:
    mine = LeaseRecord(ME, 15, EARLIER, EARLIER, 4)
    assert released(mine, STAMP) == LeaseRecord("", 1, STAMP, STAMP, 4)


def test_released_lease_is_taken_at_once() -> None:
    free = released(LeaseRecord(OTHER, 15, EARLIER, EARLIER, 4), EARLIER)
    # Holder "" -> no wait even on first sight; transitions 4 -> 5.
    assert run(free, None) == Decision("update", acquired(5), Observation(free, NOW))


def test_spec_round_trip_omits_empty_micro_times() -> None:
    assert LeaseRecord(ME, 15).to_spec() == {
        "holderIdentity": ME,
        "leaseDurationSeconds": 15,
        "leaseTransitions": 0,
    }
    record = LeaseRecord(ME, 15, EARLIER, STAMP, 3)
    assert LeaseRecord.from_lease({"spec": record.to_spec()}) == record
    assert LeaseRecord.from_lease({}) == LeaseRecord()


def test_micro_time_is_utc_with_microseconds() -> None:
    moment = dt.datetime(2024, 5, 1, 14, 0, 0, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert micro_time(moment) == "2024-05-01T12:00:00.123456Z"


def test_default_identity_is_hostname_underscore_uuid() -> None:
    first, second = default_identity(), default_identity()
    host, _, suffix = first.rpartition("_")
    assert host
    assert len(suffix) == 36
    assert suffix.count("-") == 4
    assert first != second
