"""Throughput of the simulated API server: binding POSTs per second and watch fan-out cost.

The server runs in its own process (``python -m asched sim``, or with ``--against
kube-apiserver`` the genuine v1.37.2 for comparison); this process is the one client, on
uvloop + aiohttp, with ``--concurrency`` requests in flight. Phases:

1. create ``--pods`` pods (POST, for the record: creates/s);
2. bind the first half, no watcher open: **binds/s** and server CPU per bind;
3. open ``--watchers`` watches on all pods, bind the second half: binds/s with watchers,
   events/s delivered (sum over watchers) and server CPU per event;
4. replay: ``--watchers`` new watches from the version before phase 2 read the history
   back at full speed (no request overhead): delivered events/s and server CPU per event.

Server CPU is read from ``/proc/<pid>/stat`` (user + system). Usage::

    python bench/sim_throughput.py --nodes 5000 --pods 20000 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import uvloop
import yaml
from yarl import URL

TICKS = os.sysconf("SC_CLK_TCK")
NAMESPACE = "bench"


@dataclass
class Phase:
    name: str
    operations: int
    seconds: float
    server_cpu: float
    delivered: int = 0
    errors: int = 0
    #: until the last watcher had every event (phase 3); otherwise ``seconds``
    delivered_seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.operations / self.seconds if self.seconds else 0.0

    @property
    def delivered_rate(self) -> float | None:
        seconds = self.delivered_seconds or self.seconds
        return self.delivered / seconds if self.delivered and seconds else None

    @property
    def cpu_us_per_op(self) -> float | None:
        return self.server_cpu / self.operations * 1e6 if self.operations else None


@dataclass
class Report:
    backend: str
    nodes: int
    pods: int
    concurrency: int
    watchers: int
    machine: dict[str, Any] = field(default_factory=dict)
    load_before: float = 0.0
    phases: list[Phase] = field(default_factory=list)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Server:
    """The server under test: its URL, token, TLS context and process id."""

    def __init__(self, backend: str, nodes: int, history: int) -> None:
        self.backend = backend
        self.nodes = nodes
        self.history = history
        self._dir = Path(tempfile.mkdtemp(prefix="asched-bench-"))
        self._process: subprocess.Popen[bytes] | None = None
        self._real: Any = None
        self.pid = 0
        self.url = ""
        self.token = ""
        self.ssl: ssl.SSLContext | bool = False

    def start(self) -> None:
        if self.backend == "sim":
            kubeconfig = self._dir / "kubeconfig"
            log = (self._dir / "sim.log").open("wb")
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    *(
                        os.environ["SIM_WRAPPER"].split()
                        if os.environ.get("SIM_WRAPPER")
                        else ["-m", "asched"]
                    ),
                    "sim",
                    "--nodes",
                    str(self.nodes),
                    "--zones",
                    "3",
                    "--port",
                    "0",
                    "--history",
                    str(self.history),
                    "--kubeconfig-out",
                    str(kubeconfig),
                    "--plain-http",  # loopback client; HTTPS is the default with a kubeconfig
                ],
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            log.close()
            deadline = time.monotonic() + 120
            while not kubeconfig.exists():
                if self._process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((self._dir / "sim.log").read_text())
                time.sleep(0.05)
            config = yaml.safe_load(kubeconfig.read_text())
            self.url = config["clusters"][0]["cluster"]["server"]
            self.token = config["users"][0]["user"]["token"]
            self.pid = self._process.pid
        else:
            from asched.tools.backends.launcher import KubeApiServer

            self._real = KubeApiServer().start()
            self.url, self.token = self._real.url, self._real.token
            self.ssl = ssl.create_default_context(cadata=self._real.ca_pem.decode())
            self.pid = self._real.pids()["kube-apiserver"]

    def stop(self) -> None:
        if self._process is not None:
            self._process.send_signal(signal.SIGTERM)
            self._process.wait(timeout=30)
        if self._real is not None:
            self._real.stop()


def requests(base: str, count: int, make: Any) -> list[tuple[str, URL, bytes]]:
    """Build every request up front (URLs parsed once), so timing measures sending them."""
    built = []
    for index in range(count):
        method, path, body = make(index)
        built.append((method, URL(base + path, encoded=True), body))
    return built


async def run_many(
    session: aiohttp.ClientSession, concurrency: int, batch: list[tuple[str, URL, bytes]]
) -> int:
    """Send the requests with ``concurrency`` in flight; return how many failed."""
    next_index = 0
    errors = 0

    async def worker() -> None:
        nonlocal next_index, errors
        while next_index < len(batch):
            method, url, body = batch[next_index]
            next_index += 1
            async with session.request(method, url, data=body) as response:
                await response.read()
                if response.status >= 300:
                    errors += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return errors


async def count_events(
    session: aiohttp.ClientSession, url: str, wanted: int, counts: list[int], slot: int
) -> None:
    """Read a watch until ``wanted`` events arrived (counting lines, not parsing them)."""
    async with session.get(url, timeout=aiohttp.ClientTimeout(total=None)) as response:
        async for chunk in response.content.iter_any():
            counts[slot] += chunk.count(b"\n")
            if counts[slot] >= wanted:
                return


def pod_body(index: int) -> bytes:
    return orjson.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p-{index}", "namespace": NAMESPACE, "labels": {"app": "bench"}},
            "spec": {
                "schedulerName": "bench",
                "containers": [
                    {
                        "name": "c",
                        "image": "registry.k8s.io/pause:3.9",
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    }
                ],
            },
        }
    )


def binding_body(index: int, nodes: int) -> bytes:
    return orjson.dumps(
        {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": f"p-{index}", "namespace": NAMESPACE},
            "target": {"apiVersion": "v1", "kind": "Node", "name": f"node-{index % max(nodes, 1)}"},
        }
    )


async def timed(server: Server, name: str, coro: Any, operations: int) -> tuple[Phase, Any]:
    cpu0, t0 = cpu_seconds(server.pid), time.perf_counter()
    result = await coro
    phase = Phase(name, operations, time.perf_counter() - t0, cpu_seconds(server.pid) - cpu0)
    return phase, result


async def bench(args: argparse.Namespace) -> Report:
    load = os.getloadavg()[0]
    server = Server(args.against, args.nodes, history=max(4 * args.pods, 10_000))
    server.start()
    report = Report(
        args.against,
        args.nodes,
        args.pods,
        args.concurrency,
        args.watchers,
        machine={
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d"),
        },
        load_before=load,
    )
    try:
        connector = aiohttp.TCPConnector(limit=args.concurrency + args.watchers + 4, ssl=server.ssl)
        headers = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}
        base = server.url
        async with aiohttp.ClientSession(headers=headers, connector=connector) as session:
            await session.post(
                f"{base}/api/v1/namespaces", data=orjson.dumps({"metadata": {"name": NAMESPACE}})
            )
            if args.against != "sim":  # the genuine server has no hollow nodes: make them
                await run_many(
                    session,
                    args.concurrency,
                    requests(
                        base,
                        args.nodes,
                        lambda i: (
                            "POST",
                            "/api/v1/nodes",
                            orjson.dumps(
                                {
                                    "metadata": {"name": f"node-{i}"},
                                    "status": {
                                        "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}
                                    },
                                }
                            ),
                        ),
                    ),
                )
            n, half = args.pods, args.pods // 2
            creates = requests(
                base, n, lambda i: ("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", pod_body(i))
            )
            phase, errors = await timed(
                server, "create pods", run_many(session, args.concurrency, creates), n
            )
            phase.errors = errors
            report.phases.append(phase)

            async def version() -> str:
                async with session.get(
                    f"{base}/api/v1/namespaces/{NAMESPACE}/pods?limit=1"
                ) as response:
                    return str((await response.json())["metadata"]["resourceVersion"])

            before = await version()
            binds = requests(
                base,
                n,
                lambda i: (
                    "POST",
                    f"/api/v1/namespaces/{NAMESPACE}/pods/p-{i}/binding",
                    binding_body(i, args.nodes),
                ),
            )
            phase, errors = await timed(
                server, "bind, no watcher", run_many(session, args.concurrency, binds[:half]), half
            )
            phase.errors = errors
            report.phases.append(phase)
            # Phase 3: watchers open from "now", bindings of the second half.
            now = await version()
            second = n - half
            counts = [0] * args.watchers
            watch_url = f"{base}/api/v1/pods?watch=1&resourceVersion={now}"
            readers = [
                asyncio.create_task(count_events(session, watch_url, second, counts, i))
                for i in range(args.watchers)
            ]
            await asyncio.sleep(0.5)
            cpu0, t0 = cpu_seconds(server.pid), time.perf_counter()
            errors = await run_many(session, args.concurrency, binds[half:])
            binds_done = time.perf_counter() - t0
            await asyncio.wait_for(asyncio.gather(*readers), timeout=300)
            phase = Phase(
                f"bind, {args.watchers} watchers",
                second,
                binds_done,
                cpu_seconds(server.pid) - cpu0,
                sum(counts),
                errors,
            )
            phase.delivered_seconds = time.perf_counter() - t0
            report.phases.append(phase)
            # Phase 4: replay the history of phases 2-3 to fresh watchers, full speed.
            replayed = n  # n MODIFIED events (one per binding) since ``before``
            counts = [0] * args.watchers
            replay_url = f"{base}/api/v1/pods?watch=1&resourceVersion={before}"
            phase, _ = await timed(
                server,
                f"replay to {args.watchers} watchers",
                asyncio.gather(
                    *(
                        count_events(session, replay_url, replayed, counts, i)
                        for i in range(args.watchers)
                    )
                ),
                replayed * args.watchers,
            )
            phase.delivered = sum(counts)
            report.phases.append(phase)
    finally:
        server.stop()
    return report


def render(report: Report) -> str:
    lines = [
        f"backend={report.backend} nodes={report.nodes} pods={report.pods} in-flight={report.concurrency} "
        f"watchers={report.watchers} cpus={report.machine['cpus']} python={report.machine['python']} "
        f"load-average-before={report.load_before:.2f}",
        f"{'phase':<26}{'ops':>8}{'seconds':>9}{'ops/s':>10}{'events/s':>11}{'server CPU s':>14}{'CPU µs/op':>11}{'errors':>8}",
    ]
    for phase in report.phases:
        events = f"{phase.delivered_rate:,.0f}" if phase.delivered_rate else "-"
        per_op = phase.cpu_us_per_op or 0.0
        lines.append(
            f"{phase.name:<26}{phase.operations:>8}{phase.seconds:>9.2f}{phase.rate:>10,.0f}{events:>11}"
            f"{phase.server_cpu:>14.2f}{per_op:>11.1f}{phase.errors:>8}"
        )
    return "\n".join(lines)


def summary(reports: list[Report]) -> str:
    """Median (min-max) per phase over repeated runs."""
    lines = [f"median (min-max) over {len(reports)} runs"]
    for index, first in enumerate(reports[0].phases):
        phases = [report.phases[index] for report in reports]

        def spread(values: list[float], fmt: str) -> str:
            return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"

        text = f"{first.name:<26} ops/s {spread([p.rate for p in phases], ',.0f')}"
        delivered = [p.delivered_rate for p in phases if p.delivered_rate]
        if delivered:
            text += f"  events/s {spread(delivered, ',.0f')}"
        text += f"  server CPU µs/op {spread([p.cpu_us_per_op or 0.0 for p in phases], '.1f')}"
        lines.append(text)
    return "\n".join(lines)


def as_json(report: Report) -> dict[str, Any]:
    data = asdict(report)
    for phase, raw in zip(report.phases, data["phases"], strict=True):
        raw["rate"] = phase.rate
        raw["delivered_per_second"] = phase.delivered_rate
        raw["server_cpu_us_per_op"] = phase.cpu_us_per_op
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--watchers", type=int, default=4)
    parser.add_argument("--against", choices=("sim", "kube-apiserver"), default="sim")
    parser.add_argument("--repeat", type=int, default=1, help="runs (each on a fresh server)")
    parser.add_argument("--json", type=Path, help="also write the reports as JSON here")
    args = parser.parse_args()
    reports = []
    for _ in range(args.repeat):
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            reports.append(runner.run(bench(args)))
        print(render(reports[-1]), flush=True)
    if len(reports) > 1:
        print(summary(reports))
    if args.json:
        args.json.write_text(json.dumps([as_json(report) for report in reports], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
