"""``asched bench extender``: the benchmark's scheduler extender, as a process of its own.

Why not :mod:`asched.tools.bench.extender_server`: that one is declarative and records
every call for tests to inspect, which a benchmark sending tens of thousands of calls
cannot afford. This one answers from a fixed rule, keeps counters only, and costs one
pass over the node names per call; it runs as its own process (as a real extender would),
so its CPU is measured apart from the scheduler's and the harness's. It stands in for an
extender on other machines but shares the benchmark's cores, so it is kept lean: HTTP by
:mod:`asched.tools.bench.lean_http`, only ``NodeNames`` decoded from a call, each name's
verdict and ``HostPriority`` JSON remembered, no Python loop per name.

The rule (:class:`HashRule`), the same for every scheduler: with ``h = crc32(name)``
(the UTF-8 bytes of the node's name), a node fails the filter when ``reject_every > 0``
and ``h % reject_every == 0`` (``FailedNodes``, reason :data:`REASON`; ``reject_every=0``
rejects none), and its priority is ``(h >> 8) % 11`` (0..10, upstream's
``MaxExtenderPriority``). Each name is hashed once, then remembered.

Verbs (POST, ``k8s.io/kube-scheduler/extender/v1`` JSON): ``/filter`` and
``/prioritize``. A nodeCacheCapable call (``NodeNames``) is answered with ``NodeNames``;
a call with full ``Nodes`` is answered with the surviving ``Nodes``. ``latency_ms`` is an
``asyncio.sleep`` per call, so concurrent calls overlap as a network extender's would.
``GET /stats`` answers :meth:`Stats.to_json`: calls and node names per verb since the
start, the most calls in flight at once since the previous ``/stats``, and the process's
CPU seconds (``time.process_time``).

The process (:func:`main`) listens on ``--host``/``--port`` (0: any free port), over
HTTPS with ``--tls`` (a throw-away CA: needs the ``sim`` extra), writes
``{"url", "ca_pem", "pid"}`` to ``--ready-file`` once it listens (atomically: a reader
sees all of it or nothing), and stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
import zlib
from collections.abc import AsyncIterator, Coroutine, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from itertools import compress
from operator import not_
from pathlib import Path
from typing import Any, Final, cast

import msgspec
import orjson

from asched.tools.bench.lean_http import Reply, start_server

#: The reason of every node the rule rejects (``FailedNodes``).
REASON: Final = "rejected by the benchmark extender"
#: Upstream's ``MaxExtenderPriority``: prioritize scores are 0..10.
MAX_PRIORITY: Final = 10
FILTER_VERB: Final = "filter"
PRIORITIZE_VERB: Final = "prioritize"
_JSON: Final = "application/json"


class HashRule:
    """The deterministic verdicts and priorities of the module docstring.

    Each name is hashed once and remembered (its verdict, its priority, its
    ``HostPriority`` as JSON, each in a dict of its own); a call then costs a few C-level
    passes over its names (a dict lookup each, ``itertools.compress``, ``bytes.join``),
    no Python loop per name.

    Parameters
    ----------
    reject_every : int
        A node fails when its name's CRC-32 is 0 modulo this (0: no node fails).
    """

    def __init__(self, reject_every: int = 0) -> None:
        if reject_every < 0:
            raise ValueError(f"reject_every must be >= 0, got {reject_every}")
        self.reject_every = reject_every
        self._rejected: dict[str, bool] = {}
        self._priority: dict[str, int] = {}
        self._fragment: dict[str, bytes] = {}

    def _learn(self, name: str) -> bool:
        """Hash ``name`` and remember what the rule says of it; whether it is rejected."""
        h = zlib.crc32(name.encode())
        priority = (h >> 8) % (MAX_PRIORITY + 1)
        rejected = self.reject_every > 0 and h % self.reject_every == 0
        self._rejected[name] = rejected
        self._priority[name] = priority
        self._fragment[name] = orjson.dumps({"Host": name, "Score": priority})
        return rejected

    def _learnt(self, names: Sequence[str], found: list[Any]) -> None:
        """Learn the names ``found`` has no entry for (None) in ``names``."""
        for name, entry in zip(names, found, strict=True):
            if entry is None:
                self._learn(name)

    def rejects(self, name: str) -> bool:
        """True when the filter fails ``name``."""
        rejected = self._rejected.get(name)
        return self._learn(name) if rejected is None else rejected

    def priority(self, name: str) -> int:
        """The prioritize score of ``name``, 0..10."""
        if name not in self._priority:
            self._learn(name)
        return self._priority[name]

    def split(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """The names that pass and those that fail, each in the order given."""
        listed = names if isinstance(names, list | tuple) else list(names)
        flags = list(map(self._rejected.get, listed))
        if None in flags:
            self._learnt(listed, flags)
            flags = list(map(self._rejected.__getitem__, listed))
        return list(compress(listed, map(not_, flags))), list(compress(listed, flags))

    def priorities(self, names: Iterable[str]) -> bytes:
        """``HostPriorityList`` for ``names`` as JSON (remembered fragments, joined)."""
        listed = names if isinstance(names, list | tuple) else list(names)
        fragments = list(map(self._fragment.get, listed))
        if None in fragments:
            self._learnt(listed, fragments)
            fragments = list(map(self._fragment.__getitem__, listed))
        return b"[" + b",".join(cast("list[bytes]", fragments)) + b"]"


@dataclass(slots=True)
class Stats:
    """What the server counts: calls and node names per verb, concurrency, bad requests."""

    calls: dict[str, int] = field(default_factory=lambda: {FILTER_VERB: 0, PRIORITIZE_VERB: 0})
    names: dict[str, int] = field(default_factory=lambda: {FILTER_VERB: 0, PRIORITIZE_VERB: 0})
    in_flight: int = 0
    max_in_flight: int = 0
    bad_requests: int = 0

    def to_json(self) -> dict[str, Any]:
        """The counters, plus ``cpu_seconds``: this process's CPU so far (user + system)."""
        return {
            "calls": dict(self.calls),
            "names": dict(self.names),
            "max_in_flight": self.max_in_flight,
            "bad_requests": self.bad_requests,
            "cpu_seconds": time.process_time(),
        }


