"""Run the simulated API server (``python -m asched sim``) as a child process.

Why a subprocess and not an in-process aiohttp app: the tests then talk to the simulator exactly
as they talk to the genuine kube-apiserver (a kubeconfig, a TCP port, a token), the simulator's
event loop never competes with the test's, and stopping it is the same SIGTERM by PID.

The simulator's CLI contract: ``python -m asched sim --nodes 0 --port 0 --kubeconfig-out FILE
[--token T] (--tls | --plain-http)`` listens first, then atomically writes a kubeconfig with the
real port to FILE; SIGTERM stops it. :class:`SimServer` waits for the file, then for
``GET /version``. The transport is always chosen explicitly: ``asched sim`` serves HTTPS by
default once it writes a kubeconfig (for kubectl), and the harness's loopback clients keep
plain HTTP unless a test asks for TLS.

This module never imports :mod:`asched.tools.sim`.
"""

from __future__ import annotations

import logging
import secrets
import shutil
import ssl
import sys
import tempfile
import time
import types
import urllib.error
import urllib.request
from pathlib import Path
from typing import Self

from asched.tools.backends.errors import LaunchError
from asched.tools.backends.kubeconfig import KubeconfigEntry, read_kubeconfig
from asched.tools.backends.process import Child

logger = logging.getLogger(__name__)


class SimServer:
    """The simulator in a child process, with a generated token.

    Parameters
    ----------
    nodes : int
        ``--nodes`` (hollow nodes created at start; tests create their own, so 0).
    tls : bool
        Serve HTTPS (``--tls``) instead of plain HTTP (``--plain-http``, the default here).
    extra_args : tuple of str
        More ``asched sim`` flags.
    ready_timeout : float
        Seconds to wait for the kubeconfig file and ``/version``.
    """

    def __init__(
        self,
        *,
        nodes: int = 0,
        tls: bool = False,
        extra_args: tuple[str, ...] = (),
        ready_timeout: float = 30.0,
        log_level: str = "INFO",
        die_with_parent: bool = True,
    ) -> None:
        self._nodes = nodes
        self._tls = tls
        self._extra_args = extra_args
        self._ready_timeout = ready_timeout
        self._log_level = log_level
        self._die_with_parent = die_with_parent
        self._dir: Path | None = None
        self._child: Child | None = None
        self._entry: KubeconfigEntry | None = None
        self.token = ""

    def __repr__(self) -> str:
        return f"SimServer(url={self.url!r})"

    @property
    def directory(self) -> Path:
        """The temp dir holding the log and the kubeconfig."""
        if self._dir is None:
            raise LaunchError("the simulator is not started")
        return self._dir

    @property
    def kubeconfig(self) -> Path:
        """The kubeconfig the simulator wrote."""
        return self.directory / "kubeconfig"

    @property
    def url(self) -> str:
        """The server's base URL (empty before start)."""
        return self._entry.server if self._entry is not None else ""

    @property
    def log(self) -> Path:
        """The simulator's log file."""
        return self.directory / "sim.log"

    def pids(self) -> dict[str, int]:
        """Return ``{"sim": pid}`` while it runs."""
        child = self._child
        return {child.name: child.pid} if child is not None and child.alive() else {}

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
        """Start the simulator; return once ``GET /version`` answers 200."""
        if self._dir is not None:
            raise LaunchError("the simulator is already started")
        started = time.monotonic()
        self._dir = Path(tempfile.mkdtemp(prefix="asched-sim-"))
        self.token = secrets.token_hex(24)
        self._launch(port=0)
        logger.info("simulator ready at %s in %.1f s", self.url, time.monotonic() - started)
        return self

    def restart_fresh(self) -> None:
        """Stop the simulator and start an empty one on the same address, with the same
        token: the server's state is replaced, and its resourceVersions start again low
        (the simulator's form of an API server restored from an old backup).

        Plain HTTP only: over TLS the new process would have a new certificate, which
        clients holding the old CA rightly refuse.
        """
        if self._child is None or self._entry is None:
            raise LaunchError("the simulator is not started")
        if self._tls:
            raise LaunchError("restart_fresh keeps the address and token, not a TLS certificate")
        port = int(self._entry.server.rsplit(":", 1)[1])
        self._child.stop()
        self.kubeconfig.unlink(missing_ok=True)
        self._launch(port=port)

    def _launch(self, *, port: int) -> None:
        argv = [
            sys.executable,
            "-m",
            "asched",
            "--log-level",
            self._log_level,
            "sim",
            "--nodes",
            str(self._nodes),
            "--port",
            str(port),
            "--kubeconfig-out",
            str(self.kubeconfig),
            "--token",
            self.token,
            "--tls" if self._tls else "--plain-http",
            *self._extra_args,
        ]
        try:
            self._child = Child("sim", argv, self.log, die_with_parent=self._die_with_parent)
            self._child.wait_until(
                self.kubeconfig.is_file, timeout=self._ready_timeout, what="writing its kubeconfig"
            )
            self._entry = read_kubeconfig(self.kubeconfig)
            self._child.wait_until(
                self._version_answers, timeout=self._ready_timeout, what="answering GET /version"
            )
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the simulator by PID (SIGTERM, then SIGKILL); remove the temp dir."""
        if self._child is not None:
            self._child.stop()
            self._child = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _version_answers(self) -> bool:
        entry = self._entry
        if entry is None:
            return False
        context: ssl.SSLContext | None = None
        if entry.server.startswith("https://"):
            cadata = entry.ca_pem.decode("ascii") if entry.ca_pem else None
            context = ssl.create_default_context(cadata=cadata)
        headers = {"Authorization": f"Bearer {entry.token}"} if entry.token else {}
        request = urllib.request.Request(f"{entry.server}/version", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=2, context=context) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.URLError, ssl.SSLError):
            return False
