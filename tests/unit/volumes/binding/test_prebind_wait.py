"""PreBind's wait, in virtual time (looptime): woken by the catalog's listeners, bounded by
``bindTimeoutSeconds`` of loop time. The host is in memory (its PUT stores the object as
the API server would, with the next resourceVersion); HTTP is in test_prebind_live.py."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from asched.cluster.records import PodInfo
from asched.cluster.volume_decode import decode_claim, decode_persistent_volume
from asched.cluster.volumes import VolumeCatalog
from asched.framework.builtin.volume_binding.prebind import bind_pod_volumes
from asched.framework.status import Code
from tests.builders import make_pod, pod_info
from tests.unit.volumes.binding._objects import claim, fill, pv

POD = pod_info(make_pod("p"))


class MemoryHost:
    """Stores what PreBind PUTs (resourceVersion + 1); the watch is the test's to play."""

    def __init__(self, objects) -> None:
        self.catalog = fill(VolumeCatalog(), objects)
        self.puts = 0
        self.deleted: set[str] = set()
        self.pod_listeners: list[Callable[[str], None]] = []

    def node_labels(self, node: str) -> Mapping[str, str] | None:
        return {}

    def pod_exists(self, pod: PodInfo) -> bool:
        return pod.key not in self.deleted

    def delete_pod(self, key: str) -> None:
        """The watch sees the pod deleted (as the live host's pod_gone)."""
        self.deleted.add(key)
        for listener in list(self.pod_listeners):
            listener(key)

    async def replace(self, resource: str, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        self.puts += 1
        stored = {**obj, "metadata": {**obj["metadata"]}}
        stored["metadata"]["resourceVersion"] = str(int(obj["metadata"]["resourceVersion"]) + 1)
        return stored


def bind_later(host: MemoryHost, delay: float) -> None:
    """The watch shows the PV controller's work ``delay`` seconds of loop time later."""

    def deliver() -> None:
        host.catalog.put_pv(
            decode_persistent_volume(
                pv("pv-1", claim=("default", "c1", "uid-c1"), phase="Bound", version="2")
            )
        )
        host.catalog.put_claim(decode_claim(claim("c1", volume="pv-1", bound=True, version="2")))

    asyncio.get_running_loop().call_later(delay, deliver)


def objects() -> list[dict[str, Any]]:
    return [pv("pv-1"), claim("c1")]


@pytest.mark.looptime
async def test_prebind_returns_when_the_watch_shows_the_claim_bound(looptime) -> None:
    host = MemoryHost(objects())
    pvs, claims = host.catalog.pvs, host.catalog.claims
    bind_later(host, 42)
    status = await bind_pod_volumes(host, POD, "n1", [(pvs["pv-1"], claims["default/c1"])], [], 600)
    assert status.ok
    assert looptime == 42  # woken by the change at 42 s, not by a poll period
    assert host.catalog.listeners == []  # its listener is gone


@pytest.mark.looptime
async def test_prebind_times_out_on_loop_time(looptime) -> None:
    host = MemoryHost(objects())
    pvs, claims = host.catalog.pvs, host.catalog.claims
    bind_later(host, 700)  # after bindTimeoutSeconds
    status = await bind_pod_volumes(host, POD, "n1", [(pvs["pv-1"], claims["default/c1"])], [], 600)
    assert status.code == Code.ERROR
    assert status.message == "binding volumes: timed out waiting for the condition"
    assert looptime == 600


class CountingHost(MemoryHost):
    """Counts the checks (each reads the node's labels once)."""

    checks = 0

    def node_labels(self, node: str) -> Mapping[str, str] | None:
        self.checks += 1
        return super().node_labels(node)


@pytest.mark.looptime
async def test_other_objects_do_not_wake_prebind(looptime) -> None:
    # 50 changes to other PVs and claims at t=1..50 s, then the pod's own binding at 60 s:
    # one check at the start, one after the binding, none for the others
    host = CountingHost([*objects(), pv("pv-other"), claim("c-other")])
    pvs, claims = host.catalog.pvs, host.catalog.claims
    loop = asyncio.get_running_loop()
    for second in range(1, 51):
        raw = (
            pv("pv-other", version=str(second + 1))
            if second % 2
            else claim("c-other", version=str(second + 1))
        )
        decode = decode_persistent_volume if second % 2 else decode_claim
        put = host.catalog.put_pv if second % 2 else host.catalog.put_claim
        loop.call_later(second, put, decode(raw))
    bind_later(host, 60)
    status = await bind_pod_volumes(host, POD, "n1", [(pvs["pv-1"], claims["default/c1"])], [], 600)
    assert status.ok
    assert looptime == 60
    # the binding is two changes (the PV, then the claim): at most three checks in all
    assert host.checks <= 3


@pytest.mark.looptime
async def test_provisioned_claim_waits_for_its_new_pv(looptime) -> None:
    # t=10: the claim is bound to pv-new, which the watch shows only at t=20: PreBind waits
    # for that PV (named by the claim), then returns
    host = MemoryHost([claim("c1")])
    provisioned = claim("c1", volume="pv-new", bound=True, selected_node="n1", version="9")
    loop = asyncio.get_running_loop()
    loop.call_later(10, host.catalog.put_claim, decode_claim(provisioned))
    loop.call_later(20, host.catalog.put_pv, decode_persistent_volume(pv("pv-new")))
    claims = host.catalog.claims
    status = await bind_pod_volumes(host, POD, "n1", [], [claims["default/c1"]], 600)
    assert status.ok
    assert looptime == 20


@pytest.mark.looptime
@pytest.mark.parametrize(
    ("deleted", "ends_at", "message"),
    [
        # the pod's own deletion at 30 s ends the wait then, not at the 600 s timeout
        pytest.param(
            POD.key,
            30,
            'binding volumes: pod does not exist any more: pod "p" not found',
            id="own-pod-deleted",
        ),
        # another pod's deletion does not wake it: it times out at 600 s
        pytest.param(
            "default/other",
            600,
            "binding volumes: timed out waiting for the condition",
            id="other-pod-deleted",
        ),
    ],
)
async def test_a_deleted_pod_ends_its_wait(
    looptime: float, deleted: str, ends_at: float, message: str
) -> None:
    host = MemoryHost(objects())
    pvs, claims = host.catalog.pvs, host.catalog.claims
    asyncio.get_running_loop().call_later(30, host.delete_pod, deleted)
    status = await bind_pod_volumes(host, POD, "n1", [(pvs["pv-1"], claims["default/c1"])], [], 600)
    assert (status.code, status.message) == (Code.ERROR, message)
    assert looptime == ends_at
    assert host.pod_listeners == []  # its listener is gone
