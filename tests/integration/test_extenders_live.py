"""Scheduler extenders in the live scheduler, on both backends.

The extenders are the test server (:mod:`asched.tools.bench.extender_server`) over real
HTTP; asched runs in-process (:func:`running_scheduler`) against the test's cluster.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from typing import Any

from asched.tools.backends.kubeconfig import read_kubeconfig
from asched.tools.bench.extender_server import ApiTarget, ExtenderRules, serve_extender
from tests.integration.scheduler_harness import (
    assert_not_overcommitted,
    pods_of,
    running_scheduler,
    until,
)
from tests.integration.test_live_scheduling import create_nodes, create_pods

GPU = "example.com/gpu"


async def _condition(cluster: Any, pod: str) -> dict[str, Any] | None:
    path = f"/api/v1/namespaces/{cluster.namespace}/pods/{pod}"
    conditions = (await cluster.rest.get(path)).get("status", {}).get("conditions", [])
    return next((c for c in conditions if c["type"] == "PodScheduled"), None)


async def _bound(cluster: Any) -> dict[str, str]:
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in await pods_of(cluster)
        if p["spec"].get("nodeName")
    }


async def test_filter_prioritize_and_bind_through_an_extender(cluster: Any) -> None:
    """The extender drops node a, prefers c (10 points x weight 5 x 10 = 500, more than
    any spread of the in-tree scores), and binds every pod itself."""
    a, b, c = await create_nodes(cluster, 3, cpu="4", memory="8Gi")
    entry = read_kubeconfig(cluster.kubeconfig)
    rules = ExtenderRules(
        fail=frozenset({a}),
        scores={c: 10},
        api=ApiTarget(entry.server, entry.token or "", entry.ca_pem),
    )
    name = cluster.unique_name("ext")
    async with serve_extender(rules) as server:
        extenders = [server.entry(bind=True, weight=5, nodeCacheCapable=True)]
        async with running_scheduler(cluster, name, extenders=extenders) as app:
            pods = await create_pods(cluster, 4, name, cpu="100m", memory="64Mi")

            async def all_bound() -> bool:
                return len(await _bound(cluster)) == len(pods)

            await until(all_bound, within=60)
            await until(lambda: _ready(len(app.ledger) == 0), within=20)
    bound = await _bound(cluster)
    assert set(bound.values()) == {c}
    binds = server.calls_of("bind")
    assert sorted(call.body["PodName"] for call in binds) == sorted(pods)  # not DefaultBinder
    for call in server.calls_of("filter"):
        assert a in call.body["NodeNames"]  # a passes the in-tree filters: sent, and refused
    for call in server.calls_of("prioritize"):
        assert a not in call.body["NodeNames"]  # what the filter refused is not scored
        assert set(call.body["NodeNames"]) == {b, c}
    await assert_not_overcommitted(cluster)


async def test_an_extender_that_refuses_every_node_is_the_pods_reason(cluster: Any) -> None:
    nodes = await create_nodes(cluster, 2, cpu="4", memory="8Gi")
    rules = ExtenderRules(fail=frozenset(nodes[:1]), unresolvable=frozenset(nodes[1:]))
    name = cluster.unique_name("ext")
    async with (
        serve_extender(rules) as server,
        running_scheduler(cluster, name, extenders=[server.entry(nodeCacheCapable=True)]) as app,
    ):
        [pod] = await create_pods(cluster, 1, name)

        async def reported() -> bool:
            found = await _condition(cluster, pod)
            return found is not None and found["status"] == "False"

        await until(reported, within=30)
        condition = await _condition(cluster, pod)
        assert condition is not None
        assert condition["reason"] == "Unschedulable"
        message = condition["message"]
        assert message.startswith("0/")
        assert f"1 node {nodes[0]} failed the test extender" in message
        assert f"1 node {nodes[1]} failed the test extender and is unresolvable" in message
        assert app.scheduler.stats.unschedulable >= 1
        assert not server.calls_of("prioritize")  # no node left to score
    assert not await _bound(cluster)


async def test_other_pods_are_scheduled_while_one_waits_for_its_extender(cluster: Any) -> None:
    """The extender manages example.com/gpu (ignored by the in-tree fit) and never answers
    until it stops. The GPU pod's filter call is in flight while every other pod binds;
    once the extender goes away the GPU pod gets an error naming it, and is retried."""
    await create_nodes(cluster, 2, cpu="4", memory="8Gi")
    name = cluster.unique_name("ext")
    managed = [{"name": GPU, "ignoredByScheduler": True}]
    async with AsyncExitStack() as extender_stack:
        server = await extender_stack.enter_async_context(
            serve_extender(ExtenderRules(faults={"filter": "hang"}))
        )
        extenders = [server.entry(managedResources=managed, httpTimeout="60s")]
        async with running_scheduler(cluster, name, extenders=extenders) as app:
            gpu_pod = cluster.unique_name("gpu")
            container = {
                "name": "c",
                "image": "registry.k8s.io/pause:3.9",
                "resources": {"requests": {GPU: "1"}, "limits": {GPU: "1"}},
            }
            await cluster.create_pod(gpu_pod, scheduler_name=name, spec={"containers": [container]})
            async with asyncio.timeout(30):
                await server.wait_for_calls(1, "filter")
            others = await create_pods(cluster, 6, name, cpu="100m", memory="64Mi")

            async def others_bound() -> bool:
                return set(others) <= set(await _bound(cluster))

            await until(others_bound, within=60)
            assert gpu_pod not in await _bound(cluster)
            assert app.scheduler.binder.consulting == 1  # still waiting for its answer
            assert len(server.calls_of("filter")) == 1  # only the GPU pod was sent
            assert app.scheduler.stats.bound == len(others)

            # the extender goes away: the call fails, the pod is told why and retried
            await extender_stack.aclose()

            async def told() -> bool:
                found = await _condition(cluster, gpu_pod)
                return found is not None and server.url in found.get("message", "")

            await until(told, within=30)
            await until(lambda: _ready(app.scheduler.binder.consulting == 0), within=30)
    assert gpu_pod not in await _bound(cluster)


async def _ready(value: bool) -> bool:
    return value
