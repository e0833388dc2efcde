"""Run an in-process asched App against a test's cluster, isolated by profile and nodes.

Each test gets its own profile name, and the profile's NodeAffinity ``addedAffinity``
pins it to the nodes the test created (labelled with the test id), so tests sharing a
session server never schedule onto each other's nodes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from asched.api.client import KubeClient
from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.scheduler.app import App
from asched.scheduler.leader import LeaderElector
from asched.scheduler.options import Options
from asched.serving.health import HealthState
from tests.configs import load_config

TEST_LABEL = "asched.test/id"


def config_for(
    cluster: Any, name: str, *, profile: dict[str, Any] | None = None, **top: Any
) -> dict[str, Any]:
    """The test's configuration: one profile ``name`` pinned to the test's nodes;
    ``profile`` adds to it (its ``pluginConfig`` entries join the pinning one)."""
    pinned = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": TEST_LABEL, "operator": "In", "values": [cluster.test_id]}
                    ]
                }
            ]
        }
    }
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 2,
        "leaderElection": {"leaderElect": False},
        **top,
        "profiles": [
            {
                **(profile or {}),
                "schedulerName": name,
                "pluginConfig": [
                    {"name": "NodeAffinity", "args": {"addedAffinity": pinned}},
                    *(profile or {}).get("pluginConfig", ()),
                ],
            }
        ],
    }


def leader_election(cluster: Any, lease: str) -> dict[str, Any]:
    """Short durations so takeovers happen in seconds (lease 2 s, renew 1.5 s, retry 0.4 s)."""
    return {
        "leaderElect": True,
        "leaseDuration": "2s",
        "renewDeadline": "1.5s",
        "retryPeriod": "0.4s",
        "resourceName": lease,
        "resourceNamespace": cluster.namespace,
    }


@dataclass
class Running:
    """A running App (attributes of the App are reachable directly), its elector and task."""

    app: App
    elector: LeaderElector | None
    health: HealthState
    task: asyncio.Task[None]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)


@asynccontextmanager
async def running_scheduler(
    cluster: Any,
    name: str,
    *,
    max_in_flight: int = 64,
    prepare: Callable[[App], None] | None = None,
    profile: dict[str, Any] | None = None,
    **top: Any,
) -> AsyncIterator[Running]:
    """An App running in this loop (with an elector when ``leaderElection`` is given).

    Cancel ``running.task`` to simulate a crash (no release, in-flight binds rolled back).
    """
    config = load_config(config_for(cluster, name, profile=profile, **top))
    client = await KubeClient.connect(str(cluster.kubeconfig))
    app = App(config, client, Options(max_in_flight_binds=max_in_flight, seed=7, watch_timeout=30))
    elector = None
    if config.leader_election.leader_elect:
        elector = LeaderElector(client, config.leader_election, identity=app.options.identity)
    health = HealthState()
    if prepare is not None:
        prepare(app)
    running = Running(
        app, elector, health, asyncio.create_task(app.run(elector=elector, health=health))
    )
    try:
        async with asyncio.timeout(60):
            await app.ready.wait()
        yield running
    finally:
        app.stop()
        try:
            if not running.task.done():
                async with asyncio.timeout(30):
                    await running.task
        finally:
            await client.close()


async def until(check: Callable[[], Awaitable[bool]], *, within: float, every: float = 0.2) -> None:
    """Poll ``check`` until it is true; fail after ``within`` seconds of loop time."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {within}s")
        await asyncio.sleep(every)


async def pods_of(cluster: Any) -> list[dict[str, Any]]:
    return list(await cluster.rest.list_all(f"/api/v1/namespaces/{cluster.namespace}/pods"))


async def assert_not_overcommitted(cluster: Any) -> None:
    """Every test node's bound pods fit its allocatable (cpu, memory, pods)."""
    nodes = await cluster.rest.list_all(
        "/api/v1/nodes", label_selector=f"{TEST_LABEL}={cluster.test_id}"
    )
    pods = [decode_pod(p) for p in await pods_of(cluster)]
    for raw in nodes:
        node = decode_node(raw)
        mine = [p for p in pods if p.node_name == node.name]
        assert len(mine) <= node.allocatable["pods"], node.name
        for resource in ("cpu", "memory"):
            used = sum(p.requests.get(resource, 0) for p in mine)
            assert used <= node.allocatable[resource], (node.name, resource, used)


async def rebuilt_table(cluster: Any) -> NodeTable:
    """A NodeTable built from what the API holds now (test nodes and their pods)."""
    table = NodeTable()
    nodes = await cluster.rest.list_all(
        "/api/v1/nodes", label_selector=f"{TEST_LABEL}={cluster.test_id}"
    )
    for raw in nodes:
        table.upsert_node(decode_node(raw))
    for raw in await pods_of(cluster):
        pod = decode_pod(raw)
        if pod.node_name:
            table.add_pod(pod, pod.node_name)
    return table


def assert_tables_equal(live: NodeTable, rebuilt: NodeTable) -> None:
    """Per node: requested, free and non-zero columns identical."""
    for name, row in rebuilt.index.items():
        live_row = live.row_of(name)
        assert live_row is not None, name
        for axis, resource in enumerate(rebuilt.axes):
            live_axis = live.axis_index[resource]
            assert live.requested[live_axis][live_row] == rebuilt.requested[axis][row], (
                name,
                resource,
            )
            assert live.free[live_axis][live_row] == rebuilt.free[axis][row], (name, resource)
        assert live.nonzero_cpu[live_row] == rebuilt.nonzero_cpu[row]
        assert live.nonzero_memory[live_row] == rebuilt.nonzero_memory[row]
    assert set(live.index) >= set(rebuilt.index)  # every node the API holds is a live row
