"""``SimServer``: one simulated API server's lifetime (start, restart, stop) and settings.

Used by ``asched sim`` and, in-process, by tests and benchmarks::

    async with SimServer(SimConfig(nodes=100)) as server:
        ...  # server.url, server.token, server.kubeconfig()

Connections start with the lean front (:mod:`asched.tools.sim.apiserver.front`: creates and bindings
answered without aiohttp, the rest handed to aiohttp's protocol) unless ``lean_front`` is
off. Ownership: the server owns its aiohttp runner, its lean front's connections, its
timers (grace periods, hollow kubelet), the PV controller's task
(:mod:`asched.tools.sim.controllers.volume_controller`) and the one restart task it may have scheduled;
:meth:`stop` ends all of them.
Simulated durations (grace periods, ``run_pods_after``) are multiplied by
``time_scale`` so tests can run a 30 s grace period in 30 ms.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from types import TracebackType
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import StreamReader
from aiohttp.web_protocol import RequestHandler

from asched.tools.sim.apiserver import bootstrap, crds, front, kubeconfig, tls
from asched.tools.sim.apiserver.admin import Stats
from asched.tools.sim.apiserver.faults import Faults
from asched.tools.sim.apiserver.handlers import MAX_BODY_BYTES, Api, ApiSettings
from asched.tools.sim.apiserver.registry import Registry
from asched.tools.sim.apiserver.resources import STORAGE
from asched.tools.sim.apiserver.store import Store
from asched.tools.sim.controllers import volume_controller

logger = logging.getLogger(__name__)

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class SimConfig:
    """Everything ``asched sim`` can be told; durations in seconds unless named otherwise."""

    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None
    tls: bool = False
    nodes: int = 0
    node_template: JSON | None = None
    zones: int = 1
    snapshot: tuple[JSON, ...] = ()
    run_pods_after: float | None = None
    #: events kept per resource for watches that resume (older versions get 410).
    history: int = 10_000
    bookmark_interval: float = 60.0
    watch_queue_limit: int = 100_000
    time_scale: float = 1.0
    watch_cut_after: float | None = None
    bind_error_rate: float = 0.0
    bind_error_code: int = 500
    latency_ms: float = 0.0
    #: the PV controller holds every bind and provisioning (see asched.tools.sim.apiserver.faults).
    volume_binding_paused: bool = False
    #: seconds the PV controller waits before each round of binding work.
    volume_binding_delay: float = 0.0
    seed: int | None = None
    #: answer the hot requests (creates, bindings) with the lean front (asched.tools.sim.apiserver.front);
    #: False: aiohttp answers every request.
    lean_front: bool = True


class LoopClock:
    """Wall-clock timestamps and loop timers scaled by ``scale`` (the registry's Clock)."""

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self._handles: set[asyncio.TimerHandle] = set()
        self._second = -1
        self._stamp = ""

    def now(self, offset_seconds: float = 0.0) -> str:
        """RFC 3339 UTC, whole seconds (what metav1.Time serialises); cached per second."""
        second = int(time.time() + offset_seconds)
        if offset_seconds:
            return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))
        if second != self._second:  # strftime costs ~5 µs; bindings need "now" thousands/s
            self._second = second
            self._stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))
        return self._stamp

    def later(self, seconds: float, callback: Callable[[], None]) -> None:
        """Call ``callback`` after ``seconds * scale`` of loop time."""
        loop = asyncio.get_running_loop()
        holder: list[asyncio.TimerHandle] = []

        def fire() -> None:
            self._handles.discard(holder[0])
            try:
                callback()
            except Exception:
                logger.exception("a simulated timer failed")

        handle = loop.call_later(max(seconds * self.scale, 0.0), fire)
        holder.append(handle)
        self._handles.add(handle)

    def cancel_all(self) -> None:
        """Cancel every pending timer (server stop)."""
        for handle in self._handles:
            handle.cancel()
        self._handles.clear()


def _request_with_body_limit(
    message: RawRequestMessage,
    payload: StreamReader,
    protocol: RequestHandler,
    writer: AbstractStreamWriter,
    task: asyncio.Task[None],
) -> web.BaseRequest:
    """aiohttp's request, allowing bodies up to kube-apiserver's limit (aiohttp's is 1 MiB)."""
    return web.BaseRequest(
        message,
        payload,
        protocol,
        writer,
        task,
        asyncio.get_running_loop(),
        client_max_size=MAX_BODY_BYTES,
    )


