"""KubeClient's bindings and status patches on the fast path, against the simulator.

The in-process simulator (``asched.tools.sim.server``) serves plain HTTP or HTTPS with a CA of
its own; the client reads a kubeconfig as ``asched run`` does. Every row checks the
answer the caller sees (status and parsed body) and what the server stored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from asched.api.client import KubeClient
from asched.api.fast_writes import plain_path
from asched.errors import RETRYABLE, ApiUnavailable
from asched.tools.sim.apiserver import kubeconfig as sim_kubeconfig, tls as sim_tls
from asched.tools.sim.server import SimConfig, SimServer

TOKEN = "fast-path-bearer-token-0123456789"
NS = "default"


def _kubeconfig(tmp_path: Path, url: str, ca_pem: bytes | None) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(sim_kubeconfig.render(url, TOKEN, ca_pem)))
    return str(path)


@pytest.fixture(params=[pytest.param(False, id="http"), pytest.param(True, id="https")])
async def sim(request: pytest.FixtureRequest) -> AsyncIterator[SimServer]:
    async with SimServer(SimConfig(tls=request.param, token=TOKEN)) as server:
        yield server


@pytest.fixture
async def client(sim: SimServer, tmp_path: Path) -> AsyncIterator[KubeClient]:
    api = await KubeClient.connect(_kubeconfig(tmp_path, sim.url, sim.ca_pem))
    try:
        assert api.fast_writes
        yield api
    finally:
        await api.close()


async def _pod(client: KubeClient, name: str) -> dict[str, Any]:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"containers": [{"name": "c", "image": "pause"}]},
    }
    created = (await client.create(f"/api/v1/namespaces/{NS}/pods", body)).raise_for_status("")
    assert isinstance(created, dict)
    return created


async def test_bind_then_bind_again_then_a_missing_pod(client: KubeClient) -> None:
    pod = await _pod(client, "web-1")
    uid = pod["metadata"]["uid"]
    first = await client.bind(NS, "web-1", uid, "node-a")
    assert first.status == 201
    stored = await client.get_json(f"/api/v1/namespaces/{NS}/pods/web-1")
    assert stored["spec"]["nodeName"] == "node-a"
    # already assigned: 409, the Status body parsed for the caller's message
    second = await client.bind(NS, "web-1", uid, "node-b")
    assert second.status == 409
    assert second.body["kind"] == "Status"
    assert second.body["reason"] == "Conflict"
    assert "web-1" in second.body["message"]
    stored = await client.get_json(f"/api/v1/namespaces/{NS}/pods/web-1")
    assert stored["spec"]["nodeName"] == "node-a"
    gone = await client.bind(NS, "no-such-pod", "", "node-a")
    assert gone.status == 404
    assert gone.body["reason"] == "NotFound"


async def test_patch_status_merges_conditions(client: KubeClient) -> None:
    await _pod(client, "web-3")
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    answer = await client.patch_pod_status(
        NS, "web-3", {"status": {"conditions": [condition], "nominatedNodeName": "node-a"}}
    )
    assert answer.status == 200
    assert answer.body["status"]["nominatedNodeName"] == "node-a"
    cleared = await client.patch_pod_status(NS, "web-3", {"status": {"nominatedNodeName": None}})
    assert cleared.ok
    stored = await client.get_json(f"/api/v1/namespaces/{NS}/pods/web-3")
    assert "nominatedNodeName" not in stored["status"]
    assert [c["reason"] for c in stored["status"]["conditions"]] == ["Unschedulable"]
    missing = await client.patch_pod_status(NS, "no-such-pod", {"status": {}})
    assert missing.status == 404


async def test_many_bindings_share_kept_connections(client: KubeClient) -> None:
    names = [f"many-{index}" for index in range(30)]
    for name in names:
        await _pod(client, name)
    for name in names:
        assert (await client.bind(NS, name, "", "node-a")).status == 201
    pool = client._fast.pool if client._fast is not None else None
    assert pool is not None
    assert len(pool._idle) == 1  # one at a time: one connection, kept throughout


async def test_a_wrong_ca_fails_verification(tmp_path: Path) -> None:
    # the kubeconfig carries a CA that did not sign the server's certificate
    other_ca = sim_tls.generate("127.0.0.1").ca_pem
    async with SimServer(SimConfig(tls=True, token=TOKEN)) as server:
        client = await KubeClient.connect(_kubeconfig(tmp_path, server.url, other_ca))
        try:
            for call in (
                lambda: client.bind(NS, "web-1", "", "node-a"),
                lambda: client.patch_pod_status(NS, "web-1", {"status": {}}),
            ):
                with pytest.raises(ApiUnavailable) as caught:
                    await call()
                assert "certificate verify failed" in str(caught.value)
                assert TOKEN not in str(caught.value)
                assert isinstance(caught.value, RETRYABLE)
            assert server.stats.bindings == 0
        finally:
            await client.close()


def _proxied(document: dict[str, Any]) -> None:
    document["clusters"][0]["cluster"]["proxy-url"] = "http://proxy.example:3128"


@pytest.mark.parametrize(
    ("server", "trust_env", "edit"),
    [
        pytest.param("http://127.0.0.1:1", "1", None, id="ASCHED_API_TRUST_ENV=1: proxies"),
        pytest.param("http://127.0.0.1:1", None, _proxied, id="a proxy-url in the kubeconfig"),
        # connect never raises for it: the first request reports the URL, as before
        pytest.param("127.0.0.1:6443", None, None, id="a server URL without a scheme"),
    ],
)
async def test_writes_stay_on_the_aiohttp_path(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server: str,
    trust_env: str | None,
    edit: Any,
) -> None:
    if trust_env is None:
        monkeypatch.delenv("ASCHED_API_TRUST_ENV", raising=False)
    else:
        monkeypatch.setenv("ASCHED_API_TRUST_ENV", trust_env)
    document = sim_kubeconfig.render(server, TOKEN)
    if edit is not None:
        edit(document)
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(document))
    client = await KubeClient.connect(str(path))
    try:
        assert not client.fast_writes
    finally:
        await client.close()


async def test_events_are_created_and_patched_on_the_fast_path(
    client: KubeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the scheduler's events (one per bound pod) go the way of the bindings: the aiohttp
    # path is made to fail, so only the fast path can answer
    async def no_aiohttp(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the aiohttp path was taken")

    monkeypatch.setattr(client, "request", no_aiohttp)
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "web-1.scheduled", "namespace": NS},
        "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": NS},
        "reason": "Scheduled",
        "message": "Successfully assigned default/web-1 to node-a",
        "count": 1,
    }
    path = f"/api/v1/namespaces/{NS}/events"
    created = await client.create(path, event)
    assert created.status == 201
    assert created.body["metadata"]["name"] == "web-1.scheduled"
    again = await client.create(path, event)
    assert again.status == 409  # AlreadyExists: sent once, answered as the server says
    patched = await client.patch(f"{path}/web-1.scheduled", {"count": 2})
    assert patched.status == 200
    assert patched.body["count"] == 2


@pytest.mark.parametrize(
    ("path", "plain"),
    [
        pytest.param("/api/v1/namespaces/default/events", True, id="an API path"),
        pytest.param("/api/v1/namespaces/default/events/a.b-c%20d", True, id="escaped"),
        pytest.param("/api/v1/namespaces/default/events/a b", False, id="a space"),
        pytest.param("/api/v1/namespaces/default/events/é", False, id="not ASCII"),
        pytest.param("/api/v1/x?y=1", False, id="a query"),
        pytest.param("api/v1", False, id="not absolute"),
    ],
)
def test_plain_path(path: str, plain: bool) -> None:
    # a path that is not plain keeps to the aiohttp path, which escapes it
    assert plain_path(path) is plain
