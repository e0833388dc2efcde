"""Structural schemas (asched.tools.sim.apiserver.schema): pruning, defaulting and validation, as pure functions.

Messages and paths are those a genuine v1.37.2 server answered for the same objects (see
tests/contract/test_custom_resources.py for the ones checked on both backends). A CRD may not
set ``uniqueItems``; the validator keeps go-openapi's check of it all the same.
"""

from __future__ import annotations

from typing import Any

import pytest

from asched.tools.sim.apiserver import crd_validation, schema

SPEC: dict[str, Any] = {
    "type": "object",
    "required": ["size"],
    "properties": {
        "size": {"type": "integer", "minimum": 1, "maximum": 10},
        "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
        "name": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 5},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "unique": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        "when": {"type": "string", "format": "date-time"},
        "count": {"type": "integer", "format": "int32"},
        "list": {
            "type": "array",
            "items": {"type": "object", "properties": {"k": {"type": "string"}}},
        },
        "quantity": {
            "x-kubernetes-int-or-string": True,
            "anyOf": [{"type": "integer"}, {"type": "string"}],
        },
    },
}
ROOT: dict[str, Any] = {"type": "object", "properties": {"spec": SPEC}}


def found(spec: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c.field, c.body) for c in schema.validate({"spec": spec}, ROOT)]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({"size": 1}, [], id="valid"),
        pytest.param({"size": 2.0}, [], id="an integral float is an integer"),
        pytest.param({}, [("spec.size", "Required value")], id="required"),
        pytest.param(
            {"size": 11},
            [
                (
                    "spec.size",
                    "Invalid value: 11: spec.size in body should be less than or equal to 10",
                )
            ],
            id="maximum",
        ),
        pytest.param(
            {"size": 1, "ratio": 0},
            [("spec.ratio", "Invalid value: 0: spec.ratio in body should be greater than 0")],
            id="exclusive minimum",
        ),
        pytest.param(
            {"size": 1, "name": "A1234567"},
            # a string's first failure only; maxLength is a TooLong cause
            [("spec.name", "Too long: may not be more than 5 bytes")],
            id="max length and pattern: the first failure",
        ),
        pytest.param(
            {"size": 1, "name": "A1"},
            [("spec.name", "Invalid value: \"A1\": spec.name in body should match '^[a-z]+$'")],
            id="pattern",
        ),
        pytest.param(
            {"size": 1, "tags": ["a", "b", "c"]},
            [("spec.tags", "Too many: 3: must have at most 2 items")],
            id="max items: a TooMany cause",
        ),
        pytest.param(
            {"size": 1, "unique": [1, 2, 1]},
            [
                (
                    "spec.unique",
                    'Invalid value: "": spec.unique in body shouldn\'t contain duplicates',
                )
            ],
            id="unique items",
        ),
        pytest.param(
            {"size": 1, "when": "yesterday"},
            [
                (
                    "spec.when",
                    'Invalid value: "yesterday": spec.when in body must be of type date-time: '
                    '"yesterday"',
                )
            ],
            id="date-time format",
        ),
        pytest.param(
            {"size": 1, "when": "2024-01-02T03:04:05Z", "count": 2**31 - 1},
            [],
            id="the largest int32 and a date-time pass",
        ),
        pytest.param(
            {"size": 1, "count": 3_000_000_000},
            [
                (
                    "<nil>",
                    'Invalid value: "": Checked value must be of type integer with format int32 '
                    "in spec.count",
                )
            ],
            id="int32 bounds the value",
        ),
        pytest.param(
            {"size": 1, "list": [{"k": "a"}, {"k": 1}]},
            [
                (
                    "spec.list[1].k",
                    'Invalid value: "integer": spec.list[1].k in body must be of type string: '
                    '"integer"',
                )
            ],
            id="array items carry their index",
        ),
        pytest.param(
            {"size": 1, "quantity": True},
            [
                (
                    "spec.quantity",
                    'Invalid value: "boolean": spec.quantity in body must be of type '
                    'integer,string: "boolean"',
                ),
                (
                    "<nil>",
                    'Invalid value: "": "spec.quantity" must validate at least one schema (anyOf)',
                ),
                (
                    "spec.quantity",
                    'Invalid value: "boolean": spec.quantity in body must be of type integer: '
                    '"boolean"',
                ),
            ],
            id="int-or-string: the type, the anyOf, the first branch",
        ),
    ],
)
def test_validate(spec, expected):
    assert found(spec) == expected


