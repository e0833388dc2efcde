"""The extender wire format's fast paths: request bodies rendered from bytes, answers
decoded into typed structs in C (msgspec).

Every extender call of a ``nodeCacheCapable`` extender over a transport that speaks bytes
(:class:`RawTransport`, the HTTP client) goes through here:

* :func:`render_names_args` renders ``ExtenderArgs`` from the pod's JSON, encoded once
  per consultation (:class:`EncodedPod`), and the names, encoded by orjson in one call:
  the bytes are those of ``orjson.dumps(extender_args(pod, names, None))``.
* :func:`fast_filter_result` and :func:`fast_host_scores` decode an answer straight from
  its bytes into typed structs whose fields are upstream's exact names (no other key,
  no ``null`` where a value belongs, integers only), then check it with set operations.
  They accept only answers the general reader
  (:mod:`asched.extenders.protocol`) accepts, and return exactly what it
  would; for anything else (another key case, an unknown key, a ``null`` name list, a
  float, a repeated host, a name that was not sent, an ``Error``, bytes that are not
  JSON) they return None and the caller hands the answer to the general reader, so its
  errors and its leniency stay the only ones.
* **Answers in the order sent**, what an extender that walks the names it was given
  answers, are checked without a dict of names: a filter answer whose feasible names are
  the names sent less those it failed, in the order sent, and a prioritize answer that
  names the hosts sent in the order sent. The check compares bytes: the answer's names
  (with a filter's failed ones put back where they were sent) encode to the very JSON
  array the request carried (:attr:`SentNames.json`), so the names sent, the table's
  strings and cold in the caches by then, are not touched one by one (a filter's failed
  names are placed by name in the table's order, or by their hashes for names not
  picked from it). Such answers come out with the positions of
  their names among those sent (:attr:`FilterAnswer.positions`, :class:`AlignedScores`),
  so that the caller maps them to rows in NumPy. Any other answer takes the dict path,
  with the same result.
* **Names sent with their JSON fragments** (:meth:`NameTable.pick`, what a
  consultation sends: :func:`~asched.extenders.consult.names_of` picks them from the
  table's names in node order, encoded once, never reading a name string): a filter
  answer in the order sent is compared with them as bytes before its names are even
  decoded (``NodeNames`` kept raw). Its failed names are looked up once each, by name, in
  the table's order, and cleared from a mask of the names picked
  (:meth:`NameTable.kept`): exact, so nothing is checked after. Its feasible names are
  the :meth:`SentNames.subset` of those sent, which the prioritize call then sends as
  they are.

The names sent and their encodings (:class:`SentNames`, :class:`NameTable`) are in
:mod:`asched.extenders.sent_names`; this module reads the answers against them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Protocol

import msgspec
import numpy as np
import numpy.typing as npt
import orjson

from asched.extenders.protocol import FilterAnswer, RawObject
from asched.extenders.sent_names import SentNames, json_array

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


class RawTransport(Protocol):
    """A transport that also posts encoded bodies and returns the answer's bytes
    (:meth:`asched.extenders.client.ExtenderClient.post_bytes`)."""

    async def post_bytes(self, verb: str, data: bytes) -> bytes:
        """POST ``data`` (JSON) to ``verb``: the answer's body when its status is 200;
        ExtenderError otherwise."""
        ...


class EncodedPod:
    """A pod's JSON and, once asked for, its bytes: encoded once per consultation
    whatever the number of calls."""

    __slots__ = ("_data", "pod_json")

    def __init__(self, pod_json: RawObject) -> None:
        self.pod_json = pod_json
        self._data: bytes | None = None

    @property
    def data(self) -> bytes:
        """``orjson.dumps(pod_json)`` (read-only mappings as objects)."""
        if self._data is None:
            self._data = orjson.dumps(self.pod_json, default=_plain)
        return self._data


def _plain(value: Any) -> Any:
    """orjson's fallback for a pod's JSON, as the HTTP client's: read-only mappings as
    plain objects, sets as sorted lists."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def render_names_args(pod: EncodedPod, names: Sequence[str] | SentNames) -> bytes:
    """``{"Pod": ..., "Nodes": null, "NodeNames": [...]}`` as bytes, byte for byte what
    orjson makes of :func:`~asched.extenders.protocol.extender_args`' dict.

    The names are encoded by one ``orjson.dumps`` of the list: for 500 names that is a
    few microseconds, less than looking up 500 pre-encoded fragments and joining them.
    :class:`SentNames` keep that encoding, which their answers are checked against.
    """
    if isinstance(names, SentNames):
        encoded = names.json
    else:
        encoded = orjson.dumps(names if type(names) is list else list(names))
    return b'{"Pod":%b,"Nodes":null,"NodeNames":%b}' % (pod.data, encoded)


