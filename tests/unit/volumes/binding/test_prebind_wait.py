"""PreBind's wait, in virtual time (looptime): woken by the catalog's listeners, bounded by
``bindTimeoutSeconds`` of loop time. The host is in memory (its PUT stores the object as
the API server would, with the next resourceVersion); HTTP is in test_prebind_live.py."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from asched.cluster.records import PodInfo
from asched.cluster.volume_decode import decode_claim, decode_persistent_volume
from asched.cluster.volumes import VolumeCatalog
from asched.framework.status import Code
from asched.framework.volume_prebind import bind_pod_volumes
from tests.builders import make_pod, pod_info
from tests.unit.volumes.binding._objects import claim, fill, pv

POD = pod_info(make_pod("p"))


class MemoryHost:
    """Stores what PreBind PUTs (resourceVersion + 1); the watch is the test's to play."""

    def __init__(self, objects) -> None:
        self.catalog = fill(VolumeCatalog(), objects)
        self.puts = 0

    def node_labels(self, node: str) -> Mapping[str, str] | None:
        return {}

    def pod_exists(self, pod: PodInfo) -> bool:
        return True

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
