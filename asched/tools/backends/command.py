"""``asched kube-apiserver``: build, start or inspect the genuine Kubernetes control plane.

Verbs:

- ``provision``: build kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and
  etcd (v1.37, from Go modules) into the cache; a no-op when cached.
- ``start [--kubeconfig-out FILE] [--scheduler-config FILE] [--controller-manager]``: start
  etcd + kube-apiserver (and optionally kube-scheduler, and kube-controller-manager's PV
  controller), write the kubeconfig, stay in the foreground until SIGINT or SIGTERM, then stop
  everything and remove the kubeconfig copy.
- ``status``: the cache path, the built versions, the build's figures and the cache's size.

Progress goes to stderr through logging (INFO for this package unless ``--quiet``); results
(paths, URLs) go to stdout.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import types
from pathlib import Path

from asched.tools.backends.errors import BackendError
from asched.tools.backends.kubeconfig import write_kubeconfig
from asched.tools.backends.launcher import KubeApiServer
from asched.tools.backends.provision import (
    BINARIES,
    KUBERNETES_VERSION,
    cache_dir,
    go_cache_dirs,
    missing_binaries,
    provision,
    read_manifest,
    selected_version,
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
        help="build and cache kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd",
    )
    start = verbs.add_parser("start", help="run etcd + kube-apiserver until SIGINT/SIGTERM")
    start.add_argument(
        "--kubeconfig-out", type=Path, help="also write the kubeconfig here (removed at exit)"
    )
    start.add_argument(
        "--scheduler-config",
        type=Path,
        help=f"also run kube-scheduler {KUBERNETES_VERSION} with this KubeSchedulerConfiguration",
    )
    start.add_argument(
        "--controller-manager",
        action="store_true",
        help=f"also run kube-controller-manager {KUBERNETES_VERSION} (its PV controller binds claims)",
    )
    start.add_argument("--v", type=int, default=0, dest="verbosity", help="kube-apiserver --v")
    verbs.add_parser("status", help="show the cache path and the provisioned versions")


def run(args: argparse.Namespace) -> int:
    """Run one verb; return the exit status."""
    if not args.quiet:
        package = logging.getLogger("asched.tools.backends")
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
    binaries = provision(version=selected_version())
    for name in BINARIES:
        print(f"{name:<24} {binaries.cache_dir / name}")
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
        print(f"kube-apiserver {server.binaries.version} ready at {server.url}", flush=True)
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
    version = selected_version()
    directory = cache_dir(version)
    manifest = read_manifest(version)
    print(f"cache          {directory}")
    if manifest is None:
        missing = missing_binaries(version)
        print(
            f"kubernetes     {version} not provisioned (or built from other sources),"
            f" missing {', '.join(missing)} (run: asched kube-apiserver provision)"
        )
        return 1
    for key in ("kubernetes", "etcd", "go", "built_at", "download_seconds", "compile_seconds"):
        print(f"{key:<14} {manifest.get(key)}")
    print(f"{'binaries':<14} {', '.join(BINARIES)}")
    print(f"{'size':<14} {_megabytes(directory)} MB binaries", end="")
    for label, path in zip(("modules", "build cache"), go_cache_dirs(), strict=True):
        print(f", {_megabytes(path)} MB Go {label}", end="")
    print()
    return 0


def _megabytes(path: Path) -> int:
    total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    return round(total / 1e6)
