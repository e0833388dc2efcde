"""A small LRU cache whose entries expire: the memory of the delegated reviews.

Upstream caches TokenReview results (``--authentication-token-webhook-cache-ttl``, 10 s)
and SubjectAccessReview decisions (allowed and denied, 10 s each, in an LRU of 8192), so a
Prometheus that scrapes every few seconds costs the API server one review pair per TTL, not
per scrape. Each entry carries its own TTL (an allow and a deny can live for different
times). Time comes from an injected clock (monotonic seconds), so tests use a fake one.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ExpiringCache(Generic[K, V]):
    """At most ``max_entries`` entries, the least recently used evicted first.

    Parameters
    ----------
    max_entries : int
        The bound; inserting one more evicts the least recently used entry.
    clock : callable returning float, optional
        Seconds on a monotonic scale; :func:`time.monotonic` by default.
    """

    def __init__(self, max_entries: int, clock: Callable[[], float] | None = None) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries: must be at least 1, not {max_entries}")
        self._max = max_entries
        self._clock = clock or time.monotonic
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> tuple[bool, V | None]:
        """``(True, value)`` while ``key`` is fresh; ``(False, None)`` when absent or expired.

        (A pair, so a cached None, "this token is not valid", is told from a miss.)
        """
        entry = self._entries.get(key)
        if entry is None:
            return False, None
        expires, value = entry
        if self._clock() >= expires:
            del self._entries[key]
            return False, None
        self._entries.move_to_end(key)
        return True, value

    def put(self, key: K, value: V, ttl_seconds: float) -> None:
        """Remember ``value`` for ``ttl_seconds`` (nothing is stored when it is not positive)."""
        if ttl_seconds <= 0:
            self._entries.pop(key, None)
            return
        self._entries[key] = (self._clock() + ttl_seconds, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
