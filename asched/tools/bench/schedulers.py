"""The scheduler under test, as a child process: asched (``python -m asched run``) or the
genuine kube-scheduler (v1.37, the provisioned build), configured the same way.

Both get one profile named :data:`SCHEDULER_NAME` (the pods ask for it, so nothing else in
an existing cluster picks them up), no leader election, ``percentageOfNodesToScore`` as
asked (0 = each scheduler's adaptive default), client QPS/burst 5000 (scheduler_perf's
setting; asched accepts and ignores it, it has no client-side rate limiter) and the same
``extenders`` entries, if any. kube-scheduler otherwise keeps every v1.37 default:
QueueingHints, async preemption, pop from backoff, opportunistic batching.

A workload with ``schedulerProfile: coscheduling`` runs asched with the Coscheduling
plugin (:data:`COSCHEDULING_PLUGINS`, :data:`COSCHEDULING_ARGS`) over scheduler-plugins'
PodGroups, and kube-scheduler with its own gang scheduling: the ``GenericWorkload`` gate
on, which adds the GangScheduling plugin to its default profile, over the same gangs as
``scheduling.k8s.io/v1beta1`` PodGroups (:data:`KUBE_SCHEDULER_GANG_GATES`).

asched serves ``/metrics`` on a loopback port the harness picks (plain HTTP, no token on
loopback), so the gang figures can scrape its Permit gauge (:attr:`AschedProcess.metrics_url`).

Profiling asched (``--profile``): ``py-spy`` samples the running process from outside
(``py-spy record --nonblocking --format raw``, from the start of measuring to its end);
``cprofile`` runs it under ``python -m cProfile -o FILE`` (deterministic, slower, the
whole life of the process). Processes are stopped by their PID only.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, Protocol

import yaml

from asched.config.load import load_config
from asched.framework.registry import installed
from asched.tools.backends import scheduler as backend_scheduler
from asched.tools.backends.process import Child
from asched.tools.backends.provision import KUBERNETES_VERSION, provision, selected_version
from asched.tools.backends.scheduler import KubeScheduler, scheduler_config

logger = logging.getLogger(__name__)

SCHEDULER_NAME: Final = "bench-scheduler"
CLIENT_QPS: Final = backend_scheduler.CLIENT_QPS
CLIENT_BURST: Final = backend_scheduler.CLIENT_BURST
KUBE_SCHEDULER_VERSION: Final = KUBERNETES_VERSION
#: What kube-scheduler v1.37 logs as it exits 1 after SIGTERM (no leader election).
STOPPED_BY_SIGNAL: Final = "finished without leader elect"
#: kube-scheduler's feature gates for gang workloads: its own gang scheduling (beta, off).
KUBE_SCHEDULER_GANG_GATES: Final[Mapping[str, bool]] = {"GenericWorkload": True}

Profiler = Literal["py-spy", "cprofile"]
SchedulerProfile = Literal["default", "coscheduling"]

#: The plugin of ``schedulerProfile: coscheduling``.
COSCHEDULING: Final = "Coscheduling"
#: Its ``plugins`` section: everywhere it has an extension point, and the only QueueSort.
COSCHEDULING_PLUGINS: Final[Mapping[str, Any]] = {
    "multiPoint": {"enabled": [{"name": COSCHEDULING}]},
    "queueSort": {"enabled": [{"name": COSCHEDULING}], "disabled": [{"name": "*"}]},
}
#: Its args: scheduler-plugins' defaults for the wait, no group backoff.
COSCHEDULING_ARGS: Final[Mapping[str, Any]] = {
    "permitWaitingTimeSeconds": 60,
    "podGroupBackoffSeconds": 0,
}


def py_spy() -> str | None:
    """The py-spy executable: on PATH, else beside this Python (a venv's bin), else None."""
    found = shutil.which("py-spy")
    if found is not None:
        return found
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class SchedulerUnderTest(Protocol):
    """What the runner needs of a scheduler process."""

    kind: str
    log: Path

    @property
    def pid(self) -> int | None: ...

    def start(self) -> None: ...

    def alive(self) -> bool: ...

    def log_tail(self) -> str: ...

    def measuring(self) -> None: ...

    def stop(self) -> int | None: ...


def asched_config(
    percentage: int,
    scheduler_name: str = SCHEDULER_NAME,
    extenders: Sequence[Mapping[str, Any]] = (),
    profile: SchedulerProfile = "default",
) -> dict[str, Any]:
    """The KubeSchedulerConfiguration (v1) asched runs with in benchmarks.

    ``extenders`` are ``extenders[]`` entries, written as given (none: no such key).
    ``profile`` ``coscheduling`` enables the Coscheduling plugin (and its QueueSort).
    """
    entry: dict[str, Any] = {"schedulerName": scheduler_name}
    if profile == "coscheduling":
        entry["plugins"] = copy.deepcopy(dict(COSCHEDULING_PLUGINS))
        entry["pluginConfig"] = [{"name": COSCHEDULING, "args": dict(COSCHEDULING_ARGS)}]
    config: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "percentageOfNodesToScore": percentage,
        "clientConnection": {"qps": CLIENT_QPS, "burst": CLIENT_BURST},
        "profiles": [entry],
    }
    if extenders:
        config["extenders"] = [dict(entry) for entry in extenders]
    return config


