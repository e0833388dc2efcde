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
    [
        # A kubeconfig is for people (kubectl sends no token over plain HTTP): HTTPS.
        pytest.param((), "https", id="default with a kubeconfig: TLS"),
        pytest.param(("--tls",), "https", id="TLS"),
        pytest.param(("--plain-http",), "http", id="plain HTTP, explicitly"),
    ],
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
            b"/nonexistent.yaml: cannot read the node template: No such file or directory",
            id="missing template",
        ),
        pytest.param(("--bind-error-rate", "2"), b"must be in [0, 1]", id="bad fault flag"),
        pytest.param(("--tls", "--plain-http"), b"not allowed with", id="both transports"),
    ],
)
def test_bad_flags_exit_2_with_a_message(flags, message):
    result = subprocess.run(
        [sys.executable, "-m", "asched", "sim", *flags], capture_output=True, timeout=30
    )
    assert result.returncode == 2
    assert message in result.stderr


def _bad_file(tmp_path: Path, kind: str) -> Path:
    """A file that ``--snapshot`` must refuse, by kind."""
    path = tmp_path / f"{kind}.yaml"
    if kind == "binary":
        path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    elif kind == "latin-1":
        path.write_bytes(
            "apiVersion: v1\nkind: Node\nmetadata: {name: caf\xe9}\n".encode("latin-1")
        )
    elif kind == "control character":
        path.write_bytes(b"apiVersion: v1\nkind: \x01Node\n")
    elif kind == "malformed":
        path.write_text("apiVersion: v1\nkind: List\nitems: [\n  - {a: 1\n")
    elif kind == "directory":
        path.mkdir()
    # "missing": never created
    return path


def _sim(*flags: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "asched", "sim", "--port", "0", *flags],
        capture_output=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        # \x89PNG\r\n\x1a\n: the first NUL is at offset 8
        pytest.param("binary", b"binary data, not text (NUL byte at offset 8)", id="binary"),
        # "apiVersion: v1\n" 15 + "kind: Node\n" 11 + "metadata: {name: caf" 20 = offset 46
        pytest.param("latin-1", b"not UTF-8 text (byte 0xe9 at offset 46;", id="latin-1"),
        pytest.param("control character", b"malformed YAML", id="control character"),
        # line 4 "  - {a: 1": a block entry inside a flow sequence, at column 3
        pytest.param("malformed", b".yaml:4:3: malformed YAML", id="malformed YAML"),
        pytest.param(
            "missing", b"cannot read the snapshot: No such file or directory", id="missing"
        ),
        pytest.param("directory", b"cannot read the snapshot: Is a directory", id="directory"),
    ],
)
def test_an_unusable_snapshot_is_one_line_naming_the_file_and_exit_2(
    tmp_path: Path, kind: str, says: bytes
):
    path = _bad_file(tmp_path, kind)

    result = _sim("--snapshot", str(path))

    assert result.returncode == 2, result.stderr
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"asched sim: error: {path}")
    assert says in result.stderr


@pytest.mark.parametrize(
    "where",
    [
        pytest.param("directory", id="a directory"),
        pytest.param("under a file", id="a path under a regular file"),
    ],
)
def test_an_unwritable_kubeconfig_is_one_line_naming_the_file_and_exit_2(
    tmp_path: Path, where: str
):
    if where == "directory":
        target = tmp_path / "a-directory"
        target.mkdir()
    else:
        (tmp_path / "a-file").write_text("")
        target = tmp_path / "a-file" / "kubeconfig"

    result = _sim("--nodes", "2", "--kubeconfig-out", str(target))

    # The process has exited (run() returned): no simulator is left listening.
    assert result.returncode == 2, result.stderr
    lines = result.stderr.decode().splitlines()
    assert lines == [lines[0]], result.stderr
    assert lines[0].startswith(f"asched sim: error: kubeconfig {target}: cannot write it: ")
    assert "asched sim: serving on" not in result.stderr.decode()