class AlignedScores(Mapping[str, int]):
    """A prioritizer's scaled scores for the hosts sent, in the order sent: ``scores``
    (int64, ``(len(names),)``) is ``names[i]``'s contribution. A mapping like the
    general reader's dict (built on first use as one), whose ``scores`` a caller that
    knows the rows of ``names`` adds in NumPy."""

    __slots__ = ("_mapping", "names", "scores")

    def __init__(self, names: Sequence[str], scores: npt.NDArray[np.int64]) -> None:
        #: the names the scores were asked for, as the caller gave them
        self.names = names
        self.scores = scores
        self._mapping: dict[str, int] | None = None

    def _dict(self) -> dict[str, int]:
        if self._mapping is None:
            self._mapping = dict(zip(self.names, self.scores.tolist(), strict=True))
        return self._mapping

    def __getitem__(self, name: str) -> int:
        return self._dict()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"AlignedScores({self._dict()!r})"


class _HostPriority(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One ``HostPriority`` with exactly upstream's keys."""

    Host: str
    Score: int


class _FilterResult(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An ``ExtenderFilterResult`` of a nodeCacheCapable extender with upstream's keys
    only; ``Nodes`` may only be absent or null. ``NodeNames`` is kept as it came (a
    list of strings in the order sent is compared as bytes, never decoded); absent, it
    reads as ``null``."""

    NodeNames: msgspec.Raw = msgspec.Raw(b"null")
    FailedNodes: dict[str, str] | None = None
    FailedAndUnresolvableNodes: dict[str, str] | None = None
    Error: str = ""
    Nodes: None = None


_HOST_PRIORITIES: Final = msgspec.json.Decoder(list[_HostPriority])
_FILTER_RESULT: Final = msgspec.json.Decoder(_FilterResult)
_NODE_NAMES: Final = msgspec.json.Decoder(list[str] | None)
# msgspec's errors, and UnicodeDecodeError (a ValueError) for bytes that are not UTF-8
_NOT_FAST: Final = (msgspec.MsgspecError, ValueError)


def fast_host_scores(
    raw: bytes, sent: SentNames, factor: int
) -> AlignedScores | dict[str, int] | None:
    """host -> ``score * factor`` for the hosts sent (answer order), as
    :func:`~asched.extenders.protocol.host_scores` gives it; None when the
    answer is not a list of exact ``{"Host": str, "Score": int64}`` entries naming each
    host once. An answer naming every host sent, in the order sent, whose scaled scores
    stay in int64, comes as :class:`AlignedScores`."""
    try:
        items = _HOST_PRIORITIES.decode(raw)
    except _NOT_FAST:
        return None
    hosts = [item.Host for item in items]
    scaled: npt.NDArray[np.int64] | None = None
    if factor >= 1:  # then a product in int64 means a score in int64 too
        try:
            products = [item.Score * factor for item in items]
            scaled = np.fromiter(products, np.int64, len(products))
        except OverflowError:  # a product beyond int64: Python ints below
            pass
    if scaled is not None and orjson.dumps(hosts) == sent.json:  # every host sent, in order
        return AlignedScores(sent.given, scaled)
    scores = [item.Score for item in items]
    # int64 or not at all (msgspec reads any integer; the general reader wants int64)
    if scores and not (min(scores) >= _INT64_MIN and max(scores) <= _INT64_MAX):
        return None
    values = scaled.tolist() if scaled is not None else [score * factor for score in scores]
    out = dict(zip(hosts, values, strict=True))
    if len(out) != len(hosts):  # a host answered twice: the general reader adds them up
        return None
    where = sent.where
    if not out.keys() <= where.keys():
        return {host: value for host, value in out.items() if host in where}
    return out


def fast_filter_result(raw: bytes, sent: SentNames) -> FilterAnswer | None:
    """A nodeCacheCapable filter answer as
    :func:`~asched.extenders.protocol.parse_filter_result` reads it; None when
    it has another key, a ``null`` ``NodeNames``, an ``Error``, a repeated or unsent
    feasible name, or a node both feasible and failed (the general reader decides
    those). An answer in the order sent carries the feasible names' positions; when the
    names sent were picked from a :class:`NameTable` (:meth:`SentNames.picked`) and the
    answer's names are their fragments' bytes, its feasible names are not even decoded
    (:func:`_as_sent`)."""
    try:
        answer = _FILTER_RESULT.decode(raw)
    except _NOT_FAST:
        return None
    if answer.Error:
        return None
    failed = answer.FailedNodes or {}
    unresolvable = answer.FailedAndUnresolvableNodes or {}
    if sent.source is not None:
        taken = _as_sent(answer.NodeNames, failed, unresolvable, sent)
        if taken is not None:
            return taken
    try:
        names = _NODE_NAMES.decode(answer.NodeNames)
    except _NOT_FAST:
        return None
    if names is None:
        return None
    ordered = _in_order(names, failed, unresolvable, sent)
    if ordered is not None:
        return ordered
    where = sent.where
    feasible = dict.fromkeys(names)
    if len(feasible) != len(names) or not feasible.keys() <= where.keys():
        return None
    if not feasible.keys().isdisjoint(failed) or not feasible.keys().isdisjoint(unresolvable):
        return None
    return FilterAnswer(tuple(names), _sent_only(failed, where), _sent_only(unresolvable, where))


def _as_sent(
    names: msgspec.Raw, failed: dict[str, str], unresolvable: dict[str, str], sent: SentNames
) -> FilterAnswer | None:
    """:func:`_in_order`'s answer read from bytes, for names picked from a
    :class:`NameTable`: the answer's ``NodeNames`` must be, byte for byte, the JSON
    array of the names sent less the failed ones, which are placed by name
    (:meth:`NameTable.kept`: exact, so nothing about them is checked after). The
    feasible names are a subset of ``sent``, decoded only if read. None when the bytes
    differ (another encoding, spaces, another order...): the caller decodes the names."""
    fragments, source = sent.fragments, sent.source
    assert fragments is not None
    assert source is not None
    gone = [*failed, *unresolvable]
    if not gone:
        if memoryview(names) != sent.json:
            return None
        return FilterAnswer(sent, failed, unresolvable, np.arange(len(sent), dtype=np.intp))
    positions = source[0].kept(source[1], gone)
    if positions is None:
        return None
    kept = fragments[positions]
    json = json_array(kept)
    if memoryview(names) != json:
        return None
    return FilterAnswer(sent.subset(positions, json, kept), failed, unresolvable, positions)


def _in_order(
    names: list[str], failed: dict[str, str], unresolvable: dict[str, str], sent: SentNames
) -> FilterAnswer | None:
    """The answer when its feasible names are exactly the names sent less the failed
    ones (each failed one sent, none failed twice), in the order sent; else None.

    Such an answer is one the dict path takes whole (no name repeated, unsent, or both
    feasible and failed), and this is its result. The check: the feasible names, with
    the failed ones put back where they were sent, encode to the very bytes sent."""
    n = len(sent)
    gone = [*failed, *unresolvable]
    if len(names) + len(gone) != n:
        return None
    if not gone:
        if orjson.dumps(names) != sent.json:
            return None
        return FilterAnswer(tuple(names), failed, unresolvable, np.arange(n, dtype=np.intp))
    found = sent.locate(gone)  # by hash or by name: checked just below either way
    if found is None:
        return None
    at = np.asarray(found, dtype=np.intp)
    keep = np.ones(n, dtype=np.bool_)
    keep[at] = False
    positions = np.flatnonzero(keep)
    if positions.size + len(gone) != n:  # a name both failed and unresolvable
        return None
    merged = np.empty(n, dtype=object)
    merged[at] = gone
    merged[positions] = names
    if orjson.dumps(merged.tolist()) != sent.json:
        return None
    return FilterAnswer(tuple(names), failed, unresolvable, positions)


def _sent_only(reasons: dict[str, str], sent: Mapping[str, Any]) -> dict[str, str]:
    if sent.keys() >= reasons.keys():
        return reasons
    return {name: reason for name, reason in reasons.items() if name in sent}
