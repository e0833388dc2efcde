"""LeaderElector's I/O loop against an in-memory Lease store, on virtual time.

``looptime`` fast-forwards the event loop's clock, so every time below is exact: the elector
takes its deadlines from ``loop.time()`` and sleeps with ``asyncio.sleep``. One test injects
``clock``/``sleep`` instead, to pin that seam. Jitter is switched off (``NoJitter``) where a
test asserts an exact time, so each derivation can be written out above the assertion.

Defaults under test (kube-scheduler's): lease 15 s, renew deadline 10 s, retry 2 s.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Mapping
from typing import Any

import pytest

from asched.api.client import Response
from asched.config.types import LeaderElection
from asched.errors import ApiUnavailable, LeadershipLost
from asched.scheduler.leader import LeaderElector

SETTINGS = LeaderElection(resource_name="sched", resource_namespace="ns")
COLLECTION = "/apis/coordination.k8s.io/v1/namespaces/ns/leases"
PATH = f"{COLLECTION}/sched"


class NoJitter(random.Random):
    """``random()`` is always 0: the acquire loop waits exactly retryPeriod."""

    def random(self) -> float:
        return 0.0


class FakeLeaseStore:
    """Leases in memory with kube-apiserver's write rules (see tests/contract/test_leases.py).

    GET of a missing lease is 404; create of an existing one is 409 AlreadyExists; PUT
    without a resourceVersion is 422, with a stale one 409 Conflict; every write bumps the
    resourceVersion. ``calls`` records (client, verb, status) for interaction counts.
    """

    def __init__(self) -> None:
        self.leases: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str, int]] = []
        self._versions = itertools.count(1)

    def client(self, name: str) -> FakeLeaseClient:
        return FakeLeaseClient(self, name)

    def put_directly(self, path: str, spec: Mapping[str, Any]) -> None:
        """Overwrite a lease's spec as a third party would (new resourceVersion)."""
        lease = self.leases[path]
        self.leases[path] = self._stored({**lease, "spec": dict(spec)})

    def spec(self, path: str = PATH) -> dict[str, Any]:
        spec: dict[str, Any] = self.leases[path]["spec"]
        return spec

    def _stored(self, lease: Mapping[str, Any]) -> dict[str, Any]:
        metadata = {**lease["metadata"], "resourceVersion": str(next(self._versions))}
        return {**lease, "metadata": metadata}

    def get(self, path: str) -> Response:
        if path not in self.leases:
            return Response(404, {"kind": "Status", "reason": "NotFound", "code": 404})
        return Response(200, self.leases[path])

    def create(self, path: str, body: Mapping[str, Any]) -> Response:
        key = f"{path}/{body['metadata']['name']}"
        if key in self.leases:
            return Response(409, {"kind": "Status", "reason": "AlreadyExists", "code": 409})
        self.leases[key] = self._stored(body)
        return Response(201, self.leases[key])

    def replace(self, path: str, body: Mapping[str, Any]) -> Response:
        if path not in self.leases:
            return Response(404, {"kind": "Status", "reason": "NotFound", "code": 404})
        version = body.get("metadata", {}).get("resourceVersion")
        if not version:
            return Response(422, {"kind": "Status", "reason": "Invalid", "code": 422})
        if version != self.leases[path]["metadata"]["resourceVersion"]:
            return Response(409, {"kind": "Status", "reason": "Conflict", "code": 409})
        self.leases[path] = self._stored(body)
        return Response(200, self.leases[path])


class FakeLeaseClient:
    """One process's connection to the store, with faults.

    ``down``: every call raises a transport error. ``hang``: every call waits forever.
    ``latency``: seconds before the request reaches the store; ``reply_latency``: seconds
    before the answer comes back (the write has then already happened).
    Every call yields to the loop at least once, so two clients can interleave.
    """

    def __init__(self, store: FakeLeaseStore, name: str) -> None:
        self.store = store
        self.name = name
        self.down = False
        self.hang = False
        self.latency = 0.0
        self.reply_latency = 0.0

    async def _call(self, verb: str, path: str, body: Mapping[str, Any] | None) -> Response:
        await asyncio.sleep(self.latency)
        if self.hang:
            await asyncio.Event().wait()
        if self.down:
            self.store.calls.append((self.name, verb, 0))
            # what KubeClient raises for a refused connection
            raise ApiUnavailable(verb.upper(), path, "https://fake", "connection refused")
        if verb == "get":
            response = self.store.get(path)
        elif verb == "create":
            assert body is not None
            response = self.store.create(path, body)
        else:
            assert body is not None
            response = self.store.replace(path, body)
        self.store.calls.append((self.name, verb, response.status))
        await asyncio.sleep(self.reply_latency)
        return response

    async def get(self, path: str) -> Response:
        return await self._call("get", path, None)

    async def create(self, path: str, body: Mapping[str, Any]) -> Response:
        return await self._call("create", path, body)

    async def replace(self, path: str, body: Mapping[str, Any]) -> Response:
        return await self._call("replace", path, body)


