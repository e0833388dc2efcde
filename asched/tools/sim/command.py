"""``asched sim``: run the simulated Kubernetes API server in its own process.

Contract with test fixtures and benchmarks: with ``--port 0`` a free port is chosen; once
the server listens, a kubeconfig with the real URL and the bearer token (generated unless
``--token`` is given) is written atomically to ``--kubeconfig-out``; SIGTERM or SIGINT
stops the server cleanly and the command exits 0. The event loop is uvloop.

Transport: a kubeconfig written with ``--kubeconfig-out`` is meant for people and their
tools, and kubectl (client-go) sends no bearer token over plain HTTP, so the server then
serves HTTPS with a generated CA that the kubeconfig carries (verification stays on).
``--plain-http`` keeps plain HTTP: the test fixtures and benchmark harnesses choose it
explicitly for their loopback clients, which send the token anyway.

Without ``--kubeconfig-out`` the kubeconfig still goes somewhere a person can use it: a
file of its own, ``asched-sim-PORT.kubeconfig`` in ``$XDG_RUNTIME_DIR`` (else the temp
dir), readable by its owner only, removed when the simulator stops; the first lines on
stderr say where and how to use it. (Once the token was generated and never shown: every
request got 401.)

Start-up failures (an unreadable or malformed ``--snapshot`` or ``--node-template``, an
unwritable ``--kubeconfig-out``, a port in use) are :class:`~asched.errors.InputError`:
one line naming the file, exit status 2, and no server left listening.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
import sys
import tempfile
from pathlib import Path

import uvloop

from asched.errors import InputError
from asched.gcpause import tune_gc
from asched.tools.sim.apiserver import kubeconfig, nodes
from asched.tools.sim.server import SimConfig, SimServer

logger = logging.getLogger(__name__)

#: gen0/gen1/gen2 thresholds of the simulator process (CPython's default: 700, 10, 10).
GC_THRESHOLDS = (50_000, 50, 100)


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _non_negative_float(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {value}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the options of ``asched sim``."""
    cluster = parser.add_argument_group("cluster")
    cluster.add_argument(
        "--nodes",
        type=_non_negative_int,
        default=0,
        help="hollow nodes to create (node-0, node-1, ...)",
    )
    cluster.add_argument(
        "--node-template",
        type=Path,
        metavar="FILE",
        help="YAML Node used as the hollow node template (default: cpu 4, memory 32Gi, pods 110)",
    )
    cluster.add_argument(
        "--zones",
        type=_non_negative_int,
        default=1,
        help="spread topology.kubernetes.io/zone over this many zones (0: no zone label)",
    )
    cluster.add_argument(
        "--snapshot",
        type=Path,
        metavar="FILE",
        help="load objects from a `kubectl get ... -A -o yaml` export",
    )
    cluster.add_argument(
        "--run-pods-after",
        type=_non_negative_float,
        metavar="SECONDS",
        help="mark bound pods Running after this many seconds",
    )
    cluster.add_argument(
        "--time-scale",
        type=_positive_float,
        default=1.0,
        help="multiply simulated durations (grace periods, --run-pods-after) by this",
    )
    server = parser.add_argument_group("server")
    server.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    server.add_argument(
        "--port", type=_non_negative_int, default=0, help="port (0: pick a free one)"
    )
    server.add_argument(
        "--kubeconfig-out",
        type=Path,
        metavar="FILE",
        help="write the kubeconfig (server, token, CA) here once listening (default: "
        "$XDG_RUNTIME_DIR/asched-sim-PORT.kubeconfig, removed at exit)",
    )
    server.add_argument("--token", help="bearer token clients must send (default: generated)")
    transport = server.add_mutually_exclusive_group()
    transport.add_argument(
        "--tls",
        action="store_true",
        help="serve HTTPS with a generated CA (the default)",
    )
    transport.add_argument(
        "--plain-http",
        action="store_true",
        help="serve plain HTTP even with --kubeconfig-out (for loopback harnesses; "
        "kubectl will not send the token)",
    )
    server.add_argument(
        "--history",
        type=_non_negative_int,
        default=10_000,
        help="watch events kept per resource (older versions get 410)",
    )
    server.add_argument(
        "--bookmark-interval",
        type=_positive_float,
        default=60.0,
        metavar="SECONDS",
        help="BOOKMARK period for watches that allow them",
    )
    server.add_argument("--seed", type=int, help="seed for generated names and injected faults")
    server.add_argument(
        "--no-lean-front",
        action="store_true",
        help="answer every request through aiohttp (default: creates and bindings are "
        "answered by a lean HTTP/1.1 front, the rest by aiohttp)",
    )
    faults = parser.add_argument_group("faults (also settable at run time: POST /admin/faults)")
    faults.add_argument(
        "--watch-cut-after",
        type=_positive_float,
        metavar="SECONDS",
        help="cut every watch this long after it starts",
    )
    faults.add_argument(
        "--bind-error-rate", type=_fraction, default=0.0, help="fraction of binding calls that fail"
    )
    faults.add_argument(
        "--bind-error-code",
        type=int,
        choices=(409, 500),
        default=500,
        help="status of failed binding calls",
    )
    faults.add_argument(
        "--latency-ms", type=_non_negative_float, default=0.0, help="latency added to every request"
    )
    faults.add_argument(
        "--volume-binding-paused",
        action="store_true",
        help="the simulated PV controller binds and provisions nothing until unpaused",
    )
    faults.add_argument(
        "--volume-binding-delay",
        type=_non_negative_float,
        default=0.0,
        metavar="SECONDS",
        help="the simulated PV controller waits this long before each round of binding",
    )


