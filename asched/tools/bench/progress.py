"""The progress display of benchmark runs: one rich bar per phase, quiet when not a TTY.

Bars are refreshed from counters by one owned task every 0.5 s (never per watch event),
so the display costs next to nothing next to the load generator and the watch.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

_REFRESH = 0.5


class Display:
    """Phase bars fed by counter callables; ``enabled=None`` means "stderr is a TTY"."""

    def __init__(self, *, enabled: bool | None = None) -> None:
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.console = Console(stderr=True, quiet=not self.enabled)
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description:<34}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>12}"),
            TimeElapsedColumn(),
            console=self.console,
            disable=not self.enabled,
            refresh_per_second=2,
        )
        self._feeds: dict[TaskID, tuple[Callable[[], int], float, int]] = {}
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        if self.enabled:
            self.progress.start()
            self._task = asyncio.create_task(self._refresh(), name="progress display")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task])  # our own cancellation still propagates
        self._update()
        self.progress.stop()

    def add(self, description: str, total: int, current: Callable[[], int]) -> TaskID:
        """A bar for ``total`` items whose count so far is ``current()``."""
        task = self.progress.add_task(description, total=total, rate="")
        self._feeds[task] = (current, time.monotonic(), 0)
        return task

    def finish(self, task: TaskID) -> None:
        """Final update of ``task``; it is no longer refreshed."""
        self._update_one(task)
        self._feeds.pop(task, None)

    def note(self, message: str) -> None:
        """A line above the bars (nothing when quiet)."""
        self.console.print(message)

    def _update_one(self, task: TaskID) -> None:
        feed = self._feeds.get(task)
        if feed is None:
            return
        current, started, _ = feed
        value = current()
        elapsed = time.monotonic() - started
        rate = f"{value / elapsed:,.0f}/s" if elapsed > 0 else ""
        self.progress.update(task, completed=value, rate=rate)

    def _update(self) -> None:
        for task in list(self._feeds):
            self._update_one(task)

    async def _refresh(self) -> None:
        while True:
            self._update()
            await asyncio.sleep(_REFRESH)
