"""One valid pod must never stop asched (issue 10), live on both backends.

Each pod below is accepted by a genuine kube-apiserver (every quantity is valid alone; the
server caps each at int64's maximum), yet its requests are beyond what asched schedules
(asched.cluster.bounds). Before the fix the first one crashed the scheduling loop with an
OverflowError and the second was ignored silently. Now each is reported on the pod, with
the field named, and ordinary pods around them are scheduled.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scheduler_harness import (
    assert_not_overcommitted,
    leader_election,
    running_scheduler,
    until,
)

from asched import metrics
from asched.cluster.pod_shapes import PodShapes
from asched.errors import DecodeError


def _pod(name: str, scheduler: str, *requests: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler,
            "containers": [
                {"name": f"c{i}", "image": "pause", "resources": {"requests": r}}
                for i, r in enumerate(requests)
            ],
        },
    }


POISON = [
    # 2 x 7Ei = 16,140,901,064,495,857,664 bytes: beyond int64 (the crash of the report)
    pytest.param(
        ({"memory": "7Ei"}, {"memory": "7Ei"}),
        "spec.containers[0].resources.requests.memory",
        id="two containers of 7Ei",
    ),
    # 999999 * 2^50 is capped by the API server at int64's maximum, 9,223,372,036,854,775,807
    pytest.param(
        ({"memory": "999999Pi"},),
        "spec.containers[0].resources.requests.memory",
        id="999999Pi",
    ),
    # 9,223,372,036,854,775 cores = 9,223,372,036,854,775,000 millicores each: int64 only just
    pytest.param(
        ({"cpu": "9223372036854775"}, {"cpu": "9223372036854775"}),
        "spec.containers[0].resources.requests.cpu",
        id="two containers of 9223372036854775 cores",
    ),
    # each container is in range (2^52 bytes), their sum (2^53) is one byte too many
    pytest.param(
        ({"memory": "4Pi"}, {"memory": "4Pi"}),
        "the pod's total memory request",
        id="in range alone, out of range summed",
    ),
]


@pytest.mark.parametrize(("requests", "field"), POISON)
async def test_poison_pod_is_reported_and_the_scheduler_goes_on(
    cluster: Any, requests: tuple[dict[str, str], ...], field: str
) -> None:
    name = cluster.unique_name("sched")
    node = cluster.unique_name("n")
    await cluster.create_node(node, cpu="4", memory="8Gi")
    pods = f"/api/v1/namespaces/{cluster.namespace}/pods"
    async with running_scheduler(cluster, name) as app:
        poison = cluster.unique_name("poison")
        await cluster.rest.create(pods, _pod(poison, name, *requests))
        before = cluster.unique_name("ok")
        await cluster.create_pod(before, scheduler_name=name, cpu="100m", memory="100Mi")

        async def reported() -> bool:
            status = (await cluster.rest.get(f"{pods}/{poison}")).get("status", {})
            return any(
                c["type"] == "PodScheduled" and c["status"] == "False"
                for c in status.get("conditions", [])
            )

        async def bound(pod: str) -> bool:
            return bool((await cluster.rest.get(f"{pods}/{pod}"))["spec"].get("nodeName"))

        await until(reported, within=30)
        await until(lambda: bound(before), within=30)
        condition = next(
            c
            for c in (await cluster.rest.get(f"{pods}/{poison}"))["status"]["conditions"]
            if c["type"] == "PodScheduled"
        )
        assert condition["reason"] == "Unschedulable"
        assert field in condition["message"]
        assert "more than asched can schedule" in condition["message"]
        assert condition["message"].startswith("0/")

        # the loop is alive: a pod created after the poison pod's report binds too
        after = cluster.unique_name("ok")
        await cluster.create_pod(after, scheduler_name=name, cpu="100m", memory="100Mi")
        await until(lambda: bound(after), within=30)
        assert not app.task.done()
        # the API can show the binding before the binding task has counted its answer
        await until(lambda: _true(app.scheduler.stats.bound == 2), within=10)
        assert not await bound(poison)

        events = await cluster.rest.list_all(
            f"/apis/events.k8s.io/v1/namespaces/{cluster.namespace}/events"
        )
        notes = [
            e["note"]
            for e in events
            if e.get("reason") == "FailedScheduling" and e["regarding"]["name"] == poison
        ]
        assert len(notes) == 1, notes
        assert field in notes[0]
        await assert_not_overcommitted(cluster)


async def test_stop_is_graceful_with_a_poison_pod_queued(cluster: Any) -> None:
    """The poison pod parks (no cluster event can help it) and a stop is still clean."""
    name = cluster.unique_name("sched")
    await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    pods = f"/api/v1/namespaces/{cluster.namespace}/pods"
    async with running_scheduler(cluster, name) as app:
        poison = cluster.unique_name("poison")
        await cluster.rest.create(pods, _pod(poison, name, {"memory": "7Ei"}, {"memory": "7Ei"}))
        await until(lambda: _true(app.scheduler.stats.unschedulable >= 1), within=30)
        # parked until its own update or the 5-minute flush, not retried on backoff
        assert app.queue.where(f"{cluster.namespace}/{poison}") == "unschedulable"
        running = app.task
    await asyncio.wait_for(asyncio.shield(running), timeout=5)
    assert running.exception() is None


async def _true(value: bool) -> bool:
    return value


async def test_a_pod_asched_cannot_decode_is_reported_on_the_pod(
    cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decoder gap (simulated for one labelled pod: the API server accepts everything the
    decoder refuses today) must not leave the pod Pending with nothing said: PodScheduled
    False and one FailedScheduling event naming the field, once; the rest schedules."""
    real_decode = PodShapes.decode  # what the ingest decodes pods with

    def decode_with_a_gap(self: PodShapes, raw: Any) -> Any:
        if (raw.get("metadata", {}).get("labels") or {}).get("gap") == "yes":
            raise DecodeError(f"Pod {cluster.namespace}/odd", "spec.odd", "not understood")
        return real_decode(self, raw)

    monkeypatch.setattr(PodShapes, "decode", decode_with_a_gap)
    name = cluster.unique_name("sched")
    await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    pods = f"/api/v1/namespaces/{cluster.namespace}/pods"
    before = metrics.REGISTRY.get_sample_value("asched_undecodable_objects_total", {"kind": "pods"})
    async with running_scheduler(cluster, name):
        odd = _pod("odd", name, {"cpu": "100m"})
        odd["metadata"]["labels"] = {"gap": "yes"}
        await cluster.rest.create(pods, odd)
        fine = cluster.unique_name("ok")
        await cluster.create_pod(fine, scheduler_name=name, cpu="100m", memory="100Mi")

        async def reported() -> bool:
            status = (await cluster.rest.get(f"{pods}/odd")).get("status", {})
            return any(
                c["type"] == "PodScheduled" and "spec.odd: not understood" in c.get("message", "")
                for c in status.get("conditions", [])
            )

        async def bound() -> bool:
            return bool((await cluster.rest.get(f"{pods}/{fine}"))["spec"].get("nodeName"))

        await until(reported, within=30)
        await until(bound, within=30)
        events = await cluster.rest.list_all(
            f"/apis/events.k8s.io/v1/namespaces/{cluster.namespace}/events"
        )
        notes = [
            e["note"]
            for e in events
            if e.get("reason") == "FailedScheduling" and e["regarding"]["name"] == "odd"
        ]
        assert notes == [
            f"pod cannot be scheduled: Pod {cluster.namespace}/odd: spec.odd: not understood"
        ]
    after = metrics.REGISTRY.get_sample_value("asched_undecodable_objects_total", {"kind": "pods"})
    # the pod's own status write echoes back through the watch: counted again, said once
    assert (after or 0) - (before or 0) >= 1


async def test_a_crashing_leader_releases_its_lease(cluster: Any) -> None:
    """If a root task fails anyway (a bug), the process fails fast (exit 1) but gives its
    lease back first: a standby need not wait a whole leaseDuration."""
    name = cluster.unique_name("sched")
    lease = cluster.unique_name("lease")

    def crash_the_gauges_once_leading(app: Any) -> None:
        async def gauges(health: Any) -> None:
            await app.scheduler.binder.running.wait()
            raise RuntimeError("a bug in a root task")

        app._gauges = gauges

    path = f"/apis/coordination.k8s.io/v1/namespaces/{cluster.namespace}/leases/{lease}"
    async with running_scheduler(
        cluster,
        name,
        prepare=crash_the_gauges_once_leading,
        leaderElection=leader_election(cluster, lease),
    ) as running:
        with pytest.raises(ExceptionGroup) as failure:
            await asyncio.wait_for(asyncio.shield(running.task), timeout=10)
        assert failure.group_contains(RuntimeError, match="a bug in a root task")
        holder = (await cluster.rest.get(path))["spec"].get("holderIdentity")
        assert not holder  # released: "" (the API may drop the empty field)
