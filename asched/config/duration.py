"""Go duration strings (``"15s"``, ``"1m30s"``, ``"100ms"``, ``"1.5h"``), as metav1.Duration reads them.

A duration is an optional sign followed by one or more ``<decimal number><unit>`` pairs
with units ``ns``, ``us`` (or ``µs``/``μs``), ``ms``, ``s``, ``m``, ``h``; the bare string
``"0"`` is also accepted. A unit is otherwise always required, so ``"15"`` is an error,
just as in Go's ``time.ParseDuration``.

The result is an integer count of nanoseconds, so comparisons such as
``renewDeadline > 1.2 * retryPeriod`` can be done the way client-go does them (float64
arithmetic on nanoseconds). The sum is exact (``Fraction``) and truncated toward zero
once, at the end; Go truncates each fractional term instead, which can differ by at most
a nanosecond per term and never matters for configuration values.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Final

from asched.config.schema import Section, describe, quote

_UNIT_NS: Final[dict[str, int]] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek small letter mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_TERM: Final = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_WHOLE: Final = re.compile(r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+")

#: Go's time.Duration is an int64 count of nanoseconds.
_MAX_NS: Final = 2**63 - 1


def parse_duration(text: str) -> int:
    """Parse a Go duration string into nanoseconds.

    Parameters
    ----------
    text : str
        For example ``"10s"``, ``"1m30s"``, ``"-1.5h"`` or ``"0"``.

    Returns
    -------
    int
        The duration in nanoseconds (negative for a leading ``-``).

    Raises
    ------
    ValueError
        With a message naming the text, when it is not a valid duration or overflows
        Go's int64 nanoseconds.
    """
    if text in ("0", "+0", "-0"):
        return 0
    if not _WHOLE.fullmatch(text):
        raise ValueError(f'invalid duration {quote(text)}: expected e.g. "15s", "1m30s", "100ms"')
    total = Fraction(0)
    for number, unit in _TERM.findall(text):
        total += Fraction(number) * _UNIT_NS[unit]
    if total > _MAX_NS:
        raise ValueError(f"invalid duration {quote(text)}: too large")
    nanoseconds = int(total)  # int() truncates toward zero
    return -nanoseconds if text.startswith("-") else nanoseconds


def read_duration_ns(section: Section, key: str, default_ns: int, *, example: str) -> int:
    """The duration string at ``key`` in nanoseconds, ``default_ns`` when absent; a
    non-string or unparsable value is reported (``example`` shows the expected form)."""
    value = section.get(key)
    if value is None:
        return default_ns
    if not isinstance(value, str):
        section.report(key, f'must be a duration string like "{example}", got {describe(value)}')
        return default_ns
    try:
        return parse_duration(value)
    except ValueError as exc:
        section.report(key, str(exc))
        return default_ns
