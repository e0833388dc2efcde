"""The exception tree of asched.

Expected scheduling outcomes are :class:`asched.framework.status.Status` values, never
exceptions. Exceptions are for bad input, bugs and infrastructure failures::

    AschedError
    ├── InputError                  bad input at a boundary; names the source, object and field
    │   ├── DocumentError           a document's problems, all at once (the tooling's workload
    │   │   │                       and scheduler_perf files subclass it too)
    │   │   └── ConfigError         a KubeSchedulerConfiguration with one or more field errors
    │   ├── DecodeError             a Kubernetes object that cannot be decoded (bad quantity, ...)
    │   └── PluginLoadError         a plugin that cannot be loaded (declaration, API version)
    ├── PluginContractError         a plugin returned an array of the wrong shape, dtype or range
    ├── ExtenderError               a scheduler extender's call failed or its answer is unusable
    ├── ApiError                    the Kubernetes API answered with an unexpected status
    │   ├── ApiUnavailable          no usable answer: refused, reset, DNS, TLS, timeout, not JSON
    │   ├── WatchExpired            410 Gone on a watch: relist
    │   └── BindConflict            409 on a binding: the pod already has a node
    └── LeadershipLost              this replica no longer holds the lease

Transport failures (aiohttp, OS, timeout and JSON errors) are mapped to
:class:`ApiUnavailable` inside :mod:`asched.api.client`, at every public method and while a
watch stream is read; nothing above ``asched.api`` catches a transport library's errors.
``asyncio.CancelledError`` is never mapped.

Retrying: :data:`RETRYABLE` is the one rule, used by every caller that retries (the
reflector, the leader elector, discovery). Every :class:`ApiError` is retryable after a
backoff: the transport branch and 429/5xx obviously, and the other 4xx too, because a
reflector or an elector that gives up on a 401/403 turns an RBAC or token fix into a
restart (client-go's reflector and elector retry them as well). Callers that must act on
a particular status (410 relists, 409 on a binding) catch that subclass first. Anything
that is not an :class:`ApiError` (a bug, bad input) is not retried.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final


class AschedError(Exception):
    """Base class of every exception asched raises on purpose."""


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem with one field.

    Attributes
    ----------
    path : str
        The field path in the document, e.g. ``profiles[0].pluginConfig[1].args.shape``.
    message : str
        What is wrong, naming the offending value where useful.
    """

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class InputError(AschedError):
    """Bad input at a boundary (a file, an API object, a flag)."""


class DocumentError(InputError):
    """A document with one or more problems, all reported at once, one line each:
    ``<source>: invalid <what>:`` then the problems, indented. Subclasses name the kind
    of document (:attr:`WHAT`)."""

    #: what the document is, in the first line
    WHAT: str = "document"

    def __init__(self, problems: Sequence[FieldError | str], source: str = "") -> None:
        self.source = source
        where = f"{source}: " if source else ""
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"{where}invalid {self.WHAT}:\n{lines}")


class ConfigError(DocumentError):
    """A configuration document with one or more field errors, all reported at once."""

    WHAT = "KubeSchedulerConfiguration"

    def __init__(self, errors: list[FieldError], source: str = "") -> None:
        self.errors = list(errors)
        super().__init__(self.errors, source)


class DecodeError(InputError):
    """A Kubernetes object that cannot be decoded.

    The message names the object (``Pod default/web-1``), the field path and the value.
    """

    def __init__(self, obj: str, path: str, message: str) -> None:
        self.obj = obj
        self.path = path
        self.message = message
        super().__init__(f"{obj}: {path}: {message}" if path else f"{obj}: {message}")


class PluginLoadError(InputError):
    """A plugin that cannot be loaded: a bad declaration, an incompatible plugin API
    version, or an entry point that does not import. The message names the plugin."""


class PluginContractError(AschedError):
    """A plugin broke the framework's array contract (shape, dtype or score range)."""

    def __init__(self, plugin: str, what: str) -> None:
        self.plugin = plugin
        super().__init__(f"plugin {plugin!r} {what}")


class ExtenderError(AschedError):
    """A call to a scheduler extender failed, or its answer cannot be used.

    Raised by :mod:`asched.extenders.client` (refused or reset connection, TLS failure, no
    answer within ``httpTimeout``, a status other than 200, a body that is not JSON) and
    by :mod:`asched.extenders.protocol` (an answer of the wrong shape, a node
    name that was not sent, the extender's own ``Error`` text). Not retryable by itself:
    the scheduling attempt fails (or skips the extender when it is ``ignorable``) and
    the pod is retried with backoff, as upstream does.

    Attributes
    ----------
    url : str
        The full URL that was called (``urlPrefix`` + ``/`` + verb).
    verb : str
        The verb called (``filter``, ``prioritize``, ``preempt``, ``bind`` or as
        configured).
    detail : str
        What went wrong, one line; the extender's own ``Error`` text verbatim when that is
        the cause.
    """

    def __init__(self, url: str, verb: str, detail: str) -> None:
        self.url = url
        self.verb = verb
        self.detail = detail
        super().__init__(f"extender {verb} call to {url} failed: {detail}")


class ApiError(AschedError):
    """The Kubernetes API answered with an unexpected status."""

    def __init__(self, status: int, reason: str, message: str = "") -> None:
        self.status = status
        self.reason = reason
        super().__init__(f"{status} {reason}: {message}" if message else f"{status} {reason}")


class ApiUnavailable(ApiError):
    """No usable answer from the API server: the request or the response failed in transport.

    Connection refused or reset, a name that does not resolve, a TLS verification failure,
    a timeout, a server that closed the connection mid-response, or a body that is not
    JSON where JSON was expected. ``status`` is 0 (no status was received, or the one
    received is not to be trusted) and ``reason`` is ``"Unavailable"``.

    Attributes
    ----------
    method, path, host : str
        What failed: ``GET``, ``/api/v1/pods`` (no query), ``https://10.0.0.1:6443``.
    cause : str
        The underlying failure as one line, e.g. ``ClientConnectorError: Cannot connect...``;
        never a credential.
    """

    def __init__(self, method: str, path: str, host: str, cause: str) -> None:
        self.status = 0
        self.reason = "Unavailable"
        self.method = method
        self.path = path
        self.host = host
        self.cause = cause
        AschedError.__init__(self, f"{method} {path} on {host}: {cause}")


class WatchExpired(ApiError):
    """A watch's resourceVersion is older than the server's history (410 Gone)."""


class BindConflict(ApiError):
    """The pod already has a node (409 Conflict on the binding)."""


class LeadershipLost(AschedError):
    """This replica lost (or never held) the leader lease."""


#: The exceptions worth retrying after a backoff (see the module docstring): use it as
#: ``except RETRYABLE``; a caller's own deadline (``asyncio.timeout``) is its own concern.
RETRYABLE: Final[tuple[type[AschedError], ...]] = (ApiError,)
