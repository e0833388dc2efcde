"""The API server's state goes back in time while asched runs: it notices, relists, and
schedules the pods created afterwards.

Two ways a cluster's state goes back, one per backend, each on a server of the test's own
(the rewind would undo other tests' objects on a shared one):

- the genuine kube-apiserver v1.37: etcd restored from a snapshot taken earlier
  (``etcdutl snapshot restore``, kube-apiserver restarted on the same port), as an
  operator restores a backup;
- the simulator: restarted with fresh state on the same address and token.

Before the fix, asched reconnected, ``/readyz`` said 200, and the new pods stayed pending
with no log line: its watches ran from a resourceVersion the server would reach only after
as many writes again.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from scheduler_harness import (
    TEST_LABEL,
    assert_not_overcommitted,
    assert_tables_equal,
    pods_of,
    rebuilt_table,
    running_scheduler,
    until,
)

from asched.tools.backends.launcher import KubeApiServer
from asched.tools.backends.rest import RestClient
from asched.tools.backends.simulator import SimServer


@dataclass
class Scene:
    """What the harness needs of a cluster, on a server of this test's own."""

    server: KubeApiServer | SimServer
    rest: RestClient
    namespace: str = "rewind"
    test_id: str = field(default_factory=lambda: uuid.uuid4().hex[:10])

    @property
    def kubeconfig(self) -> Path:
        return self.server.kubeconfig

    def unique_name(self, prefix: str) -> str:
        return f"{prefix}-{uuid.uuid4().hex[:8]}"

    async def nodes_and_namespace(self) -> None:
        await self.rest.create_namespace(self.namespace)
        for index in range(2):
            await self.rest.create_node(
                f"node-{index}", labels={TEST_LABEL: self.test_id}, cpu="4", memory="16Gi"
            )

    async def pods(self, count: int, scheduler: str) -> list[str]:
        names = [self.unique_name("p") for _ in range(count)]
        for name in names:
            await self.rest.create_pod(
                self.namespace, name, scheduler_name=scheduler, cpu="100m", memory="100Mi"
            )
        return names

    async def bound(self, names: list[str]) -> bool:
        pods = {p["metadata"]["name"]: p for p in await pods_of(self)}
        return all(pods.get(n, {}).get("spec", {}).get("nodeName") for n in names)


@pytest.fixture(
    params=[
        pytest.param("sim", id="sim"),
        pytest.param("kube-apiserver", marks=pytest.mark.kube_apiserver, id="kube-apiserver"),
    ]
)
def own_server(request: pytest.FixtureRequest) -> Iterator[KubeApiServer | SimServer]:
    server: KubeApiServer | SimServer = SimServer() if request.param == "sim" else KubeApiServer()
    with server:
        yield server


@pytest.fixture
async def scene(own_server: KubeApiServer | SimServer) -> AsyncIterator[Scene]:
    rest = RestClient.from_kubeconfig(own_server.kubeconfig)
    try:
        yield Scene(own_server, rest)
    finally:
        await rest.close()


async def test_state_restored_from_an_older_backup_is_relisted_and_scheduled(
    scene: Scene, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="asched.api.watch")
    await scene.nodes_and_namespace()
    backup = tmp_path / "etcd.db"
    if isinstance(scene.server, KubeApiServer):
        scene.server.snapshot_etcd(backup)  # namespace and nodes, no pods
    name = scene.unique_name("sched")
    async with running_scheduler(scene, name) as running:
        before = await scene.pods(20, name)
        await until(lambda: scene.bound(before), within=60)

        # back in time: the 20 pods (and every version they took) are gone
        if isinstance(scene.server, KubeApiServer):
            await asyncio.to_thread(scene.server.restore_etcd, backup)
        else:
            await asyncio.to_thread(scene.server.restart_fresh)
            await scene.rest.reconnect()
            await scene.nodes_and_namespace()
        assert await pods_of(scene) == []

        after = await scene.pods(5, name)
        await until(lambda: scene.bound(after), within=90)

        pods = next(r for r in running.app.reflectors if r.kind == "pods")
        assert pods.rewinds >= 1
        assert any(
            r.getMessage().startswith("the resourceVersion of pods went back from ")
            for r in caplog.records
        )
        # the pods of the lost history are forgotten: the table counts the API's pods only
        await until(lambda: _now(len(running.app.ledger) == 0), within=20)
        assert_tables_equal(running.app.table, await rebuilt_table(scene))
        await until(lambda: _now(running.health.readiness_failures() == []), within=20)
    await assert_not_overcommitted(scene)


async def _now(value: Any) -> Any:
    return value
