"""Exceptions of the test backends (provisioning and launching a genuine kube-apiserver).

They extend the project tree in :mod:`asched.errors` without editing it::

    AschedError
    ├── BackendError                  a test backend could not be provisioned or started
    │   ├── ProvisionError            a build step failed (names the step, carries the log tail)
    │   └── LaunchError               etcd, kube-apiserver or kube-scheduler did not come up
    └── ApiError
        └── StatusError               a non-2xx answer, with the Status body's reason and message

:class:`StatusError` keeps the whole decoded ``Status`` body (``body``) so a test can assert on
``details`` or ``code`` without a second request.
"""

from __future__ import annotations

from typing import Any

from asched.errors import ApiError, AschedError


class BackendError(AschedError):
    """A test backend could not be provisioned or started."""


class ProvisionError(BackendError):
    """A provisioning step failed.

    Attributes
    ----------
    step : str
        The step that failed, e.g. ``"make kube-apiserver kube-scheduler"``.
    log_tail : str
        The last lines of that step's output (the build log), for the message.
    """

    def __init__(self, step: str, message: str, log_tail: str = "") -> None:
        self.step = step
        self.log_tail = log_tail
        text = f"provisioning step {step!r} failed: {message}"
        if log_tail:
            text += "\n--- last lines of the log ---\n" + log_tail
        super().__init__(text)


class LaunchError(BackendError):
    """A server process did not start, exited early or never became ready."""


class StatusError(ApiError):
    """The API server answered a request with a non-2xx status.

    Attributes
    ----------
    status : int
        The HTTP status code (also ``body["code"]`` when the body is a Status).
    reason : str
        The Status ``reason`` (``"NotFound"``, ``"Conflict"``, ``"Expired"``...), or the HTTP
        reason phrase when the body is not a Status.
    message : str
        The Status ``message``.
    body : dict
        The decoded body (empty when it was not JSON).
    """

    def __init__(self, status: int, reason: str, message: str, body: dict[str, Any]) -> None:
        super().__init__(status, reason, message)
        self.message = message
        self.body = body
