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

from asched import health
from asched.api.client import KubeClient
from asched.config.load import default_config, load_config_file
from asched.errors import LeadershipLost
from asched.health import HealthState, leader_watchdog
from asched.leader import LeaderElector
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
    parser.add_argument(
        "--health-port",
        type=int,
        default=10259,
        help="port of /healthz, /readyz and /metrics (plain HTTP; 0 picks a free one)",
    )
    parser.add_argument("--health-host", default="0.0.0.0", help="bind address of the health port")


async def _main(args: argparse.Namespace) -> int:
    config = load_config_file(args.config) if args.config else default_config()
    kubeconfig = args.kubeconfig or config.client_connection.kubeconfig or None
    client = await KubeClient.connect(
        kubeconfig, max_connections=max(16, args.max_inflight_binds + 16)
    )
    try:
        options = Options(max_in_flight_binds=args.max_inflight_binds, seed=args.seed)
        app = App(config, client, options)
        state = HealthState()
        elector = None
        if config.leader_election.leader_elect:
            elector = LeaderElector(client, config.leader_election, identity=options.identity)
            state.add_check(
                "leader-election",
                leader_watchdog(elector, config.leader_election.lease_duration_seconds),
            )
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, app.stop)
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
