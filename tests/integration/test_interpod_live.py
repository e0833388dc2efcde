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
