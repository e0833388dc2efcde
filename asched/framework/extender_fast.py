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
  (:mod:`asched.framework.extender_protocol`) accepts, and return exactly what it
  would; for anything else (another key case, an unknown key, a ``null`` name list, a
  float, a repeated host, a name that was not sent, an ``Error``, bytes that are not
  JSON) they return None and the caller hands the answer to the general reader, so its
  errors and its leniency stay the only ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import attrgetter, mul
from typing import Any, Final, Protocol

import msgspec
import numpy as np
import orjson

from asched.framework.extender_protocol import FilterAnswer, RawObject

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


class RawTransport(Protocol):
    """A transport that also posts encoded bodies and returns the answer's bytes
    (:meth:`asched.api.extender.ExtenderClient.post_bytes`)."""

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


def render_names_args(pod: EncodedPod, names: Sequence[str]) -> bytes:
    """``{"Pod": ..., "Nodes": null, "NodeNames": [...]}`` as bytes, byte for byte what
    orjson makes of :func:`~asched.framework.extender_protocol.extender_args`' dict.

    The names are encoded by one ``orjson.dumps`` of the list: for 500 names that is a
    few microseconds, less than looking up 500 pre-encoded fragments and joining them.
    """
    listed = names if type(names) is list else list(names)
    return b'{"Pod":%b,"Nodes":null,"NodeNames":%b}' % (pod.data, orjson.dumps(listed))


class _HostPriority(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One ``HostPriority`` with exactly upstream's keys."""

    Host: str
    Score: int


class _FilterResult(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An ``ExtenderFilterResult`` of a nodeCacheCapable extender with upstream's keys
    only; ``Nodes`` may only be absent or null."""

    NodeNames: list[str] | None = None
    FailedNodes: dict[str, str] | None = None
    FailedAndUnresolvableNodes: dict[str, str] | None = None
    Error: str = ""
    Nodes: None = None


_HOST_PRIORITIES: Final = msgspec.json.Decoder(list[_HostPriority])
_FILTER_RESULT: Final = msgspec.json.Decoder(_FilterResult)
_HOST: Final = attrgetter("Host")
_SCORE: Final = attrgetter("Score")
# msgspec's errors, and UnicodeDecodeError (a ValueError) for bytes that are not UTF-8
_NOT_FAST: Final = (msgspec.MsgspecError, ValueError)


def fast_host_scores(raw: bytes, sent: Mapping[str, Any], factor: int) -> dict[str, int] | None:
    """host -> ``score * factor`` for the hosts of ``sent`` (answer order), as
    :func:`~asched.framework.extender_protocol.host_scores` gives it; None when the
    answer is not a list of exact ``{"Host": str, "Score": int64}`` entries naming each
    host once."""
    try:
        items = _HOST_PRIORITIES.decode(raw)
    except _NOT_FAST:
        return None
    hosts = list(map(_HOST, items))
    try:
        # int64 or not at all (msgspec reads any integer; the general reader wants int64)
        scores = np.fromiter(map(_SCORE, items), np.int64, len(items))
    except OverflowError:
        return None
    low, high = (int(scores.min()), int(scores.max())) if len(hosts) else (0, 0)
    if factor == 1:
        values = scores.tolist()
    elif all(_INT64_MIN <= end * factor <= _INT64_MAX for end in (low, high)):
        values = (scores * factor).tolist()  # no product leaves int64: NumPy's is exact
    else:
        values = list(map(mul, scores.tolist(), repeat(factor)))  # Python ints, unbounded
    out = dict(zip(hosts, values, strict=True))
    if len(out) != len(hosts):  # a host answered twice: the general reader adds them up
        return None
    if not out.keys() <= sent.keys():
        return {host: value for host, value in out.items() if host in sent}
    return out


def fast_filter_result(raw: bytes, sent: Mapping[str, Any]) -> FilterAnswer | None:
    """A nodeCacheCapable filter answer as
    :func:`~asched.framework.extender_protocol.parse_filter_result` reads it; None when
    it has another key, a ``null`` ``NodeNames``, an ``Error``, a repeated or unsent
    feasible name, or a node both feasible and failed (the general reader decides
    those)."""
    try:
        answer = _FILTER_RESULT.decode(raw)
    except _NOT_FAST:
        return None
    names = answer.NodeNames
    if answer.Error or names is None:
        return None
    feasible = dict.fromkeys(names)
    if len(feasible) != len(names) or not feasible.keys() <= sent.keys():
        return None
    failed = answer.FailedNodes or {}
    unresolvable = answer.FailedAndUnresolvableNodes or {}
    if not feasible.keys().isdisjoint(failed) or not feasible.keys().isdisjoint(unresolvable):
        return None
    return FilterAnswer(tuple(names), _sent_only(failed, sent), _sent_only(unresolvable, sent))


def _sent_only(reasons: dict[str, str], sent: Mapping[str, Any]) -> dict[str, str]:
    if sent.keys() >= reasons.keys():
        return reasons
    return {name: reason for name, reason in reasons.items() if name in sent}