def elector(client: FakeLeaseClient, **kwargs: Any) -> LeaderElector:
    kwargs.setdefault("rng", NoJitter())
    return LeaderElector(client, SETTINGS, identity=client.name, **kwargs)


class LeaderMonitor:
    """Samples every elector's ``is_leader`` every ``period`` seconds; records any overlap."""

    def __init__(self, electors: list[LeaderElector], period: float = 0.01) -> None:
        self.electors = electors
        self.period = period
        self.overlaps: list[tuple[float, list[str]]] = []
        self.leaders: list[str] = []

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            leading = [e.identity for e in self.electors if e.is_leader]
            if len(leading) > 1:
                self.overlaps.append((loop.time(), leading))
            if leading and (not self.leaders or self.leaders[-1] != leading[0]):
                self.leaders.append(leading[0])
            await asyncio.sleep(self.period)


@pytest.fixture
def store() -> FakeLeaseStore:
    return FakeLeaseStore()


@pytest.mark.looptime
async def test_first_candidate_creates_the_lease_at_once(store, looptime) -> None:
    a = elector(store.client("a"))
    await a.acquire()

    assert looptime == 0
    assert a.is_leader
    assert a.last_renewed == 0
    assert store.calls == [("a", "get", 404), ("a", "create", 201)]
    spec = store.spec()
    assert spec["holderIdentity"] == "a"
    assert spec["leaseDurationSeconds"] == 15
    assert spec["leaseTransitions"] == 0
    assert spec["acquireTime"] == spec["renewTime"]
    assert spec["renewTime"].endswith("Z")
    assert len(spec["renewTime"]) == 27


@pytest.mark.looptime
async def test_leader_renews_every_retry_period(store, looptime) -> None:
    a = elector(store.client("a"))
    await a.acquire()
    acquired_at = store.spec()["acquireTime"]
    hold = asyncio.create_task(a.hold())
    await asyncio.sleep(7)
    hold.cancel()
    with pytest.raises(asyncio.CancelledError):
        await hold

    # Renews at 2, 4, 6 (one GET + one PUT each); acquireTime and transitions unchanged.
    assert store.calls[2:] == [("a", "get", 200), ("a", "replace", 200)] * 3
    assert a.last_renewed == 6
    assert store.spec()["acquireTime"] == acquired_at
    assert store.spec()["leaseTransitions"] == 0


@pytest.mark.looptime
async def test_standby_takes_over_a_killed_leader_after_an_unchanged_lease_duration(
    store, looptime
) -> None:
    a, b = elector(store.client("a")), elector(store.client("b"))
    monitor = LeaderMonitor([a, b])
    await a.acquire()
    async with asyncio.TaskGroup() as tg:
        watching = tg.create_task(monitor.run())
        holding = tg.create_task(a.hold())
        await asyncio.sleep(1)
        standby = tg.create_task(b.acquire())
        await asyncio.sleep(9.5)
        holding.cancel()  # killed at 10.5: no release
        await standby
        taken_at = asyncio.get_running_loop().time()
        await asyncio.sleep(0.1)
        watching.cancel()

    # a renewed at 0, 2, ..., 10. b polls at 1, 3, ..., each time seeing a new record, until
    # 11, when it first sees the record of 10; that record never changes again, so b may take
    # over from 11 + 15 = 26; its polls at 13..25 wait, the poll at 27 takes the lease.
    assert taken_at == 27
    assert b.is_leader
    assert not a.is_leader
    assert store.spec()["holderIdentity"] == "b"
    assert store.spec()["leaseTransitions"] == 1
    assert monitor.overlaps == []
    assert monitor.leaders == ["a", "b"]


