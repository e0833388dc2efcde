"""The one label selector (asched.cluster.labelselector) and its callers' policies.

Upstream's ``LabelSelectorAsSelector`` + ``Selector.Matches``: nil matches nothing,
``{}`` matches everything, In/NotIn/Exists/DoesNotExist ANDed, NotIn and DoesNotExist
hold for an absent key. What an invalid selector means is the caller's: a pod's
affinity terms turn a bad key or value into a PreFilter status (upstream's NewPodInfo),
a PodDisruptionBudget whose selector does not parse selects no pod (upstream skips it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from asched.cluster.budgets import decode_budget
from asched.cluster.decode import decode_pod
from asched.cluster.labels import LabelColumns
from asched.cluster.labelselector import (
    EVERYTHING,
    NOTHING,
    LabelSelector,
    decode_deferring_syntax,
    decode_label_selector,
)
from asched.errors import DecodeError
from asched.tools.reference.interpod import pod_terms
from tests.builders import expr, label_selector, pod_info

LABELS = {"app": "web", "tier": "front", "empty": ""}


def decode(raw: Any) -> LabelSelector:
    return decode_label_selector(raw, obj="Pod default/p", path="spec.x")


@pytest.mark.parametrize(
    ("raw", "labels", "expected"),
    [
        pytest.param(None, {}, False, id="nil matches nothing, not even no labels"),
        pytest.param({}, {}, True, id="empty matches no labels"),
        pytest.param({}, LABELS, True, id="empty matches any labels"),
        pytest.param(
            {"matchLabels": None, "matchExpressions": None}, LABELS, True, id="null lists"
        ),
        pytest.param(label_selector({"empty": ""}), LABELS, True, id="matchLabels empty value"),
        pytest.param(label_selector({"zone": ""}), LABELS, False, id="matchLabels '' absent key"),
        pytest.param(
            label_selector(None, expr("zone", "NotIn", "a")), {}, True, id="NotIn, no labels"
        ),
        pytest.param(
            label_selector(None, expr("app", "NotIn", "db", "web")), LABELS, False, id="NotIn any"
        ),
        pytest.param(
            label_selector(None, expr("empty", "In", "")), LABELS, True, id="In the empty value"
        ),
        # matchLabels app=web and app In [db]: both must hold, and cannot at once
        pytest.param(
            label_selector({"app": "web"}, expr("app", "In", "db")),
            LABELS,
            False,
            id="same key twice, ANDed",
        ),
    ],
)
def test_matches(raw: Any, labels: dict[str, str], expected: bool) -> None:
    assert decode(raw).matches(labels) is expected


def test_constants_and_order() -> None:
    assert decode(None) == NOTHING
    assert NOTHING.nothing
    assert not NOTHING.empty
    assert decode({}) == EVERYTHING
    assert EVERYTHING.empty
    # matchLabels is a map: the document's key order does not make a different selector
    assert decode({"matchLabels": {"a": "1", "b": "2"}}) == decode(
        {"matchLabels": {"b": "2", "a": "1"}}
    )


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        pytest.param(
            label_selector(None, expr("app", "Near", "x")),
            "spec.x.matchExpressions[0].operator",
            'Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
            id="bad operator",
        ),
        pytest.param(
            label_selector(None, expr("app", "NotIn")),
            "spec.x.matchExpressions[0].values",
            "Required value: must be specified when `operator` is 'In' or 'NotIn'",
            id="NotIn without values",
        ),
        pytest.param(
            label_selector(None, expr("app", "DoesNotExist", "x")),
            "spec.x.matchExpressions[0].values",
            "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            id="DoesNotExist with values",
        ),
        pytest.param(
            {"matchExpressions": [{"operator": "Exists"}]},
            "spec.x.matchExpressions[0].key",
            'Invalid value: "": a qualified name must consist of alphanumeric characters, '
            "'-', '_' or '.', and must start and end with an alphanumeric character, with an "
            "optional DNS subdomain prefix and '/'",
            id="missing key",
        ),
        pytest.param(
            label_selector({"app": "-web"}),
            "spec.x.matchLabels.app",
            'Invalid value: "-web": a valid label must be an empty string or consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character",
            id="matchLabels value",
        ),
        pytest.param(
            {"matchLabels": {"app": 7}}, "spec.x.matchLabels.app", "must be a string, got 7", id="7"
        ),
        pytest.param(
            {"matchExpressions": {"key": "a"}},
            "spec.x.matchExpressions",
            "must be a list",
            id="map",
        ),
        pytest.param(
            label_selector(None, {"key": "a", "operator": "In", "values": "x"}),
            "spec.x.matchExpressions[0].values",
            "must be a list, got str",
            id="values a string",
        ),
    ],
)
def test_errors(raw: Any, path: str, message: str) -> None:
    with pytest.raises(DecodeError) as caught:
        decode(raw)
    assert (caught.value.obj, caught.value.path, caught.value.message) == (
        "Pod default/p",
        path,
        message,
    )


def test_deferred_syntax_returns_the_first_problem_and_the_selector() -> None:
    # a bad value in matchExpressions[0], then a bad key in [1]: the first is reported
    raw = label_selector(None, expr("app", "In", "-x"), expr("bad key", "Exists"))
    selector, problem = decode_deferring_syntax(raw, obj="Pod default/p", path="spec.x")
    assert problem is not None
    assert problem.path == "spec.x.matchExpressions[0].values[0]"
    assert problem.message.startswith('Invalid value: "-x"')
    assert len(selector.requirements) == 2
    # structural problems still raise
    with pytest.raises(DecodeError):
        decode_deferring_syntax(
            label_selector(None, expr("app", "Near")), obj="Pod default/p", path="spec.x"
        )


@pytest.mark.parametrize(
    ("raw", "expected_rows"),
    [
        pytest.param({}, [0, 1, 2], id="everything"),
        pytest.param(label_selector({"app": "web"}), [0], id="equality"),
        pytest.param(label_selector(None, expr("app", "In", "web", "db")), [0, 1], id="In"),
        pytest.param(label_selector(None, expr("app", "NotIn", "web")), [1, 2], id="NotIn absent"),
        pytest.param(label_selector(None, expr("app", "Exists")), [0, 1], id="Exists"),
        pytest.param(label_selector(None, expr("app", "DoesNotExist")), [2], id="DoesNotExist"),
        pytest.param(label_selector(None, expr("gone", "NotIn", "x")), [0, 1, 2], id="unknown key"),
    ],
)
def test_column_requirements(raw: Any, expected_rows: list[int]) -> None:
    pods = [{"app": "web"}, {"app": "db"}, {}]
    columns = LabelColumns(4)
    for row, labels in enumerate(pods):
        columns.set_row(row, labels)
    selector = decode(raw)
    mask = np.ones(3, dtype=np.bool_)
    for req in selector.column_requirements:
        mask &= columns.requirement(req.key, req.operator, req.values, slice(0, 3))
    assert np.flatnonzero(mask).tolist() == expected_rows
    assert [selector.matches(labels) for labels in pods] == [r in expected_rows for r in range(3)]


def _pod_with_anti_affinity(selector: Any) -> dict[str, Any]:
    terms = [{"topologyKey": "zone", "labelSelector": selector}]
    return {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "shop"},
        "spec": {
            "containers": [],
            "affinity": {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms}
            },
        },
    }


@pytest.mark.parametrize(
    "selector",
    [
        pytest.param(label_selector({"app": "{{.bad-value.}}"}), id="matchLabels value"),
        pytest.param(label_selector({"bad key!": "x"}), id="matchLabels key"),
        pytest.param({"matchExpressions": [{"operator": "Exists"}]}, id="missing key"),
        pytest.param(label_selector(None, expr("app", "In", "ok", "-no")), id="second value"),
    ],
)
def test_affinity_terms_report_bad_keys_and_values_as_the_reference_does(selector: Any) -> None:
    # policy: the kind of terms is dropped and its error becomes PreFilter's status
    raw = _pod_with_anti_affinity(selector)
    engine = decode_pod(raw).affinity
    assert engine is not None
    assert engine.required_anti == ()
    reference = pod_terms(pod_info(raw))
    assert engine.errors == reference.errors
    assert engine.errors[0].startswith(
        "requiredAntiAffinityTerms: spec.affinity.podAntiAffinity"
        ".requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.match"
    )


@pytest.mark.parametrize(
    ("selector", "selects_nothing"),
    [
        pytest.param(None, True, id="nil"),
        pytest.param({}, True, id="empty"),
        pytest.param(label_selector({"app": "web"}), False, id="valid"),
        pytest.param(label_selector({"app": "-web"}), True, id="invalid value"),
        pytest.param(label_selector(None, expr("app", "Near")), True, id="invalid operator"),
    ],
)
def test_budget_selector_that_does_not_parse_selects_nothing(
    selector: Any, selects_nothing: bool
) -> None:
    raw = {"metadata": {"name": "b", "namespace": "shop"}, "spec": {"selector": selector}}
    assert decode_budget(raw).selects_nothing is selects_nothing
