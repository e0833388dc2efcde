"""ArgsSection's readers of a map with the user's keys (``entries``, ``string_map``,
``integer_map``): values read, every bad entry reported with its path and left out."""

from __future__ import annotations

from typing import Any

import pytest

from asched.config.schema import Problems, Section

FIELDS = ("zoneWeights",)


def _read(raw: Any, reader: str, **kwargs: Any) -> tuple[Any, list[str]]:
    problems = Problems()
    section = Section(problems, {"zoneWeights": raw}, "args", FIELDS)
    value = getattr(section, reader)("zoneWeights", **kwargs)
    if reader == "entries":
        value = list(value)
    return value, [str(e) for e in problems.errors]


@pytest.mark.parametrize(
    ("raw", "reader", "kwargs", "value", "errors"),
    [
        pytest.param(
            {"zone-a": 3, "zone-b": 0, "zone-c": 5.0},
            "integer_map",
            {"low": 0, "high": 10},
            {"zone-a": 3, "zone-b": 0, "zone-c": 5},  # 5.0 has no fraction: an integer
            [],
            id="integers in range",
        ),
        pytest.param(
            {"zone-a": 11, "zone-b": -1, "zone-c": "3", "zone-d": True, "zone-e": 2},
            "integer_map",
            {"low": 0, "high": 10},
            {"zone-e": 2},
            [
                "args.zoneWeights.zone-a: must be in 0..10, got 11",
                "args.zoneWeights.zone-b: must be in 0..10, got -1",
                "args.zoneWeights.zone-c: must be an integer, got '3'",
                "args.zoneWeights.zone-d: must be an integer, got True",
            ],
            id="every bad entry reported, the good one kept",
        ),
        pytest.param(
            {"a": -5, "b": 7},
            "integer_map",
            {"low": 0},
            {"b": 7},
            ["args.zoneWeights.a: must be >= 0, got -5"],
            id="a lower bound only",
        ),
        pytest.param(
            {"a": 500},
            "integer_map",
            {"high": 100},
            {},
            ["args.zoneWeights.a: must be <= 100, got 500"],
            id="an upper bound only",
        ),
        pytest.param(None, "integer_map", {}, {}, [], id="absent"),
        pytest.param(
            [1, 2],
            "integer_map",
            {},
            {},
            ["args.zoneWeights: must be an object, got a list"],
            id="a list",
        ),
        pytest.param(
            {"m5.large": "0.096", "m5.xlarge": 0.192},
            "string_map",
            {},
            {"m5.large": "0.096"},
            ["args.zoneWeights.m5.xlarge: must be a string, got 0.192"],
            id="strings",
        ),
        pytest.param(
            {"a": [1], 2: "x"},
            "entries",
            {},
            [("a", [1])],  # any value: the caller checks it
            ["args.zoneWeights: keys must be strings, got 2"],
            id="entries: any value, string keys",
        ),
        pytest.param(
            "zone-a=3",
            "entries",
            {},
            [],
            ["args.zoneWeights: must be an object, got 'zone-a=3'"],
            id="entries of a string",
        ),
    ],
)
def test_map_readers(
    raw: Any, reader: str, kwargs: dict[str, Any], value: Any, errors: list[str]
) -> None:
    assert _read(raw, reader, **kwargs) == (value, errors)
