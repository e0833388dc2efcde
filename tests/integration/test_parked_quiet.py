"""A parked unschedulable pod is left alone: no retry storm, no writes, until the cluster changes.

kube-scheduler parks a pod that fits nowhere until an event that may help it (or the
5-minute flush), does not rewrite a PodScheduled condition that did not change, and does
not requeue a pod for an update of its status (its own write included). Together these
make a parked pod silent; without them each retry wrote the condition again and the
write's MODIFIED event started the next retry (issue 10, finding 1).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scheduler_harness import running_scheduler, until

from asched.api.client import KubeClient
from asched.cluster.decode import decode_pod
from asched.scheduler.reporting import Reporter
from asched.tools.backends.rest import pods_path

#: How long the cluster stays quiet while the pod's writes are counted, seconds.
QUIET_SECONDS = 60.0


def scheduled_condition(pod: dict[str, Any]) -> dict[str, Any] | None:
    for condition in pod.get("status", {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            return dict(condition)
    return None


async def watch_writes(cluster: Any, name: str, since: str, seconds: float) -> list[str]:
    """Every event the API sends for pod ``name`` after ``since`` within ``seconds``
    (watching again from the last version seen if the server ends a watch early)."""
    seen: list[str] = []

    async def collect() -> None:
        version = since
        while True:
            async for event in cluster.rest.watch(
                pods_path(cluster.namespace),
                resource_version=version,
                field_selector=f"metadata.name={name}",
            ):
                version = event.get("object", {}).get("metadata", {}).get("resourceVersion")
                seen.append(f"{event['type']} rv={version}")

    try:
        async with asyncio.timeout(seconds):
            await collect()
    except TimeoutError:
        pass
    return seen


@pytest.mark.slow
async def test_parked_pod_is_not_written_during_a_quiet_minute(cluster: Any) -> None:
    name = cluster.unique_name("sched")
    for _ in range(2):
        await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    async with running_scheduler(cluster, name) as app:
        pod = cluster.unique_name("p")
        await cluster.create_pod(pod, scheduler_name=name, cpu="9", memory="1Gi")
        path = pods_path(cluster.namespace, pod)

        async def reported() -> bool:
            condition = scheduled_condition(await cluster.rest.get(path))
            return condition is not None and condition["reason"] == "Unschedulable"

        await until(reported, within=30)
        before = await cluster.rest.get(path)
        attempts = app.scheduler.stats.attempts

        writes = await watch_writes(
            cluster, pod, before["metadata"]["resourceVersion"], QUIET_SECONDS
        )

        after = await cluster.rest.get(path)
        # nothing changed in the cluster: not one write to the pod in the quiet minute
        assert writes == []
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        assert scheduled_condition(after) == scheduled_condition(before)
        # parked until a relevant event or the 5-minute flush: at most one more attempt
        # (the harness's backoff is 1-2 s, so each retry would be one more every ~2 s)
        assert app.scheduler.stats.attempts - attempts <= 1
        assert app.queue.where(f"{cluster.namespace}/{pod}") == "unschedulable"

        # a node too small is still a relevant event: one more attempt, a new message
        # ("0/3 nodes"), and the status stays False so lastTransitionTime stays too
        await cluster.create_node(cluster.unique_name("small"), cpu="1", memory="8Gi")

        async def says_three_nodes() -> bool:
            condition = scheduled_condition(await cluster.rest.get(path))
            return condition is not None and condition["message"].startswith("0/3 nodes")

        await until(says_three_nodes, within=30)
        condition = scheduled_condition(await cluster.rest.get(path))
        assert condition is not None
        first = scheduled_condition(before)
        assert first is not None
        assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
        assert condition["lastTransitionTime"] == first["lastTransitionTime"]

        # a node big enough is a relevant event: the pod is scheduled there
        big = cluster.unique_name("big")
        await cluster.create_node(big, cpu="16", memory="8Gi")

        async def bound() -> bool:
            return bool((await cluster.rest.get(path))["spec"].get("nodeName") == big)

        await until(bound, within=30)


OLD = "0/2 nodes are available: 2 Insufficient cpu."
NEW = "0/3 nodes are available: 3 Insufficient cpu."


async def test_reporter_writes_a_repeated_failure_once(cluster: Any) -> None:
    pod = cluster.unique_name("p")
    path = pods_path(cluster.namespace, pod)
    await cluster.create_pod(pod, scheduler_name=cluster.unique_name("nobody"))
    stale = decode_pod(await cluster.rest.get(path))  # as the watch saw it before any write
    client = await KubeClient.connect(str(cluster.kubeconfig))
    try:
        reporter = Reporter(client, instance="asched-test")
        for _ in range(5):
            # the cycle's report after each failed attempt: nominatedNodeName "" (preemption
            # found nothing) removes a nomination that is not there
            reporter.unschedulable(stale, OLD, "")
            await reporter.flush()
        first = await cluster.rest.get(path)
        # 5 reports with one answer: 1 patch, 4 found it current; 1 event, counted 5 times
        assert (reporter.conditions_patched, reporter.conditions_unchanged) == (1, 4)
        assert reporter.events_created == 1
        condition = scheduled_condition(first)
        assert condition is not None
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "False",
            "Unschedulable",
            OLD,
        )
        assert "nominatedNodeName" not in first["status"]

        # a restarted scheduler reads the condition from the pod and does not rewrite it
        restarted = Reporter(client, instance="asched-test-2")
        restarted.unschedulable(decode_pod(first), OLD, "")
        await restarted.flush()
        assert (restarted.conditions_patched, restarted.conditions_unchanged) == (0, 1)
        unchanged = await cluster.rest.get(path)
        assert unchanged["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]

        # a new message is written; the status stays False, so lastTransitionTime stays
        # (set to a time long past first, so that "now" could not pass for it)
        long_ago = "2020-01-01T00:00:00Z"
        await cluster.rest.patch(
            f"{path}/status",
            {"status": {"conditions": [{"type": "PodScheduled", "lastTransitionTime": long_ago}]}},
            patch_type="strategic",
        )
        restarted.unschedulable(decode_pod(first), NEW, "")
        await restarted.flush()
        assert restarted.conditions_patched == 1
        rewritten = scheduled_condition(await cluster.rest.get(path))
        assert rewritten is not None
        assert (rewritten["message"], rewritten["lastTransitionTime"]) == (NEW, long_ago)
    finally:
        await client.close()
