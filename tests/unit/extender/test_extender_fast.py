"""The wire format's fast paths (asched.extenders.fast) against the general reader.

A body rendered from bytes must be orjson's encoding of the dict form, byte for byte. An
answer the fast path takes must come out as the general reader makes it; any other must
be declined (None) and, through an Extender, fail with the general reader's very error.
The names sent are picked from a per-table cache that must follow the table: a node
deleted and another taking its row, a node moving to another zone.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import numpy as np
import orjson
import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.config.types import ExtenderConfig
from asched.errors import ExtenderError
from asched.extenders import consult, protocol
from asched.extenders.client import _plain as client_plain
from asched.extenders.extender import Extender
from asched.extenders.fast import (
    AlignedScores,
    EncodedPod,
    fast_filter_result,
    fast_host_scores,
    render_names_args,
)
from asched.extenders.filter_score import run_filters
from asched.extenders.protocol import CallSite, FilterAnswer
from asched.extenders.sent_names import NameTable, SentNames
from tests.builders import make_node, make_pod

SENT = dict.fromkeys(["node1", "node2", "node3"])


def sent() -> SentNames:
    return SentNames(list(SENT))


PRIORITY_SITE = CallSite("http://canned/prioritize", "prioritize")
FILTER_SITE = CallSite("http://canned/filter", "filter")

ODD_NAMES = [
    pytest.param([], id="no names"),
    pytest.param(["node-1", "node-2"], id="plain"),
    pytest.param(['a"quote', "back\\slash", "tab\there", "nl\nx"], id="quotes and escapes"),
    pytest.param(["nœud-é", "節点", "emoji-🚀", "\u2028line-sep"], id="unicode"),
    pytest.param(["\x00nul", "\x1fctl", "</script>"], id="control characters"),
]


@pytest.mark.parametrize("names", ODD_NAMES)
def test_rendered_args_are_orjsons_bytes_of_the_dict_form(names: list[str]) -> None:
    pod = {
        "metadata": {"name": 'p"ö', "labels": MappingProxyType({"k": "v"})},
        "spec": {"nodeName": "", "odd": frozenset({"b", "a"})},
    }
    # what the HTTP client sends for the dict form (read-only mappings and sets included)
    expected = orjson.dumps(protocol.extender_args(pod, names, None), default=client_plain)
    encoded = EncodedPod(pod)
    assert render_names_args(encoded, names) == expected
    assert render_names_args(encoded, tuple(names)) == expected  # a tuple too, pod reused


# answers, as JSON text, that both readers take (the fast path must agree)
GOOD_PRIORITIES = [
    pytest.param(b"[]", {}, id="empty list"),
    pytest.param(
        b'[{"Host":"node1","Score":3},{"Host":"node2","Score":10}]',
        {"node1": 60, "node2": 200},  # 3 * 2 * 10, 10 * 2 * 10
        id="two hosts",
    ),
    pytest.param(
        b'[{"Score":-1,"Host":"node2"},{"Host":"node9","Score":5}]',
        {"node2": -20},  # -1 * 20; node9 was not sent: dropped
        id="keys in another order, an unsent host dropped, negative score",
    ),
    pytest.param(
        b'[{"Host":"node1","Score":9223372036854775807}]',
        {"node1": 9223372036854775807 * 20},  # int64 max * 20: beyond int64, exact
        id="int64 max scaled beyond int64",
    ),
    pytest.param(
        b' [ {"Host":"node3", "Score":0} ] \n', {"node3": 0}, id="whitespace around tokens"
    ),
]

# answers the fast path must decline: the general reader decides (a value or an error)
OTHER_PRIORITIES = [
    pytest.param(b"null", id="null"),
    pytest.param(b'[{"host":"node1","score":4}]', id="keys in another case"),
    pytest.param(b'[{"Host":"node1","Score":1,"Extra":2}]', id="an unknown key"),
    pytest.param(b'[{"Host":"node1","Score":1,"score":7}]', id="a key twice in two cases"),
    pytest.param(b'[{"Host":"node1","Score":2},{"Host":"node1","Score":3}]', id="host twice"),
    pytest.param(b'[{"Host":"node1","Score":5.0}]', id="a float score"),
    pytest.param(b'[{"Host":"node1","Score":true}]', id="a boolean score"),
    pytest.param(b'[{"Host":"node1","Score":9223372036854775808}]', id="int64 max + 1"),
    pytest.param(b'[{"Host":"node1","Score":18446744073709551616}]', id="beyond uint64"),
    pytest.param(b'[{"Host":null,"Score":1}]', id="a null host"),
    pytest.param(b'[{"Host":"node1"}]', id="a missing score"),
    pytest.param(b'{"Host":"node1","Score":1}', id="an object, not a list"),
    pytest.param(b'[{"Host":"node1","Score":1}', id="not JSON"),
    pytest.param(b'[{"Host":"\xff","Score":1}]', id="not UTF-8"),
    pytest.param(b'[{"Host":"\\ud800","Score":1}]', id="a lone surrogate"),
]

GOOD_FILTERS = [
    pytest.param(
        b'{"NodeNames":["node1"],"FailedNodes":{"node2":"busy"}}',
        FilterAnswer(("node1",), {"node2": "busy"}, {}),
        id="names and a failed node",
    ),
    pytest.param(
        b'{"NodeNames":["node3","node1"],"FailedNodes":{"node9":"x"},'
        b'"FailedAndUnresolvableNodes":{"node2":"zone"},"Error":"","Nodes":null}',
        FilterAnswer(("node3", "node1"), {}, {"node2": "zone"}),
        id="every key, an unsent failed node dropped, the extender's order kept",
    ),
    pytest.param(
        b'{"NodeNames":[],"FailedNodes":null}', FilterAnswer((), {}, {}), id="nothing left"
    ),
]

OTHER_FILTERS = [
    pytest.param(b'{"nodenames":["node2"]}', id="keys in another case"),
    pytest.param(b'{"NodeNames":["node1"],"Comment":"x"}', id="an unknown key"),
    pytest.param(b'{"NodeNames":null}', id="NodeNames null"),
    pytest.param(b"{}", id="no NodeNames"),
    pytest.param(b'{"NodeNames":["node1","node1"]}', id="a name twice"),
    pytest.param(b'{"NodeNames":["node9"]}', id="a name that was not sent"),
    pytest.param(b'{"NodeNames":["node1"],"FailedNodes":{"node1":"no"}}', id="feasible and failed"),
    pytest.param(b'{"Error":"out of stock"}', id="an Error"),
    pytest.param(b'{"NodeNames":[1]}', id="a name that is a number"),
    pytest.param(b'{"FailedNodes":{"node1":false}}', id="a reason that is a boolean"),
    pytest.param(b'{"NodeNames":["node1"],"Nodes":{"items":[]}}', id="Nodes set"),
    pytest.param(b"[]", id="a list"),
    pytest.param(b"nonsense", id="not JSON"),
]


@pytest.mark.parametrize(("raw", "expected"), GOOD_PRIORITIES)
def test_fast_host_scores_equal_the_general_readers(raw: bytes, expected: dict[str, int]) -> None:
    general = protocol.host_scores(PRIORITY_SITE, orjson.loads(raw), SENT, 20)
    assert general == expected
    fast = fast_host_scores(raw, sent(), 20)
    assert fast == expected
    assert list(fast or {}) == list(general)  # the answer's order too


INT64_MAX = 2**63 - 1


@pytest.mark.parametrize(
    ("score", "aligned"),
    [
        pytest.param(INT64_MAX // 20, True, id="max // 20: its product fits int64"),
        pytest.param(INT64_MAX // 20 + 1, False, id="max // 20 + 1: its product does not"),
        pytest.param(-(2**63 // 20), True, id="-(2**63 // 20): its product is int64"),
        pytest.param(-(2**63 // 20) - 1, False, id="one less: its product is not"),
    ],
)
def test_scores_whose_products_leave_int64_are_scaled_exactly(score: int, aligned: bool) -> None:
    """Weight 2 (factor 20): an in-order answer is scaled in NumPy only when every
    product fits int64; otherwise in Python ints, as the general reader scales it."""
    raw = orjson.dumps([{"Host": name, "Score": score} for name in SENT])
    general = protocol.host_scores(PRIORITY_SITE, orjson.loads(raw), SENT, 20)
    fast = fast_host_scores(raw, sent(), 20)
    assert fast == general == dict.fromkeys(SENT, score * 20)
    assert isinstance(fast, AlignedScores) is aligned


@pytest.mark.parametrize("raw", OTHER_PRIORITIES)
def test_fast_host_scores_decline_what_they_do_not_take(raw: bytes) -> None:
    assert fast_host_scores(raw, sent(), 20) is None


@pytest.mark.parametrize(("raw", "expected"), GOOD_FILTERS)
def test_fast_filter_result_equals_the_general_readers(raw: bytes, expected: FilterAnswer) -> None:
    general = protocol.parse_filter_result(
        FILTER_SITE, orjson.loads(raw), SENT, node_cache_capable=True
    )
    assert general == expected
    assert fast_filter_result(raw, sent()) == expected


@pytest.mark.parametrize("raw", OTHER_FILTERS)
def test_fast_filter_result_declines_what_it_does_not_take(raw: bytes) -> None:
    assert fast_filter_result(raw, sent()) is None


class Plain:
    """A transport with ``post`` only: the general reader's path."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.bodies: list[bytes] = []

    def url(self, verb: str) -> str:
        return f"http://canned/{verb}"

    async def post(self, verb: str, body: Any) -> Any:
        self.bodies.append(orjson.dumps(body))
        try:
            return orjson.loads(self.raw)
        except orjson.JSONDecodeError as exc:  # as ExtenderClient.post words it
            raise ExtenderError(self.url(verb), verb, f"the answer is not JSON ({exc})") from None

    async def close(self) -> None:
        pass


