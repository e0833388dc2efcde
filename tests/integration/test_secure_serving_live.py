"""Secure serving on the genuine kube-apiserver v1.37: TLS, TokenReview, SubjectAccessReview.

Every identity is a real ServiceAccount with a token from the TokenRequest API:

* ``asched``: the scheduler's own client, bound to ``system:auth-delegator`` only (what
  deploy/rbac.yaml grants for this), so the reviews succeed with exactly that RBAC;
* ``prometheus``: bound to deploy/metrics.yaml's ClusterRole (``get`` on ``/metrics``);
* ``nobody``: no binding.

The 401 and 403 bodies are compared with kube-apiserver's own answers to the same requests
for its own ``/metrics`` (same filters, same responsewriters, so they must be identical).

The simulator serves TokenReview and SubjectAccessReview for its one token (no RBAC):
tests/integration/test_secure_serving_sim.py tries the same path on it.
"""

from __future__ import annotations

import asyncio
import json
import signal
import ssl
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from scheduler_harness import until

from asched.api.client import KubeClient
from asched.serving import certificates, delegated_auth, health, ssl_context_for
from asched.serving.tls import self_signed_hosts
from asched.tools.backends.kubeconfig import write_kubeconfig
from asched.tools.backends.launcher import KubeApiServer
from asched.tools.backends.rest import RestClient

pytestmark = pytest.mark.kube_apiserver

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


@dataclass
class Identities:
    """Tokens and kubeconfigs of the three ServiceAccounts (see the module docstring)."""

    namespace: str
    tokens: dict[str, str]
    kubeconfigs: dict[str, Path]

    def user(self, name: str) -> str:
        return f"system:serviceaccount:{self.namespace}:{name}"


async def _allowed(rest: RestClient, spec: dict[str, Any]) -> bool:
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
    answer = await rest.create("/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    return bool(answer["status"].get("allowed"))


@pytest.fixture
async def identities(kube_apiserver: KubeApiServer, tmp_path: Path) -> AsyncIterator[Identities]:
    suffix = uuid.uuid4().hex[:8]
    namespace = f"serving-{suffix}"
    (reader_role,) = [
        doc
        for doc in yaml.safe_load_all((DEPLOY / "metrics.yaml").read_text())
        if doc["kind"] == "ClusterRole"
    ]
    role_name = f"{reader_role['metadata']['name']}-{suffix}"
    bindings = {  # binding name -> (ClusterRole, ServiceAccount)
        f"asched-auth-delegator-{suffix}": ("system:auth-delegator", "asched"),
        f"prometheus-metrics-{suffix}": (role_name, "prometheus"),
    }
    async with RestClient.from_kubeconfig(kube_apiserver.kubeconfig) as rest:
        await rest.create_namespace(namespace)
        await rest.create(f"{RBAC}/clusterroles", {**reader_role, "metadata": {"name": role_name}})
        for binding, (role, account) in bindings.items():
            await rest.create(
                f"{RBAC}/clusterrolebindings",
                {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "ClusterRoleBinding",
                    "metadata": {"name": binding},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "ClusterRole",
                        "name": role,
                    },
                    "subjects": [
                        {"kind": "ServiceAccount", "name": account, "namespace": namespace}
                    ],
                },
            )
        tokens: dict[str, str] = {}
        kubeconfigs: dict[str, Path] = {}
        for account in ("asched", "prometheus", "nobody"):
            accounts = f"/api/v1/namespaces/{namespace}/serviceaccounts"
            await rest.create(
                accounts,
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}},
            )
            request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
            answer = await rest.create(f"{accounts}/{account}/token", request)
            tokens[account] = answer["status"]["token"]
            kubeconfigs[account] = write_kubeconfig(
                tmp_path / f"{account}.kubeconfig",
                server=kube_apiserver.url,
                ca_pem=kube_apiserver.ca_pem,
                token=tokens[account],
            )
        found = Identities(namespace, tokens, kubeconfigs)

        # RBAC serves from informers: wait until both bindings are in force, so no test
        # sees (and caches) a denial that is only a propagation delay
        async def bound() -> bool:
            metrics = {"nonResourceAttributes": {"path": "/metrics", "verb": "get"}}
            reviews = {
                "resourceAttributes": {
                    "group": "authentication.k8s.io",
                    "resource": "tokenreviews",
                    "verb": "create",
                }
            }
            return await _allowed(
                rest, {**metrics, "user": found.user("prometheus")}
            ) and await _allowed(rest, {**reviews, "user": found.user("asched")})

        await until(bound, within=30)
        try:
            yield found
        finally:
            for binding in bindings:
                await rest.delete(f"{RBAC}/clusterrolebindings/{binding}")
            await rest.delete(f"{RBAC}/clusterroles/{role_name}")
            await rest.delete(f"/api/v1/namespaces/{namespace}")


async def fetch(
    url: str, ca_pem: bytes, token: str | None = None, method: str = "GET"
) -> tuple[int, bytes, str]:
    """(status, body, content type) of one request over TLS verified with ``ca_pem``."""
    context = ssl.create_default_context(cadata=ca_pem.decode("ascii"))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, url, headers=headers, ssl=context) as response,
    ):
        return response.status, await response.read(), response.content_type


@pytest.fixture
async def scheduler_client(identities: Identities) -> AsyncIterator[KubeClient]:
    client = await KubeClient.connect(str(identities.kubeconfigs["asched"]))
    try:
        yield client
    finally:
        await client.close()


