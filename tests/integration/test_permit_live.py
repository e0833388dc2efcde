"""A Permit plugin that allows, rejects, waits (then is allowed) and times out, live."""

from __future__ import annotations

import asyncio
from typing import Any

from scheduler_harness import assert_tables_equal, pods_of, rebuilt_table, running_scheduler, until

from asched.framework.status import Status

PLUGIN = "TestPermit"


class TestPermit:
    """Decides by the pod's ``permit`` label."""

    name = PLUGIN

    def permit(self, state: Any, pod: Any, node: str) -> tuple[Status, float]:
        mode = pod.labels.get("permit", "allow")
        if mode == "reject":
            return Status.unschedulable("rejected by TestPermit", plugin=PLUGIN), 0.0
        if mode == "wait":
            return Status.wait(plugin=PLUGIN), 60.0
        if mode == "timeout":
            return Status.wait(plugin=PLUGIN), 0.5
        return Status.success(), 0.0


def with_permit(app: Any) -> None:
    for profile in app.profiles.values():
        profile.framework.permit.append(TestPermit())


async def test_permit_allow_reject_wait_and_timeout(cluster: Any) -> None:
    name = cluster.unique_name("sched")
    node = cluster.unique_name("n")
    await cluster.create_node(node, cpu="4", memory="8Gi")
    async with running_scheduler(cluster, name, prepare=with_permit) as app:
        for mode in ("allow", "reject", "wait", "timeout"):
            await cluster.create_pod(f"pod-{mode}", scheduler_name=name, labels={"permit": mode})

        async def node_of(pod: str) -> str | None:
            return (await cluster.rest.get(f"/api/v1/namespaces/{cluster.namespace}/pods/{pod}"))[
                "spec"
            ].get("nodeName")

        async def allowed_bound() -> bool:
            return await node_of("pod-allow") == node

        await until(allowed_bound, within=30)
        key = f"{cluster.namespace}/pod-wait"

        async def is_waiting() -> bool:
            return any(w.key == key for w in app.scheduler.waiting)

        await until(is_waiting, within=30)
        # while it waits, its requests count on the node (assumed), and it is not bound
        assert key in app.ledger
        assert await node_of("pod-wait") is None
        waiting = next(w for w in app.scheduler.waiting if w.key == key)
        waiting.allow(PLUGIN)

        async def waited_bound() -> bool:
            return await node_of("pod-wait") == node

        await until(waited_bound, within=30)

        async def reported(pod: str, text: str) -> bool:
            events = await cluster.rest.list_all(
                f"/apis/events.k8s.io/v1/namespaces/{cluster.namespace}/events"
            )
            return any(e["regarding"]["name"] == pod and text in e.get("note", "") for e in events)

        async def rejected_reported() -> bool:
            return await reported("pod-reject", "rejected by TestPermit")

        async def timeout_reported() -> bool:
            return await reported(
                "pod-timeout", "rejected due to timeout after waiting 0.5s at plugin TestPermit"
            )

        await until(rejected_reported, within=30)
        await until(timeout_reported, within=30)
        assert await node_of("pod-reject") is None
        assert await node_of("pod-timeout") is None
        # the rejected and timed-out pods hold nothing on the node between attempts
        await asyncio.sleep(0.2)
        bound = {p["metadata"]["name"] for p in await pods_of(cluster) if p["spec"].get("nodeName")}
        assert bound == {"pod-allow", "pod-wait"}
        app.scheduler.waiting.reject_all("test over")  # release any retried waiter
        await until(lambda: _empty(app), within=10)
        assert_tables_equal(app.table, await rebuilt_table(cluster))


async def _empty(app: Any) -> bool:
    return len(app.ledger) == 0
