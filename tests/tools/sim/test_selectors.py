"""Label and field selectors: parsing, matching and the real server's 400 messages."""

from __future__ import annotations

import pytest

from asched.tools.sim.apiserver import apierrors
from asched.tools.sim.apiserver.resources import BY_GVR
from asched.tools.sim.apiserver.selectors import parse_fields, parse_labels, structured_matches

PODS = BY_GVR[("", "v1", "pods")]
LABELS = {"app": "web", "tier": "fe", "n": "5"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("", True, id="empty selects everything"),
        pytest.param("app=web", True, id="equality"),
        pytest.param("app==web", True, id="double equality"),
        pytest.param("app=db", False, id="equality, other value"),
        pytest.param("app!=db", True, id="inequality"),
        pytest.param("missing!=x", True, id="inequality matches a missing key"),
        pytest.param("app in (web,db)", True, id="set in"),
        pytest.param("app in (db)", False, id="set in, absent value"),
        pytest.param("app notin (db)", True, id="set notin"),
        pytest.param("missing notin (db)", True, id="notin matches a missing key"),
        pytest.param("tier", True, id="exists"),
        pytest.param("!tier", False, id="does not exist, key present"),
        pytest.param("!missing", True, id="does not exist"),
        pytest.param("app=web,tier=fe", True, id="conjunction"),
        pytest.param("app=web, tier=be", False, id="conjunction, one fails"),
        pytest.param("n>4", True, id="greater than"),
        pytest.param("n<5", False, id="less than, equal value"),
        pytest.param("app=", False, id="empty value only matches an empty label"),
    ],
)
def test_label_selector_matching(selector, expected):
    assert parse_labels(selector).matches(LABELS) is expected


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        # The messages of apimachinery v1.37's labels parser (measured; v1.20 listed the
        # operators as "'=', '!=', '==', 'in', notin'" and gave field errors no path).
        pytest.param(
            "tier in a",
            "unable to parse requirement: found 'a' expected: '('",
            id="in without parenthesis",
        ),
        pytest.param(
            "a b",
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
            id="missing operator",
        ),
        pytest.param("a=b c", "found 'c', expected: ',' or 'end of string'", id="trailing garbage"),
        pytest.param("a,", "found '', expected: identifier after ','", id="dangling comma"),
        pytest.param("=a", "found '=', expected: !, identifier, or 'end of string'", id="no key"),
        pytest.param(
            "n>x",
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' "
            "operators, the value must be an integer",
            id="gt needs an integer",
        ),
        pytest.param(
            "a notin (x, -y-)",
            'unable to parse requirement: values[0][a]: Invalid value: "-y-": a valid label must '
            "be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
            "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            id="a bad value: its index among the sorted values",
        ),
    ],
)
def test_label_selector_errors_are_400_with_upstream_messages(selector, message):
    with pytest.raises(apierrors.StatusError) as caught:
        parse_labels(selector)
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        400,
        "BadRequest",
        message,
    )


def test_label_selector_rejects_an_invalid_key():
    with pytest.raises(apierrors.StatusError) as caught:
        parse_labels("-a=b")
    assert caught.value.message.startswith(
        'unable to parse requirement: <nil>: Invalid value: "-a": '
    )


POD = {
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"nodeName": "", "schedulerName": "default-scheduler"},
    "status": {"phase": "Running"},
}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("metadata.name=p", True, id="name"),
        pytest.param("metadata.namespace==ns", True, id="namespace, double equals"),
        pytest.param("spec.nodeName=", True, id="unbound: empty node name"),
        pytest.param("spec.nodeName!=", False, id="bound only"),
        pytest.param(
            "status.phase!=Succeeded,status.phase!=Failed", True, id="the scheduler's pod selector"
        ),
        pytest.param("spec.schedulerName=other", False, id="other scheduler"),
        pytest.param(r"metadata.name=a\,b", False, id="escaped comma"),
    ],
)
def test_field_selector_matching(selector, expected):
    assert parse_fields(selector, PODS.fields).matches(POD) is expected


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param("spec.foo=x", "field label not supported: spec.foo", id="unknown field"),
        pytest.param(
            "spec.nodeName",
            "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'",
            id="no operator",
        ),
    ],
)
def test_field_selector_errors_are_400(selector, message):
    with pytest.raises(apierrors.StatusError) as caught:
        parse_fields(selector, PODS.fields)
    assert (caught.value.code, caught.value.message) == (400, message)


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param({}, True, id="empty selector selects all"),
        pytest.param(None, False, id="null selector selects nothing"),
        pytest.param({"matchLabels": {"app": "web"}}, True, id="matchLabels"),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]},
            False,
            id="In",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]},
            True,
            id="DoesNotExist",
        ),
    ],
)
def test_structured_label_selector(selector, expected):
    assert structured_matches(selector, LABELS) is expected
