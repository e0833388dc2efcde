"""Run the genuine kube-scheduler v1.20.2 next to asched, for side-by-side benchmarks.

Why: a benchmark that claims "as good as kube-scheduler" needs kube-scheduler itself, pointed at
the same API server with the same profile. This module writes the configuration a v1.20 scheduler
needs and owns the process.

A v1.20 scheduler reads ``kubescheduler.config.k8s.io/v1beta1``. When ``--config`` is given, the
deprecated flags (``--kubeconfig``, ``--leader-elect``...) are ignored, so the client kubeconfig
and ``leaderElection.leaderElect: false`` are written *into* the configuration; the
``--authentication-kubeconfig`` / ``--authorization-kubeconfig`` flags (for its own secure port)
are passed as flags. Both serving ports are free loopback ports so several schedulers can run.
"""

from __future__ import annotations

import copy
import logging
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from asched.backends.errors import LaunchError
from asched.backends.process import Child, free_port

logger = logging.getLogger(__name__)

SCHEDULER_CONFIG_API_VERSION = "kubescheduler.config.k8s.io/v1beta1"


def scheduler_config(
    kubeconfig: Path,
    *,
    scheduler_name: str = "default-scheduler",
    percentage_of_nodes_to_score: int | None = None,
    qps: float = 5000.0,
    burst: int = 10000,
    extenders: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Return a v1beta1 KubeSchedulerConfiguration with one default profile.

    ``qps``/``burst`` are raised far above the defaults (50/100) so the client-side rate limiter
    is not what a benchmark measures. ``extenders`` are v1beta1 ``Extender`` entries, written
    as given (v1.20's field names are v1's; ``httpTimeout`` is a duration string there too).
    """
    config: dict[str, Any] = {
        "apiVersion": SCHEDULER_CONFIG_API_VERSION,
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": qps, "burst": burst},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": scheduler_name}],
    }
    if percentage_of_nodes_to_score is not None:
        config["percentageOfNodesToScore"] = percentage_of_nodes_to_score
    if extenders:
        config["extenders"] = [dict(entry) for entry in extenders]
    return config


def complete_config(document: dict[str, Any], kubeconfig: Path, port: int) -> dict[str, Any]:
    """Return a copy of ``document`` for this server: client kubeconfig, no leader election,
    and ``/healthz`` + ``/metrics`` on ``127.0.0.1:port`` (with ``--config`` the ``--port`` and
    ``--address`` flags are ignored, so the default ``0.0.0.0:10251`` would collide).
    """
    config = copy.deepcopy(document)
    config["healthzBindAddress"] = config["metricsBindAddress"] = f"127.0.0.1:{port}"
    config.setdefault("apiVersion", SCHEDULER_CONFIG_API_VERSION)
    config.setdefault("kind", "KubeSchedulerConfiguration")
    config.setdefault("clientConnection", {})["kubeconfig"] = str(kubeconfig)
    config.setdefault("leaderElection", {})["leaderElect"] = False
    return config


class KubeScheduler:
    """One kube-scheduler process; started by :meth:`KubeApiServer.start_scheduler`.

    Attributes
    ----------
    config_path : Path
        The configuration file it runs with.
    healthz_url : str
        Its insecure ``/healthz`` (and ``/metrics``) endpoint on loopback.
    """

    def __init__(
        self,
        *,
        binary: Path,
        kubeconfig: Path,
        workdir: Path,
        config: Path | dict[str, Any] | None = None,
        verbosity: int = 0,
        die_with_parent: bool = True,
    ) -> None:
        self._binary = binary
        self._kubeconfig = kubeconfig
        self._workdir = workdir
        self._verbosity = verbosity
        self._die_with_parent = die_with_parent
        self.port = free_port()
        if config is None:
            loaded: Any = scheduler_config(kubeconfig)
        elif isinstance(config, Path):
            loaded = yaml.safe_load(config.read_text())
            if not isinstance(loaded, dict):
                raise LaunchError(f"{config}: not a KubeSchedulerConfiguration")
        else:
            loaded = config
        document = complete_config(loaded, kubeconfig, self.port)
        self.config_path = workdir / "config.yaml"
        self.config_path.write_text(yaml.safe_dump(document, sort_keys=False))
        self.child: Child | None = None

    @property
    def healthz_url(self) -> str:
        """The insecure health endpoint."""
        return f"http://127.0.0.1:{self.port}/healthz"

    @property
    def metrics_url(self) -> str:
        """The insecure Prometheus endpoint."""
        return f"http://127.0.0.1:{self.port}/metrics"

    @property
    def log(self) -> Path:
        """The scheduler's log file."""
        return self._workdir / "kube-scheduler.log"

    def start(self, *, timeout: float = 60.0) -> None:
        """Start the process and wait for ``/healthz`` to answer ``ok``."""
        kubeconfig = str(self._kubeconfig)
        argv = [
            str(self._binary),
            f"--config={self.config_path}",
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            f"--secure-port={free_port()}",
            f"--v={self._verbosity}",
        ]
        self.child = Child("kube-scheduler", argv, self.log, die_with_parent=self._die_with_parent)
        self.child.wait_until(self._healthy, timeout=timeout, what="healthy (/healthz)")
        logger.info("kube-scheduler started (pid %d, config %s)", self.child.pid, self.config_path)

    def stop(self) -> None:
        """Stop the process by PID (SIGTERM, then SIGKILL). Idempotent."""
        if self.child is not None:
            self.child.stop()

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.healthz_url, timeout=2) as response:
                return bool(response.read().strip() == b"ok")
        except (OSError, urllib.error.URLError):
            return False
