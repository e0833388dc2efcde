"""Start a genuine kube-apiserver v1.37 (with its etcd) on loopback, and stop it cleanly.

Why: the contract tests treat the genuine API server as the truth the simulator must match, and
the benchmarks compare asched with kube-scheduler against it. Both need a disposable server that
starts in seconds, is reachable only from this machine, and leaves nothing behind.

The recipe: etcd on two free ports; kube-apiserver with TLS only (there is no plain-HTTP port)
from a self-signed certificate it writes into ``--cert-dir``, a static token file (one
``system:masters`` user, and one unprivileged user for RBAC tests), RBAC, service-account keys
made with openssl, and the admission plugins that need controllers disabled. The kubeconfig
embeds the server's own certificate as ``certificate-authority-data``, so clients *verify* TLS.

Feature gates and APIs (:data:`FEATURE_GATES`, :data:`RUNTIME_CONFIG`): what a v1.37 cluster
has on by default, plus the beta gates asched supports that are off by default, each named
with why.

Invariants:

- Everything lives in one temp dir, removed by :meth:`KubeApiServer.stop`.
- kube-controller-manager (the PV controller, for volume tests) runs only on request
  (``controller_manager=True`` or :meth:`KubeApiServer.ensure_controller_manager`): a bare
  server binds no claims, and tests that need no controller pay nothing for it.
- :meth:`KubeApiServer.stop` stops the schedulers, kube-controller-manager, kube-apiserver, then
  etcd, by PID (SIGTERM, then SIGKILL); it is idempotent and also runs when :meth:`start`
  fails half-way.
- The API is synchronous so a session-scoped pytest fixture, a benchmark and the CLI can all use
  it without an event loop.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import ssl
import subprocess
import tempfile
import time
import types
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Self

from asched.tools.backends.controller_manager import KubeControllerManager
from asched.tools.backends.errors import LaunchError
from asched.tools.backends.kubeconfig import write_kubeconfig
from asched.tools.backends.process import Child, free_port
from asched.tools.backends.provision import (
    KUBERNETES_VERSION,
    Binaries,
    minor_of,
    provision,
    selected_version,
)
from asched.tools.backends.scheduler import KubeScheduler, gates_flag

logger = logging.getLogger(__name__)

#: The --service-cluster-ip-range; no Services are used, but the flag is required.
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
#: Admission plugins that wait for objects only controllers create (default ServiceAccount,
#: node taints from a node lifecycle controller).
DISABLED_ADMISSION_PLUGINS = "ServiceAccount,TaintNodesByCondition"
#: Beta feature gates that are off by default in v1.37 and that asched supports, so that the
#: genuine server serves what asched reads. Every other gate keeps its v1.37 default.
FEATURE_GATES: dict[str, bool] = {
    # scheduling.k8s.io/v1beta1 Workload and PodGroup (KEP-4671): asched's gangs read them
    "GenericWorkload": True,
}
#: Beta API versions that are off by default (beta APIs are never on by default since 1.24).
RUNTIME_CONFIG: tuple[str, ...] = ("scheduling.k8s.io/v1beta1=true",)

#: The unprivileged user of :attr:`KubeApiServer.limited_token` (RBAC grants it nothing).
LIMITED_USER = "asched-limited"


class KubeApiServer:
    """etcd + kube-apiserver on free loopback ports, in a temp dir.

    Use as a context manager (``with KubeApiServer() as server: ...``) or call :meth:`start` and
    :meth:`stop`.

    Parameters
    ----------
    binaries : Binaries, optional
        Provisioned executables; by default :func:`~asched.tools.backends.provision.provision` is
        called (a no-op once cached).
    ready_timeout : float
        Seconds to wait for etcd health and for kube-apiserver's ``/readyz``.
    verbosity : int
        kube-apiserver's ``--v``.
    extra_args : sequence of str
        More kube-apiserver flags, appended last (later flags win).
    die_with_parent : bool
        Kill the servers when the starting thread dies (see :mod:`asched.tools.backends.process`).
    controller_manager : bool
        Also start kube-controller-manager (see :meth:`ensure_controller_manager`) in
        :meth:`start`.

    Attributes (valid after :meth:`start`)
    --------------------------------------
    url : str
        ``https://127.0.0.1:PORT``.
    kubeconfig : Path
        Token + CA kubeconfig for this server.
    token : str
        The ``system:masters`` bearer token (never logged).
    limited_token : str
        The bearer token of :data:`LIMITED_USER`, a user in no group but
        ``system:authenticated``: it may do only what a test grants it with RBAC.
    ca_pem : bytes
        The server's self-signed certificate chain.
    etcd_url : str
        ``http://127.0.0.1:PORT``.
    """

    def __init__(
        self,
        *,
        binaries: Binaries | None = None,
        ready_timeout: float = 90.0,
        verbosity: int = 0,
        extra_args: tuple[str, ...] = (),
        die_with_parent: bool = True,
        controller_manager: bool = False,
    ) -> None:
        self._binaries = binaries
        self._ready_timeout = ready_timeout
        self._verbosity = verbosity
        self._extra_args = extra_args
        self._die_with_parent = die_with_parent
        self._dir: Path | None = None
        self._etcd: Child | None = None
        self._apiserver: Child | None = None
        self._schedulers: list[KubeScheduler] = []
        self._with_controller_manager = controller_manager
        self._controller_manager: KubeControllerManager | None = None
        self.port = 0
        self.etcd_port = 0
        self._etcd_peer = ""
        self._restores = 0
        self.token = ""
        self.limited_token = ""
        self.ca_pem = b""

    def __repr__(self) -> str:
        return f"KubeApiServer(url={self.url!r}, dir={str(self._dir)!r})"

    @property
    def url(self) -> str:
        """The server's base URL."""
        return f"https://127.0.0.1:{self.port}"

    @property
    def etcd_url(self) -> str:
        """etcd's client URL."""
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def directory(self) -> Path:
        """The temp dir holding logs, data, certificates and the kubeconfig."""
        if self._dir is None:
            raise LaunchError("the server is not started")
        return self._dir

    @property
    def kubeconfig(self) -> Path:
        """The kubeconfig file (token + embedded CA)."""
        return self.directory / "kubeconfig"

    @property
    def binaries(self) -> Binaries:
        """The executables in use (provisioned on first access)."""
        if self._binaries is None:
            self._binaries = provision(version=selected_version())
        return self._binaries

    def pids(self) -> dict[str, int]:
        """Return ``{name: pid}`` of the running children (etcd, kube-apiserver, schedulers,
        kube-controller-manager)."""
        manager = self._controller_manager.child if self._controller_manager else None
        children = [self._etcd, self._apiserver, manager, *(s.child for s in self._schedulers)]
        return {c.name: c.pid for c in children if c is not None and c.alive()}

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> Self:
        """Start etcd and kube-apiserver; return when ``/readyz`` answers ``ok``.

        Raises
        ------
        LaunchError
            When a process exits or is not ready in time (the message has its log tail).
        """
        if self._dir is not None:
            raise LaunchError("the server is already started")
        binaries = self.binaries
        started = time.monotonic()
        self._dir = Path(tempfile.mkdtemp(prefix="asched-kube-apiserver-"))
        try:
            self._prepare_files()
            self._start_etcd(binaries)
            self._start_apiserver(binaries)
            if self._with_controller_manager:
                self.ensure_controller_manager()
        except BaseException:
            self.stop()
            raise
        logger.info(
            "kube-apiserver %s ready at %s in %.1f s (dir %s)",
            self.binaries.version,
            self.url,
            time.monotonic() - started,
            self._dir,
        )
        return self

    def stop(self) -> None:
        """Stop schedulers, kube-controller-manager, kube-apiserver and etcd by PID; remove the
        temp dir. Idempotent."""
        for scheduler in self._schedulers:
            scheduler.stop()
        self._schedulers.clear()
        if self._controller_manager is not None:
            self._controller_manager.stop()
        self._controller_manager = None
        for child in (self._apiserver, self._etcd):
            if child is not None:
                child.stop()
        self._apiserver = self._etcd = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            logger.info("kube-apiserver at %s stopped", self.url)
        self._dir = None

    def restart_apiserver(self) -> None:
        """Restart kube-apiserver on the same port, keeping etcd (and so all objects).

        The watch caches start empty at the current revision, so every resourceVersion issued
        before the restart becomes too old: the way to provoke 410 Gone on demand.
        """
        if self._apiserver is None:
            raise LaunchError("the server is not started")
        self._apiserver.stop()
        self._start_apiserver(self.binaries)

    def snapshot_etcd(self, path: Path) -> int:
        """Save an etcd snapshot (a backup, as an operator takes one) to ``path``; return the
        revision it holds."""
        revision = self.etcd_revision()
        self._etcdctl("snapshot", "save", str(path))
        return revision

    def restore_etcd(self, path: Path) -> None:
        """Roll the cluster back to a snapshot of :meth:`snapshot_etcd`, as an operator
        restores a backup: stop kube-apiserver and etcd, restore the snapshot into a new
        data directory (``etcdutl snapshot restore``, no revision bump: resourceVersions go
        back to the snapshot's), start etcd on it and kube-apiserver on the same port.

        Clients watching from a later resourceVersion must notice and relist; kube-apiserver
        itself does not tell them (see :mod:`asched.api.watch`).
        """
        if self._apiserver is None or self._etcd is None:
            raise LaunchError("the server is not started")
        binaries = self.binaries
        self._apiserver.stop()
        self._etcd.stop()
        self._restores += 1
        data_dir = f"etcd-restored-{self._restores}"
        argv = [
            str(binaries.etcdutl),
            "snapshot",
            "restore",
            str(path),
            f"--data-dir={self.directory / data_dir}",
            "--name=asched",
            f"--initial-cluster=asched={self._etcd_peer}",
            f"--initial-advertise-peer-urls={self._etcd_peer}",
        ]
        result = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
        if result.returncode != 0:
            raise LaunchError(f"etcdutl snapshot restore failed: {result.stderr.strip()}")
        self._start_etcd(binaries, data_dir)
        self._start_apiserver(binaries)

    def etcd_revision(self) -> int:
        """Return etcd's current revision (what resourceVersions are made of)."""
        out = self._etcdctl("endpoint", "status", "--write-out=json")
        status: list[dict[str, Any]] = json.loads(out)
        return int(status[0]["Status"]["header"]["revision"])

    def compact_etcd(self) -> int:
        """Compact etcd's history up to its current revision and return that revision.

        Watches that are served by etcd rather than a watch cache then answer 410 for any
        older resourceVersion.
        """
        revision = self.etcd_revision()
        self._etcdctl("compact", str(revision), "--physical")
        return revision

    def start_scheduler(
        self, config: Path | dict[str, Any] | None = None, *, verbosity: int = 0
    ) -> KubeScheduler:
        """Start kube-scheduler (the provisioned version) against this server; wait until healthy.

        Parameters
        ----------
        config : Path or dict, optional
            A KubeSchedulerConfiguration (file or mapping). Its ``clientConnection.kubeconfig``
            and ``leaderElection.leaderElect`` are set for this server; without a config the
            default profile is used (``kubescheduler.config.k8s.io/v1``).
        """
        scheduler = KubeScheduler(
            binary=self.binaries.kube_scheduler,
            kubeconfig=self.kubeconfig,
            workdir=Path(tempfile.mkdtemp(prefix="scheduler-", dir=self.directory)),
            config=config,
            verbosity=verbosity,
            die_with_parent=self._die_with_parent,
        )
        self._schedulers.append(scheduler)
        scheduler.start(timeout=self._ready_timeout)
        return scheduler

    @property
    def controller_manager(self) -> KubeControllerManager | None:
        """The running kube-controller-manager, or None when none was started."""
        return self._controller_manager

    def ensure_controller_manager(self, *, verbosity: int = 0) -> KubeControllerManager:
        """Start kube-controller-manager against this server unless it already runs.

        It runs the PV controller and the PV/claim protection controllers
        (:data:`~asched.tools.backends.controller_manager.CONTROLLERS`) until :meth:`stop`; a second
        call returns the running one (and restarts it if it died). Blocks until its
        ``/healthz`` answers ``ok`` (well under a second).

        Raises
        ------
        LaunchError
            When the server is not started, or the controller manager exits or is not healthy
            in time (the message has its log tail).
        """
        directory = self.directory
        manager = self._controller_manager
        if manager is not None and manager.alive():
            return manager
        if manager is not None:
            logger.warning(
                "kube-controller-manager exited; starting it again (log %s)", manager.log
            )
            manager.stop()
        manager = KubeControllerManager(
            binary=self.binaries.kube_controller_manager,
            kubeconfig=self.kubeconfig,
            workdir=directory,
            verbosity=verbosity,
            die_with_parent=self._die_with_parent,
        )
        self._controller_manager = manager
        manager.start(timeout=self._ready_timeout)
        return manager

    def stop_controller_manager(self) -> None:
        """Stop kube-controller-manager if it runs (the server goes on). Idempotent."""
        if self._controller_manager is not None:
            self._controller_manager.stop()
        self._controller_manager = None

    def _prepare_files(self) -> None:
        directory = self.directory
        self.token = secrets.token_hex(24)
        self.limited_token = secrets.token_hex(24)
        tokens = directory / "tokens.csv"
        tokens.write_text(
            f"{self.token},admin,admin,system:masters\n"
            f"{self.limited_token},{LIMITED_USER},{LIMITED_USER}\n"
        )
        tokens.chmod(0o600)
        (directory / "certs").mkdir()
        result = subprocess.run(
            ["openssl", "genrsa", "-out", str(directory / "sa.key"), "2048"],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise LaunchError(f"openssl genrsa failed: {result.stderr.strip()}")
        self.etcd_port = free_port()
        self.port = free_port()

    def _start_etcd(self, binaries: Binaries, data_dir: str = "etcd") -> None:
        directory = self.directory
        if not self._etcd_peer:
            self._etcd_peer = f"http://127.0.0.1:{free_port()}"
        peer = self._etcd_peer
        argv = [
            str(binaries.etcd),
            "--name=asched",
            f"--data-dir={directory / data_dir}",
            f"--listen-client-urls={self.etcd_url}",
            f"--advertise-client-urls={self.etcd_url}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=asched={peer}",
            "--log-level=warn",
        ]
        self._etcd = Child(
            "etcd", argv, directory / "etcd.log", die_with_parent=self._die_with_parent
        )
        self._etcd.wait_until(self._etcd_healthy, timeout=self._ready_timeout, what="healthy")

    def _etcd_healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as response:
                return bool(json.loads(response.read()).get("health") == "true")
        except (OSError, ValueError):
            return False

    def _start_apiserver(self, binaries: Binaries) -> None:
        directory = self.directory
        argv = [
            str(binaries.kube_apiserver),
            f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            # 127.0.0.1 is not a valid Endpoints address; there is no Service traffic anyway.
            "--endpoint-reconciler-type=none",
            f"--secure-port={self.port}",
            f"--cert-dir={directory / 'certs'}",
            f"--token-auth-file={directory / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            f"--service-account-key-file={directory / 'sa.key'}",
            f"--service-account-signing-key-file={directory / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
            f"--disable-admission-plugins={DISABLED_ADMISSION_PLUGINS}",
            "--enable-priority-and-fairness=false",
            *self._gate_flags(binaries.version),
            "--anonymous-auth=false",  # no token is 401, not 403 for system:anonymous
            "--profiling=false",
            f"--v={self._verbosity}",
            *self._extra_args,
        ]
        self._apiserver = Child(
            "kube-apiserver",
            argv,
            directory / "kube-apiserver.log",
            die_with_parent=self._die_with_parent,
        )
        certificate = directory / "certs" / "apiserver.crt"
        self._apiserver.wait_until(
            certificate.is_file, timeout=self._ready_timeout, what="writing its certificate"
        )
        self._apiserver.wait_until(self._cert_complete, timeout=10, what="writing its certificate")
        self.ca_pem = certificate.read_bytes()
        write_kubeconfig(self.kubeconfig, server=self.url, ca_pem=self.ca_pem, token=self.token)
        context = ssl.create_default_context(cadata=self.ca_pem.decode("ascii"))
        self._apiserver.wait_until(
            lambda: self._readyz(context), timeout=self._ready_timeout, what="ready (/readyz)"
        )

    @staticmethod
    def _gate_flags(version: str) -> list[str]:
        """The feature-gate and runtime-config flags for ``version`` (none before v1.37)."""
        if minor_of(version) < minor_of(KUBERNETES_VERSION):
            return []
        return [
            f"--feature-gates={gates_flag(FEATURE_GATES)}",
            "--runtime-config=" + ",".join(RUNTIME_CONFIG),
        ]

    def _cert_complete(self) -> bool:
        text = (self.directory / "certs" / "apiserver.crt").read_text(errors="replace")
        return text.count("-----END CERTIFICATE-----") >= 2

    def _readyz(self, context: ssl.SSLContext) -> bool:
        request = urllib.request.Request(
            f"{self.url}/readyz", headers={"Authorization": f"Bearer {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5, context=context) as response:
                return bool(response.status == 200)
        except urllib.error.HTTPError:
            return False
        except (OSError, ssl.SSLError):
            return False

    def _etcdctl(self, *args: str) -> str:
        env = {**os.environ, "ETCDCTL_API": "3"}
        argv = [str(self.binaries.etcdctl), f"--endpoints={self.etcd_url}", *args]
        result = subprocess.run(
            argv, capture_output=True, text=True, env=env, check=False, timeout=60
        )
        if result.returncode != 0:
            raise LaunchError(f"etcdctl {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout
