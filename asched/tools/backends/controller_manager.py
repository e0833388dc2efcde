"""Run the genuine kube-controller-manager beside kube-apiserver, for volume and claim tests.

Why: a bare kube-apiserver stores PersistentVolumes and claims but never binds them; binding
is the PV controller's job. Volume scheduling on the genuine backend needs that controller to
do what it does in a real cluster: bind pre-bound pairs and Immediate claims, and complete the
binding once the scheduler's PreBind has set a PV's ``claimRef``.

Only the controllers volume tests need run (:data:`CONTROLLERS`):

- ``persistentvolume-binder-controller``: the PV controller (binding, phases, the reclaim
  policy);
- ``persistentvolume-protection-controller`` and ``persistentvolumeclaim-protection-controller``:
  kube-apiserver's StorageObjectInUseProtection
  admission (on by default) puts ``kubernetes.io/pv-protection`` / ``kubernetes.io/pvc-protection``
  finalizers on every PV and claim; without these two controllers a deleted PV or claim would
  stay ``Terminating`` for the rest of the session.

The process uses the admin kubeconfig for everything (``--use-service-account-credentials``
off, so no token controller is needed) and no leader election. It serves only HTTPS (plain
HTTP went in 1.24): a self-signed certificate in its own ``--cert-dir``, on a free loopback
port, where ``/healthz`` is open to anyone (upstream's default always-allowed paths). Its log
goes to ``kube-controller-manager.log`` in its work directory.
"""

from __future__ import annotations

import logging
from pathlib import Path

from asched.tools.backends.process import Child, free_port, probe_healthz

logger = logging.getLogger(__name__)

#: The controllers started (``--controllers``); everything else stays off.
CONTROLLERS = (
    "persistentvolume-binder-controller",
    "persistentvolume-protection-controller",
    "persistentvolumeclaim-protection-controller",
)
#: The PV controller's periodic resync (``--pvclaimbinder-sync-period``, default 15 s). Watch
#: events drive it anyway; the resync only retries what failed (e.g. a write conflict).
SYNC_PERIOD = "5s"


class KubeControllerManager:
    """One kube-controller-manager process; started by
    :meth:`KubeApiServer.ensure_controller_manager`.

    Parameters
    ----------
    binary : Path
        The kube-controller-manager executable.
    kubeconfig : Path
        The admin kubeconfig of the API server.
    workdir : Path
        Directory for its log.
    verbosity : int
        Its ``--v``.
    die_with_parent : bool
        Kill it when the starting thread dies (see :mod:`asched.tools.backends.process`).

    Attributes
    ----------
    port : int
        The loopback port of its HTTPS ``/healthz``.
    """

    def __init__(
        self,
        *,
        binary: Path,
        kubeconfig: Path,
        workdir: Path,
        verbosity: int = 0,
        die_with_parent: bool = True,
    ) -> None:
        self._binary = binary
        self._kubeconfig = kubeconfig
        self._workdir = workdir
        self._verbosity = verbosity
        self._die_with_parent = die_with_parent
        self.port = free_port()
        self.child: Child | None = None

    @property
    def healthz_url(self) -> str:
        """The HTTPS health endpoint on loopback (self-signed: not verified, a probe only)."""
        return f"https://127.0.0.1:{self.port}/healthz"

    @property
    def log(self) -> Path:
        """The controller manager's log file."""
        return self._workdir / "kube-controller-manager.log"

    def argv(self) -> list[str]:
        """Return its command line."""
        return [
            str(self._binary),
            f"--kubeconfig={self._kubeconfig}",
            f"--authentication-kubeconfig={self._kubeconfig}",
            f"--authorization-kubeconfig={self._kubeconfig}",
            f"--controllers={','.join(CONTROLLERS)}",
            "--leader-elect=false",
            "--use-service-account-credentials=false",
            f"--pvclaimbinder-sync-period={SYNC_PERIOD}",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.port}",
            f"--cert-dir={self._workdir / 'kube-controller-manager-certs'}",
            "--profiling=false",
            f"--v={self._verbosity}",
        ]

    def start(self, *, timeout: float = 60.0) -> None:
        """Start the process and wait for ``/healthz`` to answer ``ok`` (timeout in seconds).

        Raises
        ------
        LaunchError
            When it exits first or is not healthy in time (the message has its log tail).
        """
        self.child = Child(
            "kube-controller-manager", self.argv(), self.log, die_with_parent=self._die_with_parent
        )
        self.child.wait_until(self._healthy, timeout=timeout, what="healthy (/healthz)")
        logger.info(
            "kube-controller-manager started (pid %d, controllers %s)",
            self.child.pid,
            ",".join(CONTROLLERS),
        )

    def alive(self) -> bool:
        """Return True while the process runs."""
        return self.child is not None and self.child.alive()

    def stop(self) -> None:
        """Stop the process by PID (SIGTERM, then SIGKILL). Idempotent."""
        if self.child is not None:
            self.child.stop()

    def _healthy(self) -> bool:
        return probe_healthz(self.healthz_url)
