"""Table columns of custom resources: a CRD version's ``additionalPrinterColumns``.

As the v1.37 table convertor of custom resources: ``Name`` first, then the CRD's columns in
order (a version without any gets ``Age``). A cell is the value at the column's JSONPath
(simple paths only, ``.status.phase`` or ``.spec.items[0].name``), typed by the column:
``integer`` and ``number`` cells are numbers, ``date`` cells the age (``5m``), ``string``
cells the value as text; a missing value is ``null`` (kubectl prints ``<none>``).
"""

from __future__ import annotations

import re
from typing import Any, Final

import orjson

from asched.tools.sim.apiserver import printers

JSON = dict[str, Any]

_STEP: Final = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")
_NAME_DESCRIPTION: Final = (
    "Name must be unique within a namespace. Is required when creating resources, although "
    "some resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
#: the column a version without ``additionalPrinterColumns`` gets.
AGE: Final[JSON] = {
    "name": "Age",
    "type": "date",
    "jsonPath": ".metadata.creationTimestamp",
    "description": "CreationTimestamp is a timestamp representing the server time when this "
    "object was created.",
}


def lookup(obj: Any, path: str) -> Any:
    """The value at a simple JSONPath (``.a.b[0].c``, braces optional), or None."""
    steps = path.strip().removeprefix("{").removesuffix("}")
    for key, index in _STEP.findall(steps):
        if key:
            obj = obj.get(key) if isinstance(obj, dict) else None
        else:
            position = int(index)
            obj = obj[position] if isinstance(obj, list) and position < len(obj) else None
        if obj is None:
            return None
    return obj


def cell(column: JSON, obj: JSON) -> Any:
    """One cell of ``obj`` under ``column``."""
    value = lookup(obj, str(column.get("jsonPath", "")))
    if value is None:
        return None
    kind = column.get("type")
    if kind == "date":
        return printers.age(value) if isinstance(value, str) else None
    if kind == "integer":
        return (
            int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
    if kind == "number":
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode() if isinstance(value, dict | list) else str(value).lower()


def layout(columns: tuple[JSON, ...]) -> printers.Layout:
    """Column definitions and the row function of a custom resource's table."""
    chosen = columns or (AGE,)
    definitions = [
        {
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": _NAME_DESCRIPTION,
            "priority": 0,
        },
        *(
            {
                "name": column.get("name", ""),
                "type": column.get("type", "string"),
                "format": column.get("format", ""),
                "description": column.get("description", ""),
                "priority": int(column.get("priority") or 0),
            }
            for column in chosen
        ),
    ]

    def row(obj: JSON) -> list[Any]:
        return [obj["metadata"]["name"], *(cell(column, obj) for column in chosen)]

    return definitions, row
