"""The HTTP endpoints a kubelet and Prometheus talk to: /healthz, /livez, /readyz, /metrics.

Served like kube-scheduler's secure port 10259: over TLS, with delegated authentication and
authorization in front of everything but the health paths (:mod:`asched.serving` makes the
SSL context and the middleware; ``asched run`` decides with :func:`asched.serving.plan`).
This module only serves: :func:`serve` takes an optional SSL context and middlewares, and
without them it is plain HTTP (a loopback address, or ``--insecure-serving``). Nothing here
exposes configuration or objects.

Semantics (kube-scheduler's ``newHealthEndpointsAndMetricsHandler``):

* ``/healthz`` and ``/livez``: 200 ``ok`` unless a registered check fails; then 500 with one
  ``[-]name failed: reason`` line per failing check. The leader-election watchdog
  (:func:`leader_watchdog`, upstream ``NewLeaderHealthzAdaptor(20 s)``) fails when this
  process believes it leads but its last renew is older than ``leaseDuration + 20 s``: the
  renew loop is wedged and the kubelet should restart the container.
* ``/readyz``: 200 ``ok`` only after :meth:`HealthState.mark_ready` and while every
  informer is live (:meth:`HealthState.set_informers`: each watching from a version the
  API server has; a failing one names itself and its last error); otherwise 503 with the
  reasons. A standby replica is ready: readiness is not leadership.
* ``/metrics``: :data:`asched.metrics.REGISTRY` in the Prometheus text format.

Invariants: the health handlers never await anything but the response (state is read
synchronously, checks are plain functions) and the health paths are always allowed by the
auth middleware, so a probe cannot hang on the API server; the server is a context manager
whose exit always closes the listening socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Final, Protocol

from aiohttp import typedefs, web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from asched import metrics
from asched.serving.listen import listen

logger = logging.getLogger(__name__)

#: kube-scheduler's secure port (``KubeSchedulerPort``).
DEFAULT_PORT: Final = 10259
DEFAULT_HOST: Final = "0.0.0.0"  # probes come from the kubelet, via the pod IP
#: Upstream's watchdog tolerance beyond the lease duration (``NewLeaderHealthzAdaptor(20s)``).
WATCHDOG_TOLERANCE_SECONDS: Final = 20.0

#: A health check: None when healthy, else the reason it fails.
Check = Callable[[], str | None]


class LeaderStatus(Protocol):
    """What the watchdog needs from :class:`asched.scheduler.leader.LeaderElector`."""

    @property
    def last_renewed(self) -> float | None:
        """Loop time of the last successful renew while leading; None when not leading."""
        ...


def leader_watchdog(
    elector: LeaderStatus,
    lease_duration_seconds: float,
    *,
    tolerance_seconds: float = WATCHDOG_TOLERANCE_SECONDS,
    clock: Callable[[], float] | None = None,
) -> Check:
    """A check failing when the last renew is older than ``lease + tolerance`` seconds.

    A standby (``last_renewed`` None) always passes: upstream is "not concerned with the case
    that we are hot standby".
    """
    now = clock or (lambda: asyncio.get_running_loop().time())
    limit = lease_duration_seconds + tolerance_seconds

    def check() -> str | None:
        renewed = elector.last_renewed
        if renewed is None:
            return None
        age = now() - renewed
        if age > limit:
            return f"leader lease not renewed for {age:.1f}s (limit {limit:.1f}s)"
        return None

    return check


class HealthState:
    """Readiness flags and liveness checks, written by the app, read by the handlers."""

    def __init__(self) -> None:
        self._ready = False
        self._not_live: list[str] | None = None
        self._checks: dict[str, Check] = {}

    def add_check(self, name: str, check: Check) -> None:
        """Register a liveness check (``/healthz`` and ``/livez``) under ``name``."""
        if name in self._checks:
            raise ValueError(f"health check {name!r} is already registered")
        self._checks[name] = check

    def mark_ready(self) -> None:
        """The informers have synced: this replica can serve (once the API is reachable)."""
        self._ready = True

    def set_informers(self, not_live: list[str]) -> None:
        """Record the informers that are not live now (empty: all are), each as
        ``kind (why)``."""
        self._not_live = list(not_live)

    def liveness_failures(self) -> list[str]:
        """``name failed: reason`` for every failing check, in registration order."""
        failures = []
        for name, check in self._checks.items():
            reason = check()
            if reason is not None:
                failures.append(f"{name} failed: {reason}")
        return failures

    def readiness_failures(self) -> list[str]:
        """Why this replica is not ready (empty when ready)."""
        failures = []
        if not self._ready:
            failures.append("informers not synced yet")
        if self._not_live is None:
            failures.append("API server not contacted yet")
        elif self._not_live:
            failures.append(f"informers not live: {'; '.join(self._not_live)}")
        return failures


def _report(failures: list[str], status: int, what: str) -> web.Response:
    if not failures:
        return web.Response(text="ok")
    lines = [f"[-]{failure}" for failure in failures]
    return web.Response(status=status, text="\n".join([*lines, f"{what} check failed"]) + "\n")


def build_app(
    state: HealthState, middlewares: Iterable[typedefs.Middleware] = ()
) -> web.Application:
    """The aiohttp application serving the four endpoints from ``state``, behind
    ``middlewares`` (e.g. :func:`asched.serving.delegated_auth`)."""

    async def live(request: web.Request) -> web.Response:
        what = request.path.lstrip("/")
        failures = state.liveness_failures()
        if failures:
            logger.warning("%s failing: %s", what, "; ".join(failures))
        return _report(failures, 500, what)

    async def ready(request: web.Request) -> web.Response:
        return _report(state.readiness_failures(), 503, "readyz")

    async def scrape(request: web.Request) -> web.Response:
        response = web.Response(body=generate_latest(metrics.REGISTRY))
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    app = web.Application(middlewares=list(middlewares))
    app.router.add_get("/healthz", live)
    app.router.add_get("/livez", live)
    app.router.add_get("/readyz", ready)
    app.router.add_get("/metrics", scrape)
    return app


@dataclass(frozen=True, slots=True)
class Serving:
    """A running health server: the address it is bound to, and ``https`` or ``http``."""

    host: str
    port: int
    scheme: str = "http"

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


@contextlib.asynccontextmanager
async def serve(
    state: HealthState,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    ssl_context: ssl.SSLContext | None = None,
    middlewares: Iterable[typedefs.Middleware] = (),
) -> AsyncIterator[Serving]:
    """Serve the endpoints on ``host:port`` until the block exits.

    With ``ssl_context`` it is HTTPS; ``middlewares`` wrap every handler (the delegated
    auth of :mod:`asched.serving`). ``port=0`` binds a free port (tests); the bound port
    is in the yielded :class:`Serving`.
    An address that cannot be bound (in use, not local) raises InputError naming it.
    As a root task::

        async with health.serve(state, port=10259):
            await asyncio.Future()   # until cancelled; exiting closes the socket
    """
    scheme = "http" if ssl_context is None else "https"
    async with listen(
        build_app(state, middlewares),
        host,
        port,
        ssl_context=ssl_context,
        refusal=lambda reason: f"{host}:{port}: cannot serve the health endpoints: {reason}",
    ) as bound:
        serving = Serving(host, bound, scheme)
        logger.info("health endpoints on %s", serving.url)
        yield serving
