"""Status codes and the Status value object.

Upstream: pkg/scheduler/framework/interface.go, Code.

An expected "no" is a Status, never an exception. What the queue does with each code:

* ``SUCCESS``: go on.
* ``ERROR``: an internal failure; the pod is retried with backoff and reported as an error.
* ``UNSCHEDULABLE``: the pod does not fit here now; preemption may help; retried after backoff
  or on a cluster event.
* ``UNSCHEDULABLE_AND_UNRESOLVABLE``: no change of pods on this node can help (preemption
  skips such nodes).
* ``WAIT``: a Permit plugin holds the pod; the binding cycle waits for allow/reject/timeout.
* ``SKIP``: a PreFilter/PreScore plugin has nothing to do for this pod; its Filter/Score is
  not run.
* ``PENDING``: the pod waits for something outside the scheduler (kept for parity).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Code(enum.IntEnum):
    """kube-scheduler's status codes, with upstream's numbering."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def upstream_name(self) -> str:
        """The CamelCase spelling kube-scheduler prints (``UnschedulableAndUnresolvable``).

        Spelled once per code (:data:`_UPSTREAM_NAMES`): every extension point's metric
        reads it."""
        return _UPSTREAM_NAMES[self]

    @property
    def rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)


#: ``Code.upstream_name`` by code
_UPSTREAM_NAMES: dict[Code, str] = {
    code: "".join(part.capitalize() for part in code.name.split("_")) for code in Code
}


@dataclass(frozen=True, slots=True)
class Status:
    """The outcome of one plugin call: a code, reasons and the plugin that produced it."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @classmethod
    def success(cls) -> Status:
        return _SUCCESS

    @classmethod
    def skip(cls) -> Status:
        return _SKIP

    @classmethod
    def unschedulable(cls, *reasons: str, plugin: str = "") -> Status:
        return cls(Code.UNSCHEDULABLE, reasons, plugin)

    @classmethod
    def unresolvable(cls, *reasons: str, plugin: str = "") -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)

    @classmethod
    def error(cls, message: str, plugin: str = "") -> Status:
        return cls(Code.ERROR, (message,), plugin)

    @classmethod
    def wait(cls, plugin: str = "") -> Status:
        return cls(Code.WAIT, (), plugin)

    @property
    def ok(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def message(self) -> str:
        """Reasons joined the way upstream's ``Status.Message()`` joins them."""
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        """This status attributed to ``plugin`` (the runtime tags statuses it collects)."""
        return Status(self.code, self.reasons, plugin)


_SUCCESS = Status(Code.SUCCESS)
_SKIP = Status(Code.SKIP)
