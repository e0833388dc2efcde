"""LIST: which objects, at which version, one page at a time.

The semantics of a v1.37 server (measured against the genuine one):

* ``resourceVersion=0`` reads the watch cache: current state, ``limit`` ignored;
* unset, or ``resourceVersionMatch=NotOlderThan``: the current state, paged by ``limit``;
* a version with ``limit`` (or ``resourceVersionMatch=Exact``), or a ``continue`` token:
  the exact snapshot at that version, as etcd reads it. The simulator keeps no MVCC
  store; it rebuilds the snapshot from the watch history (the first change after the
  version knows the state before it), so it answers 410 once the history no longer
  reaches back that far, as etcd after a compaction;
* a version the server has not reached: 504 (the handler first waits up to 3 s);
* a version that is not a number: 400 ``invalid resource version: ...``, a token that does
  not decode: 400 ``invalid continue token: ...``, read before the version, which may not
  come with it (v1.20 answered a plain 500 for the version, and read it first).

Continue tokens have the real server's shape (base64url of ``{"v", "rv", "start"}``);
``remainingItemCount`` is given only without selectors, as upstream.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from asched.tools.sim.apiserver import apierrors, gojson
from asched.tools.sim.apiserver.resources import ResourceSpec
from asched.tools.sim.apiserver.selectors import FieldSelector, LabelSelector
from asched.tools.sim.apiserver.store import Entry, Table, TooOld, object_key

JSON = dict[str, Any]

_DIGITS: Final = re.compile(r"[0-9]+")
LIST_EXPIRED: Final = "The resourceVersion for the provided list is too old."
CONTINUE_EXPIRED: Final = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)


@dataclass(slots=True)
class ListOptions:
    """The query parameters of a list (or of the initial state of a watch)."""

    labels: LabelSelector = field(default_factory=LabelSelector)
    fields: FieldSelector = field(default_factory=FieldSelector)
    limit: int = 0
    continue_token: str = ""
    resource_version: str = ""
    resource_version_match: str = ""
    #: a watch's ``timeoutSeconds`` (None: the server's default).
    timeout_seconds: int | None = None
    #: a watch's ``sendInitialEvents`` (None when absent; a watch-list when True).
    send_initial_events: bool | None = None


def encode_continue(rv: int, key: str) -> str:
    """An opaque continue token in the real server's shape (base64url of a small JSON)."""
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": key + "\x00"})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


_BASE64URL: Final = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_CONTINUE_TOKEN: Final = gojson.Struct(
    "continueToken",
    {
        "v": gojson.Field("string", "string"),
        "rv": gojson.Field("int64", "int"),
        "start": gojson.Field("string", "string"),
    },
)
_INVALID_KEY: Final = "continue key is not valid"


def _raw_url_base64(token: str) -> bytes:
    """``base64.RawURLEncoding.DecodeString``; ValueError with Go's message otherwise."""
    encoded = token.encode("utf-8", errors="surrogateescape")
    for index, byte in enumerate(encoded):
        if byte not in _BASE64URL and byte not in b"\r\n":
            raise ValueError(f"illegal base64 data at input byte {index}")
    kept = encoded.replace(b"\r", b"").replace(b"\n", b"")
    if len(kept) % 4 == 1:  # a lone character cannot end a quantum
        raise ValueError(f"illegal base64 data at input byte {len(kept) - 1}")
    return base64.urlsafe_b64decode(kept + b"=" * (-len(kept) % 4))


