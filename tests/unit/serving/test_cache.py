"""ExpiringCache: entries live exactly their TTL (fake clock), the least recently used goes first."""

from __future__ import annotations

import pytest

from asched.serving.cache import ExpiringCache


@pytest.mark.parametrize(
    ("ttl", "after", "fresh"),
    [
        pytest.param(10.0, 0.0, True, id="just stored"),
        pytest.param(10.0, 9.999, True, id="just before its TTL"),
        # expires at stored + ttl = 1000 + 10; at 1010 it is gone
        pytest.param(10.0, 10.0, False, id="at its TTL"),
        pytest.param(10.0, 60.0, False, id="long after"),
        pytest.param(0.5, 0.4, True, id="short TTL, before"),
        pytest.param(0.5, 0.5, False, id="short TTL, at"),
    ],
)
def test_an_entry_lives_exactly_its_ttl(clock, ttl: float, after: float, fresh: bool) -> None:
    cache: ExpiringCache[str, str] = ExpiringCache(8, clock)
    cache.put("k", "v", ttl)
    clock.now += after
    assert cache.get("k") == ((True, "v") if fresh else (False, None))
    assert len(cache) == (1 if fresh else 0)  # an expired entry is dropped when met


def test_a_cached_none_is_a_hit_not_a_miss(clock) -> None:
    cache: ExpiringCache[str, str | None] = ExpiringCache(8, clock)
    cache.put("invalid token", None, 10.0)
    assert cache.get("invalid token") == (True, None)
    assert cache.get("never seen") == (False, None)


@pytest.mark.parametrize("ttl", [pytest.param(0.0, id="zero"), pytest.param(-1.0, id="negative")])
def test_a_ttl_that_is_not_positive_stores_nothing(clock, ttl: float) -> None:
    cache: ExpiringCache[str, str] = ExpiringCache(8, clock)
    cache.put("k", "old", 10.0)
    cache.put("k", "new", ttl)  # and forgets what was there
    assert cache.get("k") == (False, None)


def test_the_least_recently_used_entry_is_evicted_at_the_bound(clock) -> None:
    cache: ExpiringCache[str, int] = ExpiringCache(2, clock)
    cache.put("a", 1, 10.0)
    cache.put("b", 2, 10.0)
    assert cache.get("a") == (True, 1)  # a is now more recent than b
    cache.put("c", 3, 10.0)  # 3 entries > 2: b goes
    assert len(cache) == 2
    assert [cache.get(key)[0] for key in ("a", "b", "c")] == [True, False, True]


def test_storing_again_refreshes_the_ttl(clock) -> None:
    cache: ExpiringCache[str, int] = ExpiringCache(2, clock)
    cache.put("k", 1, 10.0)
    clock.now += 8
    cache.put("k", 2, 10.0)  # expires at now + 10 = 18 s after the first put
    clock.now += 8
    assert cache.get("k") == (True, 2)


def test_the_bound_must_hold_an_entry() -> None:
    with pytest.raises(ValueError, match="max_entries: must be at least 1, not 0"):
        ExpiringCache(0)
