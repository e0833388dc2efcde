"""Kubernetes quantities, parsed exactly in integers.

A quantity is ``<sign><digits>[.<digits>]<suffix>`` where the suffix is a binary SI
suffix (``Ki Mi Gi Ti Pi Ei``), a decimal SI suffix (``n u m "" k M G T P E``) or a
decimal exponent (``e3``, ``E-3``). The value is held as an exact :class:`Fraction`
and converted to the scheduler's canonical integer units the way apimachinery does:

* CPU -> millicores with ``MilliValue()`` semantics (round up, away from zero);
* everything else (memory, storage, pods, extended resources) -> ``Value()``
  semantics (round up to a whole unit, away from zero).

Parsing is cached: clusters repeat the same few strings (``100m``, ``500Mi``) millions
of times, so the exact (slow) arithmetic runs once per distinct string.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Final

INT64_MAX: Final = 2**63 - 1

_BINARY: Final = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL: Final = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_SHAPE: Final = re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(.*)$")
_EXPONENT: Final = re.compile(r"^[eE]([+-]?\d+)$")
#: Quantities beyond this exponent cannot be an int64 in any unit we use.
_MAX_EXPONENT: Final = 40


class QuantityError(ValueError):
    """A string that is not a valid Kubernetes quantity, or one out of range."""


@lru_cache(maxsize=4096)
def parse_quantity(text: str) -> Fraction:
    """Return the exact value of a quantity string.

    Raises
    ------
    QuantityError
        If ``text`` does not follow the quantity grammar.
    """
    match = _SHAPE.match(text)
    if match is None or text != text.strip() or text == "":
        raise QuantityError(
            f"quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {text!r}"
        )
    sign, number, suffix = match.groups()
    value = Fraction(number)
    if suffix in _BINARY:
        value *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        value *= _DECIMAL[suffix]
    else:
        exponent = _EXPONENT.match(suffix)
        if exponent is None:
            raise QuantityError(f"unable to parse quantity's suffix {suffix!r} in {text!r}")
        power = int(exponent.group(1))
        if abs(power) > _MAX_EXPONENT:
            raise QuantityError(f"quantity {text!r} is out of range")
        value *= Fraction(10) ** power
    return -value if sign == "-" else value


def _round_away(value: Fraction) -> int:
    """Round to an integer away from zero (apimachinery's rounding for scaled values)."""
    whole = value.numerator // value.denominator  # floor
    if value >= 0:
        return whole if whole == value else whole + 1
    return whole  # floor of a negative non-integer is already away from zero


def _checked(value: int, text: str) -> int:
    if value > INT64_MAX or value < -INT64_MAX:
        raise QuantityError(f"quantity {text!r} is too large")
    return value


@lru_cache(maxsize=4096)
def milli_value(text: str) -> int:
    """Return ``text`` in thousandths (``MilliValue()``), e.g. ``"0.5"`` -> 500, ``"1m"`` -> 1."""
    return _checked(_round_away(parse_quantity(text) * 1000), text)


@lru_cache(maxsize=4096)
def value(text: str) -> int:
    """Return ``text`` in whole units (``Value()``), e.g. ``"1Ki"`` -> 1024, ``"0.5"`` -> 1."""
    return _checked(_round_away(parse_quantity(text)), text)


@lru_cache(maxsize=8192)
def canonical(resource: str, text: str) -> int:
    """Return the quantity for ``resource`` in asched's canonical integer unit.

    CPU is millicores; memory, storage, hugepages, pods and extended resources are
    whole units (bytes or counts).
    """
    return milli_value(text) if resource == "cpu" else value(text)