def serves_tls(args: argparse.Namespace) -> bool:
    """HTTPS unless ``--plain-http`` (the kubeconfig is for people and kubectl; see the
    module docstring)."""
    return bool(args.tls or not args.plain_http)


def default_kubeconfig(port: int) -> Path:
    """Where the kubeconfig goes without ``--kubeconfig-out`` (see the module docstring)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(base) / f"asched-sim-{port}.kubeconfig"


def config_from(args: argparse.Namespace) -> SimConfig:
    """Build the server configuration, reading the template and snapshot files."""
    template = nodes.load_template(args.node_template) if args.node_template else None
    snapshot = tuple(nodes.load_snapshot(args.snapshot)) if args.snapshot else ()
    return SimConfig(
        host=args.host,
        port=args.port,
        token=args.token,
        tls=serves_tls(args),
        nodes=args.nodes,
        node_template=template,
        zones=args.zones,
        snapshot=snapshot,
        run_pods_after=args.run_pods_after,
        history=args.history,
        bookmark_interval=args.bookmark_interval,
        time_scale=args.time_scale,
        watch_cut_after=args.watch_cut_after,
        bind_error_rate=args.bind_error_rate,
        bind_error_code=args.bind_error_code,
        latency_ms=args.latency_ms,
        volume_binding_paused=args.volume_binding_paused,
        volume_binding_delay=args.volume_binding_delay,
        seed=args.seed,
        lean_front=not args.no_lean_front,
    )


async def serve(config: SimConfig, kubeconfig_out: Path | None) -> int:
    """Run until SIGTERM or SIGINT; return the exit status."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    if kubeconfig_out is not None:
        kubeconfig.check_writable(kubeconfig_out)  # fail before listening, not after
    server = SimServer(config)
    try:
        await server.start()
    except OSError as exc:
        raise InputError(
            f"cannot listen on {config.host}:{config.port}: {exc.strerror or exc}"
        ) from None
    # The bootstrap objects (hollow nodes, snapshot) live as long as the process: keep the
    # cyclic GC from rescanning them, and collect young objects less often. Stored objects
    # are acyclic dicts freed by reference counting, so this only trades GC scans away
    # (measured: server CPU per binding 107 -> 62 µs with 20,000 pods stored).
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    own = kubeconfig_out is None  # a default file of ours: removed when we stop
    path = default_kubeconfig(server.port) if kubeconfig_out is None else kubeconfig_out
    try:
        kubeconfig.write_atomically(path, server.kubeconfig())  # InputError
        print(f"asched sim: serving on {server.url}", file=sys.stderr, flush=True)
        print(
            f"asched sim: kubeconfig (server, token{', CA' if config.tls else ''}) in {path}:"
            f" try `kubectl --kubeconfig {path} get nodes`, or"
            f" `asched run --kubeconfig {path}`; Ctrl-C stops it",
            file=sys.stderr,
            flush=True,
        )
        if not config.tls:
            print(
                "asched sim: plain HTTP: kubectl sends no token over it (asched does);"
                " drop --plain-http for kubectl",
                file=sys.stderr,
                flush=True,
            )
        await stopping.wait()
    finally:
        logger.info("stopping")
        if own:
            path.unlink(missing_ok=True)
        await server.stop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
    return 0


def run(args: argparse.Namespace) -> int:
    """Entry point of ``asched sim``."""
    tune_gc()
    config = config_from(args)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(serve(config, args.kubeconfig_out))
