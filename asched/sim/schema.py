"""OpenAPI v3 structural schemas of custom resources: pruning, defaulting, validation.

What a 1.20 server does to a custom object, in its order (measured against the genuine one):

1. :func:`prune`: fields the schema does not declare are dropped, unless a node says
   ``x-kubernetes-preserve-unknown-fields`` (or is an ``additionalProperties`` map); at the
   root ``apiVersion``/``kind`` are kept and ``metadata`` is cut down to ObjectMeta's fields.
   JSON numbers with an integral value come out as integers, as Go's float64 prints them.
2. :func:`default`: a ``null`` in a field that is not ``nullable`` is replaced by the field's
   ``default``, or dropped; missing fields with a ``default`` get it (a copy), and the
   defaults are themselves defaulted further down.
3. :func:`validate`: go-openapi's validator as kube-openapi wraps it. Every failure is one
   field cause; messages copy go-openapi's (``spec.minMember in body should be greater than or
   equal to 1``). Paths are dotted and array items carry no index (``spec.list.k``), as 1.20
   prints them. ``format`` is checked on strings only: ``int32``/``int64`` bound nothing
   (a 1.20 server accepts 3000000000 for an ``int32`` field).

Schemas are the CRD's raw JSON (``openAPIV3Schema``), trusted here: the CRD's own validation
(:mod:`asched.sim.crd_validation`) has checked they are structural.
"""

from __future__ import annotations

import base64
import binascii
import copy
import ipaddress
import re
import uuid
from collections.abc import Callable
from datetime import date, datetime
from typing import Any, Final

import orjson

from asched.sim import apierrors
from asched.sim.apierrors import FieldCause

JSON = dict[str, Any]
Schema = dict[str, Any]

#: ObjectMeta's JSON fields: a custom object's metadata keeps these and loses the rest.
OBJECT_META_FIELDS: Final = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "clusterName",
        "managedFields",
    }
)
PRESERVE: Final = "x-kubernetes-preserve-unknown-fields"
INT_OR_STRING: Final = "x-kubernetes-int-or-string"
EMBEDDED: Final = "x-kubernetes-embedded-resource"
#: the largest magnitude an integral float is turned into an int at (Go's int64).
_INT_LIMIT: Final = 2**63
#: a cause's field when go-openapi gives the error no name (anyOf, oneOf, allOf, not).
_NO_FIELD: Final = "<nil>"


def _integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < _INT_LIMIT:
        return int(value)
    return value


