"""Encoding stored objects for one API view, once, and converting between views.

Objects are stored in the shape of their storage's first view (core/v1 for events);
a second view of the same storage (``events.k8s.io/v1``) converts on the way out and on
the way in, as the real server converts through its internal type.

Speed rules (this is the hot path of GET, LIST and watch):

* a view without conversion never re-encodes: ``prefix + entry.raw[1:]`` is the full
  object, ``entry.raw`` is the list item;
* a watch line is encoded once per (event, view, variant) and cached on the event, so
  N watchers of the same view cost one encoding and N queue puts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import orjson

from asched.tools.sim.apiserver.resources import ResourceSpec
from asched.tools.sim.apiserver.store import Entry, Event

JSON = dict[str, Any]

_NEW_EVENTS: Final = "events.k8s.io"
#: core/v1 Event field -> events.k8s.io/v1 Event field
_EVENT_RENAMES: Final = (
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
)
_CORE_TO_NEW: Final = dict(_EVENT_RENAMES)
_NEW_TO_CORE: Final = {new: core for core, new in _EVENT_RENAMES}
_NEW_ORDER: Final = (
    "metadata",
    "eventTime",
    "series",
    "reportingController",
    "reportingInstance",
    "action",
    "reason",
    "regarding",
    "related",
    "note",
    "type",
    "deprecatedSource",
    "deprecatedFirstTimestamp",
    "deprecatedLastTimestamp",
    "deprecatedCount",
)
#: events.k8s.io fields Go always prints (struct or non-omitempty), with their zero value.
_NEW_ALWAYS: Final[JSON] = {
    "eventTime": None,
    "regarding": {},
    "deprecatedSource": {},
    "deprecatedFirstTimestamp": None,
    "deprecatedLastTimestamp": None,
}


def converts(spec: ResourceSpec) -> bool:
    """Whether ``spec`` is a view whose shape differs from its storage's."""
    return spec.group == _NEW_EVENTS


def to_view(spec: ResourceSpec, obj: JSON) -> JSON:
    """Storage shape -> ``spec``'s shape (a new dict; ``obj`` is untouched)."""
    if not converts(spec):
        return obj
    renamed = {_CORE_TO_NEW.get(key, key): value for key, value in obj.items()}
    out: JSON = {}
    for key in _NEW_ORDER:
        value = renamed.get(key, _NEW_ALWAYS.get(key, ""))
        if key in _NEW_ALWAYS or value not in ("", None, 0):
            out[key] = value
    return out


def from_view(spec: ResourceSpec, obj: JSON) -> JSON:
    """``spec``'s shape -> storage shape (a new dict)."""
    if not converts(spec):
        return obj
    return {
        _NEW_TO_CORE.get(key, key): value
        for key, value in obj.items()
        if key not in ("kind", "apiVersion")
    }


def _body(spec: ResourceSpec, entry: Entry) -> bytes:
    if converts(spec):
        return orjson.dumps(to_view(spec, entry.obj))
    return entry.raw


def object_bytes(spec: ResourceSpec, entry: Entry) -> bytes:
    """The full object (with ``kind`` and ``apiVersion``) as GET answers it."""
    return spec.prefix + _body(spec, entry)[1:]


def full_object(spec: ResourceSpec, entry: Entry) -> JSON:
    """The full object as a new dict (for patches and table rows)."""
    obj: JSON = orjson.loads(object_bytes(spec, entry))
    return obj


def list_bytes(spec: ResourceSpec, entries: Iterable[Entry], meta: JSON) -> bytes:
    """A ``<Kind>List`` whose items are the cached bytes of each entry.

    A custom resource's list is unstructured, as on a real server: its metadata always has
    ``continue`` (empty on the last page) and every item its kind and apiVersion.
    """
    if spec.custom:
        meta = {"continue": "", **meta}
    head = orjson.dumps(
        {"kind": f"{spec.kind}List", "apiVersion": spec.api_version, "metadata": meta}
    )
    if spec.custom:
        items = b",".join(spec.prefix + entry.raw[1:] for entry in entries)
    else:
        items = b",".join(_body(spec, entry) for entry in entries)
    return head[:-1] + b',"items":[' + items + b"]}"


def watch_line(spec: ResourceSpec, event: Event, type_: str, *, previous: bool = False) -> bytes:
    """``{"type":..,"object":..}\\n`` for one event, encoded once per view and variant.

    ``previous`` selects the object *before* the change at the event's version: what a
    selector-filtered watcher receives as DELETED when the object stops matching.
    """
    cache_key = (spec, type_, previous)
    line = event.lines.get(cache_key)
    if line is None:
        if previous and event.prev is not None:
            obj = dict(to_view(spec, event.prev.obj))
            obj["metadata"] = {**obj["metadata"], "resourceVersion": str(event.rv)}
            body = orjson.dumps(obj)
        else:
            body = _body(spec, event.entry)
        line = b'{"type":"' + type_.encode() + b'","object":' + spec.prefix + body[1:] + b"}\n"
        event.lines[cache_key] = line
    return line


def bookmark_line(spec: ResourceSpec, rv: int, *, initial_events_end: bool = False) -> bytes:
    """A BOOKMARK event: an object carrying only ``metadata.resourceVersion`` (and, closing a
    watch-list's initial events, the ``k8s.io/initial-events-end`` annotation)."""
    annotations = (
        b',"annotations":{"k8s.io/initial-events-end":"true"}' if initial_events_end else b""
    )
    return (
        b'{"type":"BOOKMARK","object":'
        + spec.prefix
        + b'"metadata":{"resourceVersion":"'
        + str(rv).encode()
        + b'"'
        + annotations
        + b"}}}\n"
    )


def error_line(status: JSON) -> bytes:
    """An ERROR event carrying a Status (e.g. 410 Expired)."""
    return orjson.dumps({"type": "ERROR", "object": status}) + b"\n"
