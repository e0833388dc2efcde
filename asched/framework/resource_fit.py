"""NodeResourcesFit's fit and reasons, in one place for every caller.

Upstream: pkg/scheduler/framework/plugins/noderesources/fit.go, fitsRequest.

A :class:`ResourceNeed` is what a pod asks of a node: room for one more pod, then per
checked resource its request (in the table's units), in upstream's reason order (cpu,
memory, ephemeral-storage, then scalar resources sorted by name). Given the free
amounts per axis over some positions (the table's rows; a preemption's visiting
positions; either with what nominated pods hold already taken off), it answers which
positions fit, the reasons each one does not, and one shared Status per distinct set
of reasons (a full cluster has thousands of rejected rows short of the same things).

Callers: the NodeResourcesFit plugin (Filter, explain), the nominated-pods pass of
:class:`~asched.engine.algorithm.Algorithm`, and preemption's vectorised search
(:mod:`asched.framework.preemption`, :mod:`asched.framework.builtin.default_preemption`).
They find the plugin through the declared capability
:class:`~asched.framework.interface.ResourceFit`, not by its name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows
from asched.cluster.records import PodInfo
from asched.cluster.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS
from asched.cluster.table import NodeTable
from asched.framework.diagnosis import TOO_MANY_PODS
from asched.framework.status import Status

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class Columns(Protocol):
    """Free amounts by axis: the table's ``free`` list, or a dict of the axes used."""

    def __getitem__(self, axis: int, /) -> IntArray: ...


def _at(column: IntArray, rows: Rows | None) -> IntArray:
    return column if rows is None else column[rows]


_FIRST: Final = (CPU, MEMORY, EPHEMERAL_STORAGE)


@dataclass(frozen=True, slots=True)
class Check:
    """One resource the filter compares: its column (None: no node has it) and the request."""

    resource: str
    axis: int | None
    request: int


def resource_checks(
    pod: PodInfo, table: NodeTable, ignores: Callable[[str], bool]
) -> tuple[Check, ...]:
    """The resources ``pod`` requests (> 0; v1.31+ compares no zero request), in reason
    order; ``pods`` is not among them (:class:`ResourceNeed` adds it) and neither is a
    scalar resource ``ignores`` (ignoredResources / ignoredResourceGroups)."""
    wanted = [r for r in _FIRST if pod.requests.get(r, 0) > 0]
    wanted += sorted(
        r
        for r, amount in pod.requests.items()
        if r not in _FIRST and r != PODS and amount > 0 and not ignores(r)
    )
    return tuple(Check(r, table.axis_index.get(r), pod.requests[r]) for r in wanted)


@dataclass(frozen=True, slots=True)
class ResourceNeed:
    """One more pod on ``pods_axis``, then ``checks``, in reason order."""

    pods_axis: int
    checks: tuple[Check, ...]

    @classmethod
    def of(cls, table: NodeTable, checks: Iterable[Check]) -> ResourceNeed:
        return cls(table.axis_index[PODS], tuple(checks))

    @property
    def axes(self) -> tuple[int, ...]:
        """The pods axis, then the checked axes that exist."""
        return (self.pods_axis, *(c.axis for c in self.checks if c.axis is not None))

    @property
    def requests(self) -> tuple[int, ...]:
        """What :attr:`axes` need: 1 pod, then each request."""
        return (1, *(c.request for c in self.checks if c.axis is not None))

    @property
    def impossible(self) -> bool:
        """A requested resource no node has: the pod fits nowhere."""
        return any(c.axis is None for c in self.checks)

    def fits(self, free: Columns, n: int, rows: Rows | None = None) -> BoolArray:
        """Per position (``n`` of them), whether the pod fits; equality fits. The free
        amounts are ``free[axis]``, or ``free[axis][rows]`` when ``rows`` is given."""
        # the Filter's hot path: no helper call per axis
        pods = free[self.pods_axis]
        fits: BoolArray = (pods if rows is None else pods[rows]) >= 1
        for check in self.checks:
            if check.axis is None:
                return np.zeros(n, dtype=np.bool_)
            column = free[check.axis]
            fits &= (column if rows is None else column[rows]) >= check.request
        return fits

    def pattern(self, free: Columns, n: int, rows: Rows | None = None) -> IntArray:
        """Per position, a code of what is short: bit 0 the pod count, bit ``i`` check
        ``i - 1``; 0 means the pod fits. Decoded by :meth:`reasons_of`."""
        code: IntArray = (_at(free[self.pods_axis], rows) < 1).astype(np.int64)
        for bit, check in enumerate(self.checks, start=1):
            if check.axis is None:
                lacking = np.ones(n, dtype=np.bool_)
            else:
                lacking = _at(free[check.axis], rows) < check.request
            code |= lacking.astype(np.int64) << bit
        return code

    def reasons_of(self, code: int) -> list[str]:
        """The reasons a :meth:`pattern` code stands for, in upstream's order."""
        out = [TOO_MANY_PODS] if code & 1 else []
        out += [
            f"Insufficient {check.resource}"
            for bit, check in enumerate(self.checks, start=1)
            if code >> bit & 1
        ]
        return out

    def reasons(self, free: Columns, at: int) -> list[str]:
        """The reasons at position ``at`` (``free[axis][at]``); empty when the pod fits."""
        out = [TOO_MANY_PODS] if free[self.pods_axis][at] < 1 else []
        out += [
            f"Insufficient {check.resource}"
            for check in self.checks
            if check.axis is None or free[check.axis][at] < check.request
        ]
        return out

    def statuses(self, codes: IntArray, plugin: str) -> list[Status]:
        """One Status per position from its :meth:`pattern` code: Unschedulable with the
        reasons, Success for 0; positions with the same code share one Status object."""
        shared: dict[int, Status] = {}
        out = []
        for code in codes.tolist():
            status = shared.get(code)
            if status is None:
                reasons = self.reasons_of(code)
                status = shared[code] = (
                    Status.unschedulable(*reasons, plugin=plugin) if reasons else Status.success()
                )
            out.append(status)
        return out