@pytest.mark.looptime
async def test_leader_gives_up_renew_deadline_after_its_last_renew(store, looptime) -> None:
    client = store.client("a")
    a = elector(client)
    await a.acquire()
    asyncio.get_running_loop().call_later(5, setattr, client, "down", True)

    with pytest.raises(LeadershipLost, match=r"within 10\.0s"):
        await a.hold()

    # Renews at 2 and 4 succeed; from 5 the API is unreachable: attempts at 6, 8, 10, 12 fail,
    # the next wait is min(2, 4 + 10 - 12) = 2, and at 14 = 4 + 10 the deadline has passed.
    assert looptime == 14
    assert [verb for name, verb, status in store.calls if status == 0] == ["get"] * 4
    assert not a.is_leader
    assert a.last_renewed is None


@pytest.mark.looptime
async def test_a_hung_request_is_cut_at_the_renew_deadline(store, looptime) -> None:
    client = store.client("a")
    a = elector(client)
    await a.acquire()
    asyncio.get_running_loop().call_later(5, setattr, client, "hang", True)

    with pytest.raises(LeadershipLost):
        await a.hold()

    # The attempt at 6 hangs; its budget is what is left of the deadline: 4 + 10 - 6 = 8 s.
    assert looptime == 14


@pytest.mark.looptime
async def test_seeing_another_holder_is_lost_leadership_at_once(store, looptime) -> None:
    a = elector(store.client("a"))
    await a.acquire()
    loop = asyncio.get_running_loop()
    loop.call_later(5, store.put_directly, PATH, {"holderIdentity": "intruder"})

    with pytest.raises(LeadershipLost, match="held by intruder"):
        await a.hold()

    # The renew at 6 reads the intruder's record: no write, no waiting for the deadline.
    assert looptime == 6
    assert store.spec()["holderIdentity"] == "intruder"


@pytest.mark.looptime
async def test_release_hands_over_within_one_retry_period(store, looptime) -> None:
    a, b = elector(store.client("a")), elector(store.client("b"))
    await a.acquire()
    holding = asyncio.create_task(a.hold())
    await asyncio.sleep(1)
    standby = asyncio.create_task(b.acquire())
    await asyncio.sleep(3.5)
    holding.cancel()
    with pytest.raises(asyncio.CancelledError):
        await holding

    assert await a.release()
    assert not a.is_leader
    released_at = asyncio.get_running_loop().time()
    spec = store.spec()
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"]) == ("", 1)
    assert spec["leaseTransitions"] == 0

    await standby
    # b polls at 1, 3, 5: the poll at 5 sees an empty holder and takes it.
    assert (released_at, looptime) == (4.5, 5)
    assert store.spec()["holderIdentity"] == "b"
    assert store.spec()["leaseTransitions"] == 1


@pytest.mark.looptime
async def test_late_release_does_not_clobber_the_new_leader(store, looptime) -> None:
    a, b = elector(store.client("a")), elector(store.client("b"))
    await a.acquire()
    await b.acquire()  # a never renews: b takes over at 0 + 15 + (one retry) = 16
    assert looptime == 16

    # a still has the resourceVersion it wrote; the PUT is rejected (409), nothing changes.
    assert not await a.release()
    assert store.spec()["holderIdentity"] == "b"
    assert store.calls[-1] == ("a", "replace", 409)


@pytest.mark.looptime
async def test_release_without_leadership_writes_nothing(store) -> None:
    a = elector(store.client("a"))
    assert not await a.release()
    assert store.calls == []


@pytest.mark.looptime
async def test_two_candidates_race_to_create_and_exactly_one_wins(store, looptime) -> None:
    a, b = elector(store.client("a")), elector(store.client("b"))
    tasks = [asyncio.create_task(e.acquire()) for e in (a, b)]
    await asyncio.sleep(1)

    # Both GETs run before either create; the second create is 409 AlreadyExists.
    assert sorted(store.calls) == sorted(
        [("a", "get", 404), ("b", "get", 404), ("a", "create", 201), ("b", "create", 409)]
    )
    assert [a.is_leader, b.is_leader] == [True, False]
    assert tasks[0].done()
    assert not tasks[1].done()
    tasks[1].cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@pytest.mark.looptime
