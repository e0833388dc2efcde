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

from asched.serving import certificates

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


def test_an_extender_ca_that_cannot_be_read_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    missing = tmp_path / "no-such-ca.pem"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "extenders: [{urlPrefix: 'https://127.0.0.1:1/ext', filterVerb: filter,"
        f" enableHTTPS: true, tlsConfig: {{caFile: '{missing}'}}}}]\n"
    )
    result = asched_run(tmp_path, "--config", str(config))
    assert_one_line_error(result, "")
    assert str(missing) in result.stderr


def tls_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A certificate, its key, and the key of another certificate (PEM files)."""
    issued = certificates.issue("asched", ["127.0.0.1"])
    cert, key, other = tmp_path / "tls.crt", tmp_path / "tls.key", tmp_path / "other.key"
    cert.write_bytes(issued.cert_pem)
    key.write_bytes(issued.key_pem)
    other.write_bytes(certificates.issue("other", ["127.0.0.1"]).key_pem)
    return cert, key, other


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        pytest.param(
            ("--tls-cert-file", "{cert}", "--tls-private-key-file", "{other}"),
            "{other}: the private key does not match the certificate in {cert}",
            id="mismatched key",
        ),
        pytest.param(
            ("--tls-cert-file", "{missing}", "--tls-private-key-file", "{key}"),
            "{missing}: cannot read --tls-cert-file: No such file or directory",
            id="unreadable certificate",
        ),
        pytest.param(
            ("--tls-cert-file", "{cert}"),
            "--tls-private-key-file: required with --tls-cert-file",
            id="certificate without key",
        ),
        pytest.param(
            ("--insecure-serving", "--tls-cert-file", "{cert}", "--tls-private-key-file", "{key}"),
            "--insecure-serving: cannot be used with --tls-cert-file or --tls-private-key-file",
            id="insecure with files",
        ),
    ],
)
def test_serving_certificate_errors(tmp_path: Path, flags: tuple[str, ...], expected: str) -> None:
    cert, key, other = tls_files(tmp_path)
    names = {"cert": cert, "key": key, "other": other, "missing": tmp_path / "missing.crt"}
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(GOOD)
    args = [flag.format(**names) for flag in flags]
    result = asched_run(tmp_path, "--kubeconfig", str(kubeconfig), *args)
    assert_one_line_error(result, expected.format(**names))
    assert result.stderr.strip() == f"asched run: error: {expected.format(**names)}"


def test_a_config_nested_past_the_limit_is_one_line(tmp_path: Path) -> None:
    # 3,000 lists inside one another: once a 3,000-line RecursionError and exit 1
    config = tmp_path / "deep.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles: " + "[" * 3000 + "]" * 3000 + "\n"
    )
    result = asched_run(tmp_path, "--config", str(config))

    assert_one_line_error(result, f"{config}:3:110: YAML nested more than 100 levels deep")
