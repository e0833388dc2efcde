"""Gang scheduling live, on both backends: PodGroups (scheduler-plugins' CRD) and the
Coscheduling profile, all-or-nothing, with the whole-gang check before anything is assumed.

Nodes are 4 CPU each unless said otherwise; members ask for 1 CPU (so 4 fit a node).
"Waiting" is read from the running scheduler (pods assumed and held at Permit), so no
test sleeps to prove that nothing binds.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from gang_support import (
    bound_nodes,
    condition_message,
    coscheduling,
    create_group,
    create_members,
    install_crd,
    one_per_node,
)
from scheduler_harness import (
    assert_not_overcommitted,
    assert_tables_equal,
    rebuilt_table,
    running_scheduler,
    until,
)

from asched.tools.backends.errors import StatusError


@pytest.fixture
async def gang_cluster(cluster: Any) -> Any:
    await install_crd(cluster)
    return cluster


async def test_a_gang_of_four_waits_for_its_fourth_member(gang_cluster: Any) -> None:
    cluster = gang_cluster
    name = cluster.unique_name("sched")
    for _ in range(2):
        await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    async with running_scheduler(cluster, name, profile=coscheduling()) as running:
        await create_group(cluster, "job-a", 4)
        first = await create_members(cluster, "job-a", name, 3)

        async def told() -> bool:
            return "has 3 of 4 members" in await condition_message(cluster, first[0])

        # 3 of 4 members: PreFilter refuses them (scheduler-plugins' count), nothing is
        # assumed and the pods say why
        await until(told, within=30)
        message = await condition_message(cluster, first[0])
        assert (
            f"pod group {cluster.namespace}/job-a has 3 of 4 members: pre-filter pod "
            f"{first[0]} cannot find enough sibling pods, current pods number: 3, "
            "minMember of group: 4"
        ) in message
        assert await bound_nodes(cluster, first) == {}
        assert len(running.app.scheduler.waiting) == 0

        last = await create_members(cluster, "job-a", name, 1, prefix="job-a-last")

        async def all_bound() -> bool:
            return len(await bound_nodes(cluster, first + last)) == 4

        await until(all_bound, within=30)
        assert len(running.app.scheduler.waiting) == 0
        await assert_not_overcommitted(cluster)

        # the leader keeps the PodGroup's status: 4 members (>= minMember) and all 4
        # scheduled; no kubelet runs them, so none is Running yet: phase Scheduling
        path = f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{cluster.namespace}/podgroups"

        async def status_written() -> bool:
            group = await cluster.rest.get(f"{path}/job-a")
            return bool((group.get("status") or {}).get("scheduled") == 4)

        await until(status_written, within=30)
        status = (await cluster.rest.get(f"{path}/job-a"))["status"]
        assert status["phase"] == "Scheduling"
        assert (status.get("running", 0), status.get("failed", 0)) == (0, 0)
        assert status["scheduleStartTime"]


async def test_a_gang_larger_than_the_room_is_not_started(gang_cluster: Any) -> None:
    # room for 5: one node of 4 CPU and one of 1 CPU; the gang needs 6 members of 1 CPU
    cluster = gang_cluster
    name = cluster.unique_name("sched")
    await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    await cluster.create_node(cluster.unique_name("n"), cpu="1", memory="8Gi")
    async with running_scheduler(cluster, name, profile=coscheduling()) as running:
        await create_group(cluster, "big", 6)
        members = await create_members(cluster, "big", name, 6)

        async def reported() -> bool:
            return "cannot be placed together" in await condition_message(cluster, members[0])

        try:
            await until(reported, within=10)
        except AssertionError:
            raise AssertionError([await condition_message(cluster, m) for m in members]) from None
        message = await condition_message(cluster, members[0])
        # upstream's FitError shape, with the gang's reason: 2 nodes, 5 of 6 have room
        assert message.startswith("0/2 nodes are available: pod group ")
        assert "has 0 of 6 members placed: the 6 missing cannot be placed together" in message
        assert "(room for 5)" in message
        # nothing assumed, nothing waiting, nothing bound
        assert len(running.app.scheduler.waiting) == 0
        assert not [k for k in running.app.table.pods if k.split("/")[1] in members]
        assert await bound_nodes(cluster, members) == {}
        assert_tables_equal(running.app.table, await rebuilt_table(cluster))


async def test_two_gangs_that_do_not_both_fit(gang_cluster: Any) -> None:
    # room for 6 (two nodes of 3 CPU); gangs A and B of 4 members each, created interleaved:
    # the first admitted completes, the other holds nothing (no member assumed or waiting)
    cluster = gang_cluster
    name = cluster.unique_name("sched")
    for _ in range(2):
        await cluster.create_node(cluster.unique_name("n"), cpu="3", memory="8Gi")
    async with running_scheduler(cluster, name, profile=coscheduling()) as running:
        await create_group(cluster, "gang-a", 4)
        await create_group(cluster, "gang-b", 4)
        a: list[str] = []
        b: list[str] = []
        for index in range(4):
            a += await create_members(cluster, "gang-a", name, 1, prefix=f"gang-a-{index}")
            b += await create_members(cluster, "gang-b", name, 1, prefix=f"gang-b-{index}")

        async def one_complete() -> bool:
            bound = await bound_nodes(cluster, a + b)
            return len([p for p in bound if p in a]) == 4 or len([p for p in bound if p in b]) == 4

        await until(one_complete, within=30)
        bound = await bound_nodes(cluster, a + b)
        winner, loser = (a, b) if all(p in bound for p in a) else (b, a)
        assert all(p in bound for p in winner)

        async def loser_reported() -> bool:
            return "cannot be placed together" in await condition_message(cluster, loser[0])

        await until(loser_reported, within=30)
        assert not [p for p in loser if p in bound]
        table_pods = {key.split("/")[1] for key in running.app.table.pods}
        assert not table_pods & set(loser)  # no member of the loser holds anything
        assert len(running.app.scheduler.waiting) == 0
        await assert_not_overcommitted(cluster)


async def test_a_heterogeneous_gang(gang_cluster: Any) -> None:
    # a launcher of 3 CPU and 5 workers of 1 CPU on two nodes of 4 CPU: 3 + 5 = 8 CPU, so
    # the launcher must share a node with one worker and the other 4 workers fill the other
    cluster = gang_cluster
    name = cluster.unique_name("sched")
    for _ in range(2):
        await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    async with running_scheduler(cluster, name, profile=coscheduling()):
        await create_group(cluster, "mpi", 6)
        launcher = await create_members(cluster, "mpi", name, 1, cpu="3", prefix="mpi-launcher")
        workers = await create_members(cluster, "mpi", name, 5, prefix="mpi-worker")

        async def all_bound() -> bool:
            return len(await bound_nodes(cluster, launcher + workers)) == 6

        await until(all_bound, within=30)
        await assert_not_overcommitted(cluster)


async def test_a_member_of_a_missing_group_waits_until_the_group_appears(
    gang_cluster: Any,
) -> None:
    cluster = gang_cluster
    name = cluster.unique_name("sched")
    await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    async with running_scheduler(cluster, name, profile=coscheduling()):
        [member] = await create_members(cluster, "late", name, 1)

        async def reported() -> bool:
            return "not found" in await condition_message(cluster, member)

        await until(reported, within=30)
        message = await condition_message(cluster, member)
        assert f"pod group {cluster.namespace}/late not found" in message
        await create_group(cluster, "late", 1)

        async def bound() -> bool:
            return member in await bound_nodes(cluster, [member])

        await until(bound, within=30)


async def _three_nodes(cluster: Any) -> None:
    for _ in range(3):
        await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")


async def _repelling_gang(cluster: Any, name: str, group: str, **spec: Any) -> list[str]:
    """A gang of 4 members that repel each other (:func:`gang_support.one_per_node`): on
    3 nodes it is admitted, 3 members wait at Permit and the 4th fits nowhere."""
    await create_group(cluster, group, 4, **spec)
    return await create_members(
        cluster, group, name, 4, spec=one_per_node(group), labels={"repel": group}
    )


async def _stuck_gang(cluster: Any, name: str, running: Any, group: str) -> list[str]:
    """:func:`_repelling_gang`, once its 3 members wait at Permit. Returns the members."""
    members = await _repelling_gang(cluster, name, group)

    async def three_waiting() -> bool:
        return len(running.app.scheduler.waiting) == 3

    await until(three_waiting, within=30)
    assert await bound_nodes(cluster, members) == {}
    return members


async def test_the_timeout_rejects_waiting_members_and_rolls_them_back(
    gang_cluster: Any,
) -> None:
    # podGroupRejectPercentage 100: the 4th member's failure does not reject the others,
    # so they wait for the group's timeout (scheduleTimeoutSeconds 2)
    cluster = gang_cluster
    name = cluster.unique_name("sched")
    await _three_nodes(cluster)
    profile = coscheduling(wait_seconds=300, reject_percentage=100)
    async with running_scheduler(cluster, name, profile=profile) as running:
        group = "timed"
        members = await _repelling_gang(cluster, name, group, scheduleTimeoutSeconds=2)

        async def timed_out() -> bool:
            messages = [await condition_message(cluster, m) for m in members]
            return any("rejected due to timeout after waiting 2s" in m for m in messages)

        # one member times out; its Unreserve rejects the two others still waiting
        await until(timed_out, within=30)
        messages = [await condition_message(cluster, m) for m in members]
        timeout = next(m for m in messages if "timeout" in m)
        assert timeout.startswith(f"pod group {cluster.namespace}/{group} has "), timeout
        assert "at plugin Coscheduling" in timeout
        assert await bound_nodes(cluster, members) == {}
        # the gang retries and waits again; with the 4th member gone it is 3 of 4 and
        # PreFilter refuses it: then nothing may be left assumed, every row as the API says
        await cluster.rest.delete(
            f"/api/v1/namespaces/{cluster.namespace}/pods/{members[3]}", grace_period_seconds=0
        )

        async def quiet() -> bool:
            return len(running.app.scheduler.waiting) == 0 and "has 3 of 4 members" in (
                await condition_message(cluster, members[0])
            )

        await until(quiet, within=30)
        assert await bound_nodes(cluster, members[:3]) == {}
        assert_tables_equal(running.app.table, await rebuilt_table(cluster))


async def test_a_failing_member_releases_the_waiting_ones_at_once(gang_cluster: Any) -> None:
    # default podGroupRejectPercentage (10): the 4th member fits nowhere, 1 of 4 (25 %) is
    # missing, so PostFilter rejects the 3 waiting at once, long before their 300 s timeout
    cluster = gang_cluster
    name = cluster.unique_name("sched")
    await _three_nodes(cluster)
    async with running_scheduler(cluster, name, profile=coscheduling(wait_seconds=300)) as running:
        group = "released"
        members = await _repelling_gang(cluster, name, group)

        async def rejected() -> bool:
            messages = [await condition_message(cluster, m) for m in members]
            return any("optimistic rejection in PostFilter" in m for m in messages)

        await until(rejected, within=30)
        assert await bound_nodes(cluster, members) == {}
        assert_tables_equal(running.app.table, await rebuilt_table(cluster))


async def test_deleting_the_group_releases_its_waiting_members(gang_cluster: Any) -> None:
    cluster = gang_cluster
    name = cluster.unique_name("sched")
    await _three_nodes(cluster)
    profile = coscheduling(wait_seconds=300, reject_percentage=100)
    async with running_scheduler(cluster, name, profile=profile) as running:
        members = await _stuck_gang(cluster, name, running, "doomed")
        await cluster.rest.delete(
            f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{cluster.namespace}/podgroups/doomed"
        )

        async def released() -> bool:
            return len(running.app.scheduler.waiting) == 0

        await until(released, within=10)  # at once, not after the 300 s timeout
        assert await bound_nodes(cluster, members) == {}
        assert_tables_equal(running.app.table, await rebuilt_table(cluster))


async def test_a_restart_mid_gang_leaves_no_partial_gang(gang_cluster: Any) -> None:
    cluster = gang_cluster
    name = cluster.unique_name("sched")
    await _three_nodes(cluster)
    profile = coscheduling(wait_seconds=300, reject_percentage=100)
    async with running_scheduler(cluster, name, profile=profile) as running:
        members = await _stuck_gang(cluster, name, running, "restarted")
        running.task.cancel()  # a crash: waiting members are rolled back, nothing bound
        await asyncio.gather(running.task, return_exceptions=True)
    assert await bound_nodes(cluster, members) == {}
    async with running_scheduler(cluster, name, profile=profile) as again:

        async def three_waiting() -> bool:
            return len(again.app.scheduler.waiting) == 3

        await until(three_waiting, within=30)  # the same gang, the same stop at Permit
        assert await bound_nodes(cluster, members) == {}


async def test_the_higher_priority_gang_goes_first(gang_cluster: Any) -> None:
    # room for one gang of 4 (one node of 4 CPU); both gangs pending when the scheduler
    # starts; the high-priority one was created second and is placed
    cluster = gang_cluster
    name = cluster.unique_name("sched")
    high_class = f"gang-high-{uuid.uuid4().hex[:8]}"
    await cluster.rest.create(
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": high_class},
            "value": 1000,
        },
    )
    try:
        await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
        await create_group(cluster, "low", 4)
        await create_group(cluster, "high", 4)
        low = await create_members(cluster, "low", name, 4)
        high = await create_members(
            cluster, "high", name, 4, spec={"priorityClassName": high_class}
        )
        async with running_scheduler(cluster, name, profile=coscheduling()):

            async def high_bound() -> bool:
                return len(await bound_nodes(cluster, high)) == 4

            await until(high_bound, within=30)
            assert await bound_nodes(cluster, low) == {}
    finally:
        await cluster.rest.delete(f"/apis/scheduling.k8s.io/v1/priorityclasses/{high_class}")


async def test_a_workload_gang_of_upstreams_native_api(sim_cluster: Any) -> None:
    # KEP-4671: a Workload whose pod group "workers" is a gang of minCount 3, pods linked by
    # spec.workloadRef; served by the simulator only (kube-apiserver v1.37.2 has no
    # scheduling.k8s.io/v1alpha1: its Workload is v1beta1, and spec.schedulingGroup replaced
    # spec.workloadRef in v1.36)
    cluster = sim_cluster
    name = cluster.unique_name("sched")
    await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    await cluster.rest.create(
        f"/apis/scheduling.k8s.io/v1alpha1/namespaces/{cluster.namespace}/workloads",
        {
            "apiVersion": "scheduling.k8s.io/v1alpha1",
            "kind": "Workload",
            "metadata": {"name": "train", "namespace": cluster.namespace},
            "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 3}}}]},
        },
    )
    ref = {"workloadRef": {"name": "train", "podGroup": "workers"}}
    async with running_scheduler(cluster, name, profile=coscheduling()):
        pods = [cluster.unique_name("w") for _ in range(3)]
        for pod in pods[:2]:
            await cluster.create_pod(pod, scheduler_name=name, cpu="1", spec=ref)

        async def told() -> bool:
            return "has 2 of 3 members" in await condition_message(cluster, pods[0])

        await until(told, within=30)
        assert f"pod group {cluster.namespace}/train/workers" in (
            await condition_message(cluster, pods[0])
        )
        assert await bound_nodes(cluster, pods[:2]) == {}
        await cluster.create_pod(pods[2], scheduler_name=name, cpu="1", spec=ref)

        async def all_bound() -> bool:
            return len(await bound_nodes(cluster, pods)) == 3

        await until(all_bound, within=30)


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        pytest.param({"minMember": 0}, "spec.minMember", id="minMember below 1"),
        pytest.param(
            {"minMember": 2, "minResources": {"cpu": "two"}},
            "spec.minResources.cpu",
            id="a malformed quantity",
        ),
    ],
)
async def test_the_crd_refuses_a_bad_group(
    gang_cluster: Any, spec: dict[str, Any], field: str
) -> None:
    # the CRD's schema (upstream's) refuses these with a 422 naming the field; groups that
    # reach asched some other way (an older CRD) are refused by its decoder, with the field
    # error told to the members (tests/unit/gang/test_gang_groups.py)
    with pytest.raises(StatusError) as refused:
        await gang_cluster.rest.create(
            f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{gang_cluster.namespace}/podgroups",
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": "bad", "namespace": gang_cluster.namespace},
                "spec": spec,
            },
        )
    assert refused.value.status == 422
    assert field in str(refused.value)
