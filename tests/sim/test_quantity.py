"""Quantities come back from the server in canonical form (``resource.Quantity.String()``)."""

from __future__ import annotations

import pytest

from asched.sim import quantity


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
    ],
)
def test_canonical(given, canonical):
    assert quantity.canonical(given) == canonical


@pytest.mark.parametrize("text", ["12x", "", "abc", "1.2.3", "1Qi", "--1", True, None])
def test_not_a_quantity(text):
    with pytest.raises(
        quantity.QuantityError, match="quantities must match the regular expression"
    ):
        quantity.canonical(text)


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [("500m", "1", -1), ("1Gi", "1024Mi", 0), ("2", "1500m", 1)],
)
def test_compare(left, right, expected):
    assert quantity.compare(left, right) == expected