async def test_metrics_need_an_authorized_token_over_verified_tls(
    kube_apiserver: KubeApiServer, identities: Identities, scheduler_client: KubeClient
) -> None:
    tls = ssl_context_for(hosts=self_signed_hosts("127.0.0.1"))
    assert tls.ca_pem is not None
    state = health.HealthState()
    middlewares = [delegated_auth(scheduler_client)]
    async with health.serve(
        state, "127.0.0.1", 0, ssl_context=tls.context, middlewares=middlewares
    ) as served:
        ours = f"{served.url}/metrics"
        theirs = f"{kube_apiserver.url}/metrics"

        status, body, _ = await fetch(ours, tls.ca_pem, identities.tokens["prometheus"])
        assert status == 200
        assert b"# TYPE asched_schedule_attempts_total counter" in body

        # 403 for a token the API server knows but RBAC does not allow: upstream's body
        nobody = identities.tokens["nobody"]
        status, body, content_type = await fetch(ours, tls.ca_pem, nobody)
        assert (status, content_type) == (403, "application/json")
        message = f'forbidden: User "{identities.user("nobody")}" cannot get path "/metrics"'
        assert json.loads(body)["message"] == message
        assert (status, body) == (await fetch(theirs, kube_apiserver.ca_pem, nobody))[:2]

        # 401 without a token, and for a token nobody issued (kube-apiserver runs with
        # --anonymous-auth=false, so its no-token answer is the same 401)
        status, body, _ = await fetch(ours, tls.ca_pem)
        assert status == 401
        assert (status, body) == (await fetch(theirs, kube_apiserver.ca_pem))[:2]
        assert (await fetch(ours, tls.ca_pem, "not-a-token"))[:2] == (status, body)

        # the probes need nothing
        assert (await fetch(f"{served.url}/healthz", tls.ca_pem))[:2] == (200, b"ok")
        assert (await fetch(f"{served.url}/readyz", tls.ca_pem))[0] == 503  # never marked ready


async def test_without_auth_delegator_every_scrape_is_401(
    kube_apiserver: KubeApiServer, identities: Identities
) -> None:
    # the scheduler running as `nobody` (no system:auth-delegator): its TokenReviews are
    # refused (403), which is a failed authentication for the scrape, not a crash
    client = await KubeClient.connect(str(identities.kubeconfigs["nobody"]))
    try:
        async with health.serve(
            health.HealthState(), "127.0.0.1", 0, middlewares=[delegated_auth(client)]
        ) as served:
            async with (
                aiohttp.ClientSession() as http,
                http.get(
                    f"{served.url}/metrics",
                    headers={"Authorization": f"Bearer {identities.tokens['prometheus']}"},
                ) as response,
            ):
                assert response.status == 401
            async with aiohttp.ClientSession() as http, http.get(f"{served.url}/livez") as live:
                assert live.status == 200
    finally:
        await client.close()


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_asched_run_serves_tls_from_files_with_delegated_auth(
    kube_apiserver: KubeApiServer, identities: Identities, tmp_path: Path
) -> None:
    issued = certificates.issue("asched.example", ["127.0.0.1"])
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert.write_bytes(issued.cert_pem)
    key.write_bytes(issued.key_pem)
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {"leaderElect": False},
                "profiles": [{"schedulerName": f"serving-{uuid.uuid4().hex[:8]}"}],
            }
        )
    )
    port, debug_port = free_port(), free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "asched",
        "run",
        "--config",
        str(config),
        "--kubeconfig",
        str(kube_apiserver.kubeconfig),
        # loopback, but certificate files are given: TLS and delegated auth
        "--bind-address",
        "127.0.0.1",
        "--secure-port",
        str(port),
        "--tls-cert-file",
        str(cert),
        "--tls-private-key-file",
        str(key),
        # off loopback the debug pages get the same TLS and the same token checks
        "--debug-addr",
        f"0.0.0.0:{debug_port}",
        stderr=asyncio.subprocess.PIPE,
    )
    base = f"https://127.0.0.1:{port}"
    try:

        async def ready() -> bool:
            try:
                return (await fetch(f"{base}/readyz", issued.ca_pem))[0] == 200
            except aiohttp.ClientConnectionError:
                return False

        await until(ready, within=60)
        status, body, _ = await fetch(
            f"{base}/metrics", issued.ca_pem, identities.tokens["prometheus"]
        )
        assert status == 200
        assert b"asched_pending_pods" in body
        assert (await fetch(f"{base}/metrics", issued.ca_pem, identities.tokens["nobody"]))[
            0
        ] == 403
        assert (await fetch(f"{base}/metrics", issued.ca_pem))[0] == 401

        queue = f"https://127.0.0.1:{debug_port}/debug/api/queue"
        assert (await fetch(queue, issued.ca_pem))[0] == 401  # no token
        # prometheus may get /metrics only, not /debug/*: 403 with upstream's message
        status, body, _ = await fetch(queue, issued.ca_pem, identities.tokens["prometheus"])
        assert status == 403
        assert json.loads(body)["message"].endswith('cannot get path "/debug/api/queue"')
        # the cluster admin (system:masters) may: the pages answer over the same TLS
        status, body, _ = await fetch(queue, issued.ca_pem, kube_apiserver.token)
        assert status == 200, body
        assert "counts" in json.loads(body)
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(60):
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.stderr is not None
    log = (await process.stderr.read()).decode()
    for token in identities.tokens.values():
        assert token not in log
