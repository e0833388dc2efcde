"""The simulator's CPU per hot request: the lean front against aiohttp alone (issue 14).

Usage::

    PYTHONPATH=. python bench/sim_front_cpu.py [--pods 3000] [--rounds 3] [--inflight 64]

Two ``asched sim`` processes run side by side, one as started by default (the lean front,
:mod:`asched.tools.sim.apiserver.front`) and one with ``--no-lean-front`` (aiohttp answers everything).
Each round, for each server in turn (the order alternates between rounds, so a noisy
neighbour hits both alike), a fresh namespace gets ``--pods`` pod creates, then a binding
of each pod, ``--inflight`` requests in flight at once, over the lean HTTP/1.1 client the
load generator and the scheduler use (:class:`asched.api.http1.Pool`, the same request
bytes as :mod:`asched.tools.bench.fast_create` and :mod:`asched.api.fast_writes`). The
server's CPU (user + system, from /proc) is read before and after each phase. Printed:
microseconds of simulator CPU per create and per binding, median of the rounds and each
round, and the ratio front/aiohttp. Every request must answer 201.

Nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import uuid
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson

from asched.api.http1 import Pool
from asched.tools.backends.simulator import SimServer
from asched.tools.bench import procstat

NODE = "bench-node"
MODES = {"front": (), "aiohttp": ("--no-lean-front",)}


def _request(token: str, path: str, body: bytes) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: sim\r\nAuthorization: Bearer {token}\r\n"
        "Accept: application/json\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode("latin-1") + body


async def _all(pool: Pool, requests: list[bytes], inflight: int) -> None:
    queue = iter(requests)
    bad: list[int] = []

    async def worker() -> None:
        for one in queue:
            status, _ = await pool.exchange(one, replayable=False)
            if status != 201:
                bad.append(status)

    await asyncio.gather(*(worker() for _ in range(inflight)))
    if bad:
        raise SystemExit(f"statuses {sorted(set(bad))}, expected all 201")


async def _round(pool: Pool, token: str, pid: int, pods: int, inflight: int) -> tuple[float, float]:
    """Microseconds of simulator CPU per (create, binding)."""
    namespace = f"bench-{uuid.uuid4().hex[:8]}"
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    await _all(pool, [_request(token, "/api/v1/namespaces", orjson.dumps(body))], 1)
    names = [f"p-{index}" for index in range(pods)]
    creates = [
        _request(
            token,
            f"/api/v1/namespaces/{namespace}/pods",
            orjson.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": name, "namespace": namespace},
                    "spec": {"containers": [{"name": "c", "image": "pause"}]},
                }
            ),
        )
        for name in names
    ]
    binds = [
        _request(
            token,
            f"/api/v1/namespaces/{namespace}/pods/{name}/binding",
            orjson.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": name, "namespace": namespace},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": NODE},
                }
            ),
        )
        for name in names
    ]
    figures = []
    for requests in (creates, binds):
        before = procstat.cpu_seconds(pid)
        await _all(pool, requests, inflight)
        after = procstat.cpu_seconds(pid)
        assert before is not None
        assert after is not None
        figures.append((after - before) / pods * 1e6)
    return figures[0], figures[1]


async def _measure(
    servers: dict[str, SimServer], pods: int, rounds: int, inflight: int
) -> dict[str, dict[str, list[float]]]:
    pools: dict[str, tuple[Pool, str, int]] = {}
    for mode, server in servers.items():
        url = urlsplit(server.url)  # plain HTTP, as the benchmark's figures
        assert url.hostname is not None
        assert url.port is not None
        pool = Pool(url.hostname, url.port, ssl_context=None, server_hostname=None, limit=inflight)
        pools[mode] = (pool, server.token, server.pids()["sim"])
    figures: dict[str, dict[str, list[float]]] = {
        mode: {"create": [], "binding": []} for mode in servers
    }
    try:
        for index in range(rounds):
            order = list(servers) if index % 2 == 0 else list(reversed(servers))
            for mode in order:
                pool, token, pid = pools[mode]
                create, bind = await _round(pool, token, pid, pods, inflight)
                figures[mode]["create"].append(create)
                figures[mode]["binding"].append(bind)
    finally:
        for pool, _, _ in pools.values():
            pool.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pods", type=int, default=3000, help="creates and bindings per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--inflight", type=int, default=64, help="requests in flight at once")
    args = parser.parse_args()
    import uvloop

    servers = {mode: SimServer(extra_args=extra) for mode, extra in MODES.items()}
    for server in servers.values():
        server.start()
    try:
        figures = uvloop.run(_measure(servers, args.pods, args.rounds, args.inflight))
    finally:
        for server in servers.values():
            server.stop()
    print(
        f"plain HTTP: simulator CPU per request, {args.pods} pods x {args.rounds} rounds, "
        f"{args.inflight} in flight"
    )
    for kind in ("create", "binding"):
        medians = {}
        for mode in MODES:
            runs = figures[mode][kind]
            medians[mode] = statistics.median(runs)
            shown = ", ".join(f"{value:.1f}" for value in runs)
            print(f"  {kind:8} {mode:8} median {medians[mode]:6.1f} us  (rounds: {shown})")
        print(f"  {kind:8} ratio front/aiohttp {medians['front'] / medians['aiohttp']:.2f}")


if __name__ == "__main__":
    main()
