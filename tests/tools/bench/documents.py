"""Workload documents for the validation tests: one valid document, changed in one place,
and the field errors loading it reports."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from asched.tools.bench.workload_format import WorkloadError, load_workload

#: Put in place of a value to delete the key instead.
DELETE: Any = object()


def changed(valid: Mapping[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    """A deep copy of ``valid`` with the value at ``path`` replaced (a missing last key is
    added), or deleted when ``value`` is :data:`DELETE`."""
    document = copy.deepcopy(dict(valid))
    target: Any = document
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return document


def field_errors(document: dict[str, Any], source: str) -> tuple[WorkloadError, dict[str, str]]:
    """Load ``document`` expecting it to be refused: the error, and path -> message."""
    try:
        load_workload(document, source=source)
    except WorkloadError as caught:
        return caught, {error.path: error.message for error in caught.errors}
    raise AssertionError(f"{source}: the document loaded, but it should be refused")
