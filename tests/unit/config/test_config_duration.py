"""Go duration strings, as metav1.Duration (time.ParseDuration) reads them."""

from __future__ import annotations

import pytest

from asched.config.duration import parse_duration

S = 1_000_000_000


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [
        pytest.param("15s", 15 * S, id="seconds"),
        pytest.param("1m30s", 90 * S, id="minutes and seconds"),
        pytest.param("100ms", S // 10, id="milliseconds"),
        pytest.param("1h", 3600 * S, id="hour"),
        pytest.param("1.5h", 5400 * S, id="fractional hour"),
        pytest.param(".5s", S // 2, id="leading dot"),
        pytest.param("2.s", 2 * S, id="trailing dot"),
        pytest.param("1h2m3s4ms5us6ns", 3723 * S + 4_005_006, id="every unit"),
        pytest.param("3µs", 3000, id="micro sign"),
        pytest.param("3μs", 3000, id="greek mu"),
        pytest.param("0", 0, id="bare zero"),
        pytest.param("-1.5s", -1_500_000_000, id="negative"),
        pytest.param("+2s", 2 * S, id="explicit plus"),
        # 1/3 ns truncates toward zero.
        pytest.param("0.3333333333s", 333_333_333, id="truncated to nanoseconds"),
    ],
)
def test_parse_duration(text, nanoseconds) -> None:
    assert parse_duration(text) == nanoseconds


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("15", id="no unit"),
        pytest.param("1d", id="days are not a Go unit"),
        pytest.param("s", id="unit without number"),
        pytest.param("1 s", id="space"),
        pytest.param("1s 2m", id="space between terms"),
        pytest.param("--1s", id="double sign"),
        pytest.param(".s", id="dot alone"),
        pytest.param("3000000h", id="overflows int64 nanoseconds"),
    ],
)
def test_parse_duration_rejects(text) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)
