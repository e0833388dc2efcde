"""The exception tree of asched.

Expected scheduling outcomes are :class:`asched.framework.status.Status` values, never
exceptions. Exceptions are for bad input, bugs and infrastructure failures::

    AschedError
    ├── InputError                  bad input at a boundary; names the source, object and field
    │   ├── ConfigError             a KubeSchedulerConfiguration with one or more field errors
    │   └── DecodeError             a Kubernetes object that cannot be decoded (bad quantity, ...)
    ├── PluginContractError         a plugin returned an array of the wrong shape, dtype or range
    ├── ApiError                    the Kubernetes API answered with an unexpected status
    │   ├── WatchExpired            410 Gone on a watch: relist
    │   └── BindConflict            409 on a binding: the pod already has a node
    └── LeadershipLost              this replica no longer holds the lease
"""

from __future__ import annotations

from dataclasses import dataclass


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


class ConfigError(InputError):
    """A configuration document with one or more field errors, all reported at once."""

    def __init__(self, errors: list[FieldError], source: str = "") -> None:
        self.errors = list(errors)
        self.source = source
        where = f"{source}: " if source else ""
        lines = "\n".join(f"  {err}" for err in self.errors)
        super().__init__(f"{where}invalid KubeSchedulerConfiguration:\n{lines}")


class DecodeError(InputError):
    """A Kubernetes object that cannot be decoded.

    The message names the object (``Pod default/web-1``), the field path and the value.
    """

    def __init__(self, obj: str, path: str, message: str) -> None:
        self.obj = obj
        self.path = path
        self.message = message
        super().__init__(f"{obj}: {path}: {message}" if path else f"{obj}: {message}")


class PluginContractError(AschedError):
    """A plugin broke the framework's array contract (shape, dtype or score range)."""

    def __init__(self, plugin: str, what: str) -> None:
        self.plugin = plugin
        super().__init__(f"plugin {plugin!r} {what}")


class ApiError(AschedError):
    """The Kubernetes API answered with an unexpected status."""

    def __init__(self, status: int, reason: str, message: str = "") -> None:
        self.status = status
        self.reason = reason
        super().__init__(f"{status} {reason}: {message}" if message else f"{status} {reason}")


class WatchExpired(ApiError):
    """A watch's resourceVersion is older than the server's history (410 Gone)."""


class BindConflict(ApiError):
    """The pod already has a node (409 Conflict on the binding)."""


class LeadershipLost(AschedError):
    """This replica lost (or never held) the leader lease."""
