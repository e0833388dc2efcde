"""The load generator's lean POST client (asched.tools.bench.fast_create): the requests it
writes, and what a server answers it (created, refused, unauthorized), over plain HTTP
and TLS, against each backend."""

from __future__ import annotations

import re
import ssl
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from asched.tools.backends.errors import StatusError
from asched.tools.backends.kubeconfig import KubeconfigEntry, read_kubeconfig
from asched.tools.backends.rest import RestClient
from asched.tools.backends.simulator import SimServer
from asched.tools.bench import loadgen
from asched.tools.bench.fast_create import FastCreator
from asched.tools.bench.workload import PodGroup


def _creator(entry: KubeconfigEntry) -> FastCreator:
    return FastCreator(RestClient(entry), entry, connections=4, timeout=10)


@pytest.mark.parametrize(
    ("server", "token", "expected_head"),
    [
        pytest.param(
            "http://127.0.0.1:8080",
            "tok",
            b"POST /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer tok\r\n",
            id="plain-http-with-token",
        ),
        pytest.param(
            "https://[::1]:6443/prefix/",
            None,
            b"POST /prefix/api/v1/nodes HTTP/1.1\r\nHost: [::1]:6443\r\nAccept: ",
            id="https-path-prefix-no-token",
        ),
    ],
)
def test_the_request_is_one_head_and_the_body(
    server: str, token: str | None, expected_head: bytes
) -> None:
    creator = _creator(KubeconfigEntry(server=server, token=token))
    body = b'{"kind":"Node"}'

    request = creator.request("/api/v1/nodes", body)

    assert request.startswith(expected_head)
    head, _, sent = request.partition(b"\r\n\r\n")
    assert sent == body
    # 15 bytes of body: {"kind":"Node"}
    assert b"\r\nContent-Length: 15" in head
    assert b"Content-Type: application/json" in head
    assert (b"Authorization" in head) == (token is not None)


def test_a_server_that_is_not_an_http_url_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("'unix:///run/k8s.sock': not an http")):
        _creator(KubeconfigEntry(server="unix:///run/k8s.sock"))


@pytest.fixture
async def creator(cluster: Any) -> AsyncIterator[FastCreator]:
    fast = FastCreator(cluster.rest, read_kubeconfig(cluster.kubeconfig), connections=4)
    yield fast
    fast.close()


def _pods(namespace: str, count: int) -> list[dict[str, Any]]:
    group = PodGroup(count=count, namespace=namespace)
    return list(loadgen.pod_objects([group], "measured", scheduler_name="nobody"))


async def test_created_pods_are_stored_as_sent(cluster: Any, creator: FastCreator) -> None:
    pods = _pods(cluster.namespace, 3)

    stats = await loadgen.create_many(creator, pods, in_flight=2)

    assert stats.created == 3
    listed = await cluster.rest.list(f"/api/v1/namespaces/{cluster.namespace}/pods")
    names = sorted(item["metadata"]["name"] for item in listed["items"])
    assert names == ["measured-0-0", "measured-0-1", "measured-0-2"]
    container = listed["items"][0]["spec"]["containers"][0]
    assert container["resources"]["requests"] == {"cpu": "100m", "memory": "500Mi"}


async def test_a_refusal_is_the_status_error_the_rest_client_raises(
    cluster: Any, creator: FastCreator
) -> None:
    (pod,) = _pods(cluster.namespace, 1)
    path = f"/api/v1/namespaces/{cluster.namespace}/pods"
    await creator.create(path, pod)

    with pytest.raises(StatusError) as exists:
        await creator.create(path, pod)
    bad = {**pod, "metadata": {**pod["metadata"], "name": "Not_A_Name"}}
    with pytest.raises(StatusError) as invalid:
        await creator.create(path, bad)

    assert (exists.value.status, exists.value.reason) == (409, "AlreadyExists")
    assert (invalid.value.status, invalid.value.reason) == (422, "Invalid")
    assert "metadata.name" in invalid.value.message


async def test_an_object_already_created_counts_as_created(
    cluster: Any, creator: FastCreator
) -> None:
    # as a retried POST whose first answer was lost: AlreadyExists is success
    (pod,) = _pods(cluster.namespace, 1)
    await creator.create(f"/api/v1/namespaces/{cluster.namespace}/pods", pod)

    stats = await loadgen.create_many(creator, [pod], in_flight=1)

    assert (stats.created, stats.retries) == (1, 0)


async def test_a_wrong_token_is_unauthorized(cluster: Any) -> None:
    entry = read_kubeconfig(cluster.kubeconfig)
    wrong = KubeconfigEntry(server=entry.server, ca_pem=entry.ca_pem, token="not-the-token")
    creator = FastCreator(cluster.rest, wrong, connections=1)
    try:
        with pytest.raises(StatusError) as refused:
            await creator.create(f"/api/v1/namespaces/{cluster.namespace}/pods", {})
    finally:
        creator.close()

    assert refused.value.status == 401


@pytest.fixture(scope="module")
def tls_sim() -> Iterator[SimServer]:
    with SimServer(tls=True) as server:
        yield server


async def test_over_tls_the_server_is_verified_against_the_kubeconfig_ca(
    tls_sim: SimServer,
) -> None:
    entry = read_kubeconfig(tls_sim.kubeconfig)
    assert entry.server.startswith("https://")
    untrusted = KubeconfigEntry(server=entry.server, token=entry.token)  # system CAs only
    async with RestClient(entry) as rest:
        await rest.create_namespace("fast-create-tls")
        (pod,) = _pods("fast-create-tls", 1)
        creator = FastCreator(rest, entry, connections=1)
        stranger = FastCreator(rest, untrusted, connections=1)
        try:
            await creator.create("/api/v1/namespaces/fast-create-tls/pods", pod)
            with pytest.raises(ssl.SSLCertVerificationError):
                await stranger.create("/api/v1/namespaces/fast-create-tls/pods", pod)
        finally:
            creator.close()
            stranger.close()
        got = await rest.get("/api/v1/namespaces/fast-create-tls/pods/measured-0-0")
    assert got["metadata"]["namespace"] == "fast-create-tls"
