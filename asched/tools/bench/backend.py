"""The API server a benchmark runs against: the simulator, the genuine kube-apiserver, or
an existing cluster named by a kubeconfig.

The two servers we start are child processes (never imported: the benchmark talks to them
as any client would), so their CPU time can be read from ``/proc`` like the scheduler's.
An existing cluster is used as is; the benchmark then cleans up what it created.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Final, Literal, Self

from asched.errors import InputError
from asched.tools.backends.launcher import KubeApiServer
from asched.tools.backends.simulator import SimServer

BackendName = Literal["sim", "kube-apiserver", "existing"]
#: Watch history kept by the simulator: enough for the largest workload's events.
SIM_HISTORY: Final = 400_000


class Backend:
    """Start (or adopt) an API server; use as a context manager.

    Parameters
    ----------
    name : {"sim", "kube-apiserver", "existing"}
        Which server.
    kubeconfig : Path, optional
        Required for ``existing``.
    snapshot : Path, optional
        ``sim`` only: a ``kubectl get nodes,pods -A -o yaml`` export to start from.
    tls : bool
        ``sim`` only: serve HTTPS. kube-scheduler needs it: client-go does not send a
        bearer token over plain HTTP. Without it the simulator is started with an explicit
        ``--plain-http`` (its default with a kubeconfig is HTTPS), so asched's own loopback
        clients keep their speed.
    """

    def __init__(
        self,
        name: BackendName,
        *,
        kubeconfig: Path | None = None,
        snapshot: Path | None = None,
        tls: bool = False,
        controller_manager: bool = False,
    ) -> None:
        """``controller_manager``: on the genuine backend, also run kube-controller-manager's
        PV controller (a workload with unbound claims needs their bindings completed)."""
        if name == "existing" and kubeconfig is None:
            raise InputError("an existing cluster needs --kubeconfig")
        if snapshot is not None and name != "sim":
            raise InputError("--snapshot replays a cluster in the simulator: use --backend sim")
        if snapshot is not None and not snapshot.is_file():
            raise InputError(f"{snapshot}: no such snapshot file")
        self.name = name
        self.snapshot = snapshot
        self.tls = tls
        self.controller_manager = controller_manager
        self._kubeconfig = kubeconfig
        self._server: SimServer | KubeApiServer | None = None

    def __repr__(self) -> str:
        return f"Backend({self.name!r})"

    @property
    def kubeconfig(self) -> Path:
        """The kubeconfig clients use."""
        if self._server is not None:
            return self._server.kubeconfig
        if self._kubeconfig is None:
            raise InputError("the backend is not started")
        return self._kubeconfig

    @property
    def disposable(self) -> bool:
        """True when the server is ours and goes away at the end (no cleanup needed)."""
        return self.name != "existing"

    def pids(self) -> dict[str, int]:
        """``{process name: pid}`` of the server processes we started."""
        if isinstance(self._server, KubeApiServer):
            return {k: v for k, v in self._server.pids().items() if k in ("etcd", "kube-apiserver")}
        if self._server is not None:
            return self._server.pids()
        return {}

    def start(self) -> Self:
        """Start the server (returns once it answers)."""
        if self.name == "sim":
            extra: tuple[str, ...] = ("--history", str(SIM_HISTORY))
            if self.snapshot is not None:
                extra += ("--snapshot", str(self.snapshot))
            self._server = SimServer(tls=self.tls, extra_args=extra, log_level="WARNING").start()
        elif self.name == "kube-apiserver":
            self._server = KubeApiServer(controller_manager=self.controller_manager).start()
        return self

    def stop(self) -> None:
        """Stop a server we started (idempotent)."""
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        self.stop()