class Raw(Plain):
    """The same answers through ``post_bytes``: the fast path, and its fallback."""

    async def post_bytes(self, verb: str, data: bytes) -> bytes:
        self.bodies.append(data)
        return self.raw


def extender(transport: Plain) -> Extender:
    config = ExtenderConfig(
        url_prefix="http://canned",
        filter_verb="filter",
        prioritize_verb="prioritize",
        weight=2,
        node_cache_capable=True,
    )
    return Extender(config, transport)


async def outcome(call: Any) -> Any:
    try:
        return ("answer", await call)
    except ExtenderError as exc:
        return ("error", exc.url, exc.verb, exc.detail)


POD = {"metadata": {"name": "p", "namespace": "ns"}, "spec": {}}


def _unused(name: str) -> Any:
    raise AssertionError(f"node objects asked for {name} of a nodeCacheCapable extender")


@pytest.mark.parametrize(
    "raw", [p.values[0] for p in GOOD_PRIORITIES] + [p.values[0] for p in OTHER_PRIORITIES]
)
async def test_prioritize_gives_the_general_readers_answer_or_error(raw: bytes) -> None:
    plain, fast = Plain(raw), Raw(raw)
    names = list(SENT)
    expected = await outcome(extender(plain).prioritize(POD, names, _unused))
    assert await outcome(extender(fast).prioritize(POD, names, _unused)) == expected
    assert fast.bodies == plain.bodies  # the same request, byte for byte


