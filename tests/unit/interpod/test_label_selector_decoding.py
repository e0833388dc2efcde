"""metav1.LabelSelector decoding and matching (asched.tools.reference.labelselector).

Semantics of upstream's ``LabelSelectorAsSelector`` + ``Selector.Matches``: nil matches
nothing, ``{}`` matches everything, requirements are ANDed, ``NotIn`` and
``DoesNotExist`` hold for an absent key. Bad input raises DecodeError naming the field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from asched.errors import DecodeError
from asched.tools.reference import labelselector
from tests.builders import expr, label_selector

Decode = Callable[..., labelselector.LabelSelector]

#: A second implementation with the same signature is added here as a new entry.
IMPLEMENTATIONS: dict[str, Decode] = {"reference": labelselector.decode_label_selector}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def decode(request: Any) -> Decode:
    return IMPLEMENTATIONS[request.param]


LABELS = {"app": "web", "tier": "front", "empty": ""}

MATCH_CASES = [
    pytest.param(None, False, id="nil selector matches nothing"),
    pytest.param(label_selector(), True, id="empty selector matches everything"),
    pytest.param(label_selector({"app": "web"}), True, id="matchLabels equal"),
    pytest.param(label_selector({"app": "db"}), False, id="matchLabels different value"),
    pytest.param(label_selector({"zone": "a"}), False, id="matchLabels absent key"),
    pytest.param(label_selector(None, expr("app", "In", "db", "web")), True, id="In one of"),
    pytest.param(label_selector(None, expr("zone", "In", "a")), False, id="In absent key"),
    pytest.param(label_selector(None, expr("app", "NotIn", "db")), True, id="NotIn other value"),
    pytest.param(label_selector(None, expr("app", "NotIn", "web")), False, id="NotIn same value"),
    pytest.param(label_selector(None, expr("zone", "NotIn", "a")), True, id="NotIn absent key"),
    pytest.param(label_selector(None, expr("empty", "Exists")), True, id="Exists empty value"),
    pytest.param(label_selector(None, expr("zone", "Exists")), False, id="Exists absent"),
    pytest.param(label_selector(None, expr("zone", "DoesNotExist")), True, id="DoesNotExist"),
    pytest.param(
        label_selector(None, expr("app", "DoesNotExist")), False, id="DoesNotExist present"
    ),
    # matchLabels and every expression are ANDed: app=web holds, tier In [back] does not
    pytest.param(label_selector({"app": "web"}, expr("tier", "In", "back")), False, id="all ANDed"),
    pytest.param(
        label_selector({"app": "web"}, expr("tier", "In", "front"), expr("zone", "DoesNotExist")),
        True,
        id="all requirements hold",
    ),
]


@pytest.mark.parametrize(("raw", "expected"), MATCH_CASES)
def test_matches(decode: Decode, raw: Any, expected: bool) -> None:
    selector = decode(raw, obj="Pod default/p", path="spec.x")
    assert selector.matches(LABELS) is expected


ERROR_CASES = [
    pytest.param(
        label_selector(None, expr("app", "Equals", "web")),
        "spec.x.matchExpressions[0].operator",
        'Unsupported value: "Equals"',
        id="bad operator",
    ),
    pytest.param(
        label_selector(None, expr("app", "In")),
        "spec.x.matchExpressions[0].values",
        "Required value",
        id="In without values",
    ),
    pytest.param(
        label_selector(None, expr("app", "Exists", "web")),
        "spec.x.matchExpressions[0].values",
        "Forbidden",
        id="Exists with values",
    ),
    pytest.param(
        label_selector(None, expr("app", "In", "{{.bad-value.}}")),
        "spec.x.matchExpressions[0].values[0]",
        'Invalid value: "{{.bad-value.}}"',
        id="invalid label value",
    ),
    pytest.param(
        label_selector({"bad key!": "x"}),
        "spec.x.matchLabels.bad key!",
        'Invalid value: "bad key!"',
        id="invalid label key",
    ),
    pytest.param(["app"], "spec.x", "must be an object", id="not an object"),
]


@pytest.mark.parametrize(("raw", "path", "fragment"), ERROR_CASES)
def test_errors_name_the_field(decode: Decode, raw: Any, path: str, fragment: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode(raw, obj="Pod default/p", path="spec.x")
    assert caught.value.obj == "Pod default/p"
    assert caught.value.path == path
    assert fragment in caught.value.message


def test_invalid_selector_matches_nothing_where_upstream_ignores_it() -> None:
    raw = label_selector(None, expr("app", "Equals", "web"))
    assert labelselector.decode_or_nothing(raw, obj="PDB", path="spec.selector").nothing


def test_and_labels_leaves_the_nil_selector_nil() -> None:
    # upstream's mergeLabelSetWithSelector cannot list a nil selector's requirements
    assert labelselector.NOTHING.and_labels({"a": "b"}).nothing
    assert labelselector.EVERYTHING.and_labels({"a": "b"}).matches({"a": "b"})
    assert not labelselector.EVERYTHING.and_labels({"a": "b"}).matches({"a": "c"})