class AschedProcess:
    """``python -m asched run`` against ``kubeconfig``; see the module docstring."""

    kind = "asched"

    def __init__(
        self,
        kubeconfig: Path,
        workdir: Path,
        *,
        percentage: int,
        max_inflight_binds: int = 64,
        seed: int = 1,
        profiler: Profiler | None = None,
        profile_out: Path | None = None,
        log_level: str = "WARNING",
        extenders: Sequence[Mapping[str, Any]] = (),
        profile: SchedulerProfile = "default",
    ) -> None:
        self.kubeconfig = kubeconfig
        self.extenders = extenders
        self.profile = profile
        self.metrics_port: int | None = None
        self.workdir = workdir
        self.percentage = percentage
        self.max_inflight_binds = max_inflight_binds
        self.seed = seed
        self.profiler = profiler
        self.profile_out = profile_out
        self.log_level = log_level
        self.log = workdir / "asched-run.log"
        self.config_path = workdir / "asched-config.yaml"
        self._child: Child | None = None
        self._spy: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    @property
    def metrics_url(self) -> str | None:
        """Its ``/metrics`` (None before :meth:`start`)."""
        if self.metrics_port is None:
            return None
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    def start(self) -> None:
        """Write the configuration (validated first) and start the process."""
        document = asched_config(self.percentage, extenders=self.extenders, profile=self.profile)
        load_config(document, catalogue=installed().catalogue, source="benchmark configuration")
        self.metrics_port = free_port()
        self.config_path.write_text(yaml.safe_dump(document, sort_keys=False))
        argv = [sys.executable]
        if self.profiler == "cprofile":
            argv += ["-m", "cProfile", "-o", str(self._profile_path("prof"))]
        argv += [
            "-m",
            "asched",
            "--log-level",
            self.log_level,
            "run",
            "--config",
            str(self.config_path),
            "--kubeconfig",
            str(self.kubeconfig),
            "--max-inflight-binds",
            str(self.max_inflight_binds),
            "--seed",
            str(self.seed),
            # Loopback, a free port: several runs (and tests) may share the machine; known
            # to us, so that /metrics can be scraped (plain HTTP on loopback).
            "--health-host",
            "127.0.0.1",
            "--health-port",
            str(self.metrics_port),
        ]
        self._child = Child("asched run", argv, self.log)

    def alive(self) -> bool:
        """True while the process runs."""
        return self._child is not None and self._child.alive()

    def log_tail(self) -> str:
        """The last lines of its log."""
        return self._child.log_tail() if self._child is not None else ""

    def _profile_path(self, suffix: str) -> Path:
        if self.profile_out is not None:
            return self.profile_out
        return self.workdir / f"asched-run.{suffix}"

    def measuring(self) -> None:
        """Measurement starts: attach py-spy if asked."""
        if self.profiler != "py-spy" or self._child is None:
            return
        out = self._profile_path("pyspy.txt")
        argv = [
            py_spy() or "py-spy",
            "record",
            "--pid",
            str(self._child.pid),
            "--rate",
            "100",
            "--nonblocking",
            "--format",
            "raw",
            "--output",
            str(out),
        ]
        with (self.workdir / "py-spy.log").open("ab") as log:
            self._spy = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        logger.info("py-spy (pid %d) recording asched to %s", self._spy.pid, out)

    def stop(self) -> int | None:
        """Stop py-spy (SIGINT: it writes its profile), then asched (SIGTERM); exit status."""
        if self._spy is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._spy.pid, signal.SIGINT)
            try:
                self._spy.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.kill(self._spy.pid, signal.SIGKILL)
                self._spy.wait()
            self._spy = None
        if self._child is None:
            return None
        self._child.stop(timeout=60)
        return self._child.returncode

    @property
    def profile_path(self) -> Path | None:
        """Where the profile went (None without profiling)."""
        if self.profiler == "cprofile":
            return self._profile_path("prof")
        if self.profiler == "py-spy":
            return self._profile_path("pyspy.txt")
        return None


