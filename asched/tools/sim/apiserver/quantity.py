"""Resource quantities as the API server stores them: validated, then canonicalised.

A genuine server decodes every quantity into ``resource.Quantity`` and writes it back in
canonical form, so a pod created with ``cpu: "0.5"`` reads back as ``"500m"`` and
``memory: 1024Mi`` as ``"1Gi"``. A string that is not a quantity fails *decoding*, which
the server answers with 400 BadRequest (not 422). This module reproduces
``Quantity.CanonicalizeBytes``:

* the format is taken from the suffix: binary (``Ki``..``Ei``), decimal exponent
  (``e3``) or decimal SI (``m``, ``k``, ``M``, ..., or none);
* values are rounded up to nano units (the parser's precision);
* a binary-suffixed value above int64's maximum is capped there, as ``ParseQuantity``
  does: ``999999Pi``, ``8Ei`` and ``9223372036854775807Ki`` all read back as
  ``9223372036854775807`` (measured on v1.20.2 and v1.37.2); decimal values are not capped
  (``99999E`` and ``1e30`` are stored as given);
* a quantity whose canonical form would have more than 1,000 digits or an exponent beyond
  ±1,000 is refused as not a quantity (Go would store it, but no resource is that large;
  the bound keeps Python's 4,300-digit integer-to-text limit out of reach). The bound is
  on the *canonical* form, so whatever is stored parses again to itself.
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
_NUMBER: Final = re.compile(r"([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)(.*)", re.DOTALL)
_EXPONENT: Final = re.compile(r"[eE]([+-]?[0-9]+)")
#: the largest value a binary-suffixed quantity keeps (``maxAllowed`` in apimachinery).
MAX_INT64: Final = 2**63 - 1
#: the bounds of a canonical form's mantissa digits and exponent (see the module docstring).
MAX_DIGITS: Final = 1000
MAX_EXPONENT: Final = 1000
#: the looser bound on what is parsed at all (digits of the number, size of an exponent).
_INPUT_LIMIT: Final = 1100
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
    match = _NUMBER.fullmatch(text)
    if match is None or len(match.group(2)) > _INPUT_LIMIT:
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
        exponent = _EXPONENT.fullmatch(suffix)
        if (
            exponent is None
            or len(exponent.group(1)) > 6
            or abs(int(exponent.group(1))) > _INPUT_LIMIT
        ):
            raise QuantityError(REGEX_MESSAGE)
        value *= Fraction(10) ** int(exponent.group(1))
        fmt = "DecimalExponent"
    nanos = value * _NANO
    whole = -(-nanos.numerator // nanos.denominator)  # ceil: round up to the next nano
    value = Fraction(whole, _NANO)
    if fmt == "BinarySI" and value > MAX_INT64:
        value = Fraction(MAX_INT64)  # ParseQuantity's cap; the sign is applied after it
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
    # ~3.32 bits a digit: test the size before str() could hit Python's digit limit
    if mantissa.bit_length() > 4 * MAX_DIGITS or abs(exponent) > MAX_EXPONENT:
        raise QuantityError(REGEX_MESSAGE)
    digits = str(mantissa)
    if len(digits) > MAX_DIGITS:
        raise QuantityError(REGEX_MESSAGE)
    if fmt == "DecimalExponent":
        suffix = f"e{exponent}" if exponent else ""
    elif exponent in _DECIMAL_SUFFIX:
        suffix = _DECIMAL_SUFFIX[exponent]
    else:  # beyond exa: apimachinery switches to an exponent too
        suffix = f"e{exponent}"
    return f"{sign}{digits}{suffix}"


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
    if left == right:  # the common case (requests = limits), without Fraction arithmetic
        parse(left)  # still a QuantityError when it is not a quantity
        return 0
    a, _ = parse(left)
    b, _ = parse(right)
    return (a > b) - (a < b)
