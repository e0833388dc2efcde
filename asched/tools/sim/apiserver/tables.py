"""``meta.k8s.io/v1 Table`` answers, for ``kubectl get`` (and ``get -w``).

kubectl asks for ``application/json;as=Table;v=v1;g=meta.k8s.io`` and prints whatever
columns the server sends. The columns come from :mod:`asched.tools.sim.apiserver.printers` (the upstream
printers' columns); resources without a printer get the default ``Name``/``Created At``.
Rows carry a ``PartialObjectMetadata`` (kubectl needs it for ``-L``, ``--show-labels``
and the namespace column of ``-A``). Columns with ``priority: 1`` appear with ``-o wide``.

Cold path: only kubectl asks for tables, so rows are built per request (watch lines are
still cached per event).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import orjson

from asched.tools.sim.apiserver import columns, printers
from asched.tools.sim.apiserver.resources import ResourceSpec
from asched.tools.sim.apiserver.store import Entry, Event

JSON = dict[str, Any]

TABLE_MEDIA: Final = "as=Table"


def _layout(spec: ResourceSpec) -> printers.Layout:
    if spec.custom:
        return columns.layout(spec.printer_columns)
    return printers.LAYOUTS.get((spec.group, spec.resource), printers.DEFAULT)


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