class KubeSchedulerProcess:
    """kube-scheduler (the provisioned v1.37 build) against ``kubeconfig``.

    ``profile`` ``coscheduling`` turns on its own gang scheduling (:data:`KUBE_SCHEDULER_GANG_GATES`).
    """

    kind = "kube-scheduler"

    def __init__(
        self,
        kubeconfig: Path,
        workdir: Path,
        *,
        percentage: int,
        json_only: bool = False,
        extenders: Sequence[Mapping[str, Any]] = (),
        profile: SchedulerProfile = "default",
    ) -> None:
        self.kubeconfig = kubeconfig
        self.workdir = workdir
        self.percentage = percentage
        self.json_only = json_only
        self.extenders = extenders
        self.profile = profile
        self._scheduler: KubeScheduler | None = None
        self.log = workdir / "kube-scheduler.log"

    @property
    def pid(self) -> int | None:
        child = self._scheduler.child if self._scheduler is not None else None
        return child.pid if child is not None else None

    def start(self) -> None:
        """Write the v1 configuration and start; returns once ``/healthz`` answers."""
        config = scheduler_config(
            self.kubeconfig,
            scheduler_name=SCHEDULER_NAME,
            percentage_of_nodes_to_score=self.percentage,
            qps=CLIENT_QPS,
            burst=CLIENT_BURST,
            extenders=self.extenders,
        )
        if self.json_only:  # the simulator speaks JSON only; protobuf is client-go's default
            config["clientConnection"]["contentType"] = "application/json"
        self._scheduler = KubeScheduler(
            binary=provision(version=selected_version()).kube_scheduler,
            kubeconfig=self.kubeconfig,
            workdir=self.workdir,
            config=config,
            feature_gates=KUBE_SCHEDULER_GANG_GATES if self.profile == "coscheduling" else {},
        )
        self.log = self._scheduler.log
        self._scheduler.start(timeout=60)

    def alive(self) -> bool:
        """True while the process runs."""
        child = self._scheduler.child if self._scheduler is not None else None
        return child is not None and child.alive()

    def log_tail(self) -> str:
        """The last lines of its log (each cut to 300 characters: klog lines can be long)."""
        child = self._scheduler.child if self._scheduler is not None else None
        text = child.log_tail(12) if child is not None else ""
        return "\n".join(line[:300] for line in text.splitlines())

    def measuring(self) -> None:
        """Nothing to do (profiling is for asched)."""

    def stop(self) -> int | None:
        """Stop it; exit status 0 when SIGTERM ended it.

        SIGTERM cancels kube-scheduler's context: without leader election its run then
        returns the error "finished without leader elect" and the process exits 1 (v1.37,
        ``cmd/kube-scheduler/app/server.go``); a scheduler that died of the signal itself
        reports -SIGTERM. Both are a normal stop; any other status is the scheduler's own.
        """
        if self._scheduler is None:
            return None
        self._scheduler.stop()
        child = self._scheduler.child
        if child is None:
            return None
        if child.returncode == -signal.SIGTERM:
            return 0
        if child.returncode == 1 and STOPPED_BY_SIGNAL in child.log_tail(3):
            return 0
        return child.returncode
