"""Per-pod backoff: initial * 2^(attempts-1), capped at the maximum.

Upstream: pkg/scheduler/backend/queue/backoff_queue.go, calculateBackoffDuration.
"""

from __future__ import annotations


def backoff_seconds(attempts: int, initial: float, maximum: float) -> float:
    """Attempts 1, 2, 3, 4, 5 -> 1, 2, 4, 8, 10 seconds with the defaults (1 s, 10 s)."""
    if attempts <= 0:
        return 0.0
    duration = initial
    for _ in range(1, attempts):
        if duration > maximum - duration:
            return maximum
        duration += duration
    return min(duration, maximum)
