"""Volume scheduling live, on both backends: WaitForFirstConsumer claims over local PVs.

The simulator completes bindings with its own PV controller; the genuine backend runs
kube-controller-manager v1.37.2's persistentvolume-binder beside the API server. The
scheduler's part is the same on both: pick a node with a free matching PV (Filter),
assume the PV for the claim (Reserve), write the PV's claimRef (PreBind), wait for the
controller to bind the claim, then bind the pod.

Nodes have room for every pod (4 CPU, pods ask 100m): only volumes decide.
"""

from __future__ import annotations

from typing import Any

import pytest
from gang_support import bound_nodes, condition_message
from scheduler_harness import assert_not_overcommitted, running_scheduler, until
from volume_support import (
    affinity_hosts,
    claim,
    create_claim,
    create_class,
    create_local_pv,
    create_pod_with_claim,
    delete_pvs,
    node_with_local_pvs,
    pause_pv_controller,
    pv,
)

NO_PV = "node(s) didn't find available persistent volumes to bind"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@pytest.fixture
async def volume_cluster(cluster: Any, request: pytest.FixtureRequest) -> Any:
    """The cluster with a PV controller running (the genuine backend starts
    kube-controller-manager for it; the simulator has its own)."""
    if cluster.backend != "sim":
        request.getfixturevalue("kube_controller_manager")
    return cluster


async def test_statefulset_pods_land_on_the_nodes_of_free_local_pvs(volume_cluster: Any) -> None:
    # 3 nodes; one local PV on each of the first two; 2 pods, each with its own claim:
    # each pod must land on the node of a free PV (never the third node), and every claim
    # ends Bound to a PV whose node affinity names the pod's node
    cluster = volume_cluster
    name = cluster.unique_name("sched")
    storage_class = cluster.unique_name("local")
    nodes = [cluster.unique_name("n") for _ in range(3)]
    for node in nodes:
        await cluster.create_node(node, cpu="4", memory="8Gi")
    await create_class(cluster, storage_class)
    pvs = [cluster.unique_name("pv") for _ in range(2)]
    try:
        for volume, node in zip(pvs, nodes[:2], strict=True):
            await create_local_pv(cluster, volume, node, storage_class)
        async with running_scheduler(cluster, name):
            pods = [f"web-{i}" for i in range(2)]
            for pod in pods:
                await create_claim(cluster, f"data-{pod}", storage_class)
                await create_pod_with_claim(cluster, pod, name, f"data-{pod}")

            async def all_bound() -> bool:
                return len(await bound_nodes(cluster, pods)) == 2

            await until(all_bound, within=60)
            placed = await bound_nodes(cluster, pods)
            assert set(placed.values()) == set(nodes[:2])
            for pod, node in placed.items():
                bound = await claim(cluster, f"data-{pod}")
                assert bound["status"]["phase"] == "Bound"
                volume = await pv(cluster, bound["spec"]["volumeName"])
                assert affinity_hosts(volume) == {node}
                assert volume["spec"]["claimRef"]["name"] == f"data-{pod}"
            await assert_not_overcommitted(cluster)
    finally:
        await delete_pvs(cluster, pvs)


async def test_a_claim_no_pv_can_satisfy_is_reported(volume_cluster: Any) -> None:
    # the only PV is 1Gi; the claim asks 10Gi: no node has a PV to bind
    cluster = volume_cluster
    name = cluster.unique_name("sched")
    storage_class = cluster.unique_name("local")
    node = cluster.unique_name("n")
    await cluster.create_node(node, cpu="4", memory="8Gi")
    await create_class(cluster, storage_class)
    pvs = [cluster.unique_name("pv")]
    try:
        await create_local_pv(cluster, pvs[0], node, storage_class, size="1Gi")
        async with running_scheduler(cluster, name):
            await create_claim(cluster, "big", storage_class, size="10Gi")
            await create_pod_with_claim(cluster, "wants-big", name, "big")

            async def reported() -> bool:
                return NO_PV in await condition_message(cluster, "wants-big")

            await until(reported, within=30)
            assert await condition_message(cluster, "wants-big") == (
                f"0/1 nodes are available: 1 {NO_PV}. "
                "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
            )
            assert (await claim(cluster, "big"))["status"]["phase"] == "Pending"
    finally:
        await delete_pvs(cluster, pvs)


