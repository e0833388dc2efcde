"""Kubernetes quantities, parsed exactly in integers.

A quantity is ``<sign><digits>[.<digits>]<suffix>`` where the suffix is a binary SI
suffix (``Ki Mi Gi Ti Pi Ei``), a decimal SI suffix (``n u m "" k M G T P E``) or a
decimal exponent (``e3``, ``E-3``). The value is held as an exact :class:`Fraction`,
capped at int64's maximum and rounded up to ``1n`` as apimachinery's ``ParseQuantity``
does, and converted to the scheduler's canonical integer units the way apimachinery does:

* CPU -> millicores with ``MilliValue()`` semantics (round up, away from zero);
* everything else (memory, storage, pods, extended resources) -> ``Value()``
  semantics (round up to a whole unit, away from zero).

Both conversions saturate at int64's maximum (Go's overflow there is undefined). What
range asched *schedules* is a separate rule: :mod:`asched.cluster.bounds`.

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
_DECIMAL_POWER: Final = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}  # fmt: skip
_SHAPE: Final = re.compile(r"^([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)(.*)$")
_EXPONENT: Final = re.compile(r"^[eE]([+-]?[0-9]+)$")
#: Significant digits kept exactly (orders 19 down to -40); the rest only rounds up.
_SIGNIFICANT: Final = 60
_NANO: Final = Fraction(1, 10**9)
_CAP: Final = Fraction(INT64_MAX)


class QuantityError(ValueError):
    """A string that is not a valid Kubernetes quantity."""


def _magnitude(number: str, power: int, factor: int) -> Fraction:
    """``number * 10**power * factor`` as apimachinery parses it: capped at int64's
    maximum and rounded up to a whole nano-unit, computed without ever building a number
    of more than ~100 digits (the digit string itself may be arbitrarily long).

    The cut-offs use the value's decimal order (its leading digit's position), so long
    runs of zeros never fool them; at most :data:`_SIGNIFICANT` significant digits are
    kept, and non-zero digits beyond them round the value up (which cannot move it across
    a nano-unit boundary: they weigh less than 10**-40 of a unit times ``factor``)."""
    whole, _, fraction = number.partition(".")
    digits = (whole + fraction).lstrip("0")
    if not digits.rstrip("0"):
        return Fraction(0)
    # the leading significant digit stands at 10**order
    order = len(whole) - 1 - (len(whole + fraction) - len(digits)) + power
    if order > 19:
        return _CAP  # at least 10**20 > int64's maximum (and factor >= 1)
    if order < -30:
        return _NANO  # under 10**-29 * 2**60 < 10**-9: non-zero, so it rounds up to 1n
    kept = digits[:_SIGNIFICANT]
    bump = digits[_SIGNIFICANT:].strip("0") != ""
    mantissa = (int(kept) + (1 if bump else 0)) * factor
    exponent = order - (len(kept) - 1)  # the last kept digit stands at 10**exponent
    if exponent >= 0:
        exact = Fraction(mantissa * 10**exponent)
    else:
        exact = Fraction(mantissa, 10**-exponent)
    if exact > _CAP:
        return _CAP
    nanos = exact / _NANO
    whole_nanos = nanos.numerator // nanos.denominator
    if whole_nanos != nanos:
        whole_nanos += 1  # apimachinery rounds up to the nano scale (inf.RoundUp)
    return whole_nanos * _NANO


@lru_cache(maxsize=4096)
def parse_quantity(text: str) -> Fraction:
    """Return the value of a quantity string as the API server stores it.

    As apimachinery's ``ParseQuantity``: the magnitude is capped at int64's maximum
    (``maxAllowed``: ``999999Pi`` is 9223372036854775807) and a non-zero value is rounded
    up (away from zero) to a multiple of ``1n``. (Genuine servers, v1.20.2 and v1.37.2, were
    measured to store binary-suffixed values capped and decimal ones as written; asched caps
    both, which changes no decision: anything past 2**53 - 1 is out of range,
    asched.cluster.bounds.)

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
    if suffix in _BINARY:
        value = _magnitude(number, 0, _BINARY[suffix])
    elif suffix in _DECIMAL_POWER:
        value = _magnitude(number, _DECIMAL_POWER[suffix], 1)
    else:
        exponent = _EXPONENT.match(suffix)
        if exponent is None:
            raise QuantityError(f"unable to parse quantity's suffix {suffix!r} in {text!r}")
        digits = exponent.group(1).lstrip("+-").lstrip("0")
        negative = exponent.group(1).startswith("-")
        # more than a few digits is beyond any exponent that matters (and int() of a long
        # digit string is refused by Python's conversion limit)
        power = int(digits or "0") if len(digits) <= 6 else 10**6
        value = _magnitude(number, -power if negative else power, 1)
    return -value if sign == "-" else value


def _round_away(value: Fraction) -> int:
    """Round to an integer away from zero (apimachinery's rounding for scaled values)."""
    whole = value.numerator // value.denominator  # floor
    if value >= 0:
        return whole if whole == value else whole + 1
    return whole  # floor of a negative non-integer is already away from zero


def _saturated(value: int) -> int:
    """Held to int64 (Go's ``MilliValue`` overflows past ``MaxMilliValue``; we saturate)."""
    return max(-INT64_MAX, min(INT64_MAX, value))


@lru_cache(maxsize=4096)
def milli_value(text: str) -> int:
    """Return ``text`` in thousandths (``MilliValue()``), e.g. ``"0.5"`` -> 500, ``"1m"`` -> 1.

    Saturates at int64's maximum (``MaxMilliValue`` is int64's maximum / 1000)."""
    return _saturated(_round_away(parse_quantity(text) * 1000))


@lru_cache(maxsize=4096)
def value(text: str) -> int:
    """Return ``text`` in whole units (``Value()``), e.g. ``"1Ki"`` -> 1024, ``"0.5"`` -> 1."""
    return _saturated(_round_away(parse_quantity(text)))


@lru_cache(maxsize=8192)
def canonical(resource: str, text: str) -> int:
    """Return the quantity for ``resource`` in asched's canonical integer unit.

    CPU is millicores; memory, storage, hugepages, pods and extended resources are
    whole units (bytes or counts).
    """
    return milli_value(text) if resource == "cpu" else value(text)