class SimServer:
    """A running simulated API server."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.token = config.token or secrets.token_urlsafe(24)
        self.store = Store(STORAGE.keys(), config.history)
        self.clock = LoopClock(config.time_scale)
        self.registry = Registry(self.store, self.clock, seed=config.seed)
        self.registry.run_pods_after = config.run_pods_after
        self.crds = crds.Controller(self.registry)
        self.faults = Faults(
            watch_cut_after=config.watch_cut_after,
            bind_error_rate=config.bind_error_rate,
            bind_error_code=config.bind_error_code,
            latency_ms=config.latency_ms,
            volume_binding_paused=config.volume_binding_paused,
            volume_binding_delay=config.volume_binding_delay,
        )
        self.volumes = volume_controller.VolumeController(self.registry, self.faults)
        self.stats = Stats()
        settings = ApiSettings(
            token=self.token,
            bookmark_interval=config.bookmark_interval,
            watch_queue_limit=config.watch_queue_limit,
        )
        self.api = Api(self.registry, self.faults, settings, self, self.stats)
        self.port = config.port
        self._tls: tls.ServingTLS | None = None
        self._runner: web.ServerRunner | None = None
        self._site: web.BaseSite | None = None
        self._front: front.Front | None = None
        self._restart: asyncio.Task[None] | None = None

    async def __aenter__(self) -> SimServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def url(self) -> str:
        """The base URL clients use."""
        host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
        return f"{'https' if self._tls else 'http'}://{host}:{self.port}"

    @property
    def ca_pem(self) -> bytes | None:
        """The CA certificate clients must trust (None without TLS)."""
        return self._tls.ca_pem if self._tls else None

    def kubeconfig(self) -> JSON:
        """A kubeconfig for this server."""
        return kubeconfig.render(self.url, self.token, self.ca_pem)

    async def start(self) -> None:
        """Create the initial objects, then listen."""
        started = time.perf_counter()
        bootstrap.builtins(self.registry)
        bootstrap.hollow(
            self.registry, self.config.nodes, self.config.node_template, self.config.zones
        )
        if self.config.snapshot:
            loaded = bootstrap.restore(self.registry, list(self.config.snapshot))
            logger.info("loaded %d of %d snapshot objects", loaded, len(self.config.snapshot))
        if self.config.tls:
            self._tls = tls.generate(self.config.host)
        server = web.Server(
            self.api,
            request_factory=_request_with_body_limit,
            handler_cancellation=True,
            access_log=None,
        )
        if self.config.lean_front:
            self._front = front.Front(self.api, server)
        self._runner = web.ServerRunner(server, access_log=None)
        await self._runner.setup()
        await self._listen(self.config.port)
        self.volumes.start()
        logger.info(
            "simulated API server on %s: %d nodes, resourceVersion %d, ready in %.2fs",
            self.url,
            self.config.nodes,
            self.store.rv,
            time.perf_counter() - started,
        )

    async def _listen(self, port: int) -> None:
        assert self._runner is not None
        context = self._tls.context if self._tls else None
        kind = web.TCPSite if self._front is None else partial(front.FrontSite, front=self._front)
        site = kind(
            self._runner,
            self.config.host,
            port,
            ssl_context=context,
            reuse_address=True,
            backlog=1024,
        )
        await site.start()
        self._site = site
        self.port = self._runner.addresses[-1][1]

    def close_watches(self) -> None:
        """End every open watch stream (gracefully)."""
        for table in self.store.tables.values():
            for watcher in list(table.subscribers):
                watcher.close()

    def _cut_connections(self) -> None:
        if self._front is not None:
            self._front.cut()
        if self._runner is not None and self._runner.server is not None:
            for connection in self._runner.server.connections:
                connection.force_close()

    async def restart(self, downtime: float = 0.0) -> None:
        """What a kube-apiserver restart looks like to clients: objects kept, connections
        cut, watch history gone (old resourceVersions now get 410)."""
        logger.info("restarting (downtime %.2fs)", downtime)
        self.store.reset_history()
        self._cut_connections()
        if downtime > 0 and self._site is not None:
            await self._site.stop()
            self._site = None
            await asyncio.sleep(downtime)
            await self._listen(self.port)

    def schedule_restart(self, downtime: float) -> None:
        """Restart shortly, after the admin answer has gone out."""
        if self._restart is not None and not self._restart.done():
            return
        self._restart = asyncio.get_running_loop().create_task(self._restart_soon(downtime))

    async def _restart_soon(self, downtime: float) -> None:
        await asyncio.sleep(0.05)
        await self.restart(downtime)

    def compact(self) -> None:
        """Forget the watch history; open connections stay (``POST /admin/compact``)."""
        self.store.reset_history()

    def apply_history(self, limit: int) -> None:
        """Set every resource's history bound (the ``history`` fault)."""
        self.store.set_history_limit(limit)

    def snapshot(self) -> JSON:
        """Figures for ``GET /admin/stats``."""
        return {
            "resourceVersion": self.store.rv,
            "objects": self.store.counts(),
            "openWatches": {
                name: len(t.subscribers) for name, t in self.store.tables.items() if t.subscribers
            },
        }

    async def stop(self) -> None:
        """Stop listening, end watches, cancel timers and the restart task."""
        if self._restart is not None:
            self._restart.cancel()
            await asyncio.wait([self._restart])  # wait for it; its cancellation is not ours
            self._restart = None
        await self.volumes.stop()
        self.clock.cancel_all()
        self.close_watches()
        if self._runner is not None:
            self._cut_connections()
            await self._runner.cleanup()
            self._runner = None
