"""``asched run``: schedule pods in a cluster until SIGTERM.

Exit status: 0 after a graceful stop (SIGTERM/SIGINT: stop popping, finish or roll back
in-flight binds, flush reports, release the lease); 2 for a bad configuration (every
field error listed); 1 when the run fails (lost leadership, an unrecoverable error).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
from typing import Final

from asched import health
from asched.api.client import KubeClient
from asched.api.extender import ExtenderClient
from asched.api.kubeconfig import resolve_kubeconfig
from asched.debug import server as debug_server
from asched.debug.recorder import DEFAULT_DECISIONS
from asched.errors import LeadershipLost
from asched.framework.extender import build_extenders
from asched.framework.registry import configuration
from asched.health import HealthState, leader_watchdog
from asched.leader import LeaderElector
from asched.scheduler.app import App, Options, unless_set

logger = logging.getLogger(__name__)

EPILOG: Final = """\
kubeconfig, first found: --kubeconfig; clientConnection.kubeconfig of --config; the
in-cluster service account (when $KUBERNETES_SERVICE_HOST is set); the first existing
file in $KUBECONFIG (only that one is read, no merging); ~/.kube/config.

SIGTERM or SIGINT stops it gracefully in any state: before it is ready (the last log
line says what it was waiting for), or while scheduling (in-flight binds finish or roll
back, reports are flushed, the lease is released).

exit status: 0 after a graceful stop; 1 when the run fails (lost leadership, an
unrecoverable error); 2 for bad input (a field error list, or one line naming the file
or address).
"""

#: The signals that stop the scheduler gracefully (exit status 0), in any state.
SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="KubeSchedulerConfiguration file (default: defaults)")
    parser.add_argument(
        "--kubeconfig",
        help="kubeconfig file (default: see below)",
    )
    parser.add_argument(
        "--max-inflight-binds", type=int, default=64, help="concurrent binding calls (default 64)"
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="seed for tie-breaking (default: random)"
    )
    parser.add_argument(
        "--health-port",
        type=int,
        default=10259,
        help="port of /healthz, /readyz and /metrics (plain HTTP; 0 picks a free one)",
    )
    parser.add_argument("--health-host", default="0.0.0.0", help="bind address of the health port")
    parser.add_argument(
        "--debug-addr",
        metavar="HOST:PORT",
        default=None,
        help="serve read-only debug pages (queue, decisions, now) at http://HOST:PORT/debug/; "
        "loopback addresses only (default: off, and nothing is recorded)",
    )
    parser.add_argument(
        "--debug-decisions",
        metavar="N",
        type=_positive,
        default=DEFAULT_DECISIONS,
        help=f"decisions the debug pages keep (default {DEFAULT_DECISIONS})",
    )


def _positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


class _StopRequest:
    """SIGTERM/SIGINT handler, installed before anything can block.

    It sets :attr:`event` (observed by the steps before the App exists) and stops the App
    once there is one, in whatever state it is.
    """

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.app: App | None = None

    def __call__(self, sig: signal.Signals) -> None:
        logger.info("%s received: stopping", sig.name)
        self.event.set()
        if self.app is not None:
            self.app.stop()


async def _main(args: argparse.Namespace) -> int:
    loop = asyncio.get_running_loop()
    stop = _StopRequest()
    for sig in SIGNALS:
        loop.add_signal_handler(sig, stop, sig)
    try:
        return await _serve(args, stop)
    finally:
        for sig in SIGNALS:
            loop.remove_signal_handler(sig)


async def _serve(args: argparse.Namespace, stop: _StopRequest) -> int:
    if args.debug_addr is not None:  # a bad or exposed address is refused before anything
        host, port = debug_server.parse_address(args.debug_addr)
        debug_server.check_exposure(host, port, ssl_context=None, middlewares=())
    config = configuration(args.config)
    extenders = build_extenders(config.extenders, ExtenderClient)  # TLS material read now
    source = resolve_kubeconfig(args.kubeconfig, config.client_connection.kubeconfig or None)
    where = "the in-cluster service account" if source.path is None else str(source.path)
    logger.info("kubeconfig: %s (from %s)", where, source.origin)
    client = await unless_set(
        stop.event,
        KubeClient.connect(
            None if source.path is None else str(source.path),
            max_connections=max(16, args.max_inflight_binds + 16),
        ),
    )
    if client is None:
        logger.warning("stopped before ready: while loading %s", where)
        return 0
    try:
        options = Options(
            max_in_flight_binds=args.max_inflight_binds,
            seed=args.seed,
            debug_address=args.debug_addr,
            debug_decisions=args.debug_decisions,
        )
        app = App(config, client, options, extenders=extenders)
        stop.app = app
        if stop.event.is_set():
            app.stop()
        state = HealthState()
        elector = None
        if config.leader_election.leader_elect:
            elector = LeaderElector(client, config.leader_election, identity=options.identity)
            state.add_check(
                "leader-election",
                leader_watchdog(elector, config.leader_election.lease_duration_seconds),
            )
        logger.info("asched starting: profiles %s, API %s", ", ".join(app.profiles), client.host)
        lost = False
        async with health.serve(state, args.health_host, args.health_port):
            try:
                await app.run(elector=elector, health=state)
            except* LeadershipLost:
                lost = True
        if lost:
            logger.error("leadership lost: exiting so a fresh process can rejoin")
            return 1
        logger.info("asched stopped: %s", app.scheduler.stats)
        return 0
    finally:
        await client.close()


def run(args: argparse.Namespace) -> int:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency on Linux
        return asyncio.run(_main(args))
    return uvloop.run(_main(args))
