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

from asched import serving
from asched.api.client import KubeClient
from asched.api.kubeconfig import resolve_kubeconfig
from asched.debug import server as debug_server
from asched.debug.recorder import DEFAULT_DECISIONS
from asched.errors import LeadershipLost
from asched.extenders.client import ExtenderClient
from asched.extenders.extender import build_extenders
from asched.framework.registry import configuration
from asched.gcpause import tune_gc
from asched.scheduler.app import App
from asched.scheduler.leader import LeaderElector
from asched.scheduler.options import Options
from asched.scheduler.readiness import unless_set
from asched.serving import health
from asched.serving.health import HealthState, leader_watchdog

logger = logging.getLogger(__name__)

EPILOG: Final = """\
kubeconfig, first found: --kubeconfig; clientConnection.kubeconfig of --config; the
in-cluster service account (when $KUBERNETES_SERVICE_HOST is set); the first existing
file in $KUBECONFIG (only that one is read, no merging); ~/.kube/config.

SIGTERM or SIGINT stops it gracefully in any state: before it is ready (the last log
line says what it was waiting for), or while scheduling (in-flight binds finish or roll
back, reports are flushed, the lease is released).

/healthz, /readyz, /livez and /metrics are served on --bind-address:--secure-port
(0.0.0.0:10259) as kube-scheduler serves them: over HTTPS (the --tls-cert-file and
--tls-private-key-file pair, else a self-signed certificate made at startup), /metrics
only to a bearer token the API server authenticates (TokenReview) and authorizes for
`get` on the path (SubjectAccessReview), the health paths to anyone. Plain HTTP without
authentication on a loopback --bind-address (unless certificate files are given), or with
--insecure-serving (on any address; a warning unless loopback). See docs/metrics.md.

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
        "--secure-port",
        "--health-port",
        dest="secure_port",
        type=int,
        default=health.DEFAULT_PORT,
        help="port of /healthz, /readyz, /livez and /metrics (default %(default)s; 0 picks "
        "a free one)",
    )
    parser.add_argument(
        "--bind-address",
        "--health-host",
        dest="bind_address",
        default=health.DEFAULT_HOST,
        help="address to serve them on (default %(default)s: every interface)",
    )
    parser.add_argument(
        "--tls-cert-file",
        help="PEM certificate (then any intermediates) for HTTPS (default: self-signed, "
        "made at startup)",
    )
    parser.add_argument("--tls-private-key-file", help="PEM private key of --tls-cert-file")
    parser.add_argument(
        "--insecure-serving",
        action="store_true",
        help="serve plain HTTP without authentication, on any --bind-address (a warning "
        "unless loopback)",
    )
    parser.add_argument(
        "--debug-addr",
        metavar="HOST:PORT",
        default=None,
        help="serve read-only debug pages (queue, decisions, now) at HOST:PORT/debug/: plain "
        "HTTP on a loopback address; elsewhere HTTPS with the same token checks as /metrics "
        "(refused with --insecure-serving). Default: off, and nothing is recorded",
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
    config = configuration(args.config)
    extenders = build_extenders(config.extenders, ExtenderClient)  # TLS material read now
    tls = _serving_tls(args)  # the serving certificate too: a bad file is exit 2, at once
    debug_tls = _debug_tls(args, tls)  # a bad or exposed debug address: exit 2, at once
    client = await _connect(args, config.client_connection.kubeconfig or None, stop)
    if client is None:
        return 0
    try:
        # one authorizer (and its caches) for /metrics and the debug pages
        auth = serving.delegated_auth(client) if tls is not None or debug_tls is not None else None
        options = Options(
            max_in_flight_binds=args.max_inflight_binds,
            seed=args.seed,
            debug_address=args.debug_addr,
            debug_decisions=args.debug_decisions,
            debug_ssl_context=None if debug_tls is None else debug_tls.context,
            debug_middlewares=() if debug_tls is None or auth is None else (auth,),
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
        middlewares = [auth] if tls is not None and auth is not None else []
        async with health.serve(
            state,
            args.bind_address,
            args.secure_port,
            ssl_context=None if tls is None else tls.context,
            middlewares=middlewares,
        ):
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


async def _connect(
    args: argparse.Namespace, configured: str | None, stop: _StopRequest
) -> KubeClient | None:
    """The API client, from the kubeconfig ``--kubeconfig`` or ``configured`` (the
    configuration's clientConnection.kubeconfig) resolves to; None when a stop signal
    came first (said in the log)."""
    source = resolve_kubeconfig(args.kubeconfig, configured)
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
    return client


def _serving_tls(args: argparse.Namespace) -> serving.ServerTLS | None:
    """The health port's TLS (None: plain HTTP), as :func:`asched.serving.plan` decides."""
    plan = serving.plan(
        args.bind_address,
        cert_file=args.tls_cert_file,
        key_file=args.tls_private_key_file,
        insecure=args.insecure_serving,
    )
    if plan.warning:
        logger.warning("%s", plan.warning)
    if not plan.secure:
        logger.info("health and metrics on %s: plain HTTP, no authentication", args.bind_address)
        return None
    return serving.ssl_context_for(
        args.tls_cert_file,
        args.tls_private_key_file,
        hosts=serving.self_signed_hosts(args.bind_address),
    )


def _debug_tls(args: argparse.Namespace, tls: serving.ServerTLS | None) -> serving.ServerTLS | None:
    """The debug listener's TLS: None on a loopback address (plain HTTP, no authentication,
    for ``kubectl port-forward``); elsewhere the health port's, or one of its own when the
    health port is plain (its certificate files, else self-signed for that address).
    With ``--insecure-serving`` a non-loopback debug address is refused: the pages are
    never exposed without authorization. InputError (exit 2) for a bad address."""
    if args.debug_addr is None:
        return None
    host, port = debug_server.parse_address(args.debug_addr)
    if serving.is_loopback(host) or args.insecure_serving:
        debug_server.check_exposure(host, port, ssl_context=None, middlewares=())
        return None
    if tls is not None:
        return tls
    return serving.ssl_context_for(
        args.tls_cert_file, args.tls_private_key_file, hosts=serving.self_signed_hosts(host)
    )


def run(args: argparse.Namespace) -> int:
    tune_gc()  # the objects that live on are frozen once synced (App.wait_synced)
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency on Linux
        return asyncio.run(_main(args))
    return uvloop.run(_main(args))
