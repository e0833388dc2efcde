"""asched scheduling live against both backends (the simulator and a genuine kube-apiserver)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scheduler_harness import (
    assert_not_overcommitted,
    assert_tables_equal,
    pods_of,
    rebuilt_table,
    running_scheduler,
    until,
)


async def create_nodes(cluster: Any, count: int, **kwargs: Any) -> list[str]:
    names = [cluster.unique_name("n") for _ in range(count)]
    for start in range(0, count, 50):
        await asyncio.gather(*(cluster.create_node(n, **kwargs) for n in names[start : start + 50]))
    return names


async def create_pods(cluster: Any, count: int, scheduler: str, **kwargs: Any) -> list[str]:
    names = [cluster.unique_name("p") for _ in range(count)]
    for start in range(0, count, 50):
        await asyncio.gather(
            *(
                cluster.create_pod(n, scheduler_name=scheduler, **kwargs)
                for n in names[start : start + 50]
            )
        )
    return names


async def bound_count(cluster: Any) -> int:
    return sum(1 for p in await pods_of(cluster) if p["spec"].get("nodeName"))


async def test_thousand_pods_on_two_hundred_nodes(cluster: Any) -> None:
    name = cluster.unique_name("sched")
    await create_nodes(cluster, 200, cpu="4", memory="32Gi")
    async with running_scheduler(cluster, name) as app:
        await create_pods(cluster, 1000, name, cpu="100m", memory="500Mi")

        async def all_bound() -> bool:
            return await bound_count(cluster) == 1000

        await until(all_bound, within=120)
        await until(lambda: _async(len(app.ledger) == 0), within=20)
        assert app.scheduler.stats.bound == 1000  # one successful binding per pod
        assert app.scheduler.stats.rolled_back == 0
        await assert_not_overcommitted(cluster)
        assert_tables_equal(app.table, await rebuilt_table(cluster))
        # least-allocated spreading: 1000 pods over 200 identical nodes, 5 each
        per_node: dict[str, int] = {}
        for pod in await pods_of(cluster):
            per_node[pod["spec"]["nodeName"]] = per_node.get(pod["spec"]["nodeName"], 0) + 1
        assert set(per_node.values()) == {5}


async def _async(value: bool) -> bool:
    return value


async def test_unschedulable_pod_gets_condition_message_and_one_event(cluster: Any) -> None:
    name = cluster.unique_name("sched")
    nodes = await create_nodes(cluster, 3, cpu="4", memory="8Gi")
    async with running_scheduler(cluster, name) as app:
        [pod] = await create_pods(cluster, 1, name, cpu="9", memory="1Gi")
        path = f"/api/v1/namespaces/{cluster.namespace}/pods/{pod}"

        async def has_condition() -> bool:
            conditions = (await cluster.rest.get(path)).get("status", {}).get("conditions", [])
            return any(c["type"] == "PodScheduled" and c["status"] == "False" for c in conditions)

        await until(has_condition, within=30)
        condition = next(
            c
            for c in (await cluster.rest.get(path))["status"]["conditions"]
            if c["type"] == "PodScheduled"
        )
        assert condition["reason"] == "Unschedulable"
        assert "3 Insufficient cpu" in condition["message"]
        assert condition["message"].startswith("0/")
        # retry it many times with the same answer: node updates that do not make room
        for round_ in range(6):
            for node in nodes:
                await cluster.rest.patch(
                    f"/api/v1/nodes/{node}/status",
                    {
                        "status": {
                            "allocatable": {
                                "cpu": "4",
                                "memory": f"{8 + round_ % 2}Gi",
                                "pods": "110",
                            }
                        }
                    },
                )
            await asyncio.sleep(1.2)
        assert app.scheduler.stats.unschedulable >= 4
        events = await cluster.rest.list_all(
            f"/apis/events.k8s.io/v1/namespaces/{cluster.namespace}/events"
        )
        failed = [
            e
            for e in events
            if e.get("reason") == "FailedScheduling" and e["regarding"]["name"] == pod
        ]
        assert len(failed) == 1, [e.get("note") for e in failed]
        assert failed[0]["type"] == "Warning"
        assert "Insufficient cpu" in failed[0]["note"]


async def test_new_node_makes_pod_schedulable_promptly(cluster: Any) -> None:
    name = cluster.unique_name("sched")
    await create_nodes(cluster, 2, cpu="4", memory="8Gi")
    async with running_scheduler(cluster, name) as app:
        [pod] = await create_pods(cluster, 1, name, cpu="6", memory="1Gi")
        await until(lambda: _async(app.scheduler.stats.unschedulable >= 1), within=20)
        loop = asyncio.get_running_loop()
        added = loop.time()
        [big] = await create_nodes(cluster, 1, cpu="8", memory="16Gi")

        async def bound() -> bool:
            spec = (await cluster.rest.get(f"/api/v1/namespaces/{cluster.namespace}/pods/{pod}"))[
                "spec"
            ]
            return spec.get("nodeName") == big

        await until(bound, within=15, every=0.1)
        # the node-added event moves it: backoff of attempt 1 (1 s) at most, not 5 minutes
        assert loop.time() - added < 10


async def test_sigterm_style_stop_mid_run_loses_no_pod(cluster: Any) -> None:
    name = cluster.unique_name("sched")
    await create_nodes(cluster, 20, cpu="4", memory="32Gi")
    pods = await create_pods(cluster, 400, name, cpu="100m", memory="100Mi")
    async with running_scheduler(cluster, name, max_in_flight=8) as first:
        await until(lambda: _async(first.scheduler.stats.bound >= 50), within=60, every=0.01)
    # stopped mid-run: a graceful stop finishes or rolls back every bind it had in flight
    assert first.scheduler.binder.in_flight == {}
    assert first.scheduler.stats.bound < len(pods)  # it really was stopped mid-run
    async with running_scheduler(cluster, name) as second:

        async def all_bound() -> bool:
            return await bound_count(cluster) == len(pods)

        await until(all_bound, within=60)
        assert first.scheduler.stats.bound + second.scheduler.stats.bound == len(pods)
    await assert_not_overcommitted(cluster)


@pytest.mark.sim_only
@pytest.mark.parametrize("code", [500, 409])
async def test_bind_failures_roll_back_exactly(sim_cluster: Any, code: int) -> None:
    cluster = sim_cluster
    name = cluster.unique_name("sched")
    await create_nodes(cluster, 10, cpu="4", memory="32Gi")
    await cluster.rest.request(
        "POST", "/admin/faults", body={"bindErrorRate": 0.3, "bindErrorCode": code}
    )
    async with running_scheduler(cluster, name) as app:
        await create_pods(cluster, 200, name, cpu="100m", memory="200Mi")
        await until(lambda: _async(app.scheduler.stats.rolled_back >= 20), within=60)
        await cluster.rest.request("POST", "/admin/faults", body={"bindErrorRate": 0.0})

        async def all_bound() -> bool:
            return await bound_count(cluster) == 200

        if code == 409:
            # the sim answers 409 without binding: the pod is dropped, then the watch shows it
            # still pending and it is queued again
            pass
        await until(all_bound, within=90)
        await until(lambda: _async(len(app.ledger) == 0), within=20)
        assert_tables_equal(app.table, await rebuilt_table(cluster))
    await assert_not_overcommitted(cluster)


@pytest.mark.sim_only
async def test_watch_cuts_and_expired_history_lose_nothing(sim_cluster: Any) -> None:
    cluster = sim_cluster
    name = cluster.unique_name("sched")
    await create_nodes(cluster, 10, cpu="4", memory="32Gi")
    await cluster.rest.request(
        "POST", "/admin/faults", body={"watchCutAfterSeconds": 0.5, "history": 5}
    )
    async with running_scheduler(cluster, name) as app:
        for _ in range(5):
            await create_pods(cluster, 60, name, cpu="100m", memory="200Mi")
            await asyncio.sleep(0.4)

        async def all_bound() -> bool:
            return await bound_count(cluster) == 300

        await until(all_bound, within=90)
        await until(lambda: _async(len(app.ledger) == 0), within=20)
        assert sum(r.reconnects + r.relists for r in app.reflectors) > len(app.reflectors)
        assert_tables_equal(app.table, await rebuilt_table(cluster))
    await assert_not_overcommitted(cluster)