def decode_continue(token: str) -> tuple[int, str]:
    """``(rv, start key)`` of a continue token; 400 with ``DecodeContinue``'s error otherwise."""

    def invalid(why: str) -> apierrors.StatusError:
        return apierrors.bad_request(f"invalid continue token: {why}")

    try:
        raw = _raw_url_base64(token)
    except ValueError as exc:
        raise invalid(f"{_INVALID_KEY}: {exc}") from None
    syntax = gojson.syntax_error(raw)
    if syntax is not None:
        raise invalid(f"{_INVALID_KEY}: {syntax}")
    data = gojson.loads_literal(raw)
    if not isinstance(data, dict):
        raise invalid(
            f"{_INVALID_KEY}: json: cannot unmarshal {gojson.json_type(data)} into Go value of "
            "type storage.continueToken"
        )
    error = gojson.type_error(data, _CONTINUE_TOKEN)
    if error is not None:
        raise invalid(f"{_INVALID_KEY}: {error}")
    version = data.get("v") or ""
    if version != "meta.k8s.io/v1":
        raise invalid(f"{_INVALID_KEY}: server does not recognize this encoded version {version}")
    rv, start = int(data.get("rv") or 0), str(data.get("start") or "")
    if rv == 0:
        raise invalid(
            f"{_INVALID_KEY}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        )
    if not start:
        raise invalid(f"{_INVALID_KEY}: encoded start key empty (version meta.k8s.io/v1)")
    return rv, start


def _rv_error(text: str, what: str) -> str | None:
    why = "invalid syntax" if _DIGITS.fullmatch(text) is None else ""
    if not why and (len(text.lstrip("0")) > 20 or int(text.lstrip("0") or "0") >= 2**64):
        why = "value out of range"
    if why:
        return f'{what}: Invalid value: "{text}": strconv.ParseUint: parsing "{text}": {why}'
    return None


def parse_rv(text: str, what: str = "resourceVersion") -> int:
    """A resourceVersion query value as an int; Go's ``strconv.ParseUint`` error otherwise.

    A GET or a watch surfaces that error as a plain 500 (no reason), as the real server does;
    a LIST as 400 (:func:`parse_list_rv`).
    """
    error = _rv_error(text, what)
    if error is not None:
        raise apierrors.unknown(500, error)
    return int(text.lstrip("0") or "0")


def parse_list_rv(text: str) -> int:
    """A LIST's resourceVersion: v1.37's ``storage.ValidateListOptions`` answers 400
    ``invalid resource version: ...`` where v1.20 answered a plain 500."""
    error = _rv_error(text, "resourceVersion")
    if error is not None:
        raise apierrors.bad_request(f"invalid resource version: {error}")
    return int(text.lstrip("0") or "0")


def select(
    table: Table, current: int, spec: ResourceSpec, namespace: str | None, options: ListOptions
) -> tuple[list[Entry], JSON]:
    """Matching entries in key order and the list metadata (rv, continue, remaining).

    As a v1.37 server: ``resourceVersion=0`` reads the cache (``limit`` ignored);
    unset or ``NotOlderThan`` reads the current state; a ``continue`` token, or a
    version together with ``limit`` (or ``resourceVersionMatch=Exact``), reads the
    exact snapshot at that version, rebuilt from the watch history (410 once the
    history no longer reaches back that far, as etcd after a compaction).
    """
    at, start, expired_message = current, "", LIST_EXPIRED
    if options.continue_token:
        at, start = decode_continue(options.continue_token)  # checked first, as v1.37
        if options.resource_version not in ("", "0"):
            raise apierrors.bad_request(
                "specifying resource version is not allowed when using continue"
            )
        expired_message = CONTINUE_EXPIRED
    elif options.resource_version not in ("", "0"):
        requested = parse_list_rv(options.resource_version)
        if requested > current:
            raise apierrors.too_large_resource_version(requested, current)
        if options.limit or options.resource_version_match == "Exact":
            at = requested
    # resourceVersion=0 is served from the watch cache, which ignores limit (measured).
    limit = 0 if options.resource_version == "0" and not options.continue_token else options.limit
    pinned = options.fields.required("metadata.name")
    if pinned is None:
        keys = table.keys_in(namespace, start)
    elif namespace is None and spec.namespaced:
        keys = [k for k in table.keys_in(None, start) if k.rpartition("/")[2] == pinned]
    else:
        key = object_key(namespace or "", pinned)
        keys = [key] if key in table.objects and key >= start else []
    objects = table.objects
    entries: Iterable[Entry]
    if at == current:
        # looked up as the page fills: a page of a big collection costs its own entries,
        # not all those after it (the initial LIST of 500,000 pods was quadratic)
        entries, total = (objects[key] for key in keys), len(keys)
    else:
        entries = _snapshot(table, at, keys, namespace, start, pinned, expired_message)
        total = len(entries)
    selective = not (options.labels.empty and options.fields.empty)
    found: list[Entry] = []
    meta: JSON = {"resourceVersion": str(at)}
    for position, entry in enumerate(entries):
        if selective:
            obj = entry.obj
            if not options.labels.matches(
                obj["metadata"].get("labels")
            ) or not options.fields.matches(obj):
                continue
        found.append(entry)
        if limit and len(found) == limit:
            remaining = total - position - 1
            if remaining:
                meta["continue"] = encode_continue(at, entry.key)
                if not selective:
                    meta["remainingItemCount"] = remaining
            break
    return found, meta


def _snapshot(
    table: Table,
    at: int,
    keys: list[str],
    namespace: str | None,
    start: str,
    pinned: str | None,
    expired_message: str,
) -> list[Entry]:
    """The entries of ``keys`` (plus objects deleted since) as they were at ``at``."""
    try:
        changes = table.since(at)
    except TooOld:
        raise apierrors.expired(expired_message) from None
    before: dict[str, Entry | None] = {}
    for event in changes:  # the first change after ``at`` knows the state at ``at``
        before.setdefault(event.entry.key, event.prev)
    prefix = f"{namespace}/" if namespace is not None else ""
    extra = [
        key
        for key in before
        if key.startswith(prefix)
        and key >= start
        and (pinned is None or key.rpartition("/")[2] == pinned)
    ]
    entries: list[Entry] = []
    for key in sorted(set(keys).union(extra)):
        entry = before[key] if key in before else table.objects.get(key)
        if entry is not None:
            entries.append(entry)
    return entries
