"""Pods held at Permit: one future each, one timer per waiting plugin.

Upstream: pkg/scheduler/framework/runtime/waiting_pods_map.go, newWaitingPod.

``allow(plugin)`` clears that plugin; the pod is allowed once no plugin still waits.
``reject`` (from a plugin, a caller or a timer) resolves it at once. The first decision
wins: later calls are ignored, like upstream's buffered channel. Timeouts are capped at
15 minutes and run on the loop's clock (``call_later``), so tests use fake loop time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Final

from asched.framework.status import Status

MAX_TIMEOUT_SECONDS: Final = 15 * 60.0


class WaitingPod:
    """One pod waiting at Permit for ``plugins`` to allow it."""

    def __init__(self, key: str, uid: str, node: str, timeouts: dict[str, float]) -> None:
        loop = asyncio.get_running_loop()
        self.key = key
        self.uid = uid
        self.node = node
        self._future: asyncio.Future[Status] = loop.create_future()
        self._timers = {
            plugin: loop.call_later(
                min(timeout, MAX_TIMEOUT_SECONDS),
                self._expire,
                plugin,
                min(timeout, MAX_TIMEOUT_SECONDS),
            )
            for plugin, timeout in timeouts.items()
        }

    @property
    def pending_plugins(self) -> tuple[str, ...]:
        return tuple(self._timers)

    @property
    def decided(self) -> bool:
        return self._future.done()

    def _expire(self, plugin: str, waited: float) -> None:
        self.reject(plugin, f"rejected due to timeout after waiting {waited:g}s at plugin {plugin}")

    def allow(self, plugin: str) -> None:
        timer = self._timers.pop(plugin, None)
        if timer is not None:
            timer.cancel()
        if not self._timers and not self._future.done():
            self._future.set_result(Status.success())

    def reject(self, plugin: str, message: str) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if not self._future.done():
            self._future.set_result(Status.unschedulable(message, plugin=plugin))

    async def wait(self) -> Status:
        """The decision (Success, or Unschedulable with the rejecting plugin)."""
        return await asyncio.shield(self._future)


class WaitingPods:
    """The waiting-pods map (keyed by pod uid, or ``namespace/name`` when uid is empty)."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, pod: WaitingPod) -> None:
        self._pods[pod.uid or pod.key] = pod

    def remove(self, pod: WaitingPod) -> None:
        self._pods.pop(pod.uid or pod.key, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)

    def reject_all(self, message: str) -> None:
        for pod in list(self._pods.values()):
            pod.reject("", message)