class _NodeNames(msgspec.Struct):
    """The one field of ``ExtenderArgs`` a nodeCacheCapable call needs (the pod and any
    other key are skipped without being built)."""

    NodeNames: list[str] | None = None


_NODE_NAMES: Final = msgspec.json.Decoder(_NodeNames)


def _read_args(body: bytes) -> tuple[list[str], list[Any] | None]:
    """:func:`_names` of the body: ``NodeNames`` alone when it is a list of strings,
    else the whole body decoded (its errors are :func:`_names`' and orjson's)."""
    try:
        names = _NODE_NAMES.decode(body).NodeNames
    except (msgspec.MsgspecError, ValueError):
        names = None
    if names is not None:
        return names, None
    return _names(orjson.loads(body))


def _names(args: Any) -> tuple[list[str], list[Any] | None]:
    """The node names of ``ExtenderArgs``, and its Node objects when it sent them."""
    if not isinstance(args, dict):
        raise ValueError(f"the body must be an ExtenderArgs object, got {type(args).__name__}")
    names = args.get("NodeNames")
    if names is not None:
        if not isinstance(names, list):
            raise ValueError(f"NodeNames must be a list, got {type(names).__name__}")
        return names, None
    items = (args.get("Nodes") or {}).get("items") or []
    return [item["metadata"]["name"] for item in items], items


class _Handler:
    """The one request handler (:mod:`asched.tools.bench.lean_http`: no router, no
    middleware, no request object)."""

    def __init__(self, rule: HashRule, latency_ms: float) -> None:
        self.rule = rule
        self.delay = latency_ms / 1000.0
        self.stats = Stats()

    def __call__(self, method: str, path: str, body: bytes) -> Reply | Coroutine[Any, Any, Reply]:
        if path == "/stats" and method == "GET":
            return self.stats_page()
        verb = path.removeprefix("/")
        if verb not in (FILTER_VERB, PRIORITIZE_VERB):
            return _text(404, f"unknown path {path!r}")
        if method != "POST":
            return _text(405, f"{path}: POST only, got {method}")
        stats = self.stats
        try:
            names, items = _read_args(body)
            answer = (
                orjson.dumps(self._filter(names, items))
                if verb == FILTER_VERB
                else self.rule.priorities(names)
            )
        except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
            stats.bad_requests += 1
            return _text(400, f"{verb}: bad ExtenderArgs: {exc}")
        stats.calls[verb] += 1
        stats.names[verb] += len(names)
        if not self.delay:
            return 200, _JSON, answer
        return self._after_delay(answer)

    async def _after_delay(self, answer: bytes) -> Reply:
        """The answer once the call's latency passed (an ``asyncio.sleep`` per call)."""
        stats = self.stats
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            await asyncio.sleep(self.delay)
        finally:
            stats.in_flight -= 1
        return 200, _JSON, answer

    def _filter(self, names: list[str], items: list[Any] | None) -> dict[str, Any]:
        passed, failed = self.rule.split(names)
        answer: dict[str, Any] = {
            "FailedNodes": dict.fromkeys(failed, REASON),
            "FailedAndUnresolvableNodes": {},
            "Error": "",
        }
        if items is None:
            answer["NodeNames"] = passed
        else:
            rejected = set(failed)
            answer["Nodes"] = {
                "metadata": {},
                "items": [i for i in items if i["metadata"]["name"] not in rejected],
            }
        return answer

    def stats_page(self) -> Reply:
        page = self.stats.to_json()
        self.stats.max_in_flight = self.stats.in_flight
        return 200, _JSON, orjson.dumps(page)


