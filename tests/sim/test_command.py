"""``asched sim`` as a process: the contract test fixtures and benchmarks rely on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml


def _start(tmp_path: Path, *flags: str) -> tuple[subprocess.Popen[bytes], Path]:
    kubeconfig = tmp_path / "kubeconfig"
    log = tmp_path / "sim.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "asched",
                "sim",
                "--port",
                "0",
                "--kubeconfig-out",
                str(kubeconfig),
                *flags,
            ],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    deadline = time.monotonic() + 30
    while not kubeconfig.exists():
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, "no kubeconfig within 30 s"
        time.sleep(0.05)
    return process, kubeconfig


@pytest.mark.parametrize(
    ("flags", "scheme"),
    [pytest.param((), "http", id="plain HTTP"), pytest.param(("--tls",), "https", id="TLS")],
)
def test_kubeconfig_then_clean_exit_on_sigterm(tmp_path: Path, flags, scheme):
    process, kubeconfig = _start(tmp_path, "--nodes", "2", *flags)
    try:
        config = yaml.safe_load(kubeconfig.read_text())
        cluster = config["clusters"][0]["cluster"]
        assert cluster["server"].startswith(f"{scheme}://127.0.0.1:")
        assert not cluster["server"].endswith(":0")
        assert ("certificate-authority-data" in cluster) is (scheme == "https")
        assert len(config["users"][0]["user"]["token"]) >= 20  # generated
        assert oct(kubeconfig.stat().st_mode & 0o777) == "0o600"
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".kubeconfig")]  # renamed
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0


def test_sigint_also_exits_0(tmp_path: Path):
    process, _ = _start(tmp_path, "--token", "fixed-token")
    os.kill(process.pid, signal.SIGINT)
    assert process.wait(timeout=10) == 0


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        pytest.param(
            ("--node-template", "/nonexistent.yaml"),
            b"node template /nonexistent.yaml",
            id="missing template",
        ),
        pytest.param(("--bind-error-rate", "2"), b"must be in [0, 1]", id="bad fault flag"),
    ],
)
def test_bad_flags_exit_2_with_a_message(flags, message):
    result = subprocess.run(
        [sys.executable, "-m", "asched", "sim", *flags], capture_output=True, timeout=30
    )
    assert result.returncode == 2
    assert message in result.stderr
