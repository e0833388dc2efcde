"""Preemption, live on both backends.

No kubelet runs here: a victim deleted with its grace period stays ``Terminating``
until the test, standing in for the kubelet, finishes it (deletes it with grace 0).
That makes every step observable: the victims' DisruptionTarget condition, their
graceful deletion, the preemptor's nomination, and the bind once the room is free.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from scheduler_harness import pods_of, running_scheduler, until

GRACE = 3600  # long enough that only the test (the "kubelet") ever ends the victims


@pytest.fixture
async def priorities(cluster: Any) -> AsyncIterator[dict[str, str]]:
    """Four PriorityClasses (low 10, guarded 20, mid 100, high 1000); deleted afterwards."""
    suffix = uuid.uuid4().hex[:8]
    names = {}
    for level, value in (("low", 10), ("guarded", 20), ("mid", 100), ("high", 1000)):
        name = f"{level}-{suffix}"
        await cluster.rest.create(
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            },
        )
        names[level] = name
    yield names
    for name in names.values():
        await cluster.rest.delete(f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")


async def _budget(cluster: Any, name: str, labels: dict[str, str]) -> None:
    """A PDB allowing no disruption (no controller computes its status: 0 allowed)."""
    await cluster.rest.create(
        f"/apis/policy/v1/namespaces/{cluster.namespace}/poddisruptionbudgets",
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": labels}},
        },
    )


async def _bound_pod(
    cluster: Any, name: str, node: str, priority: str, labels: dict[str, str] | None = None
) -> None:
    await cluster.create_pod(
        name,
        cpu="500m",
        node_name=node,
        labels=labels or {},
        termination_grace_period_seconds=GRACE,
        spec={"priorityClassName": priority},
    )


async def _pending(cluster: Any, name: str, scheduler: str, priority: str) -> None:
    await cluster.create_pod(
        name, cpu="1", scheduler_name=scheduler, spec={"priorityClassName": priority}
    )


async def _by_name(cluster: Any) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in await pods_of(cluster)}


async def _finish_terminating(cluster: Any) -> list[str]:
    """What a kubelet does for pods being deleted: confirm with grace 0."""
    done = []
    for name, pod in (await _by_name(cluster)).items():
        if pod["metadata"].get("deletionTimestamp"):
            path = f"/api/v1/namespaces/{cluster.namespace}/pods/{name}"
            await cluster.rest.delete(path, grace_period_seconds=0)
            done.append(name)
    return sorted(done)


async def _preempted_events(cluster: Any) -> list[dict[str, Any]]:
    items = await cluster.rest.list_all(f"/api/v1/namespaces/{cluster.namespace}/events")
    return [e for e in items if e.get("reason") == "Preempted"]


async def test_preemption_spares_budgeted_pods_deletes_gracefully_and_binds_after(
    cluster: Any, priorities: dict[str, str]
) -> None:
    name = cluster.unique_name("sched")
    n1, n2 = cluster.unique_name("n"), cluster.unique_name("n")
    for node in (n1, n2):
        await cluster.create_node(node, cpu="1", memory="8Gi")
    # n1's pods are the cheaper victims by priority (10 < 20), but a PDB protects them
    await _budget(cluster, cluster.unique_name("pdb"), {"app": "guarded"})
    await _bound_pod(cluster, "g1", n1, priorities["low"], {"app": "guarded"})
    await _bound_pod(cluster, "g2", n1, priorities["low"], {"app": "guarded"})
    await _bound_pod(cluster, "f1", n2, priorities["guarded"], {"app": "free"})
    await _bound_pod(cluster, "f2", n2, priorities["guarded"], {"app": "free"})
    async with running_scheduler(cluster, name) as running:
        await _pending(cluster, "hi", name, priorities["high"])

        async def victims_terminating() -> bool:
            pods = await _by_name(cluster)
            return all(pods[v]["metadata"].get("deletionTimestamp") for v in ("f1", "f2"))

        await until(victims_terminating, within=30)
        pods = await _by_name(cluster)
        for victim in ("f1", "f2"):
            meta, status = pods[victim]["metadata"], pods[victim]["status"]
            assert meta["deletionGracePeriodSeconds"] == GRACE  # graceful, not forced
            [target] = [c for c in status["conditions"] if c["type"] == "DisruptionTarget"]
            assert (target["status"], target["reason"]) == ("True", "PreemptionByScheduler")
        for spared in ("g1", "g2"):
            assert not pods[spared]["metadata"].get("deletionTimestamp")

        async def nominated() -> bool:
            pods = await _by_name(cluster)
            return bool(pods["hi"]["status"].get("nominatedNodeName") == n2)

        await until(nominated, within=30)
        assert not (await _by_name(cluster))["hi"]["spec"].get("nodeName")  # still waiting
        assert await _finish_terminating(cluster) == ["f1", "f2"]

        async def bound() -> bool:
            return bool((await _by_name(cluster))["hi"]["spec"].get("nodeName"))

        await until(bound, within=30)
        assert (await _by_name(cluster))["hi"]["spec"]["nodeName"] == n2

        async def two_events() -> bool:
            return len(await _preempted_events(cluster)) >= 2

        await until(two_events, within=30)
        events = await _preempted_events(cluster)
        subjects = sorted(
            (e.get("involvedObject") or e.get("regarding") or {}).get("name") for e in events
        )
        assert subjects == ["f1", "f2"]  # one event per victim, and no second preemption
        notes = [e.get("message") or e.get("note") or "" for e in events]
        assert all(f"on node {n2}" in note for note in notes)
        pods = await _by_name(cluster)
        for spared in ("g1", "g2"):  # the budgeted pods survived the whole episode
            assert not pods[spared]["metadata"].get("deletionTimestamp")
        stats = running.evictions.stats
        assert (stats.evicted, stats.failed, stats.rejected_waiting) == (2, 0, 0)


async def test_a_higher_priority_preemptor_clears_the_lower_nomination(
    cluster: Any, priorities: dict[str, str]
) -> None:
    name = cluster.unique_name("sched")
    node = cluster.unique_name("n")
    await cluster.create_node(node, cpu="1", memory="8Gi")
    await _bound_pod(cluster, "l1", node, priorities["low"])
    await _bound_pod(cluster, "l2", node, priorities["low"])
    async with running_scheduler(cluster, name) as running:
        await _pending(cluster, "mid", name, priorities["mid"])

        async def nominated(pod: str) -> bool:
            return (await _by_name(cluster))[pod]["status"].get("nominatedNodeName") == node

        await until(lambda: nominated("mid"), within=30)

        async def low_terminating() -> bool:
            pods = await _by_name(cluster)
            return all(pods[v]["metadata"].get("deletionTimestamp") for v in ("l1", "l2"))

        await until(low_terminating, within=30)
        pods = await _by_name(cluster)
        for victim in ("l1", "l2"):  # deleted with their own grace period, not forced
            assert pods[victim]["metadata"]["deletionGracePeriodSeconds"] == GRACE
        # the victims are still terminating when a higher-priority pod arrives: it takes over
        await _pending(cluster, "high", name, priorities["high"])
        await until(lambda: nominated("high"), within=30)

        async def mid_cleared() -> bool:
            return not (await _by_name(cluster))["mid"]["status"].get("nominatedNodeName")

        await until(mid_cleared, within=30)
        assert await _finish_terminating(cluster) == ["l1", "l2"]

        async def high_bound_mid_reported() -> bool:
            pods = await _by_name(cluster)
            conditions = pods["mid"]["status"].get("conditions", [])
            return pods["high"]["spec"].get("nodeName") == node and any(
                "No preemption victims found" in c.get("message", "") for c in conditions
            )

        await until(high_bound_mid_reported, within=30)
        pods = await _by_name(cluster)
        assert not pods["mid"]["spec"].get("nodeName")
        assert not pods["mid"]["status"].get("nominatedNodeName")  # nothing lower left nominated
        # mid evicted l1, l2; high evicted them again (already terminating) and cleared mid
        stats = running.evictions.stats
        assert (stats.evicted, stats.failed, stats.nominations_cleared) == (4, 0, 1)
        assert running.table.nominations.node_of(f"{cluster.namespace}/mid") == ""
