"""``asched kube-apiserver``: build, start or inspect the genuine kube-apiserver v1.20.2.

Verbs:

- ``provision``: build kube-apiserver, kube-scheduler and kube-controller-manager from Debian's
  source package into the cache (only the missing ones; a no-op when cached), install etcd
  when missing.
- ``start [--kubeconfig-out FILE] [--scheduler-config FILE] [--controller-manager]``: start
  etcd + kube-apiserver (and optionally kube-scheduler, and kube-controller-manager's PV
  controller), write the kubeconfig, stay in the foreground until SIGINT or SIGTERM, then stop
  everything and remove the kubeconfig copy.
- ``status``: the cache path, the built versions and whether etcd is installed.

Progress goes to stderr through logging (INFO for this package unless ``--quiet``); results
(paths, URLs) go to stdout.
"""

from __future__ import annotations

import argparse
import logging
import signal
import subprocess
import sys
import threading
import types
from pathlib import Path

from asched.backends.errors import BackendError
from asched.backends.kubeconfig import write_kubeconfig
from asched.backends.launcher import KubeApiServer
from asched.backends.provision import (
    BINARIES,
    KUBERNETES_VERSION,
    cache_dir,
    find_etcd,
    missing_binaries,
    provision,
    read_manifest,
)

logger = logging.getLogger(__name__)


def configure(parser: argparse.ArgumentParser) -> None:
    """Register the verbs and their flags."""
    parser.add_argument(
        "--quiet", action="store_true", help="no progress lines (only warnings and errors)"
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    verbs.add_parser(
        "provision",
        help="build and cache kube-apiserver/kube-scheduler/kube-controller-manager, get etcd",
    )
    start = verbs.add_parser("start", help="run etcd + kube-apiserver until SIGINT/SIGTERM")
    start.add_argument(
        "--kubeconfig-out", type=Path, help="also write the kubeconfig here (removed at exit)"
    )
    start.add_argument(
        "--scheduler-config",
        type=Path,
        help="also run kube-scheduler v1.20.2 with this KubeSchedulerConfiguration (v1beta1)",
    )
    start.add_argument(
        "--controller-manager",
        action="store_true",
        help="also run kube-controller-manager v1.20.2's PV controller (binds volume claims)",
    )
    start.add_argument("--v", type=int, default=0, dest="verbosity", help="kube-apiserver --v")
    verbs.add_parser("status", help="show the cache path and the provisioned versions")


def run(args: argparse.Namespace) -> int:
    """Run one verb; return the exit status."""
    if not args.quiet:
        package = logging.getLogger("asched.backends")
        if package.getEffectiveLevel() > logging.INFO:
            package.setLevel(logging.INFO)
    try:
        if args.verb == "provision":
            return _provision()
        if args.verb == "start":
            return _start(args)
        return _status()
    except BackendError as exc:
        print(f"asched kube-apiserver {args.verb}: error: {exc}", file=sys.stderr)
        return 1


def _provision() -> int:
    binaries = provision()
    print(f"kube-apiserver {binaries.kube_apiserver}")
    print(f"kube-scheduler {binaries.kube_scheduler}")
    print(f"kube-controller-manager {binaries.kube_controller_manager}")
    print(f"etcd           {binaries.etcd}")
    print(f"etcdctl        {binaries.etcdctl}")
    return 0


def _start(args: argparse.Namespace) -> int:
    stop = threading.Event()

    def on_signal(signum: int, frame: types.FrameType | None) -> None:
        logger.info("received %s; stopping", signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    server = KubeApiServer(verbosity=args.verbosity, controller_manager=args.controller_manager)
    try:
        server.start()
        if args.scheduler_config is not None:
            server.start_scheduler(args.scheduler_config)
        if args.kubeconfig_out is not None:
            write_kubeconfig(
                args.kubeconfig_out, server=server.url, ca_pem=server.ca_pem, token=server.token
            )
        print(f"kube-apiserver {KUBERNETES_VERSION} ready at {server.url}", flush=True)
        print(f"kubeconfig {args.kubeconfig_out or server.kubeconfig}", flush=True)
        expected = set(server.pids())
        while not stop.wait(1.0):
            missing = expected - set(server.pids())
            if missing:
                logger.error("%s exited; see the logs in %s", ", ".join(missing), server.directory)
                return 1
        return 0
    finally:
        server.stop()
        if args.kubeconfig_out is not None:
            args.kubeconfig_out.unlink(missing_ok=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _status() -> int:
    directory = cache_dir()
    manifest = read_manifest()
    print(f"cache          {directory}")
    missing = missing_binaries()
    if manifest is None:
        print(
            f"kubernetes     {KUBERNETES_VERSION} not provisioned, missing {', '.join(missing)}"
            " (run: asched kube-apiserver provision)"
        )
    else:
        for key in ("kubernetes", "debian_source", "go", "built_at", "build_seconds"):
            print(f"{key:<14} {manifest.get(key)}")
        print(f"{'binaries':<14} {', '.join(BINARIES)}")
    etcd = find_etcd()
    if etcd is None:
        print("etcd           not installed (provision installs etcd-server and etcd-client)")
    else:
        version = subprocess.run(
            [str(etcd[0]), "--version"], capture_output=True, text=True, check=False
        ).stdout.splitlines()
        print(f"etcd           {etcd[0]} ({version[0] if version else 'unknown version'})")
    return 0 if manifest is not None and etcd is not None else 1
