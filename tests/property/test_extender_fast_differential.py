"""Differential tests: the typed fast paths (asched.framework.extender_fast) take only what
the general reader takes, and give exactly its answer.

Each generated answer (the shapes of test_extender_answers_differential: exact entries,
other key cases, nulls, floats, booleans, huge scores, repeated and unsent hosts, names
both feasible and failed) is encoded to bytes. Whenever the fast path answers (not None),
the general reader, given the same bytes decoded, must answer the same, in the same order,
and not raise.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import assume, given, settings, strategies as st

from asched.errors import ExtenderError
from asched.framework import extender_protocol as protocol
from asched.framework.extender_fast import fast_filter_result, fast_host_scores
from tests.property.test_extender_answers_differential import (
    ANSWERS,
    FILTER_ANSWERS,
    SENT,
    SITE,
)


def _encoded(answer: Any) -> bytes:
    try:
        return orjson.dumps(answer)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: no extender can send it
        assume(False)
        raise


def _general(call: Any) -> tuple[str, Any]:
    try:
        return "ok", call()
    except ExtenderError as exc:
        return "error", exc.detail


@settings(max_examples=500, derandomize=True)
@given(ANSWERS, st.sampled_from((1, 10, 30)))
def test_fast_host_scores_only_take_what_the_general_reader_gives(answer: Any, factor: int) -> None:
    raw = _encoded(answer)
    fast = fast_host_scores(raw, SENT, factor)
    general = _general(lambda: protocol.host_scores(SITE, orjson.loads(raw), SENT, factor))
    if fast is not None:
        assert general == ("ok", fast)
        assert list(general[1]) == list(fast)  # the answer's order too


@settings(max_examples=500, derandomize=True)
@given(FILTER_ANSWERS)
def test_fast_filter_result_only_takes_what_the_general_reader_gives(
    answer: dict[str, Any],
) -> None:
    raw = _encoded(answer)
    fast = fast_filter_result(raw, SENT)
    general = _general(
        lambda: protocol.parse_filter_result(SITE, orjson.loads(raw), SENT, node_cache_capable=True)
    )
    if fast is not None:
        assert general == ("ok", fast)


EXACT = st.lists(
    st.tuples(st.sampled_from((*SENT, "gone", "other")), st.integers(-(2**40), 2**40)),
    unique_by=lambda pair: pair[0],
    max_size=7,
)


@settings(max_examples=200, derandomize=True)
@given(EXACT, st.sampled_from((1, 10, 30)))
def test_exact_answers_take_the_fast_path(pairs: list[tuple[str, int]], factor: int) -> None:
    """Exact entries naming each host once are the fast path's (it cannot decline all)."""
    raw = orjson.dumps([{"Host": host, "Score": score} for host, score in pairs])
    expected = protocol.host_scores(SITE, orjson.loads(raw), SENT, factor)
    assert fast_host_scores(raw, SENT, factor) == expected


@settings(max_examples=200, derandomize=True)
@given(st.lists(st.sampled_from(tuple(SENT)), unique=True), st.sampled_from(("gone", "n0")))
def test_exact_filter_answers_take_the_fast_path(names: list[str], failed: str) -> None:
    answer = {"NodeNames": names, "FailedNodes": {failed: "full"}, "Error": ""}
    raw = orjson.dumps(answer)
    general = _general(
        lambda: protocol.parse_filter_result(SITE, answer, SENT, node_cache_capable=True)
    )
    fast = fast_filter_result(raw, SENT)
    if general[0] == "ok":
        assert fast == general[1]
    else:  # n0 both feasible and failed: declined, the general reader raises
        assert fast is None