def _text(status: int, text: str) -> Reply:
    return status, "text/plain; charset=utf-8", text.encode()


@dataclass(frozen=True, slots=True)
class Listening:
    """A started extender: its URL, the PEM of its CA (HTTPS only) and its counters."""

    url: str
    ca_pem: bytes | None
    stats: Stats


@asynccontextmanager
async def serve(
    rule: HashRule,
    *,
    latency_ms: float = 0.0,
    tls: bool = False,
    host: str = "127.0.0.1",
    port: int = 0,
) -> AsyncIterator[Listening]:
    """Serve the two verbs and ``/stats`` until the block ends (see the module docstring).

    Parameters
    ----------
    rule : HashRule
        The verdicts and priorities.
    latency_ms : float
        Milliseconds every filter or prioritize call waits before it is answered.
    tls : bool
        HTTPS with a throw-away CA (``ca_pem`` of the result).
    host, port : str, int
        Where to listen; port 0 takes a free one.
    """
    context, ca_pem = None, None
    if tls:
        from asched.tools.sim.apiserver import tls as sim_tls

        serving = sim_tls.generate(host)
        context, ca_pem = serving.context, serving.ca_pem
    handler = _Handler(rule, latency_ms)
    server = await start_server(handler, host, port, ssl_context=context)
    try:
        scheme = "https" if context is not None else "http"
        yield Listening(f"{scheme}://{host}:{server.port}", ca_pem, handler.stats)
    finally:
        await server.close()


def configure(parser: argparse.ArgumentParser) -> None:
    """Options of ``asched bench extender``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (0, the default: a free one)")
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=0.0,
        help="milliseconds each filter or prioritize call waits before its answer (0)",
    )
    parser.add_argument(
        "--reject-every",
        type=int,
        default=0,
        help="fail nodes whose name's CRC-32 is 0 modulo N (0, the default: none)",
    )
    parser.add_argument("--tls", action="store_true", help="HTTPS with a throw-away CA")
    parser.add_argument(
        "--ready-file",
        type=Path,
        help='write {"url", "ca_pem", "pid"} (JSON) here once listening',
    )


def main(args: argparse.Namespace) -> int:
    """Entry point of ``asched bench extender``: serve until SIGTERM or SIGINT."""
    if args.latency_ms < 0:
        print(
            f"asched bench extender: --latency-ms must be >= 0, got {args.latency_ms}",
            file=sys.stderr,
        )
        return 2
    if args.reject_every < 0:
        print(
            f"asched bench extender: --reject-every must be >= 0, got {args.reject_every}",
            file=sys.stderr,
        )
        return 2
    import uvloop

    uvloop.run(_serve_until_stopped(args))
    return 0


async def _serve_until_stopped(args: argparse.Namespace) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    rule = HashRule(args.reject_every)
    async with serve(
        rule, latency_ms=args.latency_ms, tls=args.tls, host=args.host, port=args.port
    ) as listening:
        ready = {
            "url": listening.url,
            "ca_pem": listening.ca_pem.decode("ascii") if listening.ca_pem else None,
            "pid": os.getpid(),
        }
        if args.ready_file is not None:
            partial = args.ready_file.with_name(args.ready_file.name + ".partial")
            partial.write_bytes(orjson.dumps(ready))
            partial.replace(args.ready_file)
        print(f"asched bench extender: listening on {listening.url}", flush=True)
        await stop.wait()
