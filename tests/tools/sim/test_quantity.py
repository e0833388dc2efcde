"""Quantities come back from the server in canonical form (``resource.Quantity.String()``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from asched.tools.sim.apiserver import quantity

MAX_INT64 = "9223372036854775807"  # 2**63 - 1


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        pytest.param("0.5", "500m", id="fraction of a core -> milli"),
        pytest.param("1000m", "1", id="whole milli -> plain"),
        pytest.param("1500m", "1500m", id="not whole"),
        pytest.param("1024Mi", "1Gi", id="binary scales up"),
        pytest.param("1536Mi", "1536Mi", id="binary stays when not exact"),
        pytest.param("0.5Gi", "512Mi", id="fractional binary"),
        pytest.param("0.5Ki", "512", id="binary below 1024 becomes decimal"),
        pytest.param("1000", "1k", id="decimal scales up"),
        pytest.param("110", "110", id="pods"),
        pytest.param("12e3", "12e3", id="exponent format kept"),
        pytest.param("0", "0", id="zero"),
        pytest.param("1n", "1n", id="nano"),
        pytest.param("0.1n", "1n", id="below nano rounds up"),
        pytest.param("-1", "-1", id="negative parses"),
        pytest.param(4, "4", id="a bare JSON number"),
        pytest.param(0.25, "250m", id="a bare JSON float"),
        # Binary values past int64 are capped, as ParseQuantity does (measured on v1.20.2 and
        # v1.37.2, see tests/contract/test_pod_validation.py):
        pytest.param("999999Pi", MAX_INT64, id="999999Pi capped"),  # 999999 * 2**50 ~ 1.1e21
        pytest.param("8Ei", MAX_INT64, id="8Ei capped"),  # 8 * 2**60 = 2**63
        pytest.param("9223372036854775807Ki", MAX_INT64, id="int64 max Ki capped"),
        pytest.param("-999999Pi", "-" + MAX_INT64, id="negative capped too"),
        pytest.param("7Ei", "7Ei", id="7Ei fits"),  # 7 * 2**60 < 2**63
        pytest.param("1.5Ei", "1536Pi", id="1.5Ei"),  # 1.5 * 1024 = 1536
        # Decimal values are not capped:
        pytest.param("99999E", "99999E", id="decimal SI past int64"),
        pytest.param("100000000000000000000", "100E", id="a 21-digit number"),
        pytest.param("1e1000", "10e999", id="exponent 1000"),  # 999 is the multiple of 3
        pytest.param("9223372036854775", "9223372036854775", id="cpu 9223372036854775"),
    ],
)
def test_canonical(given, canonical):
    assert quantity.canonical(given) == canonical


@pytest.mark.parametrize(
    "text",
    [
        "12x",
        "",
        "abc",
        "1.2.3",
        "1Qi",
        "--1",
        True,
        None,
        "1Gi\n",  # Go's regexp has no trailing-newline $
        "\u0661Gi",  # ARABIC-INDIC DIGIT ONE: Go's [0-9] is ASCII
        "1e18Ki",  # an exponent and a binary suffix (measured: 400 on v1.20.2 and v1.37.2)
        "1" * 1001,  # canonical form over the simulator's 1,000 digits
        "1e1003",  # canonical form 10e1002: exponent over 1,000
        "1" * 5000,  # past Python's 4,300-digit int/str limit: refused, never a ValueError
    ],
)
def test_not_a_quantity(text):
    with pytest.raises(
        quantity.QuantityError, match="quantities must match the regular expression"
    ):
        quantity.canonical(text)


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        pytest.param("500m", "1", -1, id="less"),
        pytest.param("1Gi", "1024Mi", 0, id="equal values, different texts"),
        pytest.param("2", "1500m", 1, id="greater"),
        pytest.param("500Mi", "500Mi", 0, id="the same text"),
    ],
)
def test_compare(left, right, expected):
    assert quantity.compare(left, right) == expected


def test_comparing_a_text_with_itself_still_needs_a_quantity():
    with pytest.raises(quantity.QuantityError):
        quantity.compare("lots", "lots")


QUANTITY_TEXT = st.one_of(
    st.text(max_size=12),
    st.from_regex(
        r"[+-]?[0-9]{0,30}(\.[0-9]{0,12})?([eE][+-]?[0-9]{1,4}|[numkMGTPE]|[KMGTPE]i)?",
        fullmatch=True,
    ),
    st.builds(lambda n: "9" * n, st.integers(990, 1010)),
)


@settings(max_examples=600, deadline=None)
@given(text=QUANTITY_TEXT)
def test_any_text_is_a_canonical_quantity_or_not_a_quantity(text):
    # Never another exception (a ValueError would be the handler's 500); and what the
    # server stores reads back as itself (a PUT of a stored object must decode again).
    try:
        stored = quantity.canonical_text(text)
    except quantity.QuantityError:
        return
    assert quantity.canonical_text(stored) == stored
