"""``asched run`` startup errors: one line ``asched run: error: <file or address>: ...``, exit 2.

No traceback for a kubeconfig that is missing, binary, malformed or not a kubeconfig, for
no kubeconfig at all, or for a health port already in use. Each case runs the real
command in a subprocess with a clean environment (no in-cluster variables, no
$KUBECONFIG, an empty HOME), so nothing on this machine leaks in.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

GOOD = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def asched_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")
    }
    env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "asched", "run", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], prefix: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"asched run: error: {prefix}"), lines[0]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        pytest.param(None, "cannot read the kubeconfig: No such file or directory", id="missing"),
        pytest.param(
            b"\x89PNG\r\n\x1a\n\x00\x00",
            "cannot read the kubeconfig: binary data, not text",
            id="binary",
        ),
        pytest.param(b"clusters: [\n", "malformed YAML", id="malformed YAML"),
        pytest.param(b"- just\n- a list\n", "not a kubeconfig", id="YAML that is not a kubeconfig"),
        pytest.param(
            GOOD.replace("current-context: x", "current-context: prod").encode(),
            "current-context 'prod' is not defined (contexts: x)",
            id="undefined current-context",
        ),
    ],
)
def test_bad_kubeconfig(tmp_path: Path, content: bytes | None, reason: str) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    if content is not None:
        kubeconfig.write_bytes(content)
    result = asched_run(tmp_path, "--kubeconfig", str(kubeconfig))
    assert_one_line_error(result, str(kubeconfig))
    assert reason in result.stderr


def test_no_kubeconfig_anywhere(tmp_path: Path) -> None:
    result = asched_run(tmp_path)
    assert_one_line_error(result, "no kubeconfig found; tried --kubeconfig (not given)")
    assert str(tmp_path / "home" / ".kube" / "config") in result.stderr


def test_home_kubeconfig_is_used_and_checked(tmp_path: Path) -> None:
    # the fallback is really read: a broken ~/.kube/config is reported by name
    config = tmp_path / "home" / ".kube" / "config"
    config.parent.mkdir(parents=True)
    config.write_text("kind: Pod\n")
    result = asched_run(tmp_path)
    assert_one_line_error(result, f"{config}: not a kubeconfig (kind 'Pod'")


def test_health_port_in_use(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(GOOD)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = asched_run(
            tmp_path,
            "--kubeconfig",
            str(kubeconfig),
            "--health-host",
            "127.0.0.1",
            "--health-port",
            str(port),
        )
    assert_one_line_error(result, f"127.0.0.1:{port}: cannot serve the health endpoints: ")
    assert "in use" in result.stderr
