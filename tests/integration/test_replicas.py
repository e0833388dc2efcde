"""Two asched replicas with leader election: one schedules, the other takes over when it dies."""

from __future__ import annotations

import asyncio
from typing import Any

from scheduler_harness import (
    assert_not_overcommitted,
    leader_election,
    pods_of,
    running_scheduler,
    until,
)

LEASE = 2.0
RETRY = 0.4


async def _true(value: bool) -> bool:
    return value


async def test_standby_takes_over_a_killed_leader_and_no_pod_is_bound_twice(cluster: Any) -> None:
    name = cluster.unique_name("sched")
    lease = cluster.unique_name("lease")
    election = leader_election(cluster, lease)
    for _ in range(8):
        await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="32Gi")
    loop = asyncio.get_running_loop()
    async with running_scheduler(cluster, name, leaderElection=election, max_in_flight=4) as first:
        await until(lambda: _true(first.elector.is_leader), within=10, every=0.05)
        async with running_scheduler(cluster, name, leaderElection=election) as second:
            assert not second.elector.is_leader
            pods = [cluster.unique_name("p") for _ in range(300)]
            for start in range(0, len(pods), 50):
                await asyncio.gather(
                    *(cluster.create_pod(p, scheduler_name=name) for p in pods[start : start + 50])
                )
            await until(lambda: _true(first.scheduler.stats.bound >= 40), within=60, every=0.01)
            assert second.scheduler.stats.attempts == 0  # the standby never schedules
            # kill the leader: its tasks die, its binds in flight are rolled back, no release
            last_renewed = first.elector.last_renewed
            in_flight = len(first.scheduler.binder.in_flight)
            first.task.cancel()
            killed_at = loop.time()
            await until(lambda: _true(second.elector.is_leader), within=LEASE + 5, every=0.02)
            takeover = loop.time() - killed_at
            # the standby waits out a full lease it saw unchanged, then acquires at its next
            # retry (jittered up to 2.2 x retryPeriod), plus request latency
            assert takeover <= LEASE + 2 * 2.2 * RETRY + 0.5
            assert loop.time() - last_renewed >= LEASE

            async def all_bound() -> bool:
                return all(p["spec"].get("nodeName") for p in await pods_of(cluster))

            await until(all_bound, within=90)
            acknowledged = first.scheduler.stats.bound + second.scheduler.stats.bound
            refused = first.scheduler.binder.failed + second.scheduler.binder.failed
            # every pod is bound once (the API refuses a second binding with 409), so no more
            # binds are acknowledged than there are pods; a bound pod neither replica saw
            # acknowledged was in flight when the leader died (its request may still have
            # reached the server) or got an error answer although the server applied it
            # (a loaded kube-apiserver can time out a write that etcd then commits)
            assert len(pods) - in_flight - refused <= acknowledged <= len(pods)
    await assert_not_overcommitted(cluster)