async def test_two_candidates_race_to_take_over_and_exactly_one_wins(store, looptime) -> None:
    await elector(store.client("dead")).acquire()
    b, c = elector(store.client("b")), elector(store.client("c"))
    tasks = [asyncio.create_task(e.acquire()) for e in (b, c)]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)

    # Both first saw the record at 0 and poll every 2 s: both PUT at 16 with the same
    # resourceVersion; the second PUT is 409 Conflict, so only one transition is counted.
    assert looptime == 16
    assert len(done) == 1
    assert len(pending) == 1
    assert [b.is_leader, c.is_leader].count(True) == 1
    assert ("b", "replace", 409) in store.calls or ("c", "replace", 409) in store.calls
    assert store.spec()["leaseTransitions"] == 1
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


async def test_injected_clock_and_sleep_bound_the_belief(store) -> None:
    class FakeTime:
        now = 100.0

        def clock(self) -> float:
            return self.now

        async def sleep(self, seconds: float) -> None:
            self.now += seconds
            await asyncio.sleep(0)

    time = FakeTime()
    client = store.client("a")
    a = elector(client, clock=time.clock, sleep=time.sleep)
    await a.acquire()
    assert a.last_renewed == 100.0

    # Belief ends renewDeadline after the last renew, even with no renew loop running;
    # last_renewed stays set: the process still "believes", which is what healthz watches.
    time.now = 109.999
    assert a.is_leader
    time.now = 110.0
    assert not a.is_leader
    assert a.last_renewed == 100.0

    time.now = 100.0
    client.down = True
    with pytest.raises(LeadershipLost):
        await a.hold()
    # Attempts at 102, 104, 106, 108 fail; at 110 = 100 + 10 the deadline has passed.
    assert time.now == 110.0


def test_settings_must_leave_room_between_deadlines(store) -> None:
    bad = LeaderElection(
        lease_duration_seconds=10, renew_deadline_seconds=10, retry_period_seconds=2
    )
    with pytest.raises(ValueError, match="leaseDuration > renewDeadline"):
        LeaderElector(store.client("a"), bad)
    tight = LeaderElection(
        lease_duration_seconds=15, renew_deadline_seconds=2.4, retry_period_seconds=2
    )
    with pytest.raises(ValueError, match=r"1.2 \* retryPeriod"):
        LeaderElector(store.client("a"), tight)


async def _candidate(e: LeaderElector) -> None:
    """A replica's life: acquire, hold until lost, start over (the process restart)."""
    while True:
        await e.acquire()
        try:
            await e.hold()
        except LeadershipLost:
            continue


async def _chaos(clients: list[FakeLeaseClient], rng: random.Random) -> None:
    """Every 0.5-3 s, give one client an outage, a hang, or a latency of up to 4 s."""
    while True:
        await asyncio.sleep(rng.uniform(0.5, 3))
        client = rng.choice(clients)
        fault = rng.choice(["down", "hang", "slow", "heal", "heal"])
        client.down = fault == "down"
        client.hang = fault == "hang"
        client.latency = rng.uniform(0, 4) if fault == "slow" else 0.0
        client.reply_latency = rng.uniform(0, 4) if fault == "slow" else 0.0


@pytest.mark.looptime
@pytest.mark.parametrize("seed", range(6))
async def test_never_two_leaders_under_random_faults(store, seed) -> None:
    rng = random.Random(seed)
    clients = [store.client(name) for name in ("a", "b", "c")]
    electors = [
        LeaderElector(c, SETTINGS, identity=c.name, rng=random.Random(rng.random()))
        for c in clients
    ]
    # Any overlap would last at least leaseDuration - renewDeadline = 5 s: 0.1 s sampling sees it.
    monitor = LeaderMonitor(electors, period=0.1)
    tasks = [asyncio.create_task(_candidate(e)) for e in electors]
    tasks += [asyncio.create_task(monitor.run()), asyncio.create_task(_chaos(clients, rng))]
    await asyncio.sleep(400)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

    assert monitor.overlaps == []
    # The faults really moved the lease at least once (else this test proves nothing).
    assert len(monitor.leaders) >= 2
