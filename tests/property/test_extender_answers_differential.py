"""Differential tests: the extender answers' fast paths against their plain definitions.

:func:`~asched.extenders.protocol.host_scores` (one pass for exact entries) must
give what reading every entry with :func:`parse_host_priorities` and adding up
``score * factor`` per host gives, and raise the same error. :func:`parse_filter_result`
(set operations in C) must give what the per-name definition below gives, and raise the
same error. Hypothesis mixes exact answers with every irregular shape the general reader
handles: other key cases, nulls, floats, booleans, huge scores, repeated hosts, hosts and
failed nodes that were not sent, names both feasible and failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from asched.errors import ExtenderError
from asched.extenders import protocol
from asched.extenders.protocol import CallSite, FilterAnswer

SITE = CallSite("http://ext/verb", "verb")
SENT_NAMES = ("n0", "n1", "n2", "n3", "n4")
SENT = dict.fromkeys(SENT_NAMES)
HOSTS = st.sampled_from((*SENT_NAMES, "gone", "other"))
SCORES = st.one_of(
    st.integers(-3, 12),
    st.sampled_from((2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 5.0, 2.5, True, "5", None)),
)


def _entry() -> st.SearchStrategy[Any]:
    exact = st.builds(lambda h, s: {"Host": h, "Score": s}, HOSTS, st.integers(0, 10))
    odd = st.one_of(
        st.builds(lambda h, s: {"Host": h, "Score": s}, HOSTS, SCORES),
        st.builds(lambda h, s: {"host": h, "score": s}, HOSTS, SCORES),
        st.builds(lambda h: {"Host": h}, HOSTS),
        st.builds(lambda h, s: {"Host": h, "Score": s, "Extra": 1}, HOSTS, SCORES),
        st.sampled_from(("n1", 3, None, [])),
        st.builds(lambda s: {"Host": 7, "Score": s}, SCORES),
    )
    return st.one_of(exact, exact, exact, odd)


ANSWERS = st.one_of(
    st.lists(_entry(), max_size=8),
    st.lists(
        st.builds(lambda h, s: {"Host": h, "Score": s}, st.sampled_from(SENT_NAMES), st.integers())
    ),
    st.sampled_from((None, {}, "x", 3)),
)


def _outcome(call: Any) -> tuple[str, Any]:
    try:
        return "ok", call()
    except ExtenderError as exc:
        return "error", exc.detail


def _plain_host_scores(answer: Any, factor: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for host, score in protocol.parse_host_priorities(SITE, answer, SENT):
        out[host] = out.get(host, 0) + score * factor
    return out


@settings(max_examples=400, derandomize=True)
@given(ANSWERS, st.sampled_from((1, 10, 30)))
def test_host_scores_is_the_sum_of_the_checked_pairs(answer: Any, factor: int) -> None:
    fast = _outcome(lambda: protocol.host_scores(SITE, answer, SENT, factor))
    assert fast == _outcome(lambda: _plain_host_scores(answer, factor))


# ------------------------------------------------------------------ the filter answer
def _plain_known(names: list[str], sent: Mapping[str, Any], what: str) -> list[str]:
    out: dict[str, None] = {}
    for name in names:
        if name not in sent:
            raise SITE.error(f"{what} names node {protocol._quote(name)}, which was not sent")
        out.setdefault(name, None)
    return list(out)


def _plain_reasons(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SITE.error(
            f"{what} must be an object of node name to reason, got {protocol._kind(value)}"
        )
    return {
        str(name): protocol._string(SITE, reason, f"{what}[{protocol._quote(str(name))}]")
        for name, reason in value.items()
    }


def _plain_filter(answer: Any) -> FilterAnswer:
    """parse_filter_result for nodeCacheCapable answers, one name at a time."""
    fields = protocol._fields(
        SITE,
        answer,
        "the answer",
        ("Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"),
    )
    message = protocol._string(SITE, fields.get("Error"), "Error")
    if message:
        raise SITE.error(message)
    raw = fields.get("NodeNames")
    if raw is not None and not isinstance(raw, list):
        raise SITE.error(f"NodeNames must be a list of strings, got {protocol._kind(raw)}")
    if raw is not None:
        names = [protocol._string(SITE, item, f"NodeNames[{i}]") for i, item in enumerate(raw)]
        feasible = _plain_known(names, SENT, "NodeNames")
    else:
        nodes = protocol._node_names(SITE, fields.get("Nodes")) or []
        feasible = _plain_known(nodes, SENT, "Nodes")
    failed = _plain_reasons(fields.get("FailedNodes"), "FailedNodes")
    unresolvable = _plain_reasons(
        fields.get("FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes"
    )
    both = [name for name in feasible if name in failed or name in unresolvable]
    if both:
        raise SITE.error(f"node {protocol._quote(both[0])} is both feasible and failed")
    return FilterAnswer(
        tuple(feasible),
        {name: reason for name, reason in failed.items() if name in SENT},
        {name: reason for name, reason in unresolvable.items() if name in SENT},
    )


NAMES = st.sampled_from((*SENT_NAMES, "gone"))
REASONS = st.one_of(st.sampled_from(("full", "")), st.sampled_from((None, 3, False)))
FILTER_ANSWERS = st.fixed_dictionaries(
    {},
    optional={
        "NodeNames": st.one_of(
            st.lists(NAMES, max_size=6),
            st.lists(st.one_of(NAMES, st.just(2)), max_size=3),
            st.none(),
            st.just("n1"),
        ),
        "FailedNodes": st.one_of(
            st.dictionaries(NAMES, st.sampled_from(("full", "busy")), max_size=3),
            st.dictionaries(NAMES, REASONS, max_size=3),
            st.none(),
            st.just(["n1"]),
        ),
        "FailedAndUnresolvableNodes": st.one_of(
            st.dictionaries(NAMES, st.sampled_from(("gone",)), max_size=3), st.none()
        ),
        "Error": st.sampled_from(("", "broken", None)),
    },
)


@settings(max_examples=400, derandomize=True)
@given(FILTER_ANSWERS)
def test_filter_answer_matches_the_per_name_definition(answer: dict[str, Any]) -> None:
    fast = _outcome(
        lambda: protocol.parse_filter_result(SITE, answer, SENT, node_cache_capable=True)
    )
    assert fast == _outcome(lambda: _plain_filter(answer))


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(
            [{"Host": "n1", "Score": 3}, {"Host": "n2", "Score": 10}],
            {"n1": 30, "n2": 100},
            id="exact entries: score x factor (3 x 10, 10 x 10)",
        ),
        pytest.param(
            [{"Host": "n1", "Score": 3}, {"Host": "n1", "Score": 4}],
            {"n1": 70},
            id="a host answered twice: (3 + 4) x 10",
        ),
        pytest.param(
            [{"Host": "n1", "Score": 3}, {"host": "n2", "score": 1}],
            {"n1": 30, "n2": 10},
            id="an entry in another case: the general reader (3 x 10, 1 x 10)",
        ),
        pytest.param(
            [{"Host": "gone", "Score": 3}, {"Host": "n4", "Score": 0}],
            {"n4": 0},
            id="a host that was not sent is dropped",
        ),
    ],
)
def test_host_scores(answer: Any, expected: dict[str, int]) -> None:
    assert protocol.host_scores(SITE, answer, SENT, 10) == expected
