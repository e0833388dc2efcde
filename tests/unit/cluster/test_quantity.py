"""Kubernetes quantities: grammar, exact values, rounding to canonical units, errors."""

from __future__ import annotations

from fractions import Fraction

import pytest

from asched.cluster.quantity import QuantityError, canonical, milli_value, parse_quantity, value

PARSE = [
    # decimal SI suffixes
    pytest.param("1n", Fraction(1, 10**9), id="n"),
    pytest.param("1u", Fraction(1, 10**6), id="u"),
    pytest.param("1m", Fraction(1, 1000), id="m"),
    pytest.param("1", Fraction(1), id="no suffix"),
    pytest.param("1k", Fraction(10**3), id="k"),
    pytest.param("1M", Fraction(10**6), id="M"),
    pytest.param("1G", Fraction(10**9), id="G"),
    pytest.param("1T", Fraction(10**12), id="T"),
    pytest.param("1P", Fraction(10**15), id="P"),
    pytest.param("1E", Fraction(10**18), id="E is exa, not an exponent"),
    # binary SI suffixes
    pytest.param("1Ki", Fraction(2**10), id="Ki"),
    pytest.param("1Mi", Fraction(2**20), id="Mi"),
    pytest.param("1Gi", Fraction(2**30), id="Gi"),
    pytest.param("1Ti", Fraction(2**40), id="Ti"),
    pytest.param("1Pi", Fraction(2**50), id="Pi"),
    pytest.param("1Ei", Fraction(2**60), id="Ei"),
    # decimal exponents
    pytest.param("1e3", Fraction(1000), id="e3"),
    pytest.param("1E3", Fraction(1000), id="E3"),
    pytest.param("5E-3", Fraction(5, 1000), id="E-3"),
    pytest.param("2e+2", Fraction(200), id="e+2"),
    # decimals and signs
    pytest.param("0.5", Fraction(1, 2), id="0.5"),
    pytest.param(".5", Fraction(1, 2), id=".5"),
    pytest.param("1.", Fraction(1), id="trailing point"),
    pytest.param("1.5Gi", Fraction(3 * 2**29), id="1.5Gi"),
    pytest.param("+1", Fraction(1), id="plus sign"),
    pytest.param("-1.5", Fraction(-3, 2), id="minus sign"),
    pytest.param("0", Fraction(0), id="zero"),
]


@pytest.mark.parametrize(("text", "want"), PARSE)
def test_parse_quantity(text, want) -> None:
    assert parse_quantity(text) == want


@pytest.mark.parametrize(
    ("text", "want_value", "want_milli"),
    [
        pytest.param("1", 1, 1000, id="one"),
        pytest.param("100m", 1, 100, id="100m rounds up to 1 unit"),
        # 0.1m = 0.1 milli -> rounds up to 1 milli
        pytest.param("0.1m", 1, 1, id="0.1m rounds up to 1m"),
        pytest.param("1.5", 2, 1500, id="1.5"),
        # 100n = 0.0001 milli -> 1 milli
        pytest.param("100n", 1, 1, id="100n"),
        pytest.param("5E-3", 1, 5, id="5E-3 is 5 milli"),
        pytest.param("0.5", 1, 500, id="half"),
        # away from zero for negatives
        pytest.param("-0.5", -1, -500, id="negative half"),
        pytest.param("-1m", -1, -1, id="negative milli"),
        pytest.param("128Mi", 134217728, 134217728000, id="128Mi"),
        pytest.param("1e3", 1000, 1000000, id="1e3"),
    ],
)
def test_value_and_milli_value_round_up(text, want_value, want_milli) -> None:
    assert (value(text), milli_value(text)) == (want_value, want_milli)


