"""Coscheduling's extension points, transcribed from scheduler-plugins' tests
(``pkg/coscheduling/coscheduling_test.go`` and ``core/core_test.go``) where they apply.

The host is the scheduler's real :class:`~asched.gangs.host.GangRuntime` over a real
NodeTable and WaitingPods; members are indexed as the ingest indexes them, and "assigned"
pods are placed on the table. asched's deliberate differences carry a comment.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.gangs import POD_GROUP_LABEL
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import CoschedulingArgs
from asched.framework.builtin.coscheduling import Coscheduling
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.status import Code
from asched.framework.waiting import WaitingPod, WaitingPods
from asched.gangs.host import GangRuntime

NS = "ns"


def pod(
    name: str,
    group: str = "",
    *,
    node: str = "",
    cpu: str = "1",
    gated: bool = False,
    priority: int = 0,
    created: str = "",
) -> PodInfo:
    meta: dict[str, Any] = {"name": name, "namespace": NS, "uid": name}
    if group:
        meta["labels"] = {POD_GROUP_LABEL: group}
    if created:
        meta["creationTimestamp"] = created
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
        "priority": priority,
    }
    if node:
        spec["nodeName"] = node
    if gated:
        spec["schedulingGates"] = [{"name": "example-gate"}]
    return decode_pod({"metadata": meta, "spec": spec})


def pod_group(name: str, min_member: int, created: str = "", **spec: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": NS, "creationTimestamp": created}
    return {"metadata": meta, "spec": {"minMember": min_member, **spec}}


def host(nodes: int = 1, cpu: str = "4", clock: list[float] | None = None) -> GangRuntime:
    table = NodeTable(capacity=8)
    for index in range(nodes):
        table.upsert_node(
            decode_node(
                {
                    "metadata": {"name": f"node{index}" if nodes > 1 else "node"},
                    "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
                }
            )
        )
    now = clock or [0.0]
    return GangRuntime(table, WaitingPods(), lambda: now[0])


def join(runtime: GangRuntime, *pods: PodInfo) -> None:
    """Index the pods as the ingest does; the ones with a node are placed on the table."""
    for info in pods:
        runtime.index.set_member(info.key, info.gang, info)
        if info.node_name:
            runtime.table.add_pod(info, info.node_name)


def plugin(runtime: GangRuntime, **args: int) -> Coscheduling:
    return Coscheduling(CoschedulingArgs(**args), runtime)


# --------------------------------------------------------------------- PreFilter
@pytest.mark.parametrize(
    ("the_pod", "siblings", "groups", "code", "message"),
    [
        pytest.param(
            pod("p"),
            [pod("p1", "pg1"), pod("p2", "pg2")],
            [("pg1", 1, {}), ("pg2", 1, {})],
            Code.SUCCESS,
            "",
            id="pod does not belong to any pg",
        ),
        # asched: upstream passes PreFilter and refuses at Permit ("PodGroup not found");
        # refusing here assumes nothing, and says which group is missing
        pytest.param(
            pod("p", "pg-non-existent"),
            [],
            [("pg1", 1, {})],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "pod group ns/pg-non-existent not found",
            id="pod belongs to a non-existent pg",
        ),
        # pg1 has only the pod itself: 1 < minMember 2
        pytest.param(
            pod("p", "pg1"),
            [pod("pg2-1", "pg2")],
            [("pg1", 2, {}), ("pg2", 2, {})],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "pod group ns/pg1 has 1 of 2 members: pre-filter pod p cannot find enough sibling "
            "pods, current pods number: 1, minMember of group: 2",
            id="pod count less than minMember",
        ),
        # p1a, p1b: 2 == minMember 2 ... and 3 > 2
        pytest.param(
            pod("p1a", "pg1"),
            [pod("p1b", "pg1")],
            [("pg1", 2, {})],
            Code.SUCCESS,
            "",
            id="pod count equal minMember",
        ),
        pytest.param(
            pod("p1a", "pg1"),
            [pod("p1b", "pg1"), pod("p1c", "pg1")],
            [("pg1", 2, {}), ("pg2", 2, {})],
            Code.SUCCESS,
            "",
            id="pod count more than minMember",
        ),
        # 3 pods, 1 gated: 3 - 1 = 2 >= minMember 2
        pytest.param(
            pod("p1a", "pg1"),
            [pod("p1b", "pg1"), pod("p1c", "pg1", gated=True)],
            [("pg1", 2, {})],
            Code.SUCCESS,
            "",
            id="gated pods but still meeting quorum",
        ),
        # 3 pods, 1 gated: 3 - 1 = 2 < minMember 3
        pytest.param(
            pod("p1a", "pg1"),
            [pod("p1b", "pg1", gated=True), pod("p1c", "pg1")],
            [("pg1", 3, {})],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "pod group ns/pg1 has 3 of 3 members, 1 of them gated: pre-filter pod p1a cannot "
            "proceed due to gated pods in the same PodGroup",
            id="gated pods push group below quorum",
        ),
        # 3 pods, 2 gated: 1 < 2
        pytest.param(
            pod("p1a", "pg1"),
            [pod("p1b", "pg1", gated=True), pod("p1c", "pg1", gated=True)],
            [("pg1", 2, {})],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "pod group ns/pg1 has 3 of 2 members, 2 of them gated: pre-filter pod p1a cannot "
            "proceed due to gated pods in the same PodGroup",
            id="all sibling pods are gated",
        ),
        # 2 nodes x 4 CPU = 8 CPU free >= minResources 6 CPU (it may still fail in Filter)
        pytest.param(
            pod("p1a", "pg1"),
            [pod("p1b", "pg1"), pod("p1c", "pg1")],
            [("pg1", 2, {"minResources": {"cpu": "6"}})],
            Code.SUCCESS,
            "",
            id="cluster's resource satisfies minResource",
        ),
        # 10 CPU wanted - 8 free = 2 CPU = 2000 millicores short
        pytest.param(
            pod("p1a", "pg1"),
            [pod("p1b", "pg1"), pod("p1c", "pg1")],
            [("pg1", 2, {"minResources": {"cpu": "10"}})],
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "pod group ns/pg1: resource gap: cpu: 2000",
            id="cluster's resource cannot satisfy minResource",
        ),
    ],
)
def test_pre_filter(
    the_pod: PodInfo,
    siblings: list[PodInfo],
    groups: list[tuple[str, int, dict[str, Any]]],
    code: Code,
    message: str,
) -> None:
    runtime = host(nodes=2)
    for name, min_member, spec in groups:
        runtime.index.set_pod_group(pod_group(name, min_member, **spec))
    join(runtime, the_pod, *siblings)
    result = plugin(runtime).pre_filter(CycleState(), the_pod, runtime.table)
    assert result.status.code == code
    assert result.status.message == message


def test_min_resources_count_the_gangs_own_placed_members_back() -> None:
    # upstream "Cluster resource enough as p1's resource needs to be excluded": one node of
    # 4 CPU with the gang's own p1 (2 CPU) on it: 2 free + 2 of p1 = 4 >= minResources 4
    runtime = host(nodes=1)
    runtime.index.set_pod_group(pod_group("pg1", 2, minResources={"cpu": "4"}))
    join(runtime, pod("p1", "pg1", node="node", cpu="2"), pod("p2", "pg1", cpu="2"))
    result = plugin(runtime).pre_filter(CycleState(), pod("p2", "pg1", cpu="2"), runtime.table)
    assert result.status.code == Code.SUCCESS


def test_a_failed_group_is_backed_off() -> None:
    # upstream TestPodGroupBackoffTime: after PostFilter rejects a group with
    # podGroupBackoffSeconds 1, its members are refused until the second has passed
    clock = [100.0]
    runtime = host(clock=clock)
    runtime.index.set_pod_group(pod_group("pg1", 2))
    members = [pod("p1", "pg1"), pod("p2", "pg1")]
    join(runtime, *members)
    coscheduling = plugin(runtime, pod_group_backoff_seconds=1)
    rejected = coscheduling.post_filter(CycleState(), members[0], runtime.table, {}, None)
    assert rejected.status.code == Code.UNSCHEDULABLE
    refused = coscheduling.pre_filter(CycleState(), members[1], runtime.table).status
    assert (refused.code, refused.message) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "podGroup ns/pg1 failed recently",
    )
    clock[0] = 101.0  # 1 s later: the backoff is over
    assert coscheduling.pre_filter(CycleState(), members[1], runtime.table).status.ok


# --------------------------------------------------------------------- Permit
@pytest.mark.parametrize(
    ("group", "code"),
    [
        pytest.param("", Code.SUCCESS, id="pods do not belong to any podGroup"),
        # pg2 needs 2: only p is placed (1 < 2)
        pytest.param("pg2", Code.WAIT, id="pods belong to a pg1, but quorum not satisfied"),
        # pg1 needs 1: p itself (asched: the pod is assumed, so it counts as placed)
        pytest.param("pg1", Code.SUCCESS, id="pods belong to a podGroup, and quorum satisfied"),
    ],
)
def test_permit(group: str, code: Code) -> None:
    runtime = host()
    runtime.index.set_pod_group(pod_group("pg1", 1))
    runtime.index.set_pod_group(pod_group("pg2", 2))
    the_pod = pod("p", group)
    join(runtime, the_pod)
    runtime.table.add_pod(the_pod, "node")  # assumed before Permit runs
    status, timeout = plugin(runtime, permit_waiting_time_seconds=10).permit(
        CycleState(), the_pod, "node"
    )
    assert status.code == code
    assert timeout == (10.0 if code == Code.WAIT else 0.0)


async def test_the_last_member_allows_the_waiting_ones() -> None:
    runtime = host()
    runtime.index.set_pod_group(pod_group("pg", 2, scheduleTimeoutSeconds=30))
    first, second = pod("a", "pg"), pod("b", "pg")
    join(runtime, first, second)
    coscheduling = plugin(runtime)
    runtime.table.add_pod(first, "node")
    status, timeout = coscheduling.permit(CycleState(), first, "node")
    # the group's scheduleTimeoutSeconds wins over permitWaitingTimeSeconds (60)
    assert (status.code, timeout) == (Code.WAIT, 30.0)
    waiting = WaitingPod(first.key, first.uid, "node", {"Coscheduling": timeout})
    runtime.waiting_pods.add(waiting)
    runtime.table.add_pod(second, "node")
    status, _ = coscheduling.permit(CycleState(), second, "node")
    assert status.ok
    assert (await asyncio.wait_for(waiting.wait(), 1)).ok


# --------------------------------------------------------------------- PostFilter
@pytest.mark.parametrize(
    ("group", "assigned", "min_member", "message"),
    [
        pytest.param("", 0, 2, "can not find pod group", id="pod does not belong to any pod group"),
        pytest.param("pg1", 1, 1, "", id="enough pods assigned, do not reject all"),
        pytest.param(
            "pg1",
            1,
            2,
            "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",
            id="pod failed at filter phase, reject all pods",
        ),
    ],
)
def test_post_filter(group: str, assigned: int, min_member: int, message: str) -> None:
    runtime = host()
    runtime.index.set_pod_group(pod_group("pg1", min_member))
    join(runtime, *[pod(f"p{i}", "pg1", node="node") for i in range(assigned)])
    the_pod = pod("p", group)
    join(runtime, the_pod)
    result = plugin(runtime).post_filter(CycleState(), the_pod, runtime.table, {}, None)
    assert (result.status.code, result.status.message) == (Code.UNSCHEDULABLE, message)


@pytest.mark.parametrize(
    ("percentage", "assigned", "rejected"),
    [
        # missing (10 - assigned) / 10, rejected when above the percentage
        pytest.param(10, 9, False, id="default 10%: 9/10 assigned (10% gap) no rejection"),
        pytest.param(10, 8, True, id="default 10%: 8/10 assigned (20% gap) rejection"),
        pytest.param(0, 9, True, id="0%: 9/10 assigned (10% gap) rejection"),
        pytest.param(100, 0, False, id="100%: 0/10 assigned (100% gap) no rejection"),
        pytest.param(50, 6, False, id="50%: 6/10 assigned (40% gap) no rejection"),
        pytest.param(50, 4, True, id="50%: 4/10 assigned (60% gap) rejection"),
    ],
)
def test_post_filter_reject_threshold(percentage: int, assigned: int, rejected: bool) -> None:
    runtime = host(cpu="20")
    runtime.index.set_pod_group(pod_group("pg1", 10))
    join(runtime, *[pod(f"assigned-{i}", "pg1", node="node") for i in range(assigned)])
    the_pod = pod("p", "pg1")
    join(runtime, the_pod)
    coscheduling = plugin(runtime, pod_group_reject_percentage=percentage)
    result = coscheduling.post_filter(CycleState(), the_pod, runtime.table, {}, None)
    expected = (
        "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter"
        if rejected
        else ""
    )
    assert result.status.message == expected


# --------------------------------------------------------------------- QueueSort
@pytest.mark.parametrize(
    ("first", "second", "first_goes_first"),
    [
        pytest.param(pod("p1", priority=10), pod("p2", priority=100), False, id="p1 priority less"),
        pytest.param(
            pod("p1", priority=100), pod("p2", priority=10), True, id="p1 priority greater"
        ),
        # equal priority, no group: the earlier one (created, else queued) first
        pytest.param(
            pod("p1", created="2026-01-01T00:00:00Z"),
            pod("p2", created="2026-01-01T00:00:01Z"),
            True,
            id="equal priority, p1 earlier",
        ),
        # equal priority: p1's group pg1 was created before p2 itself
        pytest.param(
            pod("p1", "pg1", created="2026-01-01T00:00:05Z"),
            pod("p2", created="2026-01-01T00:00:01Z"),
            True,
            id="equal priority, p1's group created earlier than p2",
        ),
        # two groups: pg2 (p2's) created before pg1 (p1's)
        pytest.param(
            pod("p1", "pg1"),
            pod("p2", "pg2"),
            False,
            id="equal priority, p2's group created earlier",
        ),
    ],
)
def test_less(first: PodInfo, second: PodInfo, first_goes_first: bool) -> None:
    runtime = host()
    runtime.index.set_pod_group(pod_group("pg1", 1, created="2026-01-01T00:00:00Z"))
    runtime.index.set_pod_group(pod_group("pg2", 1, created="2025-12-31T23:59:59Z"))
    coscheduling = plugin(runtime)
    assert (coscheduling.sort_key(first, 0.0) < coscheduling.sort_key(second, 0.0)) is (
        first_goes_first
    )


def test_a_group_that_does_not_decode_is_told_to_its_members() -> None:
    # a group the CRD's schema would refuse (an older CRD let it in): the field error,
    # prefixed with the gang, as the member's reason; nothing crashes
    runtime = host()
    runtime.index.set_pod_group(pod_group("bad", 0))
    member = pod("m", "bad")
    join(runtime, member)
    status = plugin(runtime).pre_filter(CycleState(), member, runtime.table).status
    assert (status.code, status.message) == (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "pod group ns/bad: PodGroup ns/bad: spec.minMember: must be at least 1, got 0",
    )


def test_min_resources_over_huge_nodes_do_not_wrap() -> None:
    # 2,048 nodes of 2**53 - 1 bytes (asched's clamp) hold 2,048 x (2**53 - 1), about
    # 2**64: an int64 sum would wrap negative and report a gap; the exact sum holds 2**63
    table = NodeTable(capacity=2048)
    for index in range(2048):
        table.upsert_node(
            decode_node(
                {
                    "metadata": {"name": f"n{index}"},
                    "status": {"allocatable": {"cpu": "1", "memory": "999999Pi", "pods": "1"}},
                }
            )
        )
    runtime = GangRuntime(table, WaitingPods(), lambda: 0.0)
    # minResources 8Ei = 2**63 bytes (saturated to int64's maximum by the decoder)
    runtime.index.set_pod_group(pod_group("big", 1, minResources={"memory": "8Ei"}))
    member = pod("m", "big")
    join(runtime, member)
    assert plugin(runtime).pre_filter(CycleState(), member, runtime.table).status.ok


@pytest.mark.parametrize(
    ("event", "changed", "group", "moves"),
    [
        # a PodGroup change moves its own members only
        pytest.param(ClusterEvent.GANG_CHANGE, "ns/pg1", "pg1", True, id="its group changed"),
        pytest.param(ClusterEvent.GANG_CHANGE, "ns/pg2", "pg1", False, id="another group"),
        # a sibling's arrival, likewise
        pytest.param(
            ClusterEvent.UNSCHEDULED_POD_ADD, pod("s", "pg1"), "pg1", True, id="a sibling"
        ),
        pytest.param(
            ClusterEvent.UNSCHEDULED_POD_ADD, pod("s", "pg2"), "pg1", False, id="a stranger"
        ),
        # room: anything may help
        pytest.param(ClusterEvent.NODE_ADD, None, "pg1", True, id="a new node"),
    ],
)
def test_queueing_hint(event: ClusterEvent, changed: object, group: str, moves: bool) -> None:
    assert plugin(host()).queueing_hint(event, pod("p", group), changed) is moves


def test_a_status_only_update_changes_no_gang() -> None:
    # the leader's own status writes come back as MODIFIED PodGroups: they must not
    # requeue the group's parked members (and so write again, in a loop)
    index = host().index
    group = pod_group("pg1", 2)
    assert index.set_pod_group(group) == ["ns/pg1"]
    assert index.set_pod_group({**group, "status": {"phase": "Scheduling"}}) == []
    assert index.set_pod_group(pod_group("pg1", 3)) == ["ns/pg1"]  # the spec changed
    assert index.set_pod_group(pod_group("pg1", 0)) == ["ns/pg1"]  # now refused
    assert index.set_pod_group(pod_group("pg1", 0)) == []  # refused the same way
