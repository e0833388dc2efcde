"""``meta.k8s.io/v1 Table`` answers, for ``kubectl get`` (and ``get -w``).

kubectl asks for ``application/json;as=Table;v=v1;g=meta.k8s.io`` and prints whatever
columns the server sends. Pods, nodes, namespaces and events get the columns of the
upstream printers; every other resource gets the default ``Name``/``Created At`` pair.
Rows carry a ``PartialObjectMetadata`` (kubectl needs it for ``-L``, ``--show-labels``
and the namespace column of ``-A``). Columns with ``priority: 1`` appear with ``-o wide``.

Cold path: only kubectl asks for tables, so rows are built per request (watch lines are
still cached per event).
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable, Iterable
from typing import Any, Final

import orjson

from asched.sim.resources import ResourceSpec
from asched.sim.store import Entry, Event

JSON = dict[str, Any]
Row = Callable[[JSON], list[Any]]

TABLE_MEDIA: Final = "as=Table"


def _column(name: str, type_: str = "string", priority: int = 0, fmt: str = "") -> JSON:
    return {"name": name, "type": type_, "format": fmt, "description": name, "priority": priority}


def age(timestamp: str | None) -> str:
    """``duration.HumanDuration`` of the time since ``timestamp`` (``5m``, ``2d3h``)."""
    if not timestamp:
        return "<unknown>"
    try:
        then = calendar.timegm(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return "<unknown>"
    seconds = max(int(time.time() - then), 0)
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 48:
        return f"{hours}h{minutes % 60}m" if hours < 8 and minutes % 60 else f"{hours}h"
    days = hours // 24
    if days < 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    return f"{days}d" if days < 365 * 2 else f"{days // 365}y"


def _pod_row(pod: JSON) -> list[Any]:
    spec, status, meta = pod.get("spec") or {}, pod.get("status") or {}, pod["metadata"]
    containers = spec.get("containers") or []
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount", 0)) for s in statuses)
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for container_status in statuses:
        waiting = (container_status.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason"):
            reason = waiting["reason"]
    if meta.get("deletionTimestamp"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    return [
        meta["name"],
        f"{ready}/{len(containers)}",
        reason,
        restarts,
        age(meta.get("creationTimestamp")),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        f"{len(gates)}" if gates else "<none>",
    ]


def _node_row(node: JSON) -> list[Any]:
    meta, spec, status = node["metadata"], node.get("spec") or {}, node.get("status") or {}
    ready = next(
        (c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"), None
    )
    state = {"True": "Ready", "False": "NotReady"}.get(ready or "", "Unknown")
    if spec.get("unschedulable"):
        state += ",SchedulingDisabled"
    roles = sorted(
        key.split("/", 1)[1]
        for key in (meta.get("labels") or {})
        if key.startswith("node-role.kubernetes.io/")
    )
    addresses = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    info = status.get("nodeInfo") or {}
    return [
        meta["name"],
        state,
        ",".join(roles) or "<none>",
        age(meta.get("creationTimestamp")),
        info.get("kubeletVersion", ""),
        addresses.get("InternalIP") or "<none>",
        addresses.get("ExternalIP") or "<none>",
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _namespace_row(namespace: JSON) -> list[Any]:
    meta = namespace["metadata"]
    return [
        meta["name"],
        (namespace.get("status") or {}).get("phase", ""),
        age(meta.get("creationTimestamp")),
    ]


def _event_row(event: JSON) -> list[Any]:
    involved = event.get("involvedObject") or {}
    last = (
        event.get("lastTimestamp")
        or event.get("eventTime")
        or event["metadata"].get("creationTimestamp")
    )
    return [
        age(last[:19] + "Z" if isinstance(last, str) and len(last) > 20 else last),
        event.get("type", ""),
        event.get("reason", ""),
        f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
        event.get("message", ""),
    ]


def _default_row(obj: JSON) -> list[Any]:
    meta = obj["metadata"]
    return [meta["name"], meta.get("creationTimestamp")]


_LAYOUTS: Final[dict[tuple[str, str], tuple[list[JSON], Row]]] = {
    ("", "pods"): (
        [
            _column("Name", fmt="name"),
            _column("Ready"),
            _column("Status"),
            _column("Restarts", "integer"),
            _column("Age"),
            _column("IP", priority=1),
            _column("Node", priority=1),
            _column("Nominated Node", priority=1),
            _column("Readiness Gates", priority=1),
        ],
        _pod_row,
    ),
    ("", "nodes"): (
        [
            _column("Name", fmt="name"),
            _column("Status"),
            _column("Roles"),
            _column("Age"),
            _column("Version"),
            _column("Internal-IP", priority=1),
            _column("External-IP", priority=1),
            _column("OS-Image", priority=1),
            _column("Kernel-Version", priority=1),
            _column("Container-Runtime", priority=1),
        ],
        _node_row,
    ),
    ("", "namespaces"): (
        [_column("Name", fmt="name"), _column("Status"), _column("Age")],
        _namespace_row,
    ),
    ("", "events"): (
        [
            _column("Last Seen"),
            _column("Type"),
            _column("Reason"),
            _column("Object"),
            _column("Message"),
        ],
        _event_row,
    ),
}
_DEFAULT: Final = ([_column("Name", fmt="name"), _column("Created At", "date")], _default_row)


def _layout(spec: ResourceSpec) -> tuple[list[JSON], Row]:
    return _LAYOUTS.get((spec.group, spec.resource), _DEFAULT)


def _row(spec: ResourceSpec, obj: JSON) -> JSON:
    _, build = _layout(spec)
    return {
        "cells": build(obj),
        "object": {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": obj["metadata"],
        },
    }


def table(spec: ResourceSpec, entries: Iterable[Entry], meta: JSON) -> bytes:
    """A Table of ``entries`` (list answer)."""
    columns, _ = _layout(spec)
    return orjson.dumps(
        {
            "kind": "Table",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta,
            "columnDefinitions": columns,
            "rows": [_row(spec, entry.obj) for entry in entries],
        }
    )


def watch_line(spec: ResourceSpec, event: Event, type_: str, *, previous: bool = False) -> bytes:
    """One watch event whose object is a one-row Table (cached per event)."""
    key = (spec, "table", type_, previous)
    line = event.lines.get(key)
    if line is None:
        source = event.prev if previous and event.prev is not None else event.entry
        obj = dict(source.obj)
        obj["metadata"] = {**obj["metadata"], "resourceVersion": str(event.rv)}
        line = initial_line(spec, obj, type_)
        event.lines[key] = line
    return line


def initial_line(spec: ResourceSpec, obj: JSON, type_: str = "ADDED") -> bytes:
    """A watch line with a one-row Table for ``obj``."""
    columns, _ = _layout(spec)
    body = {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
        "columnDefinitions": columns,
        "rows": [_row(spec, obj)],
    }
    return orjson.dumps({"type": type_, "object": body}) + b"\n"
