"""``asched run`` as a process: exit codes, health endpoints, metrics, SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from scheduler_harness import config_for, pods_of, running_scheduler, until


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_bad_config_exits_2_listing_every_field(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: 150\npodMaxBackoffSeconds: 0\nbogus: 1\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "asched", "run", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    for field in ("percentageOfNodesToScore", "podMaxBackoffSeconds", "bogus: unknown field"):
        assert field in result.stderr
    assert "Traceback" not in result.stderr


async def test_process_ready_metrics_and_graceful_sigterm(cluster: Any, tmp_path: Path) -> None:
    name = cluster.unique_name("sched")
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(config_for(cluster, name)))
    for _ in range(4):
        await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="16Gi")
    port = free_port()
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
        "--health-host",
        "127.0.0.1",
        "--health-port",
        str(port),
        stderr=asyncio.subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:

            async def ready() -> bool:
                try:
                    async with http.get(f"{base}/readyz") as response:
                        return response.status == 200
                except aiohttp.ClientError:
                    return False

            await until(ready, within=60)
            async with http.get(f"{base}/healthz") as response:
                assert response.status == 200
            pods = [cluster.unique_name("p") for _ in range(60)]
            await asyncio.gather(*(cluster.create_pod(p, scheduler_name=name) for p in pods))

            async def some_bound() -> bool:
                return sum(1 for p in await pods_of(cluster) if p["spec"].get("nodeName")) >= 10

            await until(some_bound, within=60)
            async with http.get(f"{base}/metrics") as response:
                text = await response.text()
            assert f'asched_schedule_attempts_total{{profile="{name}",result="scheduled"}}' in text
            filter_count = (
                "asched_framework_extension_point_duration_seconds_count"
                f'{{extension_point="Filter",profile="{name}",status="Success"}}'
            )
            assert filter_count in text
        process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(60):
            code = await process.wait()
        assert code == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    # nothing was lost by the stop: a fresh scheduler binds every remaining pod, and every
    # pod ends bound exactly once (the second one binds only what the first did not)
    bound_before = sum(1 for p in await pods_of(cluster) if p["spec"].get("nodeName"))
    async with running_scheduler(cluster, name) as again:

        async def all_bound() -> bool:
            return all(p["spec"].get("nodeName") for p in await pods_of(cluster))

        await until(all_bound, within=60)
        assert again.scheduler.stats.bound == 60 - bound_before
