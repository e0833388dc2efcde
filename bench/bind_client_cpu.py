"""The client CPU per binding: the aiohttp path against the fast path (issue 14).

Usage::

    PYTHONPATH=. python bench/bind_client_cpu.py [--pods 2000] [--rounds 3] [--inflight 64]
        [--transport http,https]

For each transport, ``asched sim`` is started in its own process (``--plain-http`` or
``--tls``, token auth) and two :class:`~asched.api.client.KubeClient` are opened on it: one
with ``fast_writes=False`` (bindings through aiohttp, as before issue 14) and one with the
fast path (:mod:`asched.api.fast_writes`). Each round creates ``--pods`` pods per client in
a fresh namespace (not timed), then binds them all with ``--inflight`` bindings in flight
at once, timing this process's CPU (``time.process_time``) over the binding only; the two
clients alternate within each round (old first on even rounds, new first on odd ones), so
a noisy neighbour hits both alike. Printed: microseconds of client CPU per binding, the
median of the rounds and each round, and the ratio new/old. Every binding must answer 201.

Part two times the Binding body alone, both ways (a bytes template with the JSON-encoded
names spliced in, and ``orjson.dumps`` of the dict, which the fast path uses), in
microseconds per body.

The loop is uvloop, as ``asched run``'s. Nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import timeit
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson

from asched.api.client import KubeClient
from asched.api.fast_writes import binding_body
from asched.tools.backends.simulator import SimServer

NODE = "bench-node"


async def _create_pods(client: KubeClient, namespace: str, count: int) -> list[str]:
    """Create ``count`` pods in a new ``namespace`` (20 at once); return their names."""
    answer = await client.create(
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
    )
    answer.raise_for_status(f"create namespace {namespace}")
    names = [f"p-{index}" for index in range(count)]
    path = f"/api/v1/namespaces/{namespace}/pods"
    gate = asyncio.Semaphore(20)

    async def one(name: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "pause"}]},
        }
        async with gate:
            (await client.create(path, body)).raise_for_status(f"create pod {name}")

    await asyncio.gather(*(one(name) for name in names))
    return names


async def _bind_all(client: KubeClient, namespace: str, names: list[str], inflight: int) -> float:
    """Bind every pod, ``inflight`` at once; return the CPU seconds this process spent."""
    queue = iter(names)
    statuses: list[int] = []

    async def worker() -> None:
        for name in queue:
            response = await client.bind(namespace, name, "", NODE)
            statuses.append(response.status)

    start = time.process_time()
    await asyncio.gather(*(worker() for _ in range(inflight)))
    spent = time.process_time() - start
    if statuses.count(201) != len(names):
        bad = sorted({status for status in statuses if status != 201})
        raise SystemExit(f"bindings in {namespace}: statuses {bad}, expected all 201")
    return spent


async def _measure(
    kubeconfig: str, pods: int, rounds: int, inflight: int
) -> dict[str, list[float]]:
    """Microseconds of CPU per binding per round, by path ("old", "new")."""
    clients = {
        "old": await KubeClient.connect(kubeconfig, fast_writes=False),
        "new": await KubeClient.connect(kubeconfig),
    }
    assert clients["new"].fast_writes
    assert not clients["old"].fast_writes
    figures: dict[str, list[float]] = {"old": [], "new": []}
    try:
        for index in range(rounds):
            order = ("old", "new") if index % 2 == 0 else ("new", "old")
            for label in order:
                client = clients[label]
                namespace = f"bench-{label}-{uuid.uuid4().hex[:8]}"
                names = await _create_pods(client, namespace, pods)
                spent = await _bind_all(client, namespace, names, inflight)
                figures[label].append(spent / pods * 1e6)
    finally:
        for client in clients.values():
            await client.close()
    return figures


#: the Binding with the JSON-encoded namespace, name, uid field and node spliced in
_TEMPLATE = (
    b'{"apiVersion":"v1","kind":"Binding","metadata":{"name":%s,"namespace":%s%s},'
    b'"target":{"apiVersion":"v1","kind":"Node","name":%s}}'
)


def _templated(namespace: str, name: str, uid: str, node: str) -> bytes:
    uid_field = b',"uid":%s' % orjson.dumps(uid) if uid else b""
    return _TEMPLATE % (orjson.dumps(name), orjson.dumps(namespace), uid_field, orjson.dumps(node))


def _body_costs(repeat: int = 50_000) -> tuple[float, float]:
    """Microseconds per Binding body: (bytes template, orjson of the dict)."""
    namespace, name, uid, node = "default", "pod-12345", uuid.uuid4().hex, "node-4711"
    assert _templated(namespace, name, uid, node) == binding_body(namespace, name, uid, node)
    template = min(
        timeit.repeat(lambda: _templated(namespace, name, uid, node), number=repeat, repeat=5)
    )
    dumped = min(
        timeit.repeat(lambda: binding_body(namespace, name, uid, node), number=repeat, repeat=5)
    )
    return template / repeat * 1e6, dumped / repeat * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pods", type=int, default=2000, help="bindings per client per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--inflight", type=int, default=64, help="bindings in flight at once")
    parser.add_argument("--transport", default="http,https", help="comma list: http, https")
    args = parser.parse_args()
    import uvloop

    for transport in args.transport.split(","):
        with SimServer(tls=transport == "https") as server:
            figures = uvloop.run(
                _measure(str(server.kubeconfig), args.pods, args.rounds, args.inflight)
            )
        old, new = statistics.median(figures["old"]), statistics.median(figures["new"])
        print(
            f"{transport}: client CPU per binding, {args.pods} pods x {args.rounds} rounds, "
            f"{args.inflight} in flight"
        )
        for label, key in (("aiohttp path", "old"), ("fast path", "new")):
            runs = ", ".join(f"{value:.0f}" for value in figures[key])
            median = statistics.median(figures[key])
            print(f"  {label:13} median {median:6.0f} us  (rounds: {runs})")
        print(f"  ratio new/old {new / old:.2f}")
    template, dumped = _body_costs()
    print(f"Binding body: bytes template {template:.2f} us, orjson.dumps(dict) {dumped:.2f} us")


if __name__ == "__main__":
    main()
