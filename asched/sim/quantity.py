"""Resource quantities as the API server stores them: validated, then canonicalised.

A genuine server decodes every quantity into ``resource.Quantity`` and writes it back in
canonical form, so a pod created with ``cpu: "0.5"`` reads back as ``"500m"`` and
``memory: 1024Mi`` as ``"1Gi"``. A string that is not a quantity fails *decoding*, which
the server answers with 400 BadRequest (not 422). This module reproduces
``Quantity.CanonicalizeBytes``:

* the format is taken from the suffix: binary (``Ki``..``Ei``), decimal exponent
  (``e3``) or decimal SI (``m``, ``k``, ``M``, ..., or none);
* values are rounded up to nano units (the parser's precision);
* decimal forms print an integer mantissa with an exponent that is a multiple of 3
  (``1500m``, ``2k``); binary forms divide by 1024 while exact and fall back to decimal
  SI for values below 1024 or with a fractional byte.

Kept separate from :mod:`asched.cluster.quantity` on purpose: the scheduler converts to
integer units, the simulator must echo the server's *text*.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Final, Literal

Format = Literal["BinarySI", "DecimalSI", "DecimalExponent"]

REGEX_MESSAGE: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_NUMBER: Final = re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(.*)$")
_EXPONENT: Final = re.compile(r"^[eE]([+-]?\d+)$")
_BINARY: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL: Final = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_DECIMAL_SUFFIX: Final = {exp: suffix for suffix, exp in _DECIMAL.items()}
_BINARY_SUFFIX: Final = {0: "", **{exp: suffix for suffix, exp in _BINARY.items()}}
_NANO: Final = 10**9


class QuantityError(ValueError):
    """Not a quantity (the server's decode error)."""


@lru_cache(maxsize=4096)
def parse(text: str) -> tuple[Fraction, Format]:
    """Return the exact value (rounded up to nano units) and the format of ``text``."""
    match = _NUMBER.match(text)
    if match is None:
        raise QuantityError(REGEX_MESSAGE)
    sign, number, suffix = match.groups()
    value = Fraction(number)
    fmt: Format
    if suffix in _BINARY:
        value *= 2 ** _BINARY[suffix]
        fmt = "BinarySI"
    elif suffix in _DECIMAL:
        value *= Fraction(10) ** _DECIMAL[suffix]
        fmt = "DecimalSI"
    else:
        exponent = _EXPONENT.match(suffix)
        if exponent is None or abs(int(exponent.group(1))) > 100:
            raise QuantityError(REGEX_MESSAGE)
        value *= Fraction(10) ** int(exponent.group(1))
        fmt = "DecimalExponent"
    nanos = value * _NANO
    whole = -(-nanos.numerator // nanos.denominator)  # ceil: round up to the next nano
    value = Fraction(whole, _NANO)
    return (-value if sign == "-" else value), fmt


def _decimal(value: Fraction, fmt: Format) -> str:
    """Mantissa and exponent (a multiple of 3) as ``AsCanonicalBytes`` prints them."""
    sign = "-" if value < 0 else ""
    mantissa = abs(int(value * _NANO))  # exact: parse() rounded to nano units
    exponent = -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    if fmt == "DecimalExponent":
        suffix = f"e{exponent}" if exponent else ""
    elif exponent in _DECIMAL_SUFFIX:
        suffix = _DECIMAL_SUFFIX[exponent]
    else:  # beyond exa: apimachinery switches to an exponent too
        suffix = f"e{exponent}"
    return f"{sign}{mantissa}{suffix}"


@lru_cache(maxsize=4096)
def canonical_text(text: str) -> str:
    """Return the canonical form of the quantity ``text`` (raises :class:`QuantityError`)."""
    value, fmt = parse(text)
    if value == 0:
        return "0"
    if fmt == "BinarySI":
        if -1024 < value < 1024 or value.denominator != 1:
            return _decimal(value, "DecimalSI")
        amount = abs(value.numerator)
        exponent = 0
        while amount % 1024 == 0 and exponent < 60:
            amount //= 1024
            exponent += 10
        return f"{'-' if value < 0 else ''}{amount}{_BINARY_SUFFIX[exponent]}"
    return _decimal(value, fmt)


def canonical(raw: object) -> str:
    """Canonicalise a JSON quantity: a string or a bare number (both are legal JSON)."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise QuantityError(REGEX_MESSAGE)
    text = raw if isinstance(raw, str) else repr(raw)
    return canonical_text(text)


def is_negative(text: str) -> bool:
    """True for a canonical quantity below zero."""
    return text.startswith("-")


def compare(left: str, right: str) -> int:
    """Three-way comparison of two valid quantities (-1, 0, 1)."""
    a, _ = parse(left)
    b, _ = parse(right)
    return (a > b) - (a < b)
