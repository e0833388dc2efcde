"""``asched run`` stops on SIGTERM/SIGINT in every state, and says why it never became ready.

Each test starts a real ``python -m asched run`` process that cannot become ready (a wrong
token, a closed port, a lease held by someone else), waits for evidence that it is stuck
in that state (its own log lines, or /readyz), then signals it. A graceful stop is exit
status 0, and the last WARNING line names what the process was waiting for.

The stop must take about a second; the bound below is generous because the test machine
is shared, and a process that ignores the signal never exits at all.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from scheduler_harness import config_for, leader_election, until

from asched.tools.backends.kubeconfig import read_kubeconfig, write_kubeconfig

#: Seconds a signalled process may take to exit (the target is 1-2 s).
STOP_WITHIN = 10.0
WRONG_TOKEN = "wrong-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Scheduler:
    """A running ``asched run`` process and the stderr lines it has written so far."""

    process: asyncio.subprocess.Process
    health: str
    lines: list[str] = field(default_factory=list)

    @property
    def stderr(self) -> str:
        return "\n".join(self.lines)

    def line_with(self, text: str) -> str:
        """The one stderr line containing ``text``."""
        found = [line for line in self.lines if text in line]
        assert len(found) == 1, (text, self.stderr)
        return found[0]

    async def logged(self, text: str, *, times: int = 1, within: float = 60.0) -> None:
        """Wait until ``text`` has appeared in ``times`` stderr lines."""

        async def seen() -> bool:
            return sum(text in line for line in self.lines) >= times

        await until(seen, within=within)

    async def stop(self, sig: signal.Signals) -> int:
        """Send ``sig``; return the exit status (fails if it takes over STOP_WITHIN s)."""
        self.process.send_signal(sig)
        async with asyncio.timeout(STOP_WITHIN):
            return await self.process.wait()


@asynccontextmanager
async def asched_run(kubeconfig: Path, tmp_path: Path, **config: Any) -> AsyncIterator[Scheduler]:
    """``asched --log-level INFO run`` against ``kubeconfig``, killed if still running."""
    config_file = tmp_path / "config.yaml"
    config_file.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {"leaderElect": False},
                **config,
            }
        )
    )
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "asched",
        "--log-level",
        "INFO",
        "run",
        "--config",
        str(config_file),
        "--kubeconfig",
        str(kubeconfig),
        "--health-host",
        "127.0.0.1",
        "--health-port",
        str(port),
        stderr=asyncio.subprocess.PIPE,
    )
    scheduler = Scheduler(process, f"http://127.0.0.1:{port}")

    async def read() -> None:
        assert process.stderr is not None
        async for raw in process.stderr:
            scheduler.lines.append(raw.decode(errors="replace").rstrip())

    reader = asyncio.create_task(read())
    try:
        yield scheduler
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await reader


def with_token(source: Path, target: Path, token: str) -> Path:
    """A copy of the kubeconfig ``source`` (server, CA) with another bearer token."""
    entry = read_kubeconfig(source)
    return write_kubeconfig(target, server=entry.server, ca_pem=entry.ca_pem, token=token)


async def test_wrong_token_stops_on_sigterm_and_names_the_401(cluster: Any, tmp_path: Path) -> None:
    kubeconfig = with_token(cluster.kubeconfig, tmp_path / "wrong.kubeconfig", WRONG_TOKEN)
    async with asched_run(kubeconfig, tmp_path) as scheduler:
        # three failed lists: it has tried (and backed off) a few times
        await scheduler.logged("401", times=3)
        assert await scheduler.stop(signal.SIGTERM) == 0
    last = scheduler.line_with("stopped before ready")
    assert "401 Unauthorized" in last
    assert "Traceback" not in scheduler.stderr
    assert WRONG_TOKEN not in scheduler.stderr


@pytest.mark.parametrize(
    "sig", [pytest.param(signal.SIGTERM, id="SIGTERM"), pytest.param(signal.SIGINT, id="SIGINT")]
)
async def test_unreachable_server_stops_on_signal(tmp_path: Path, sig: signal.Signals) -> None:
    closed = free_port()  # bound and released: nothing listens there
    kubeconfig = write_kubeconfig(
        tmp_path / "closed.kubeconfig", server=f"http://127.0.0.1:{closed}", ca_pem=None, token="t"
    )
    async with asched_run(kubeconfig, tmp_path) as scheduler:
        await scheduler.logged("Cannot connect to host", times=3)
        assert await scheduler.stop(sig) == 0
    last = scheduler.line_with("stopped before ready")
    assert f"127.0.0.1:{closed}" in last
    assert "Traceback" not in scheduler.stderr


async def test_standby_waiting_for_the_lease_stops_on_sigterm(cluster: Any, tmp_path: Path) -> None:
    lease = cluster.unique_name("lease")
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    await cluster.rest.create(
        f"/apis/coordination.k8s.io/v1/namespaces/{cluster.namespace}/leases",
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": lease, "namespace": cluster.namespace},
            # held for an hour by a leader that never renews: the standby waits
            "spec": {
                "holderIdentity": "the-other-replica",
                "leaseDurationSeconds": 3600,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": 0,
            },
        },
    )
    name = cluster.unique_name("sched")
    config = config_for(cluster, name, leaderElection=leader_election(cluster, lease))
    async with asched_run(cluster.kubeconfig, tmp_path, **config) as scheduler:
        async with aiohttp.ClientSession() as http:

            async def ready() -> bool:  # a standby is ready: informers synced
                try:
                    async with http.get(f"{scheduler.health}/readyz") as response:
                        return response.status == 200
                except aiohttp.ClientError:
                    return False

            await until(ready, within=60)
        await scheduler.logged("attempting to acquire leader lease")
        assert await scheduler.stop(signal.SIGTERM) == 0
    # a standby is ready (its informers synced): waiting for the lease is normal, INFO
    last = scheduler.line_with("stopped as a standby")
    assert " INFO " in last
    assert "waiting for the leader lease" in last
    assert "held by the-other-replica" in last
