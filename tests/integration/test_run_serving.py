"""``asched run``'s port by bind address: HTTPS with delegated auth unless plain HTTP is chosen.

The process runs against each backend; only what needs no review is asserted here (the
reviews themselves run on the genuine server in test_secure_serving_live.py): on a
non-loopback address the port speaks TLS with a self-signed certificate naming this
machine, /healthz answers without a token and /metrics without one is 401; with
--insecure-serving it is plain HTTP, /metrics open, and the startup log warns.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import ssl
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from cryptography import x509
from scheduler_harness import config_for, until


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("0.0.0.0", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def asched_run(cluster: Any, tmp_path: Path, *flags: str) -> AsyncIterator[list[str]]:
    """Run ``asched run`` with ``flags`` until the block exits; yields its stderr lines."""
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(config_for(cluster, cluster.unique_name("sched"))))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "asched",
        "--log-level",
        "INFO",
        "run",
        "--config",
        str(config),
        "--kubeconfig",
        str(cluster.kubeconfig),
        *flags,
        stderr=asyncio.subprocess.PIPE,
    )
    lines: list[str] = []

    async def read() -> None:
        assert process.stderr is not None
        lines.extend([line.decode() async for line in process.stderr])

    reader = asyncio.create_task(read())
    try:
        yield lines
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(60):
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await reader


async def answer(url: str, **kwargs: Any) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url, **kwargs) as response:
        return response.status, await response.text()


async def test_every_interface_is_https_by_default(cluster: Any, tmp_path: Path) -> None:
    port = free_port()
    flags = ("--bind-address", "0.0.0.0", "--secure-port", str(port))
    async with asched_run(cluster, tmp_path, *flags):
        base = f"https://127.0.0.1:{port}"

        async def serving() -> bool:
            try:
                return (await answer(f"{base}/healthz", ssl=False))[0] == 200
            except aiohttp.ClientConnectionError:
                return False

        await until(serving, within=60)
        # self-signed: the CA stays in memory, so the certificate is only inspected here
        assert (await answer(f"{base}/metrics", ssl=False))[0] == 401
        with socket.create_connection(("127.0.0.1", port)) as raw:
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            with context.wrap_socket(raw) as wrapped:
                der = wrapped.getpeercert(binary_form=True)
        assert der is not None
        names = x509.load_der_x509_certificate(der).extensions.get_extension_for_class(
            x509.SubjectAlternativeName
        )
        assert socket.gethostname() in names.value.get_values_for_type(x509.DNSName)
        with pytest.raises(aiohttp.ClientError):
            await answer(f"http://127.0.0.1:{port}/healthz")  # no plain HTTP on this port


async def test_insecure_serving_on_every_interface_warns(cluster: Any, tmp_path: Path) -> None:
    port = free_port()
    flags = ("--bind-address", "0.0.0.0", "--secure-port", str(port), "--insecure-serving")
    async with asched_run(cluster, tmp_path, *flags) as log:
        base = f"http://127.0.0.1:{port}"

        async def serving() -> bool:
            try:
                return (await answer(f"{base}/healthz"))[0] == 200
            except aiohttp.ClientConnectionError:
                return False

        await until(serving, within=60)
        status, text = await answer(f"{base}/metrics")
        assert status == 200
        assert "asched_pending_pods" in text
    warnings = [line for line in log if "WARNING" in line and "--insecure-serving" in line]
    assert len(warnings) == 1, log
    assert "0.0.0.0 is not loopback" in warnings[0]
