"""Secure serving tried locally: ``/metrics`` over HTTPS against the simulator.

The simulator answers TokenReview and SubjectAccessReview for the one token of its
kubeconfig (the user ``admin`` in ``system:masters``; asched.tools.sim.apiserver.reviews). Before, every
scrape was 401 and asched logged an ERROR for each: the simulator served neither kind.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterator

import aiohttp
import pytest

from asched.api.client import KubeClient
from asched.serving import delegated_auth, health, ssl_context_for
from asched.serving.tls import self_signed_hosts
from asched.tools.backends.simulator import SimServer

pytestmark = pytest.mark.sim_only


@pytest.fixture
async def client(fresh_sim_server: SimServer) -> AsyncIterator[KubeClient]:
    connected = await KubeClient.connect(str(fresh_sim_server.kubeconfig))
    try:
        yield connected
    finally:
        await connected.close()


async def _get(url: str, ca_pem: bytes, token: str | None) -> tuple[int, bytes]:
    context = ssl.create_default_context(cadata=ca_pem.decode("ascii"))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        aiohttp.ClientSession() as http,
        http.get(url, headers=headers, ssl=context) as response,
    ):
        return response.status, await response.read()


async def test_metrics_against_the_simulator_take_its_token(
    fresh_sim_server: SimServer, client: KubeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    tls = ssl_context_for(hosts=self_signed_hosts("127.0.0.1"))
    assert tls.ca_pem is not None
    async with health.serve(
        health.HealthState(),
        "127.0.0.1",
        0,
        ssl_context=tls.context,
        middlewares=[delegated_auth(client)],
    ) as served:
        url = f"{served.url}/metrics"
        status, body = await _get(url, tls.ca_pem, fresh_sim_server.token)
        assert status == 200
        assert b"# TYPE asched_schedule_attempts_total counter" in body
        # a token the simulator did not issue, and none: 401, as kube-apiserver answers
        assert (await _get(url, tls.ca_pem, "not-its-token"))[0] == 401
        assert (await _get(url, tls.ca_pem, None))[0] == 401
    # the reviews were answered: nothing to complain about (a 401 is the scraper's problem)
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize(
    ("groups", "allowed"),
    [
        pytest.param(["system:masters", "system:authenticated"], True, id="the admin"),
        pytest.param(["system:authenticated"], False, id="anyone else: no RBAC to allow it"),
    ],
)
async def test_access_reviews_allow_the_superuser_group_only(
    client: KubeClient, groups: list[str], allowed: bool
) -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "u",
            "groups": groups,
            "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
        },
    }
    answer = await client.create("/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    assert answer.status == 201
    assert answer.body["status"]["allowed"] is allowed
    assert answer.body["spec"] == review["spec"]


async def test_token_reviews_know_the_kubeconfigs_token(
    fresh_sim_server: SimServer, client: KubeClient
) -> None:
    path = "/apis/authentication.k8s.io/v1/tokenreviews"
    mine = await client.create(
        path, {"kind": "TokenReview", "spec": {"token": fresh_sim_server.token}}
    )
    assert mine.status == 201
    assert mine.body["status"]["authenticated"] is True
    assert mine.body["status"]["user"] == {
        "username": "admin",
        "groups": ["system:masters", "system:authenticated"],
    }
    other = await client.create(path, {"kind": "TokenReview", "spec": {"token": "x"}})
    assert other.status == 201
    assert other.body["status"].get("authenticated") is None  # omitted: false