async def test_two_pods_racing_for_the_last_pv(volume_cluster: Any) -> None:
    # one free PV, two pods with their own claims: exactly one gets it (its claim Bound),
    # the other is reported with upstream's reason and its claim stays Pending
    cluster = volume_cluster
    name = cluster.unique_name("sched")
    storage_class = cluster.unique_name("local")
    node = cluster.unique_name("n")
    await cluster.create_node(node, cpu="4", memory="8Gi")
    await create_class(cluster, storage_class)
    pvs = [cluster.unique_name("pv")]
    try:
        await create_local_pv(cluster, pvs[0], node, storage_class)
        async with running_scheduler(cluster, name):
            pods = ["a", "b"]
            for pod in pods:
                await create_claim(cluster, f"data-{pod}", storage_class)
            for pod in pods:
                await create_pod_with_claim(cluster, pod, name, f"data-{pod}")

            async def settled() -> bool:
                placed = await bound_nodes(cluster, pods)
                if len(placed) != 1:
                    return False
                (loser,) = set(pods) - set(placed)
                return NO_PV in await condition_message(cluster, loser)

            await until(settled, within=60)
            placed = await bound_nodes(cluster, pods)
            (winner,) = placed
            (loser,) = set(pods) - set(placed)
            assert (await claim(cluster, f"data-{winner}"))["status"]["phase"] == "Bound"
            assert (await claim(cluster, f"data-{loser}"))["status"]["phase"] == "Pending"
            assert (await pv(cluster, pvs[0]))["spec"]["claimRef"]["name"] == f"data-{winner}"
    finally:
        await delete_pvs(cluster, pvs)


async def test_an_unbound_immediate_claim_is_unresolvable(volume_cluster: Any) -> None:
    # an Immediate class with no PV: the PV controller cannot bind the claim, and the
    # scheduler does not wait for a node (PreFilter rejects the pod everywhere)
    cluster = volume_cluster
    name = cluster.unique_name("sched")
    storage_class = cluster.unique_name("immediate")
    await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    await create_class(cluster, storage_class, mode="Immediate")
    async with running_scheduler(cluster, name):
        await create_claim(cluster, "now", storage_class)
        await create_pod_with_claim(cluster, "waits", name, "now")

        async def reported() -> bool:
            return UNBOUND_IMMEDIATE in await condition_message(cluster, "waits")

        await until(reported, within=30)
        assert await bound_nodes(cluster, ["waits"]) == {}


