"""The runners of :class:`~asched.framework.runtime.Framework` once a node is chosen (a mixin).

Reserve and Unreserve, Permit, PreBind, Bind and PostBind: each runs once per pod with
the chosen node's name (no rows), in the profile's order (Unreserve in reverse), and each
is timed through :attr:`BindPhaseRuns.observe`
(``asched_framework_extension_point_duration_seconds``) by :meth:`BindPhaseRuns.timed`,
which the other timed points (PostFilter, the engine's) share. Separate from the
decision's runners: nothing here looks at the node table.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from asched.cluster.records import PodInfo
from asched.framework.contain import failed, tagged
from asched.framework.cycle_state import CycleState
from asched.framework.interface import (
    BindPlugin,
    PermitPlugin,
    PostBindPlugin,
    PreBindPlugin,
    ReservePlugin,
)
from asched.framework.status import Code, Status


class BindPhaseRuns:
    """Reserve to PostBind, and the timing of a point, over the attributes declared here
    (the Framework builds them, :mod:`asched.framework.plugin_lists`)."""

    reserve: list[ReservePlugin]
    permit: list[PermitPlugin]
    pre_bind: list[PreBindPlugin]
    bind: list[BindPlugin]
    post_bind: list[PostBindPlugin]
    #: ``observe(extension_point, status, seconds)`` for metrics; None = not timed.
    observe: Callable[[str, str, float], None] | None

    def timed(self, point: str, status: Status, started: float) -> None:
        """Record one run of ``point`` that began at ``started`` (``perf_counter``)."""
        if self.observe is not None:
            self.observe(point, status.code.upstream_name, time.perf_counter() - started)

    def run_reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        """Reserve in order; the first failure (tagged with its plugin) stops it."""
        started = time.perf_counter()
        status = Status.success()
        for plugin in self.reserve:
            try:
                answer = plugin.reserve(state, pod, node)
            except Exception as exc:
                answer = failed(pod, "Reserve", exc, plugin.name)
            if not answer.ok:
                status = tagged(answer, plugin.name)
                break
        self.timed("Reserve", status, started)
        return status

    def run_unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        """Unreserve in reverse order; every plugin runs, whatever the others do."""
        started = time.perf_counter()
        for plugin in reversed(self.reserve):
            try:
                plugin.unreserve(state, pod, node)
            except Exception as exc:  # the others still run: the rollback must complete
                failed(pod, "Unreserve", exc, plugin.name)
        self.timed("Unreserve", Status.success(), started)

    def run_permit(
        self, state: CycleState, pod: PodInfo, node: str
    ) -> tuple[Status, dict[str, float]]:
        """Permit: a rejection (tagged) ends it; Wait answers collect ``plugin -> timeout``."""
        started = time.perf_counter()
        waits: dict[str, float] = {}
        status = Status.success()
        for plugin in self.permit:
            try:
                verdict, timeout = plugin.permit(state, pod, node)
            except Exception as exc:
                verdict, timeout = failed(pod, "Permit", exc, plugin.name), 0.0
            if verdict.code == Code.WAIT:
                waits[plugin.name] = timeout
            elif not verdict.ok:
                status, waits = tagged(verdict, plugin.name), {}
                break
        self.timed("Permit", Status.wait() if waits else status, started)
        return status, waits

    async def run_pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        """PreBind in order (awaited in the binding task); the first failure stops it."""
        started = time.perf_counter()
        status = Status.success()
        for plugin in self.pre_bind:
            try:
                answer = await plugin.pre_bind(state, pod, node)
            except Exception as exc:
                answer = failed(pod, "PreBind", exc, plugin.name)
            if not answer.ok:
                status = tagged(answer, plugin.name)
                break
        self.timed("PreBind", status, started)
        return status

    async def run_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        """Bind plugins in order until one does not Skip; an error if all skip."""
        started = time.perf_counter()
        for plugin in self.bind:
            try:
                answer = await plugin.bind(state, pod, node)
            except Exception as exc:
                answer = failed(pod, "Bind", exc, plugin.name)
            if answer.code != Code.SKIP:
                status = tagged(answer, plugin.name)
                break
        else:  # (built only then: this runs for every bound pod)
            status = Status.error("no bind plugin bound the pod")
        self.timed("Bind", status, started)
        return status

    def run_post_bind(self, state: CycleState, pod: PodInfo, node: str) -> None:
        """PostBind: informational; a failure is contained and changes nothing."""
        started = time.perf_counter()
        for plugin in self.post_bind:
            try:
                plugin.post_bind(state, pod, node)
            except Exception as exc:  # informational: contained, changes nothing
                failed(pod, "PostBind", exc, plugin.name)
        self.timed("PostBind", Status.success(), started)
