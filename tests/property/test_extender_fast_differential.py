"""Differential tests: the typed fast paths (asched.extenders.fast) take only what
the general reader takes, and give exactly its answer.

Each generated answer (the shapes of test_extender_answers_differential: exact entries,
other key cases, nulls, floats, booleans, huge scores, repeated and unsent hosts, names
both feasible and failed) is encoded to bytes. Whenever the fast path answers (not None),
the general reader, given the same bytes decoded, must answer the same, in the same order,
and not raise. An answer the fast path read in the order sent must say truly where each
name stood among those sent, and an answer in that order must be read so.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import orjson
from hypothesis import assume, example, given, settings, strategies as st

from asched.errors import ExtenderError
from asched.extenders import protocol
from asched.extenders.fast import AlignedScores, fast_filter_result, fast_host_scores
from asched.extenders.protocol import FilterAnswer
from asched.extenders.sent_names import NameTable, SentNames
from tests.property.test_extender_answers_differential import (
    ANSWERS,
    FILTER_ANSWERS,
    SENT,
    SENT_NAMES,
    SITE,
)

#: how the names sent are made: from the names (placed by hash); picked from a NameTable
#: of more names (placed by name), as names_of makes them: the table also holds "gone"
#: (never sent) between two sent names
HOW = st.sampled_from(("names", "picked"))
TABLE_NAMES = ["x0", "n0", "n1", "gone", "n2", "x1", "n3", "n4", "x2"]


def _sent(how: str = "names") -> SentNames:
    """The names sent, made as ``how`` says (:data:`HOW`): the picked ones take a
    filter answer in the order sent as its bytes."""
    if how == "picked":
        picks = np.array([TABLE_NAMES.index(n) for n in SENT_NAMES], dtype=np.intp)
        return NameTable(TABLE_NAMES).pick(picks)
    return SentNames(SENT_NAMES)


def _positions_hold(fast: FilterAnswer) -> None:
    """The positions, when given, name the feasible nodes among those sent."""
    if fast.positions is not None:
        assert tuple(SENT_NAMES[p] for p in fast.positions.tolist()) == fast.feasible


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
    fast = fast_host_scores(raw, _sent(), factor)
    general = _general(lambda: protocol.host_scores(SITE, orjson.loads(raw), SENT, factor))
    if fast is not None:
        assert general == ("ok", fast)
        assert list(general[1]) == list(fast)  # the answer's order too
        if isinstance(fast, AlignedScores):
            assert dict(zip(SENT_NAMES, fast.scores.tolist(), strict=True)) == general[1]


@settings(max_examples=500, derandomize=True)
@given(FILTER_ANSWERS, HOW)
def test_fast_filter_result_only_takes_what_the_general_reader_gives(
    answer: dict[str, Any], how: str
) -> None:
    raw = _encoded(answer)
    fast = fast_filter_result(raw, _sent(how))
    general = _general(
        lambda: protocol.parse_filter_result(SITE, orjson.loads(raw), SENT, node_cache_capable=True)
    )
    if fast is not None:
        assert general == ("ok", fast)
        _positions_hold(fast)


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
    assert fast_host_scores(raw, _sent(), factor) == expected


@settings(max_examples=200, derandomize=True)
@given(
    st.lists(st.sampled_from(tuple(SENT)), unique=True),
    st.sampled_from(("gone", "n0")),
    HOW,
)
def test_exact_filter_answers_take_the_fast_path(names: list[str], failed: str, how: str) -> None:
    answer = {"NodeNames": names, "FailedNodes": {failed: "full"}, "Error": ""}
    raw = orjson.dumps(answer)
    general = _general(
        lambda: protocol.parse_filter_result(SITE, answer, SENT, node_cache_capable=True)
    )
    fast = fast_filter_result(raw, _sent(how))
    if general[0] == "ok":
        assert fast == general[1]
    else:  # n0 both feasible and failed: declined, the general reader raises
        assert fast is None


# verdicts per name sent: kept, failed, unresolvable, or dropped without a word
VERDICTS = st.lists(
    st.sampled_from(("keep", "failed", "unresolvable", "dropped")),
    min_size=len(SENT_NAMES),
    max_size=len(SENT_NAMES),
)


@settings(max_examples=300, derandomize=True)
@given(VERDICTS, st.booleans(), st.booleans(), HOW, st.booleans(), st.booleans())
@example(["keep", "failed", "keep", "keep", "keep"], False, False, "picked", False, False)
@example(["failed", "keep", "unresolvable", "keep", "failed"], False, False, "picked", False, False)
@example(["keep", "failed", "keep", "keep", "keep"], False, True, "picked", False, False)
@example(["keep", "failed", "keep", "keep", "keep"], False, True, "names", False, False)
@example(["keep", "failed", "keep", "keep", "keep"], False, False, "picked", False, True)
def test_filter_answers_in_the_order_sent_carry_true_positions(
    verdicts: list[str], reverse: bool, both: bool, how: str, spaced: bool, stranger: bool
) -> None:
    """An answer whose feasible names are the names sent less its failed ones, in the
    order sent, is read with positions; a name dropped without a word, the feasible
    ones reversed, or a name both failed and unresolvable, by the dict path (or the
    general reader): the same answer either way. Names sent with their fragments
    (``how``: picked) take such an answer as their bytes, its names not
    decoded, unless it is encoded otherwise (``spaced``: Python's json.dumps, a space
    after each comma). ``stranger``: the answer also fails "gone", a name not sent
    (picked: a name of the table between two names sent), which the general reader
    drops and which must not be placed among the names sent."""
    kept = [n for n, v in zip(SENT_NAMES, verdicts, strict=True) if v == "keep"]
    failed = {n: "full" for n, v in zip(SENT_NAMES, verdicts, strict=True) if v == "failed"}
    gone = {n: "zone" for n, v in zip(SENT_NAMES, verdicts, strict=True) if v == "unresolvable"}
    if both and failed:
        gone[next(iter(failed))] = "zone"  # failed and unresolvable: upstream's both maps
    if stranger:
        failed["gone"] = "full"
    names = kept[::-1] if reverse else kept
    answer = {"NodeNames": names, "FailedNodes": failed, "FailedAndUnresolvableNodes": gone}
    raw = json.dumps(answer).encode() if spaced else orjson.dumps(answer)
    fast = fast_filter_result(raw, _sent(how))
    general = protocol.parse_filter_result(SITE, answer, SENT, node_cache_capable=True)
    assert fast == general
    assert general == fast  # SentNames equal a tuple of the same names, both ways
    _positions_hold(fast)
    in_order = (
        "dropped" not in verdicts
        and not (both and failed)
        and not stranger
        and (not reverse or len(kept) < 2)
    )
    assert (fast.positions is not None) == in_order
    as_bytes = in_order and how != "names" and not (spaced and len(kept) > 1)
    assert isinstance(fast.feasible, SentNames) == as_bytes
    assert list(fast.feasible) == names


@settings(max_examples=200, derandomize=True)
@given(st.permutations(SENT_NAMES), st.lists(st.integers(0, 10), min_size=5, max_size=5))
def test_prioritize_answers_in_the_order_sent_come_aligned(
    hosts: list[str], scores: list[int]
) -> None:
    raw = orjson.dumps([{"Host": h, "Score": s} for h, s in zip(hosts, scores, strict=True)])
    fast = fast_host_scores(raw, _sent(), 10)
    assert fast == protocol.host_scores(SITE, orjson.loads(raw), SENT, 10)
    assert isinstance(fast, AlignedScores) == (tuple(hosts) == SENT_NAMES)
