"""Per-second counts of the last minutes, for the debug pages' "now" view.

A fixed ring of ``window`` one-second buckets (no allocation per event): each bucket
counts the attempts by result (``scheduled``, ``unschedulable``, ``error``), the pods
bound, and sums the attempt latency (seconds from pop to the decision's end, what
``asched_scheduling_attempt_duration_seconds`` observes) and the end-to-end latency of
bound pods (seconds from the first attempt to the API's answer to the binding). A bucket
is reused when its second comes round again, so old seconds read as zero.

Only the debug listener creates one: the scheduler's callbacks feed it besides the
Prometheus metrics.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

#: Seconds kept by default (ten minutes).
DEFAULT_WINDOW: Final = 600

_RESULTS: Final = ("scheduled", "unschedulable", "error")


class Rates:
    """The ring of per-second buckets; ``clock`` is monotonic seconds."""

    def __init__(
        self, window: int = DEFAULT_WINDOW, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if window < 1:
            raise ValueError(f"window: expected at least 1 second, got {window}")
        self.window = window
        self._clock = clock
        self._second = [-1] * window
        self._counts = {name: [0] * window for name in (*_RESULTS, "bound")}
        self._attempt_sum = [0.0] * window
        self._attempt_max = [0.0] * window
        self._e2e_sum = [0.0] * window
        self._e2e_max = [0.0] * window

    def _slot(self) -> int:
        second = int(self._clock())
        slot = second % self.window
        if self._second[slot] != second:
            self._second[slot] = second
            for counts in self._counts.values():
                counts[slot] = 0
            self._attempt_sum[slot] = self._attempt_max[slot] = 0.0
            self._e2e_sum[slot] = self._e2e_max[slot] = 0.0
        return slot

    def attempt(self, result: str, seconds: float) -> None:
        """One attempt ended with ``result`` after ``seconds``."""
        slot = self._slot()
        counts = self._counts.get(result)
        if counts is not None:
            counts[slot] += 1
        self._attempt_sum[slot] += seconds
        self._attempt_max[slot] = max(self._attempt_max[slot], seconds)

    def bound(self, seconds: float) -> None:
        """A pod was bound ``seconds`` after its first attempt."""
        slot = self._slot()
        self._counts["bound"][slot] += 1
        self._e2e_sum[slot] += seconds
        self._e2e_max[slot] = max(self._e2e_max[slot], seconds)

    def series(self, seconds: int | None = None) -> list[dict[str, Any]]:
        """The last ``seconds`` (default: the whole window) seconds, oldest first, the
        current (partial) one last: ``ago`` (0 for the current second), the counts, and
        the mean and max latencies (seconds; None when nothing happened)."""
        span = self.window if seconds is None else max(1, min(seconds, self.window))
        now = int(self._clock())
        out = []
        for ago in range(span - 1, -1, -1):
            second = now - ago
            slot = second % self.window
            fresh = self._second[slot] == second
            counts = {name: c[slot] if fresh else 0 for name, c in self._counts.items()}
            attempts = sum(counts[name] for name in _RESULTS)
            bound = counts["bound"]
            out.append(
                {
                    "ago": ago,
                    **counts,
                    "attemptMean": self._attempt_sum[slot] / attempts if attempts else None,
                    "attemptMax": self._attempt_max[slot] if attempts else None,
                    "e2eMean": self._e2e_sum[slot] / bound if bound and fresh else None,
                    "e2eMax": self._e2e_max[slot] if bound and fresh else None,
                }
            )
        return out

    def totals(self, seconds: int) -> dict[str, Any]:
        """Sums over the last ``seconds`` seconds (the current one included), and the
        per-second rates."""
        series = self.series(seconds)
        out: dict[str, Any] = {
            name: sum(row[name] for row in series) for name in (*_RESULTS, "bound")
        }
        out["seconds"] = len(series)
        out["boundPerSecond"] = out["bound"] / len(series)
        attempts = sum(out[name] for name in _RESULTS)
        out["attemptsPerSecond"] = attempts / len(series)
        maxima = [row["attemptMax"] for row in series if row["attemptMax"] is not None]
        out["attemptMax"] = max(maxima, default=None)
        weighted = sum(
            row["attemptMean"] * sum(row[n] for n in _RESULTS)
            for row in series
            if row["attemptMean"] is not None
        )
        out["attemptMean"] = weighted / attempts if attempts else None
        e2e = [row["e2eMax"] for row in series if row["e2eMax"] is not None]
        out["e2eMax"] = max(e2e, default=None)
        e2e_sum = sum(row["e2eMean"] * row["bound"] for row in series if row["e2eMean"] is not None)
        out["e2eMean"] = e2e_sum / out["bound"] if out["bound"] else None
        return out