@pytest.mark.parametrize(
    "raw", [p.values[0] for p in GOOD_FILTERS] + [p.values[0] for p in OTHER_FILTERS]
)
@pytest.mark.parametrize("how", ["names", "picked"])
async def test_filter_gives_the_general_readers_answer_or_error(raw: bytes, how: str) -> None:
    plain, fast = Plain(raw), Raw(raw)
    names = list(SENT)
    expected = await outcome(extender(plain).filter(POD, names, _unused))
    given = sent()
    if how == "picked":  # from a table that also holds other names, around them
        table = NameTable(["other", *names, "unsent"])
        given = table.pick(np.arange(1, len(names) + 1, dtype=np.intp))
    assert await outcome(extender(fast).filter(POD, given, _unused)) == expected
    assert fast.bodies == plain.bodies


async def test_a_non_json_answer_fails_with_the_clients_words() -> None:
    """Through the fast path's fallback the detail is the HTTP client's own."""
    got = await outcome(extender(Raw(b"<html>")).filter(POD, list(SENT), _unused))
    assert got[:3] == ("error", "http://canned/filter", "filter")
    assert got[3].startswith("the answer is not JSON (")


# ------------------------------------------------------------------ names_of's cache
def _table(*nodes: tuple[str, str]) -> NodeTable:
    table = NodeTable()
    for name, zone in nodes:
        table.upsert_node(
            decode_node(make_node(name, labels={"topology.kubernetes.io/zone": zone}))
        )
    return table