@pytest.mark.sim_only
async def test_a_prebind_that_times_out_rolls_back_and_the_pod_is_retried(sim_cluster: Any) -> None:
    # the simulator's PV controller is paused: PreBind writes the PV's claimRef and then
    # waits for the claim to be bound, which does not happen within bindTimeoutSeconds (1).
    # The attempt rolls back (assumption reverted, pod forgotten, requeued with backoff);
    # the claimRef stays written, as upstream leaves it. Once the controller resumes it
    # completes that binding, and the retried pod (its claim now bound) is bound.
    cluster = sim_cluster
    name = cluster.unique_name("sched")
    node, storage_class = await node_with_local_pvs(cluster, ["pv-only"])
    await pause_pv_controller(cluster, True)
    profile = {"pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 1}}]}
    async with running_scheduler(cluster, name, profile=profile) as running:
        await create_claim(cluster, "data", storage_class)
        await create_pod_with_claim(cluster, "web-0", name, "data")

        async def timed_out() -> bool:
            return "timed out waiting for the condition" in await condition_message(
                cluster, "web-0"
            )

        await until(timed_out, within=30)
        assert await bound_nodes(cluster, ["web-0"]) == {}
        # rolled back: nothing assumed is left in the scheduler, the pod is not counted
        assert f"{cluster.namespace}/web-0" not in running.app.table.pods
        assert not running.app.table.volumes.pv_api
        assert not running.app.table.volumes.claim_api
        # what PreBind wrote stays written (upstream does not undo API writes)
        assert (await pv(cluster, "pv-only"))["spec"]["claimRef"]["name"] == "data"
        assert (await claim(cluster, "data"))["status"].get("phase") == "Pending"

        await pause_pv_controller(cluster, False)

        async def bound() -> bool:
            return await bound_nodes(cluster, ["web-0"]) == {"web-0": node}

        await until(bound, within=30)
        assert (await claim(cluster, "data"))["spec"]["volumeName"] == "pv-only"


@pytest.mark.sim_only
async def test_a_pod_deleted_during_prebind_frees_its_slot_at_once(sim_cluster: Any) -> None:
    # one bind slot; the simulator's PV controller is paused, so web-0's PreBind waits for
    # its claim (bindTimeoutSeconds: the default 600). Deleting web-0 ends that wait at
    # once: the assumption is rolled back and the slot freed, so web-1 (once the
    # controller resumes) binds within seconds rather than after web-0's 600 s timeout.
    cluster = sim_cluster
    name = cluster.unique_name("sched")
    node, storage_class = await node_with_local_pvs(cluster, ["pv-a", "pv-b"])
    await pause_pv_controller(cluster, True)
    try:
        async with running_scheduler(cluster, name, max_in_flight=1) as running:
            await create_claim(cluster, "data-0", storage_class)
            await create_pod_with_claim(cluster, "web-0", name, "data-0")
            key = f"{cluster.namespace}/web-0"

            async def waiting_in_prebind() -> bool:
                claim_ref = (await pv(cluster, "pv-a"))["spec"].get("claimRef") or (
                    await pv(cluster, "pv-b")
                )["spec"].get("claimRef")
                return claim_ref is not None and key in running.app.table.pods

            await until(waiting_in_prebind, within=30)
            await cluster.rest.request(
                "DELETE", f"/api/v1/namespaces/{cluster.namespace}/pods/web-0"
            )

            async def rolled_back() -> bool:
                # the binding task ended (its slot is free) and reverted its assumption
                volumes = running.app.table.volumes
                return running.app.scheduler.binder.slot_free() and not volumes.pv_api

            await until(rolled_back, within=30)  # while the PV controller is still paused
            await pause_pv_controller(cluster, False)
            await create_claim(cluster, "data-1", storage_class)
            await create_pod_with_claim(cluster, "web-1", name, "data-1")

            async def bound() -> bool:
                return await bound_nodes(cluster, ["web-1"]) == {"web-1": node}

            await until(bound, within=30)
    finally:
        await pause_pv_controller(cluster, False)


async def test_prebind_waits_do_not_starve_the_watch_when_every_bind_slot_is_taken(
    volume_cluster: Any,
) -> None:
    # one bind slot: the pod in PreBind holds it while it waits for the PV controller to
    # bind its claim, which only the watch (applied by the scheduling loop) can tell it.
    # The loop waiting for a free slot must keep applying watch events, or the wait
    # lasts bindTimeoutSeconds (600) and nothing else is scheduled meanwhile.
    cluster = volume_cluster
    name = cluster.unique_name("sched")
    storage_class = cluster.unique_name("local")
    node = cluster.unique_name("n")
    await cluster.create_node(node, cpu="4", memory="8Gi")
    await create_class(cluster, storage_class)
    pvs = [cluster.unique_name("pv") for _ in range(2)]
    try:
        for volume in pvs:
            await create_local_pv(cluster, volume, node, storage_class)
        async with running_scheduler(cluster, name, max_in_flight=1):
            pods = ["web-0", "web-1"]
            for pod in pods:
                await create_claim(cluster, f"data-{pod}", storage_class)
                await create_pod_with_claim(cluster, pod, name, f"data-{pod}")

            async def all_bound() -> bool:
                return len(await bound_nodes(cluster, pods)) == 2

            await until(all_bound, within=30)
    finally:
        await delete_pvs(cluster, pvs)


async def test_explain_reads_the_storage_objects_and_names_the_volume_reason(
    volume_cluster: Any,
) -> None:
    # two nodes, each with one local PV: 1Gi on node a, 10Gi on node b; the pending pod's
    # claim asks 5Gi, so only node b has a PV to bind. No scheduler serves the pod: explain
    # alone reads the cluster (PVs, claims, classes with the rest) and says so per node.
    from test_explain_live import run

    cluster = volume_cluster
    storage_class = cluster.unique_name("local")
    a, b = cluster.unique_name("node-a"), cluster.unique_name("node-b")
    for node in (a, b):
        await cluster.create_node(node, cpu="4", memory="8Gi")
    await create_class(cluster, storage_class)
    pvs = [cluster.unique_name("pv"), cluster.unique_name("pv")]
    try:
        await create_local_pv(cluster, pvs[0], a, storage_class, size="1Gi")
        await create_local_pv(cluster, pvs[1], b, storage_class, size="10Gi")
        await create_claim(cluster, "data", storage_class, size="5Gi")
        await cluster.create_pod(
            "waits",
            scheduler_name="nobody",
            spec={
                "nodeSelector": dict(cluster.labels),
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
            },
        )
        # "nobody" is no profile of the default configuration: explained under its one profile
        args = ("waits", "--kubeconfig", cluster.kubeconfig, "-n", cluster.namespace)
        args += ("--scheduler-name", "default-scheduler")
        answer = (await run(*args, "-o", "json")).json()
        assert answer["selected"] == b
        assert answer["nodes"][a] == {
            "feasible": False,
            "plugin": "VolumeBinding",
            "code": "UnschedulableAndUnresolvable",
            "reasons": [NO_PV],
        }
        assert answer["nodes"][b]["feasible"] is True
    finally:
        await delete_pvs(cluster, pvs)