def test_enum_is_not_supported_with_the_values():
    causes = schema.validate("green", {"type": "string", "enum": ["red", "blue"]}, "spec.color")
    assert [(c.field, c.body, c.kind[1]) for c in causes] == [
        (
            "spec.color",
            'Unsupported value: "green": supported values: "red", "blue"',
            "FieldValueNotSupported",
        )
    ]


def test_prune_keeps_declared_preserved_and_meta_fields():
    root = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer"},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "map": {"type": "object", "additionalProperties": {"type": "object"}},
                    "items": {"type": "array", "items": {"type": "object", "properties": {}}},
                },
            }
        },
    }
    meta = {"name": "x", "labels": {"a": "b"}, "junk": 1}
    obj = {
        "apiVersion": "g/v1",
        "kind": "K",
        "metadata": meta,
        "spec": {
            "a": 2.0,
            "b": 1,
            "free": {"q": {"r": 1.0}},
            "map": {"k": {"gone": 1}},
            "items": [{"gone": 1}],
        },
        "extra": 1,
    }

    pruned = schema.prune(obj, root)

    assert pruned == {
        "apiVersion": "g/v1",
        "kind": "K",
        "metadata": {"name": "x", "labels": {"a": "b"}},
        # 2.0 prints as 2, as Go prints a float64; undeclared fields go, except under
        # x-kubernetes-preserve-unknown-fields.
        "spec": {"a": 2, "free": {"q": {"r": 1}}, "map": {"k": {}}, "items": [{}]},
    }
    assert pruned["metadata"] is meta  # cut down in place


def test_defaults_replace_non_nullable_nulls_and_fill_missing_fields():
    node = {
        "type": "object",
        "properties": {
            "size": {"type": "integer", "default": 3},
            "opt": {"type": "string", "nullable": True},
            "gone": {"type": "string"},
            "nested": {
                "type": "object",
                "default": {},
                "properties": {"x": {"type": "integer", "default": 7}},
            },
            "list": {
                "type": "array",
                "items": {"type": "object", "properties": {"v": {"type": "integer", "default": 1}}},
            },
        },
    }
    value = {"size": None, "opt": None, "gone": None, "list": [{}, {"v": 5}]}

    schema.default(value, node)

    assert value == {"size": 3, "opt": None, "nested": {"x": 7}, "list": [{"v": 1}, {"v": 5}]}


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        pytest.param({"type": "object"}, [], id="an empty object"),
        pytest.param(
            {"type": "string"},
            [("r.type", 'Invalid value: "string": must be object at the root')],
            id="not an object at the root",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}
                },
            },
            [
                (
                    "r.properties[metadata]",
                    "Forbidden: must not specify anything other than name and generateName, "
                    "but metadata is implicitly specified",
                )
            ],
            id="metadata beyond name and generateName",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "a": {
                        "type": "object",
                        "properties": {"b": {"type": "string"}},
                        "additionalProperties": {"type": "string"},
                    }
                },
            },
            [
                (
                    "r.properties[a].additionalProperties",
                    "Forbidden: additionalProperties and properties are mutual exclusive",
                )
            ],
            id="properties and additionalProperties",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "array", "items": {}}}},
            [
                (
                    "r.properties[a].items.type",
                    "Required value: must not be empty for specified array items",
                )
            ],
            id="array items without a type",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "strin"}}},
            [
                (
                    "r.properties[a].type",
                    'Unsupported value: "strin": supported values: "array", "boolean", '
                    '"integer", "number", "object", "string"',
                )
            ],
            id="an unknown type",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "a": {"type": "object", "anyOf": [{"properties": {"b": {"type": "string"}}}]}
                },
            },
            [
                (
                    "r.properties[a].anyOf[0].properties[b].type",
                    "Forbidden: must be empty to be structural",
                )
            ],
            id="a type inside anyOf",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "q": {
                        "x-kubernetes-int-or-string": True,
                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                    }
                },
            },
            [],
            id="int-or-string's anyOf of integer and string is allowed",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"c": {"type": "string", "minLength": 3, "default": "x"}},
            },
            [
                (
                    "r.properties[c].default",
                    'Invalid value: "x":  in body should be at least 3 chars long',
                )
            ],
            id="a default that does not validate",
        ),
    ],
)
def test_structural_schema(root, expected):
    causes = crd_validation.root_causes(root, "r")
    assert [(c.field, c.body) for c in causes] == expected
