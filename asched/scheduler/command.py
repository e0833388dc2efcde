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

from asched.api.client import KubeClient
from asched.config.load import default_config, load_config_file
from asched.scheduler.app import App, Options

logger = logging.getLogger(__name__)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="KubeSchedulerConfiguration file (default: defaults)")
    parser.add_argument(
        "--kubeconfig",
        help="kubeconfig file (default: clientConnection.kubeconfig, else in-cluster)",
    )
    parser.add_argument(
        "--max-inflight-binds", type=int, default=64, help="concurrent binding calls (default 64)"
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="seed for tie-breaking (default: random)"
    )


async def _main(args: argparse.Namespace) -> int:
    config = load_config_file(args.config) if args.config else default_config()
    kubeconfig = args.kubeconfig or config.client_connection.kubeconfig or None
    client = await KubeClient.connect(
        kubeconfig, max_connections=max(16, args.max_inflight_binds + 16)
    )
    try:
        app = App(
            config, client, Options(max_in_flight_binds=args.max_inflight_binds, seed=args.seed)
        )
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, app.stop)
        logger.info("asched starting: profiles %s, API %s", ", ".join(app.profiles), client.host)
        await app.run()
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
