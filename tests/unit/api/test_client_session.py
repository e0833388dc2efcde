"""The API client's session settings that matter for speed."""

from __future__ import annotations

from pathlib import Path

import pytest

from asched.api.client import KubeClient

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.mark.parametrize(("env", "trusts"), [(None, False), ("1", True)])
async def test_proxy_environment_lookups_are_off_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str | None, trusts: bool
) -> None:
    # trust_env makes aiohttp consult proxy/netrc settings per request in a thread pool
    if env is None:
        monkeypatch.delenv("ASCHED_API_TRUST_ENV", raising=False)
    else:
        monkeypatch.setenv("ASCHED_API_TRUST_ENV", env)
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    client = await KubeClient.connect(str(path))
    try:
        assert client.trusts_env is trusts
    finally:
        await client.close()