def _expected(table: NodeTable, candidates: np.ndarray) -> list[str]:
    return [str(table.names[row]) for row in table.order().tolist() if candidates[row]]


def named(table: NodeTable, candidates: np.ndarray) -> tuple[list[str], list[int]]:
    """names_of's names and rows, as lists."""
    sent, rows = consult.names_of(table, candidates)
    return sent.names, rows.tolist()


def test_names_are_not_reused_after_a_node_is_replaced_in_its_row() -> None:
    table = _table(("a", "z1"), ("b", "z1"), ("c", "z1"))
    every = np.ones(table.size, dtype=np.bool_)
    assert named(table, every) == (["a", "b", "c"], [0, 1, 2])
    row = table.row_of("b")
    table.remove_node("b")
    table.upsert_node(decode_node(make_node("x", labels={"topology.kubernetes.io/zone": "z1"})))
    assert table.row_of("x") == row  # the free row was taken again
    names, rows = named(table, np.ones(table.size, dtype=np.bool_))
    assert names == _expected(table, np.ones(table.size, dtype=np.bool_))
    assert "b" not in names
    assert "x" in names
    assert rows == [table.row_of(name) for name in names]


def test_names_follow_a_node_that_moves_to_another_zone() -> None:
    """A zone change reorders the nodes without a new epoch: the cache must follow."""
    table = _table(("a", "z1"), ("b", "z1"), ("c", "z2"), ("d", "z2"))
    every = np.ones(table.size, dtype=np.bool_)
    before = named(table, every)[0]
    assert before == ["a", "c", "b", "d"]  # zones interleaved: z1, z2, z1, z2
    epoch = table.epoch
    table.upsert_node(decode_node(make_node("a", labels={"topology.kubernetes.io/zone": "z2"})))
    assert table.epoch == epoch  # no structural change, yet the order moved
    after = named(table, every)[0]
    assert after == _expected(table, every)
    assert after != before


def test_only_the_candidates_are_named() -> None:
    table = _table(("a", "z1"), ("b", "z2"), ("c", "z1"))
    candidates = np.array([True, False, True])
    assert named(table, candidates) == (["a", "c"], [0, 2])


