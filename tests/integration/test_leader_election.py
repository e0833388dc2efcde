"""Two LeaderElectors on a real API server (the simulator and kube-apiserver v1.37.2).

Short durations: lease 2 s, renew deadline 1.5 s, retry 0.4 s (so 1.2 x retry = 0.48 s and
one jittered acquire wait is at most 2.2 x 0.4 = 0.88 s). Every bound below is derived from
these and measured on loop time; the measurements are printed (``-s``) and recorded as
junit properties.

Take-over after a kill, worst case: the standby first sees the dead leader's last record at
most one jittered wait after it was written, must see it unchanged for the lease duration,
and then notices at its next poll: ``lease + 2 x 0.88 = 3.76 s`` after the last renew (the
kill is no earlier than that renew), plus request latency. Safety: never earlier than
``lease`` after the start of that last renew.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from asched.api.client import KubeClient
from asched.config.types import LeaderElection
from asched.scheduler.leader import JITTER_FACTOR, LeaderElector

LEASE, RENEW, RETRY = 2.0, 1.5, 0.4
MAX_WAIT = (1 + JITTER_FACTOR) * RETRY  # one jittered acquire wait: 0.88 s
LATENCY = 0.5  # request latency allowance on a loaded 2-core machine


def settings(namespace: str, name: str) -> LeaderElection:
    return LeaderElection(
        lease_duration_seconds=LEASE,
        renew_deadline_seconds=RENEW,
        retry_period_seconds=RETRY,
        resource_namespace=namespace,
        resource_name=name,
    )


def lease_path(namespace: str, name: str) -> str:
    return f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"


@pytest.fixture
async def clients(cluster) -> AsyncIterator[tuple[KubeClient, KubeClient]]:
    """Two independent connections, as two replicas would have."""
    first = await KubeClient.connect(str(cluster.kubeconfig))
    second = await KubeClient.connect(str(cluster.kubeconfig))
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


class Overlaps:
    """Samples both electors every 20 ms; any instant where both believe they lead is kept."""

    def __init__(self, *electors: LeaderElector) -> None:
        self.electors = electors
        self.seen: list[float] = []

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if sum(e.is_leader for e in self.electors) > 1:
                self.seen.append(loop.time())
            await asyncio.sleep(0.02)


async def _stop(*tasks: asyncio.Task[object]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_standby_waits_then_takes_over_a_killed_leader(
    cluster, clients, record_property
) -> None:
    loop = asyncio.get_running_loop()
    config = settings(cluster.namespace, cluster.unique_name("lease"))
    a = LeaderElector(clients[0], config, identity="replica-a")
    b = LeaderElector(clients[1], config, identity="replica-b")
    overlaps = Overlaps(a, b)
    watching = asyncio.create_task(overlaps.run())

    await asyncio.wait_for(a.acquire(), timeout=5)
    holding = asyncio.create_task(a.hold())
    standby = asyncio.create_task(b.acquire())
    try:
        # Three lease durations of renewals: the standby never gets in.
        await asyncio.sleep(3 * LEASE)
        assert a.is_leader
        assert not b.is_leader
        assert not standby.done()
        assert not holding.done()

        # Kill the leader: its task dies, nothing is released.
        last_renewed = a.last_renewed
        assert last_renewed is not None
        holding.cancel()
        await asyncio.gather(holding, return_exceptions=True)
        killed_at = loop.time()

        await asyncio.wait_for(standby, timeout=LEASE + 2 * MAX_WAIT + 5)
        taken_at = loop.time()
    finally:
        await _stop(watching, holding, standby)

    takeover = taken_at - killed_at
    print(f"\n[{cluster.backend}] take-over {takeover:.3f}s after the kill")
    record_property(f"takeover_seconds_{cluster.backend}", round(takeover, 3))
    assert taken_at - last_renewed >= LEASE  # safety: a full unchanged lease was waited
    assert takeover <= LEASE + 2 * MAX_WAIT + LATENCY
    assert b.is_leader
    assert not a.is_leader
    assert overlaps.seen == []

    lease = (await clients[1].get(lease_path(config.resource_namespace, config.resource_name))).body
    assert lease["spec"]["holderIdentity"] == "replica-b"
    assert lease["spec"]["leaseTransitions"] == 1
    assert lease["spec"]["leaseDurationSeconds"] == 2


async def test_graceful_release_hands_over_within_a_retry_period(
    cluster, clients, record_property
) -> None:
    loop = asyncio.get_running_loop()
    config = settings(cluster.namespace, cluster.unique_name("lease"))
    a = LeaderElector(clients[0], config, identity="replica-a")
    b = LeaderElector(clients[1], config, identity="replica-b")
    overlaps = Overlaps(a, b)
    watching = asyncio.create_task(overlaps.run())

    await asyncio.wait_for(a.acquire(), timeout=5)
    holding = asyncio.create_task(a.hold())
    standby = asyncio.create_task(b.acquire())
    try:
        await asyncio.sleep(1.0)
        assert not standby.done()
        holding.cancel()  # graceful stop: the work ends first, then the lease is released
        await asyncio.gather(holding, return_exceptions=True)
        released_at = loop.time()
        assert await a.release()
        assert not a.is_leader
        assert a.last_renewed is None

        await asyncio.wait_for(standby, timeout=5)
        taken_at = loop.time()
    finally:
        await _stop(watching, holding, standby)

    handover = taken_at - released_at
    print(f"\n[{cluster.backend}] hand-over {handover:.3f}s after release")
    record_property(f"handover_seconds_{cluster.backend}", round(handover, 3))
    # At most one jittered wait (0.88 s) plus latency, far below a lease duration.
    assert handover <= MAX_WAIT + LATENCY
    assert overlaps.seen == []
    lease = (await clients[1].get(lease_path(config.resource_namespace, config.resource_name))).body
    assert lease["spec"]["holderIdentity"] == "replica-b"
    assert lease["spec"]["leaseTransitions"] == 1


async def test_put_with_a_stale_resource_version_is_rejected(cluster, clients) -> None:
    loop = asyncio.get_running_loop()
    config = settings(cluster.namespace, cluster.unique_name("lease"))
    path = lease_path(config.resource_namespace, config.resource_name)
    a = LeaderElector(clients[0], config, identity="replica-a")
    await asyncio.wait_for(a.acquire(), timeout=5)
    snapshot = (await clients[1].get(path)).body
    holding = asyncio.create_task(a.hold())
    try:
        # Wait (loop-time deadline) until the leader has renewed: a new resourceVersion.
        deadline = loop.time() + 5
        while (await clients[1].get(path)).body["metadata"]["resourceVersion"] == snapshot[
            "metadata"
        ]["resourceVersion"]:
            assert loop.time() < deadline, "the leader never renewed"
            await asyncio.sleep(0.05)

        usurp = {**snapshot, "spec": {**snapshot["spec"], "holderIdentity": "usurper"}}
        response = await clients[1].replace(path, usurp)
        assert response.status == 409
        assert response.body["reason"] == "Conflict"
        assert (await clients[1].get(path)).body["spec"]["holderIdentity"] == "replica-a"
        assert a.is_leader
    finally:
        await _stop(holding)


async def test_late_release_cannot_clobber_the_new_leader(cluster, clients) -> None:
    config = settings(cluster.namespace, cluster.unique_name("lease"))
    a = LeaderElector(clients[0], config, identity="replica-a")
    b = LeaderElector(clients[1], config, identity="replica-b")
    await asyncio.wait_for(a.acquire(), timeout=5)
    # a never renews; b takes over after an unchanged lease duration.
    await asyncio.wait_for(b.acquire(), timeout=LEASE + 2 * MAX_WAIT + 5)

    assert not await a.release()  # its resourceVersion is stale: 409, nothing written
    lease = (await clients[1].get(lease_path(config.resource_namespace, config.resource_name))).body
    assert lease["spec"]["holderIdentity"] == "replica-b"