def _keep(value: Any) -> Any:
    """An unpruned value with its integral floats turned into ints."""
    if isinstance(value, dict):
        return {key: _keep(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_keep(item) for item in value]
    return _integral(value)


def _meta(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return {key: _keep(item) for key, item in value.items() if key in OBJECT_META_FIELDS}


def _prune(value: Any, schema: Schema | None) -> Any:
    if schema is None:
        return _keep(value)
    if isinstance(value, dict):
        properties: JSON = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        preserve = bool(schema.get(PRESERVE)) or additional is True
        embedded = bool(schema.get(EMBEDDED))
        out: JSON = {}
        for key, item in value.items():
            if embedded and key == "metadata":
                out[key] = _meta(item)
            elif key in properties:
                out[key] = _prune(item, properties[key])
            elif isinstance(additional, dict):
                out[key] = _prune(item, additional)
            elif preserve or (embedded and key in ("apiVersion", "kind")):
                out[key] = _keep(item)
        return out
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [_prune(item, items) for item in value]
        return _keep(value)
    return _integral(value)


def prune(obj: JSON, schema: Schema) -> JSON:
    """``obj`` without the fields ``schema`` does not declare (a new dict).

    ``apiVersion`` and ``kind`` are always kept at the root; ``metadata`` stays the same
    dict, cut down in place to ObjectMeta's fields, whatever the schema says of it.
    """
    pruned: JSON = _prune(obj, {**schema, EMBEDDED: True})
    meta = obj.get("metadata")
    if isinstance(meta, dict):  # in place: the caller may hold on to it
        for key in [key for key in meta if key not in OBJECT_META_FIELDS]:
            del meta[key]
        pruned["metadata"] = meta
    return pruned


def _null_or_default(owner: JSON, key: str, schema: Schema) -> bool:
    """Apply ``schema``'s default to ``owner[key]`` when missing or a non-nullable null.

    Returns whether a value is left to default further down.
    """
    if key in owner:
        if owner[key] is not None or schema.get("nullable"):
            return owner[key] is not None
        if "default" not in schema:
            del owner[key]
            return False
    elif "default" not in schema:
        return False
    owner[key] = copy.deepcopy(schema["default"])
    return True


def default(value: Any, schema: Schema) -> None:
    """Apply ``schema``'s defaults to ``value`` in place (see the module docstring)."""
    if isinstance(value, dict):
        properties: JSON = schema.get("properties") or {}
        for key, child in properties.items():
            if _null_or_default(value, key, child):
                default(value[key], child)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key in [key for key in value if key not in properties]:
                if _null_or_default(value, key, additional):
                    default(value[key], additional)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                if item is None and not items.get("nullable") and "default" in items:
                    value[index] = copy.deepcopy(items["default"])
                default(value[index], items)


def json_type(value: Any) -> str:
    """go-openapi's name of a JSON value's type (an integral number is an ``integer``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _number(value: Any) -> str:
    """``%v`` of a float64 bound: ``1`` for 1.0, ``0.5`` for 0.5."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _is_date_time(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return "T" in text.upper()


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return len(text) == 36


def _is_ip(version: int) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            return ipaddress.ip_address(text).version == version
        except ValueError:
            return False

    return check


def _is_byte(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


#: the string formats checked (strfmt's registry); any other format is accepted as is.
FORMATS: Final[dict[str, Callable[[str], bool]]] = {
    "date-time": _is_date_time,
    "datetime": _is_date_time,
    "date": _is_date,
    "uuid": _is_uuid,
    "ipv4": _is_ip(4),
    "ipv6": _is_ip(6),
    "byte": _is_byte,
}


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _invalid(path: str, value: Any, message: str) -> FieldCause:
    return apierrors.invalid_value(path or _NO_FIELD, value, f"{path} in body {message}")


def _type_causes(value: Any, schema: Schema, path: str) -> list[FieldCause]:
    wanted: list[str]
    if schema.get(INT_OR_STRING):
        wanted = ["integer", "string"]
    elif "type" in schema:
        wanted = [str(schema["type"])]
    else:
        return []
    actual = json_type(value)
    if value is None and schema.get("nullable"):
        return []
    if actual in wanted or (actual == "integer" and "number" in wanted):
        return []
    return [_invalid(path, actual, f'must be of type {",".join(wanted)}: "{actual}"')]


def _combinator_causes(value: Any, schema: Schema, path: str) -> list[FieldCause]:
    """``allOf``/``anyOf``/``oneOf``/``not``: the unnamed cause, then the best branch's."""
    causes: list[FieldCause] = []
    quoted = f'"{path}"'
    for branch in schema.get("allOf") or []:
        failed = validate(value, branch, path)
        if failed:
            causes.append(
                apierrors.invalid_value(
                    _NO_FIELD, "", f"{quoted} must validate all the schemas (allOf)"
                )
            )
            causes += failed
    any_of = schema.get("anyOf") or []
    if any_of:
        results = [validate(value, branch, path) for branch in any_of]
        if all(results):
            causes.append(
                apierrors.invalid_value(
                    _NO_FIELD, "", f"{quoted} must validate at least one schema (anyOf)"
                )
            )
            causes += results[0]
    one_of = schema.get("oneOf") or []
    if one_of:
        results = [validate(value, branch, path) for branch in one_of]
        if sum(1 for result in results if not result) != 1:
            causes.append(
                apierrors.invalid_value(
                    _NO_FIELD, "", f"{quoted} must validate one and only one schema (oneOf)"
                )
            )
    negated = schema.get("not")
    if isinstance(negated, dict) and not validate(value, negated, path):
        causes.append(
            apierrors.invalid_value(_NO_FIELD, "", f"{quoted} must not validate the schema (not)")
        )
    return causes


def _string_causes(value: str, schema: Schema, path: str) -> list[FieldCause]:
    causes: list[FieldCause] = []
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        causes.append(_invalid(path, value, f"should be at most {schema['maxLength']} chars long"))
    if "minLength" in schema and len(value) < schema["minLength"]:
        causes.append(_invalid(path, value, f"should be at least {schema['minLength']} chars long"))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:  # a Go-only construct: the CRD was accepted, so is the value
            matched = True
        if not matched:
            causes.append(_invalid(path, value, f"should match '{pattern}'"))
    check = FORMATS.get(str(schema.get("format", "")))
    if check is not None and not check(value):
        causes.append(_invalid(path, value, f'must be of type {schema["format"]}: "{value}"'))
    return causes


def _number_causes(value: float, schema: Schema, path: str) -> list[FieldCause]:
    causes: list[FieldCause] = []
    if schema.get("multipleOf"):
        ratio = value / schema["multipleOf"]
        if not float(ratio).is_integer():
            causes.append(
                _invalid(path, value, f"should be a multiple of {_number(schema['multipleOf'])}")
            )
    if "maximum" in schema:
        bound = schema["maximum"]
        if schema.get("exclusiveMaximum") and value >= bound:
            causes.append(_invalid(path, value, f"should be less than {_number(bound)}"))
        elif value > bound:
            causes.append(
                _invalid(path, value, f"should be less than or equal to {_number(bound)}")
            )
    if "minimum" in schema:
        bound = schema["minimum"]
        if schema.get("exclusiveMinimum") and value <= bound:
            causes.append(_invalid(path, value, f"should be greater than {_number(bound)}"))
        elif value < bound:
            causes.append(
                _invalid(path, value, f"should be greater than or equal to {_number(bound)}")
            )
    return causes


def _array_causes(value: list[Any], schema: Schema, path: str) -> list[FieldCause]:
    causes: list[FieldCause] = []
    count = len(value)
    if "minItems" in schema and count < schema["minItems"]:
        causes.append(_invalid(path, count, f"should have at least {schema['minItems']} items"))
    if "maxItems" in schema and count > schema["maxItems"]:
        causes.append(_invalid(path, count, f"should have at most {schema['maxItems']} items"))
    if schema.get("uniqueItems"):
        encoded = [orjson.dumps(item, option=orjson.OPT_SORT_KEYS) for item in value]
        if len(set(encoded)) != count:
            causes.append(_invalid(path, "", "shouldn't contain duplicates"))
    items = schema.get("items")
    if isinstance(items, dict):
        for item in value:
            causes += validate(item, items, path)
    return causes


def _object_causes(value: JSON, schema: Schema, path: str) -> list[FieldCause]:
    causes = [
        apierrors.required(_child(path, str(name)))
        for name in schema.get("required") or []
        if name not in value
    ]
    count = len(value)
    if "maxProperties" in schema and count > schema["maxProperties"]:
        causes.append(
            _invalid(path, count, f"should have at most {schema['maxProperties']} properties")
        )
    if "minProperties" in schema and count < schema["minProperties"]:
        causes.append(
            _invalid(path, count, f"should have at least {schema['minProperties']} properties")
        )
    properties: JSON = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for key, item in value.items():
        child = properties.get(key)
        if child is None and isinstance(additional, dict):
            child = additional
        if child is not None:
            causes += validate(item, child, _child(path, key))
    return causes


def _enum_causes(value: Any, schema: Schema, path: str) -> list[FieldCause]:
    allowed = schema.get("enum")
    if not isinstance(allowed, list) or any(
        json_type(value) == json_type(option) and value == option for option in allowed
    ):
        return []
    listed = [
        option if isinstance(option, str) else orjson.dumps(option).decode() for option in allowed
    ]
    return [apierrors.not_supported(path or _NO_FIELD, value, listed)]


def validate(value: Any, schema: Schema, path: str = "") -> list[FieldCause]:
    """Every field cause of ``value`` against ``schema``; ``path`` names ``value``.

    The order is go-openapi's per node: type, combinators, string, format, number, array,
    enum, object (properties in the object's own order).
    """
    causes = _type_causes(value, schema, path)
    causes += _combinator_causes(value, schema, path)
    if isinstance(value, str):
        causes += _string_causes(value, schema, path)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        causes += _number_causes(value, schema, path)
    elif isinstance(value, list):
        causes += _array_causes(value, schema, path)
    causes += _enum_causes(value, schema, path)
    if isinstance(value, dict):
        causes += _object_causes(value, schema, path)
    return causes