@pytest.mark.parametrize("names", [*ODD_NAMES, pytest.param(["n", "x" * 253], id="lengths")])
def test_names_are_sent_as_orjson_encodes_them(names: list[str]) -> None:
    """names_of picks the candidates' JSON from NUL-padded fragments: joined, they must be
    orjson's bytes of the names, whatever the names hold (a NUL in a name is escaped by
    JSON, so the padding never eats one), with each name's hash beside it."""
    table = _table(*((name, "z1") for name in names))
    for every_other in (False, True):
        candidates = np.ones(table.size, dtype=np.bool_)
        if every_other:
            candidates[::2] = False
        sent, rows = consult.names_of(table, candidates)
        expected = _expected(table, candidates)
        assert sent.json == orjson.dumps(expected)
        assert sent.names == expected
        assert rows.tolist() == [table.row_of(name) for name in expected]
        located = sent.locate(expected)
        assert located is not None
        assert list(located) == list(range(len(expected)))  # each name where it was sent


# ------------------------------------------------------------------ positions through a chain
class Ruled(Raw):
    """Answers each filter call by a rule over the names it was sent."""

    def __init__(self, rule: Callable[[list[str]], dict[str, Any]]) -> None:
        super().__init__(b"")
        self.rule = rule

    async def post_bytes(self, verb: str, data: bytes) -> bytes:
        self.bodies.append(data)
        return orjson.dumps(self.rule(orjson.loads(data)["NodeNames"]))


def failing(*failed: str, reverse: bool = False, say: bool = True) -> Ruled:
    """Fail ``failed`` (named in FailedNodes unless not ``say``); the others in the order
    sent, or reversed."""

    def rule(names: list[str]) -> dict[str, Any]:
        kept = [name for name in names if name not in failed]
        reasons = {name: "no" for name in names if name in failed and say}
        return {"NodeNames": kept[::-1] if reverse else kept, "FailedNodes": reasons}

    return Ruled(rule)


FIVE = ["node1", "node2", "node3", "node4", "node5"]


@pytest.mark.parametrize(
    ("chain", "feasible", "positions"),
    [
        pytest.param(
            [failing("node2"), failing("node4")],
            ("node1", "node3", "node5"),
            [0, 2, 4],  # the first keeps 0, 2, 3, 4; the second drops its third (3)
            id="both in the order sent: positions composed",
        ),
        pytest.param(
            [failing("node2"), failing("node4", reverse=True)],
            ("node5", "node3", "node1"),
            None,
            id="the second reverses: positions unknown",
        ),
        pytest.param(
            [failing("node2", say=False), failing("node4")],
            ("node1", "node3", "node5"),
            None,
            id="the first drops a node without a word: positions unknown",
        ),
        pytest.param(
            [failing(), failing("node1", "node5")],
            ("node2", "node3", "node4"),
            [1, 2, 3],
            id="the first keeps all",
        ),
    ],
)
async def test_positions_follow_the_chain_of_filters(
    chain: list[Ruled], feasible: tuple[str, ...], positions: list[int] | None
) -> None:
    pod = decode_pod(make_pod("p"))
    extenders = [extender(transport) for transport in chain]
    outcome = await run_filters(extenders, pod, POD, FIVE, _unused)
    assert outcome.feasible == feasible
    got = None if outcome.positions is None else outcome.positions.tolist()
    assert got == positions


@pytest.mark.parametrize("how", ["names", "picked"])
def test_the_names_sent_are_located(how: str) -> None:
    """SentNames.locate: each name's index among the names sent (a, c, d sent: c is
    second), None when one was not sent (b) or is unknown (zz); made from the names, or
    picked from a NameTable that also holds b and x (names_of's way), the same answers.
    Only the picked ones are placed by name."""
    names = ["a", "c", "d"]
    sent = SentNames(names)
    if how == "picked":
        sent = NameTable(["b", "a", "x", "c", "d"]).pick(np.array([1, 3, 4], dtype=np.intp))
    located = sent.locate(["d", "a"])
    assert located is not None
    assert list(located) == [2, 0]
    assert sent.locate(["b"]) is None
    assert sent.locate(["x", "c"]) is None
    assert sent.locate(["a", "zz"]) is None
    assert (list(sent), len(sent), sent[1]) == (names, 3, "c")  # decoded when read
    assert sent.json == orjson.dumps(names)
    assert (sent.source is not None) == (how == "picked")  # placed by name


