"""The reflector hands pods and nodes over page by page, other kinds whole (against the
in-process simulator, paginating as kube-apiserver does)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from asched.api.client import KubeClient
from asched.api.watch import Reflector, Relisted, WatchEvent
from asched.tools.sim.apiserver import kubeconfig as sim_kubeconfig
from asched.tools.sim.server import SimConfig, SimServer

TOKEN = "reflector-pages-token-0123456789"


@pytest.mark.parametrize(
    ("kind", "path", "page_size", "expected"),
    [
        # 5 pods, 2 a page: [2, 2, 1], the first page first, the last one last
        pytest.param(
            "pods",
            "/api/v1/pods",
            2,
            [(2, True, False), (2, False, False), (1, False, True)],
            id="pods: three pages",
        ),
        # 5 pods in one page of 500: whole (first and last)
        pytest.param("pods", "/api/v1/pods", 500, [(5, True, True)], id="pods: one page"),
        # namespaces (default, kube-system, kube-public, kube-node-lease, shop) 2 a page:
        # handed over as one whole set, as their consumers replace it
        pytest.param(
            "namespaces", "/api/v1/namespaces", 2, [(5, True, True)], id="namespaces: whole"
        ),
    ],
)
async def test_pages(
    tmp_path: Path, kind: str, path: str, page_size: int, expected: list[tuple[int, bool, bool]]
) -> None:
    async with SimServer(SimConfig(token=TOKEN)) as sim:
        config = tmp_path / "kubeconfig"
        config.write_text(yaml.safe_dump(sim_kubeconfig.render(sim.url, TOKEN, sim.ca_pem)))
        client = await KubeClient.connect(str(config))
        try:
            for index in range(5):
                pod = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"p{index}", "namespace": "shop"},
                    "spec": {"containers": [{"name": "c", "image": "pause"}]},
                }
                if index == 0:
                    namespace = {
                        "apiVersion": "v1",
                        "kind": "Namespace",
                        "metadata": {"name": "shop"},
                    }
                    await client.create("/api/v1/namespaces", namespace)
                created = await client.create("/api/v1/namespaces/shop/pods", pod)
                assert created.status == 201
            events: list[WatchEvent | Relisted] = []
            reflector = Reflector(client, kind, path, events.append, page_size=page_size)
            task = asyncio.create_task(reflector.run())
            await asyncio.wait_for(reflector.synced.wait(), 10)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        finally:
            await client.close()
    relists = [e for e in events if isinstance(e, Relisted)]
    assert [(len(e.objects), e.first, e.last) for e in relists] == expected
    kinds = {obj["kind"] for e in relists for obj in e.objects}
    assert kinds == {"Pod" if kind == "pods" else "Namespace"}
