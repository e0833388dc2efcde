"""Child processes owned by a launcher: start with a log file, wait for readiness, stop by PID.

Why a module of its own: etcd, kube-apiserver, kube-scheduler and the simulator are all started
and stopped the same way, and the stopping must be right every time (tests assert that nothing is
left behind).

Invariants:

- Every child gets its own session (``start_new_session``), so a Ctrl-C in the terminal reaches
  only the launcher, which then stops the children in order.
- With ``die_with_parent`` (the default) the kernel sends SIGTERM to the child when the *thread*
  that started it exits (``PR_SET_PDEATHSIG``): a SIGKILLed pytest leaves no servers behind.
  Start long-lived servers from the main thread (or another thread that outlives them).
- :meth:`Child.stop` sends SIGTERM to the PID, waits, then SIGKILLs; it is idempotent.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from asched.tools.backends.errors import LaunchError

logger = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1
_LOG_TAIL_LINES = 30


def _die_with_parent() -> None:  # pragma: no cover - runs in the forked child
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class Child:
    """One child process whose stdout and stderr go to ``log``.

    Parameters
    ----------
    name : str
        A short name for messages (``"etcd"``, ``"kube-apiserver"``).
    argv : sequence of str
        The command line.
    log : Path
        File receiving the child's stdout and stderr (appended).
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log: Path,
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        die_with_parent: bool = True,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log = log
        with log.open("ab") as out:
            try:
                self._proc = subprocess.Popen(
                    self.argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=dict(env) if env is not None else None,
                    cwd=cwd,
                    start_new_session=True,
                    preexec_fn=_die_with_parent if die_with_parent else None,
                )
            except OSError as exc:
                raise LaunchError(f"cannot start {name} ({self.argv[0]}): {exc}") from exc
        logger.debug("started %s (pid %d): %s", name, self._proc.pid, " ".join(self.argv))

    @property
    def pid(self) -> int:
        """The process id."""
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit status, or None while the process runs."""
        return self._proc.poll()

    def alive(self) -> bool:
        """Return True while the process has not exited."""
        return self._proc.poll() is None

    def log_tail(self, lines: int = _LOG_TAIL_LINES) -> str:
        """Return the last ``lines`` lines of the log."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def failure(self, what: str) -> LaunchError:
        """Build a LaunchError naming this child, its exit status and its log tail."""
        status = self.returncode
        state = "is running" if status is None else f"exited with status {status}"
        return LaunchError(
            f"{self.name} {what} ({state}, pid {self.pid}, log {self.log})\n"
            f"--- last lines of the log ---\n{self.log_tail()}"
        )

    def wait_until(self, ready: Callable[[], bool], *, timeout: float, what: str) -> None:
        """Poll ``ready()`` every 50-250 ms until it is true, the child dies or time runs out.

        Raises
        ------
        LaunchError
            When the child exits first or ``timeout`` seconds pass.
        """
        deadline = time.monotonic() + timeout
        delay = 0.05
        while True:
            if not self.alive():
                raise self.failure(f"exited before {what}")
            if ready():
                return
            if time.monotonic() > deadline:
                raise self.failure(f"not {what} after {timeout:.0f} s")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.25)

    def stop(self, timeout: float = 15.0) -> None:
        """Send SIGTERM; after ``timeout`` seconds, SIGKILL. Idempotent."""
        if self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                logger.warning("%s (pid %d) ignored SIGTERM; killing it", self.name, self.pid)
                os.kill(self._proc.pid, signal.SIGKILL)
                self._proc.wait()
        logger.debug("%s (pid %d) stopped with status %s", self.name, self.pid, self.returncode)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def probe_healthz(url: str) -> bool:
    """Return True when a component's HTTPS ``/healthz`` answers ``ok``.

    The certificate is the component's own self-signed one, made at start: this probe only
    asks whether the process serves, so it does not verify it (no token is sent).
    """
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(url, timeout=2, context=context) as response:
            return bool(response.read().strip() == b"ok")
    except (OSError, urllib.error.URLError):
        return False
