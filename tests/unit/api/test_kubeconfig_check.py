"""A kubeconfig that kubernetes-asyncio would choke on is one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from asched.api.client import KubeClient
from asched.api.kubeconfig import check_kubeconfig
from asched.errors import InputError

GOOD = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param("", "not a kubeconfig (the document is empty, not an object)", id="empty"),
        pytest.param(
            "- a\n", "not a kubeconfig (the document is a list, not an object)", id="list"
        ),
        pytest.param(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
            "not a kubeconfig (kind 'KubeSchedulerConfiguration', expected 'Config')",
            id="a scheduler configuration",
        ),
        pytest.param(
            GOOD.replace("current-context: x", "current-context: y"),
            "current-context 'y' is not defined (contexts: x)",
            id="undefined current-context",
        ),
        pytest.param(
            GOOD.replace("current-context: x\n", ""),
            "current-context is not set (contexts: x)",
            id="no current-context",
        ),
        pytest.param(
            GOOD.replace("cluster: c, user", "cluster: d, user"),
            "context 'x': cluster 'd' is not defined",
            id="undefined cluster",
        ),
        pytest.param(
            GOOD.replace('server: "http://127.0.0.1:1"', "insecure-skip-tls-verify: true"),
            "cluster 'c' has no server",
            id="no server",
        ),
        pytest.param(
            GOOD.replace("user: u}}]\ncurrent", "user: v}}]\ncurrent"),
            "context 'x': user 'v' is not defined",
            id="undefined user",
        ),
        pytest.param(
            GOOD.replace("contexts: [{name: x, context: {cluster: c, user: u}}]", "contexts: {}"),
            "contexts: must be a list",
            id="contexts not a list",
        ),
        pytest.param("a: [\n", "malformed YAML", id="malformed YAML"),
    ],
)
def test_bad_kubeconfig(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        check_kubeconfig(path)
    assert str(path) in str(caught.value)
    assert reason in str(caught.value)


def test_good_kubeconfig_passes(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(GOOD)
    check_kubeconfig(path)


async def test_connect_reports_a_missing_certificate_file(tmp_path: Path) -> None:
    # structurally fine, but the CA file it names is not there: kubernetes-asyncio's
    # ConfigException becomes one line naming the kubeconfig
    path = tmp_path / "kubeconfig"
    path.write_text(
        GOOD.replace('"http://127.0.0.1:1"', '"https://127.0.0.1:1", certificate-authority: ca.crt')
    )
    with pytest.raises(InputError, match=f"^{path}: .*ca.crt"):
        await KubeClient.connect(str(path))