@pytest.mark.parametrize(
    ("resource", "text", "want"),
    [
        pytest.param("cpu", "250m", 250, id="cpu in millicores"),
        pytest.param("cpu", "2", 2000, id="whole cores"),
        pytest.param("memory", "1Gi", 2**30, id="memory in bytes"),
        pytest.param("memory", "1.5k", 1500, id="decimal memory"),
        pytest.param("pods", "110", 110, id="pods count"),
        pytest.param("example.com/gpu", "2", 2, id="extended resource count"),
        pytest.param("ephemeral-storage", "10Gi", 10 * 2**30, id="storage bytes"),
    ],
)
def test_canonical_units(resource, text, want) -> None:
    assert canonical(resource, text) == want


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param(" 1", id="leading space"),
        pytest.param("1 ", id="trailing space"),
        pytest.param("abc", id="letters"),
        pytest.param("1.2.3", id="two points"),
        pytest.param("--1", id="two signs"),
        pytest.param("1e", id="exponent without digits"),
        pytest.param("1KI", id="wrong case binary suffix"),
        pytest.param("1Ki1", id="digits after suffix"),
        pytest.param("1kb", id="unknown suffix"),
        pytest.param("\u0663", id="a non-ASCII digit (upstream grammar is [0-9])"),
        pytest.param("e3", id="no number"),
    ],
)
def test_invalid_quantities(text) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


INT64_MAX = 2**63 - 1


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # apimachinery's ParseQuantity caps the magnitude at int64's maximum (maxAllowed)
        pytest.param("8Ei", Fraction(INT64_MAX), id="2^63 bytes is capped"),
        pytest.param("999999Pi", Fraction(INT64_MAX), id="999999 * 2^50 is capped"),
        pytest.param("9223372036854775808", Fraction(INT64_MAX), id="int64 max + 1 is capped"),
        pytest.param("-8Ei", Fraction(-INT64_MAX), id="the cap is on the magnitude"),
        pytest.param("1e41", Fraction(INT64_MAX), id="a huge exponent is capped"),
        pytest.param("1e9999999999999", Fraction(INT64_MAX), id="an exponent of 13 digits"),
        pytest.param("9" * 10_000, Fraction(INT64_MAX), id="10,000 digits (past int's str limit)"),
        # and rounds a non-zero value up to a whole nano-unit
        pytest.param("1e-50", Fraction(1, 10**9), id="tiny rounds up to 1n"),
        pytest.param("0." + "0" * 5000 + "1", Fraction(1, 10**9), id="5,000 zeros then 1"),
        pytest.param("1.0000000001", Fraction(1000000001, 10**9), id="1 + 1e-10 rounds up"),
        pytest.param("0e99999", Fraction(0), id="zero stays zero at any exponent"),
        # the cut-offs follow the value's order, not the exponent alone: 10^50 * 10^-41 = 10^9
        pytest.param("1" + "0" * 50 + "e-41", Fraction(10**9), id="many zeros, negative exponent"),
        # 10^-46 * 10^41 = 10^-5
        pytest.param("0." + "0" * 45 + "1e41", Fraction(1, 10**5), id="tiny digits, huge exponent"),
        pytest.param("1.5e3", Fraction(1500), id="a fraction with an exponent"),
        # 7Ei = 8,070,450,532,247,928,832 < int64 max: exact
        pytest.param("7Ei", Fraction(7 * 2**60), id="7Ei is below the cap"),
    ],
)
def test_parse_caps_and_rounds_as_apimachinery(text, want) -> None:
    assert parse_quantity(text) == want


@pytest.mark.parametrize(
    ("convert", "text", "want"),
    [
        pytest.param(value, "9223372036854775807", INT64_MAX, id="int64 max units"),
        pytest.param(value, "7Ei", 7 * 2**60, id="7Ei bytes"),
        # int64 max cores is 9.2e21 millicores: Go's MilliValue overflows, we saturate
        pytest.param(milli_value, "9223372036854775807", INT64_MAX, id="int64 max cores"),
        pytest.param(milli_value, "1E", INT64_MAX, id="an exa of cores"),
        # 9223372036854775 cores * 1000 = 9223372036854775000 <= int64 max: exact
        pytest.param(milli_value, "9223372036854775", 9223372036854775000, id="largest exact"),
        pytest.param(milli_value, "-8Ei", -INT64_MAX, id="negative saturates too"),
    ],
)
def test_conversions_saturate_at_int64(convert, text, want) -> None:
    assert convert(text) == want