def test_a_subset_of_picked_names_is_still_placed_by_name() -> None:
    """The feasible names a filter leaves (SentNames.subset, what prioritize is sent)
    keep their places in the NameTable: c and e of a, c, d, e picked from a..e."""
    table = NameTable(["a", "b", "c", "d", "e"])
    sent = table.pick(np.array([0, 2, 3, 4], dtype=np.intp))
    kept = sent.subset(np.array([1, 3], dtype=np.intp), orjson.dumps(["c", "e"]))
    assert list(kept) == ["c", "e"]
    assert kept.source is not None
    located = kept.locate(["e"])
    assert located is not None
    assert list(located) == [1]
    assert kept.locate(["d"]) is None  # picked at first, not kept


class Misplacing(SentNames):
    """Places every name at index 0, as two names of one hash could be placed."""

    def locate(self, names: list[str]) -> np.ndarray:
        return np.zeros(len(names), dtype=np.intp)


def test_a_name_placed_wrongly_cannot_mislead_the_reader() -> None:
    """Two names of one hash may be placed wrongly by their hashes: the reader's final
    check (the names put back encode to the bytes sent) catches it, and the answer is
    read by name, the same answer, its positions not given."""
    names = ["node1", "node2", "node3"]
    answer = orjson.dumps({"NodeNames": ["node1", "node3"], "FailedNodes": {"node2": "no"}})
    honest = fast_filter_result(answer, SentNames(names))
    assert honest is not None
    assert honest.positions is not None
    assert honest.positions.tolist() == [0, 2]
    read = fast_filter_result(answer, Misplacing(names))
    assert read == honest
    assert read is not None
    assert read.positions is None


class Colliding(SentNames):
    """Places every name at index 1 (node2's), as a name sharing node2's hash would be."""

    def locate(self, names: list[str]) -> np.ndarray:
        return np.ones(len(names), dtype=np.intp)


def picked_as_sent(names: list[str]) -> SentNames:
    """``names`` picked, all of them, from a NameTable of them, as names_of picks."""
    return NameTable(names).pick(np.arange(len(names), dtype=np.intp))


def test_a_failed_name_placed_on_another_cannot_pass_for_it() -> None:
    """Names placed by hash: the answer's names, with the failed ones put back at the
    places their hashes gave, must encode to the names sent. A failed name that was not
    sent ("other"), placed where node2 was, must not pass for node2: the answer is read
    as the general reader reads it (other dropped, node2 dropped without a word), not as
    "other failed at node2's place"."""
    names = ["node1", "node2", "node3"]
    answer = {"NodeNames": ["node1", "node3"], "FailedNodes": {"other": "no"}}
    general = protocol.parse_filter_result(
        FILTER_SITE, answer, dict.fromkeys(names), node_cache_capable=True
    )
    assert general == FilterAnswer(("node1", "node3"), {}, {})
    read = fast_filter_result(orjson.dumps(answer), Colliding(names))
    assert read == general
    assert read is not None
    assert read.positions is None  # read by name


def test_an_answer_in_the_order_sent_is_taken_as_its_bytes() -> None:
    """Names picked from a NameTable, an answer in the order sent: its feasible names
    are the names sent at its positions, not decoded until read."""
    names = ["node1", "node2", "node3"]
    answer = orjson.dumps({"NodeNames": ["node1", "node3"], "FailedNodes": {"node2": "no"}})
    read = fast_filter_result(answer, picked_as_sent(names))
    assert read is not None
    assert isinstance(read.feasible, SentNames)
    assert read.feasible.json == b'["node1","node3"]'
    assert read.positions is not None
    assert read.positions.tolist() == [0, 2]
    assert read == FilterAnswer(("node1", "node3"), {"node2": "no"}, {})
