"""delegated_auth in front of the real health server (127.0.0.1, a free port, aiohttp client).

The answers are upstream's: the Status JSON bodies below are what kube-scheduler v1.20.2's
port 10259 sent when they were taken (and kube-apiserver for its own /metrics; the live test
compares them with kube-apiserver v1.37.2's). Reviews come from the in-memory ReviewApi of
conftest.py.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from asched.api.client import KubeClient
from asched.serving import delegated_auth, health
from asched.serving.middleware import path_matcher
from asched.serving.reviews import ACCESS_REVIEWS, TOKEN_REVIEWS

READER_TOKEN = "reader-token-0123456789"
NOBODY_TOKEN = "nobody-token-0123456789"
UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}


def forbidden(message: str) -> dict[str, object]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": {},
        "code": 403,
    }


@pytest.fixture
def state() -> health.HealthState:
    state = health.HealthState()
    state.mark_ready()
    state.set_informers([])
    return state


@pytest.fixture
async def server(api, clock, state) -> AsyncIterator[health.Serving]:
    api.add_user(READER_TOKEN, "prometheus")
    api.add_user(NOBODY_TOKEN, "nobody")
    api.grants.add(("prometheus", "get", "/metrics"))
    middleware = delegated_auth(api, clock=clock)
    async with health.serve(state, "127.0.0.1", 0, middlewares=[middleware]) as serving:
        yield serving


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def call(
    http: aiohttp.ClientSession,
    server: health.Serving,
    path: str,
    token: str | None = None,
    method: str = "GET",
    header: str | None = None,
) -> tuple[int, str, aiohttp.ClientResponse]:
    headers = {"Authorization": header or f"Bearer {token}"} if token or header else {}
    async with http.request(method, server.url + path, headers=headers) as response:
        return response.status, await response.text(), response


@pytest.mark.parametrize(
    ("path", "token", "method", "status", "body"),
    [
        pytest.param("/healthz", None, "GET", 200, "ok", id="healthz, no token"),
        pytest.param("/livez", None, "GET", 200, "ok", id="livez, no token"),
        pytest.param("/readyz", None, "GET", 200, "ok", id="readyz, no token"),
        pytest.param("/healthz", "stale", "GET", 200, "ok", id="healthz, a bad token ignored"),
        pytest.param("/metrics", None, "GET", 401, UNAUTHORIZED, id="metrics, no token"),
        pytest.param("/metrics", "stale", "GET", 401, UNAUTHORIZED, id="metrics, invalid token"),
        pytest.param(
            "/metrics",
            NOBODY_TOKEN,
            "GET",
            403,
            forbidden('forbidden: User "nobody" cannot get path "/metrics"'),
            id="metrics, not allowed",
        ),
        pytest.param(
            "/metrics",
            READER_TOKEN,
            "POST",
            403,
            forbidden('forbidden: User "prometheus" cannot post path "/metrics"'),
            id="metrics, allowed get but not post",
        ),
        pytest.param(
            "/debug/pprof",
            READER_TOKEN,
            "GET",
            403,
            forbidden('forbidden: User "prometheus" cannot get path "/debug/pprof"'),
            id="another path, not allowed (authorized before it is found)",
        ),
        pytest.param("/nowhere", None, "GET", 401, UNAUTHORIZED, id="another path, no token"),
    ],
)
async def test_answers(server, http, path, token, method, status, body) -> None:
    got_status, text, response = await call(http, server, path, token, method)
    assert got_status == status
    if isinstance(body, dict):
        assert response.content_type == "application/json"
        assert json.loads(text) == body
        assert text.endswith("}\n")
        assert response.headers["Cache-Control"] == "no-cache, private"
    else:
        assert text == body


async def test_an_allowed_token_reads_the_metrics(server, http) -> None:
    status, text, response = await call(http, server, "/metrics", READER_TOKEN)
    assert status == 200
    assert "# TYPE asched_schedule_attempts_total counter" in text
    assert response.headers["Cache-Control"] == "no-cache, private"


async def test_head_is_its_own_verb(api, clock, server, http) -> None:
    # upstream's verb for a non-resource URL is the method in lower case: get does not grant head
    status, _, _ = await call(http, server, "/metrics", READER_TOKEN, "HEAD")
    assert status == 403
    api.grants.add(("prometheus", "head", "/metrics"))
    clock.now += 10.0  # the denial is cached for 10 s
    status, text, _ = await call(http, server, "/metrics", READER_TOKEN, "HEAD")
    assert (status, text) == (200, "")


@pytest.mark.parametrize(
    ("header", "status"),
    [
        pytest.param(f"Bearer {READER_TOKEN}", 200, id="Bearer"),
        pytest.param(f"bearer {READER_TOKEN}", 200, id="bearer in lower case"),
        pytest.param(f"Bearer   {READER_TOKEN}  ", 200, id="extra spaces"),
        pytest.param("Bearer", 401, id="no token after Bearer"),
        pytest.param("Bearer ", 401, id="an empty token"),
        pytest.param(f"Basic {READER_TOKEN}", 401, id="another scheme"),
        pytest.param(READER_TOKEN, 401, id="no scheme"),
    ],
)
async def test_the_authorization_header(server, http, header: str, status: int) -> None:
    got, _, _ = await call(http, server, "/metrics", header=header)
    assert got == status


async def test_a_denial_reason_is_appended_and_html_escaped(api, server, http) -> None:
    api.add_user("odd-token", "<script>&")
    api.reasons["<script>&"] = "no RBAC policy matched"
    status, text, _ = await call(http, server, "/metrics", "odd-token")
    assert status == 403
    assert json.loads(text)["message"] == (
        'forbidden: User "&lt;script&gt;&amp;" cannot get path "/metrics": no RBAC policy matched'
    )


async def test_reviews_are_cached_between_scrapes(api, clock, server, http) -> None:
    for _ in range(3):
        assert (await call(http, server, "/metrics", READER_TOKEN))[0] == 200
    assert (api.count(TOKEN_REVIEWS), api.count(ACCESS_REVIEWS)) == (1, 1)
    clock.now += 10.0  # both TTLs (10 s) are over: one more review pair
    assert (await call(http, server, "/metrics", READER_TOKEN))[0] == 200
    assert (api.count(TOKEN_REVIEWS), api.count(ACCESS_REVIEWS)) == (2, 2)


async def test_token_review_failure_is_401_and_the_server_keeps_serving(
    api, server, http, caplog
) -> None:
    api.unreachable.add(TOKEN_REVIEWS)
    with caplog.at_level(logging.ERROR, logger="asched.serving"):
        status, text, _ = await call(http, server, "/metrics", READER_TOKEN)
    assert (status, json.loads(text)) == (401, UNAUTHORIZED)
    assert "Unable to authenticate the request to /metrics" in caplog.text
    assert (await call(http, server, "/healthz"))[:2] == (200, "ok")

    api.unreachable.clear()  # nothing was cached: the next scrape succeeds
    assert (await call(http, server, "/metrics", READER_TOKEN))[0] == 200


async def test_access_review_failure_is_500_and_the_server_keeps_serving(api, server, http) -> None:
    api.unreachable.add(ACCESS_REVIEWS)
    status, text, response = await call(http, server, "/metrics", READER_TOKEN)
    assert status == 500
    assert response.content_type == "text/plain"
    assert text == (
        'Internal Server Error: "/metrics": POST '
        "/apis/authorization.k8s.io/v1/subjectaccessreviews on https://10.0.0.1:6443: "
        "ClientConnectorError"
    )
    api.unreachable.clear()
    assert (await call(http, server, "/metrics", READER_TOKEN))[0] == 200


async def test_tokens_are_never_logged(api, server, http, caplog) -> None:
    api.reasons["nobody"] = "no RBAC policy matched"
    with caplog.at_level(logging.DEBUG):
        for token in (READER_TOKEN, NOBODY_TOKEN, "stale-token-0123456789"):
            await call(http, server, "/metrics", token)
        api.unreachable.update({TOKEN_REVIEWS, ACCESS_REVIEWS})
        await call(http, server, "/metrics", "new-token-0123456789")
    assert any("Forbidden" in record.getMessage() for record in caplog.records)
    for record in caplog.records:
        for token in (READER_TOKEN, NOBODY_TOKEN, "stale-token", "new-token"):
            assert token not in record.getMessage()


async def test_a_real_client_whose_api_server_is_down(state, http, tmp_path: Path) -> None:
    # asched's own KubeClient against a port nobody listens on: the transport failure is a
    # 401 for /metrics, the probes still answer
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        'clusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]\n'
        "users: [{name: u, user: {token: scheduler-token}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    client = await KubeClient.connect(str(kubeconfig))
    try:
        middlewares = [delegated_auth(client)]
        async with health.serve(state, "127.0.0.1", 0, middlewares=middlewares) as server:
            status, text, _ = await call(http, server, "/metrics", READER_TOKEN)
            assert (status, json.loads(text)) == (401, UNAUTHORIZED)
            assert (await call(http, server, "/readyz"))[:2] == (200, "ok")
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("patterns", "path", "allowed"),
    [
        pytest.param(("/healthz",), "/healthz", True, id="exact"),
        pytest.param(("/healthz",), "/healthz/ping", False, id="exact is not a prefix"),
        pytest.param(("/healthz",), "/healthzz", False, id="exact, longer name"),
        pytest.param(("/debug/*",), "/debug/queue", True, id="prefix"),
        pytest.param(("/debug/*",), "/debug/", True, id="prefix itself"),
        pytest.param(("/debug/*",), "/debugger", False, id="prefix needs the slash"),
        pytest.param((), "/healthz", False, id="nothing allowed"),
    ],
)
def test_always_allow_patterns(patterns: tuple[str, ...], path: str, allowed: bool) -> None:
    assert path_matcher(patterns)(path) is allowed


async def test_always_allow_is_configurable(api, clock, state, http) -> None:
    # another listener (debug pages) that serves only behind auth: nothing always allowed
    middleware = delegated_auth(api, always_allow=(), clock=clock)
    async with health.serve(state, "127.0.0.1", 0, middlewares=[middleware]) as server:
        status, text, _ = await call(http, server, "/healthz")
        assert (status, json.loads(text)) == (401, UNAUTHORIZED)
