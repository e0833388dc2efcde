"""The plugin, its args and its declaration (see the package docstring)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Final

import numpy as np

from asched import plugin as ap

NAME: Final = "PreferCheaperNodes"
#: prices are compared in micro-units (1e-6 of the currency) as int64
MICRO: Final = Decimal(1_000_000)
#: the largest price accepted, so micro-units stay far inside int64
MAX_PRICE: Final = Decimal(1_000_000_000)


@dataclass(frozen=True)
class PriceArgs:
    price_label: str = "example.com/price-per-hour"
    instance_type_label: str = "node.kubernetes.io/instance-type"
    instance_type_prices: Mapping[str, int] = field(default_factory=dict)  # micro-units
    #: micro-units for a node with no price; None: such a node scores as the dearest
    default_price: int | None = None


def parse_price(text: str) -> int | None:
    """A decimal price as micro-units, or None when it is not a price in 0..MAX_PRICE."""
    try:
        value = Decimal(text.strip())
    except (InvalidOperation, AttributeError):
        return None
    if not value.is_finite() or value < 0 or value > MAX_PRICE:
        return None
    return int(value * MICRO)


def _price_field(args: ap.ArgsSection, key: str, raw: object) -> int | None:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        args.report(key, f'must be a decimal price such as "0.096", got {raw!r}')
        return None
    price = parse_price(str(raw))
    if price is None:
        args.report(key, f"must be a decimal price in 0..{MAX_PRICE}, got {raw!r}")
    return price


def read_args(args: ap.ArgsSection) -> PriceArgs:
    """``PreferCheaperNodesArgs``: every problem reported with its field path."""
    defaults = PriceArgs()
    price_label = args.string("priceLabel", defaults.price_label)
    if not price_label:
        args.report("priceLabel", "must not be empty")
    type_label = args.string("instanceTypeLabel", defaults.instance_type_label)
    prices: dict[str, int] = {}
    for kind, raw in args.entries("instanceTypePrices"):  # a map whose keys are the user's
        price = _price_field(args, f"instanceTypePrices.{kind}", raw)
        if price is not None:
            prices[kind] = price
    default = None
    if args.has("defaultPrice"):
        default = _price_field(args, "defaultPrice", args.get("defaultPrice"))
    return PriceArgs(price_label, type_label, prices, default)


class PreferCheaperNodes:
    """Score: cheaper nodes score higher (see the package docstring)."""

    name: Final = NAME
    row_local: Final = True  # a row's raw price depends on that row only
    normalizes: Final = True

    def __init__(self, args: PriceArgs) -> None:
        self.args = args

    def sign(self, pod: ap.PodInfo) -> Hashable:
        return ()  # the price reads nothing of the pod: all pods share the cached prices

    def _prices_of(
        self, nodes: ap.Nodes, label: str, table: Mapping[str, int] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(price int64[size], known bool[size])`` from ``label``: each distinct value is
        parsed once, then gathered into rows."""
        codes, values = nodes.label_codes(label)
        parsed = [table.get(v) if table is not None else parse_price(v) for v in values]
        lookup = np.array([p if p is not None else -1 for p in parsed] + [-1], dtype=np.int64)
        prices = lookup[codes]  # code -1 (absent) reads the trailing -1
        return prices, prices >= 0

    def score(
        self, state: ap.CycleState, pod: ap.PodInfo, nodes: ap.Nodes, rows: ap.Rows
    ) -> ap.ScoreArray:
        """Raw scores: the price in micro-units; -1 where a node has no price."""
        price, known = self._prices_of(nodes, self.args.price_label, None)
        if self.args.instance_type_prices:
            listed, in_list = self._prices_of(
                nodes, self.args.instance_type_label, self.args.instance_type_prices
            )
            price = np.where(known, price, listed)
            known = known | in_list
        if self.args.default_price is not None:
            price = np.where(known, price, self.args.default_price)
        raw: ap.ScoreArray = price[rows].astype(np.int64)
        return raw

    def normalize(
        self, state: ap.CycleState, scores: ap.ScoreArray, taking_part: ap.BoolMask
    ) -> ap.ScoreArray:
        """Cheapest -> 100, dearest -> 0, linear; unpriced nodes score 0; all equal -> 100."""
        priced = taking_part & (scores >= 0)
        if not priced.any():
            return np.zeros_like(scores)
        low = int(scores.min(where=priced, initial=np.iinfo(np.int64).max))
        high = int(scores.max(where=priced, initial=0))
        if high == low:
            return np.where(priced, ap.MAX_SCORE, 0).astype(np.int64)
        normalized = (high - scores) * ap.MAX_SCORE // (high - low)
        out: ap.ScoreArray = np.where(priced, normalized, 0).astype(np.int64)
        return out


PLUGIN: Final = ap.declare(
    PreferCheaperNodes,
    api_version="1.4",  # ArgsSection.entries came with 1.4
    args=ap.ArgsSpec(
        kind="PreferCheaperNodesArgs",
        fields=frozenset({"priceLabel", "instanceTypeLabel", "instanceTypePrices", "defaultPrice"}),
        read=read_args,
    ),
)
