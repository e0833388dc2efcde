"""PreferCheaperNodes through asched's test kit: scores, price sources, args errors."""

from __future__ import annotations

from decimal import Decimal

import pytest
from asched_price_score import PLUGIN
from asched_price_score.plugin import parse_price

from asched.plugin import ConfigError, testing

LABEL = "example.com/price-per-hour"
TYPE = "node.kubernetes.io/instance-type"
POD = testing.pod("web", requests={"cpu": "100m"})


def priced(name: str, price: str | None = None, kind: str | None = None):
    labels = {}
    if price is not None:
        labels[LABEL] = price
    if kind is not None:
        labels[TYPE] = kind
    return testing.node(name, labels=labels)


@pytest.mark.parametrize(
    ("nodes", "args", "expected"),
    [
        pytest.param(
            [priced("a", "0.10"), priced("b", "0.30"), priced("c", "0.50")],
            None,
            # low 0.10, high 0.50: (0.50 - p) * 100 // 0.40 -> 100, 50, 0
            {"a": 100, "b": 50, "c": 0},
            id="linear between the cheapest and the dearest",
        ),
        pytest.param(
            [priced("a", "0.2"), priced("b", "0.2")],
            None,
            {"a": 100, "b": 100},  # all equal: every node is the cheapest
            id="equal prices",
        ),
        pytest.param(
            [priced("a", "0.10"), priced("b", None), priced("c", "oops")],
            None,
            {"a": 100, "b": 0, "c": 0},  # unpriced and unparsable nodes score as the dearest
            id="no price and a bad price",
        ),
        pytest.param(
            [priced("a", None, "m5.large"), priced("b", None, "m5.xlarge"), priced("c", "0.048")],
            {"instanceTypePrices": {"m5.large": "0.096", "m5.xlarge": "0.192"}},
            # 0.096, 0.192, 0.048: (0.192 - p) * 100 // 0.144 -> 66 (9.6/14.4=66.6), 0, 100
            {"a": 66, "b": 0, "c": 100},
            id="the label wins, then the instance-type list",
        ),
        pytest.param(
            [priced("a", "0.5"), priced("b", None)],
            {"defaultPrice": "1.5"},
            {"a": 100, "b": 0},  # b costs the default 1.5
            id="default price",
        ),
        pytest.param(
            [priced("a", "2"), priced("b", None)],
            {"defaultPrice": "1"},
            # a 2, b the default 1: (2 - p) * 100 // 1 -> 0, 100
            {"a": 0, "b": 100},
            id="the default can be cheaper",
        ),
    ],
)
def test_scores(nodes, args, expected) -> None:
    result = testing.evaluate(PLUGIN, POD, testing.cluster(*nodes), args=args)
    scores = {name: verdict.scores["PreferCheaperNodes"] for name, verdict in result.nodes.items()}
    assert scores == expected
    best = max(expected.values())
    assert result.selected in {name for name, score in expected.items() if score == best}


def test_matches_its_per_node_definition() -> None:
    prices = {"a": "0.10", "b": "0.25", "c": "0.40", "d": "0.55", "e": "0.90"}
    cluster = testing.cluster(*(priced(n, p) for n, p in prices.items()))
    values = {n: Decimal(p) for n, p in prices.items()}
    low, high = min(values.values()), max(values.values())

    def definition(pod, node) -> int:
        return int((high - values[node.name]) * 100 // (high - low))

    testing.check_score(PLUGIN, POD, cluster, definition)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"defaultPrice": "cheap"},
            "args.defaultPrice: must be a decimal price in 0..1000000000, got 'cheap'",
            id="bad default",
        ),
        pytest.param(
            {"instanceTypePrices": {"m5.large": True}},
            'args.instanceTypePrices.m5.large: must be a decimal price such as "0.096", got True',
            id="bad list entry",
        ),
        pytest.param(
            {"instanceTypePrices": ["m5.large"]},
            "args.instanceTypePrices: must be an object, got a list",
            id="a list for the price list",
        ),
        pytest.param({"priceLabl": "x"}, "args.priceLabl: unknown field", id="typo"),
        pytest.param(
            {"kind": "OtherArgs"},
            'args.kind: must be "PreferCheaperNodesArgs" for plugin "PreferCheaperNodes", '
            "got 'OtherArgs'",
            id="wrong kind",
        ),
    ],
)
def test_bad_args_name_the_field(args, message) -> None:
    with pytest.raises(ConfigError) as caught:
        testing.profile_for(PLUGIN, args=args)
    assert [str(e) for e in caught.value.errors] == [f"profiles[0].pluginConfig[0].{message}"]


@pytest.mark.parametrize(
    ("text", "micro"),
    [
        pytest.param("0.096", 96_000, id="decimal"),
        pytest.param(" 3 ", 3_000_000, id="integer with spaces"),
        pytest.param("-1", None, id="negative"),
        pytest.param("NaN", None, id="not a number"),
        pytest.param("1e20", None, id="beyond the cap"),
    ],
)
def test_parse_price(text, micro) -> None:
    assert parse_price(text) == micro
