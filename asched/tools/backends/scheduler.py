"""Run the genuine kube-scheduler v1.37 next to asched, for side-by-side benchmarks.

Why: a benchmark that claims "N times kube-scheduler" needs kube-scheduler itself, at the
version users run, pointed at the same API server. This module writes the configuration it
needs and owns the process.

kube-scheduler reads ``kubescheduler.config.k8s.io/v1``. With ``--config`` the client
kubeconfig goes *into* the configuration (``clientConnection.kubeconfig``: the deprecated
``--kubeconfig`` flag is ignored then), as does ``leaderElection.leaderElect: false``. It
serves only HTTPS (the insecure port went in 1.23): ``/healthz`` is open to anyone and
``/metrics`` to a token the API server authorizes, so ``--authentication-kubeconfig`` and
``--authorization-kubeconfig`` point at the admin kubeconfig and the port is a free loopback
one, so that several schedulers can run.

Everything else keeps kube-scheduler's own defaults: the default profile and its plugins,
adaptive ``percentageOfNodesToScore``, QueueingHints, async preemption, pop from backoff and
opportunistic batching (all on by default in v1.37). Only the client's rate limit is raised,
to scheduler_perf's QPS 5000 / burst 5000 (:data:`CLIENT_QPS`), so that a benchmark measures
the scheduler and not the client's limiter (the defaults, 50/100, cap it near 50 pods/s).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from asched.tools.backends.errors import LaunchError
from asched.tools.backends.process import Child, free_port, probe_healthz

logger = logging.getLogger(__name__)

SCHEDULER_CONFIG_API_VERSION = "kubescheduler.config.k8s.io/v1"
#: scheduler_perf's client limits (``cfg.QPS = 5000; cfg.Burst = 5000`` in its util.go).
CLIENT_QPS = 5000.0
CLIENT_BURST = 5000


def scheduler_config(
    kubeconfig: Path,
    *,
    scheduler_name: str = "default-scheduler",
    percentage_of_nodes_to_score: int | None = None,
    qps: float = CLIENT_QPS,
    burst: int = CLIENT_BURST,
    extenders: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Return a v1 KubeSchedulerConfiguration with one default profile.

    ``qps``/``burst`` are raised far above the defaults (50/100) so the client-side rate limiter
    is not what a benchmark measures. ``extenders`` are v1 ``Extender`` entries, written as
    given. ``percentage_of_nodes_to_score`` None or 0 leaves kube-scheduler's adaptive default.
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


def complete_config(document: dict[str, Any], kubeconfig: Path) -> dict[str, Any]:
    """Return a copy of ``document`` for this server: client kubeconfig, no leader election."""
    config = copy.deepcopy(document)
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
        Its HTTPS ``/healthz`` on loopback (``/metrics`` beside it takes the admin token).
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
        feature_gates: Mapping[str, bool] | None = None,
    ) -> None:
        self._binary = binary
        self._feature_gates = dict(feature_gates or {})
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
        document = complete_config(loaded, kubeconfig)
        self.config_path = workdir / "config.yaml"
        self.config_path.write_text(yaml.safe_dump(document, sort_keys=False))
        self.child: Child | None = None

    @property
    def healthz_url(self) -> str:
        """The health endpoint (HTTPS, its own self-signed certificate)."""
        return f"https://127.0.0.1:{self.port}/healthz"

    @property
    def metrics_url(self) -> str:
        """The Prometheus endpoint (HTTPS; a bearer token allowed ``get`` on ``/metrics``)."""
        return f"https://127.0.0.1:{self.port}/metrics"

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
            f"--secure-port={self.port}",
            f"--cert-dir={self._workdir / 'certs'}",
            *(
                [f"--feature-gates={gates_flag(self._feature_gates)}"]
                if self._feature_gates
                else []
            ),
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
        return probe_healthz(self.healthz_url)


def gates_flag(gates: Mapping[str, bool]) -> str:
    """Return ``--feature-gates``' value for ``gates`` (``A=true,B=false``)."""
    return ",".join(f"{name}={str(on).lower()}" for name, on in gates.items())
