"""Inter-pod anti-affinity, live: replicas spread one per node, the extra one reported."""

from __future__ import annotations

import asyncio
from typing import Any

from scheduler_harness import pods_of, running_scheduler, until

ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": {"app": "web"}},
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
}


async def test_required_anti_affinity_spreads_replicas_one_per_node(cluster: Any) -> None:
    name = cluster.unique_name("sched")
    nodes = [cluster.unique_name("n") for _ in range(3)]
    for node in nodes:
        await cluster.create_node(node, cpu="4", memory="8Gi")
    async with running_scheduler(cluster, name):
        replicas = [f"web-{i}" for i in range(4)]
        # created at once: the scheduler must count each assumed pod before the next decision
        await asyncio.gather(
            *(
                cluster.create_pod(
                    p, scheduler_name=name, labels={"app": "web"}, spec={"affinity": ANTI}
                )
                for p in replicas
            )
        )

        async def three_bound_one_reported() -> bool:
            pods = await pods_of(cluster)
            bound = [p for p in pods if p["spec"].get("nodeName")]
            pending = [p for p in pods if not p["spec"].get("nodeName")]
            reported = [
                c
                for p in pending
                for c in p.get("status", {}).get("conditions", [])
                if c["type"] == "PodScheduled" and c["status"] == "False"
            ]
            return len(bound) == 3 and len(reported) == 1

        await until(three_bound_one_reported, within=30)
        pods = await pods_of(cluster)
        assert sorted(p["spec"]["nodeName"] for p in pods if p["spec"].get("nodeName")) == sorted(
            nodes
        )
        [pending] = [p for p in pods if not p["spec"].get("nodeName")]
        condition = next(c for c in pending["status"]["conditions"] if c["type"] == "PodScheduled")
        assert "3 node(s) didn't match pod anti-affinity rules" in condition["message"]


async def test_a_pod_blocked_by_anti_affinity_binds_once_the_pod_in_its_way_is_gone(
    cluster: Any,
) -> None:
    """InterPodAffinity declares pod deletions among the events that may undo its
    rejection: the parked pod is retried at once, not at the 5-minute flush (before: it
    waited for the flush, as no interest was registered for the plugin)."""
    name = cluster.unique_name("sched")
    node = cluster.unique_name("n")
    await cluster.create_node(node, cpu="4", memory="8Gi")
    pods = f"/api/v1/namespaces/{cluster.namespace}/pods"
    async with running_scheduler(cluster, name) as app:
        await cluster.create_pod("web-0", scheduler_name=name, labels={"app": "web"})

        async def bound(pod: str) -> bool:
            return bool((await cluster.rest.get(f"{pods}/{pod}"))["spec"].get("nodeName"))

        await until(lambda: bound("web-0"), within=30)
        await cluster.create_pod(
            "web-1", scheduler_name=name, labels={"app": "web"}, spec={"affinity": ANTI}
        )

        async def parked() -> bool:
            return app.queue.where(f"{cluster.namespace}/web-1") == "unschedulable"

        await until(parked, within=30)
        await cluster.rest.request("DELETE", f"{pods}/web-0", body={"gracePeriodSeconds": 0})
        await until(lambda: bound("web-1"), within=20)  # far below the 300 s flush
