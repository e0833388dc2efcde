"""OpenAPI v3 structural schemas of custom resources: pruning, defaulting, validation.

What a v1.37 server does to a custom object, in its order (measured against the genuine one):

1. :func:`prune`: fields the schema does not declare are dropped, unless a node says
   ``x-kubernetes-preserve-unknown-fields`` (or is an ``additionalProperties`` map); at the
   root ``apiVersion``/``kind`` are kept and ``metadata`` is cut down to ObjectMeta's fields.
   JSON numbers with an integral value come out as integers, as Go's float64 prints them.
2. :func:`default`: a ``null`` in a field that is not ``nullable`` is replaced by the field's
   ``default``, or dropped; missing fields with a ``default`` get it (a copy), and the
   defaults are themselves defaulted further down.
3. :func:`validate`: kube-openapi's validator. Every failure is one field cause; messages copy
   go-openapi's (``spec.minMember in body should be greater than or equal to 1``), and a
   type or format mismatch is a ``FieldValueTypeInvalid`` cause. Paths are dotted and array
   items carry their index (``spec.list[0].k``; v1.20 printed none). Formats, as
   ``StripUnsupportedFormatsPostProcessor`` keeps them: a string's when kube-openapi knows
   the format (others are dropped; the simulator checks the common ones, see
   :data:`FORMATS`), an integer's ``int32``/``int64``, a number's ``float``/``double``. A
   value must then be of that Go type (``must be of type int32: "float64"``), and an
   integer must fit its format (an int64 without one) and a ``float`` a float32: an
   unnamed cause, ``Checked value must be of type integer with format int32 in spec.x``
   (v1.20 bounded nothing). An update is ratcheted (CRDValidationRatcheting, GA in 1.33):
   a value equal to the old value at the same place is not validated again.

A ``/status`` write validates the status alone against the status schema, so its messages
name the field from the status down (``running in body ...``) while the cause's field keeps
the ``status.`` prefix.

Schemas are the CRD's raw JSON (``openAPIV3Schema``), trusted here: the CRD's own validation
(:mod:`asched.tools.sim.apiserver.crd_validation`) has checked they are structural.
"""

from __future__ import annotations

import base64
import binascii
import copy
import ipaddress
import math
import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Any, Final

import orjson

from asched.tools.sim.apiserver import apierrors
from asched.tools.sim.apiserver.apierrors import FieldCause

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


def _unknown(value: Any, schema: Schema | None, path: str, found: list[str]) -> None:
    """The paths :func:`_prune` would drop below ``value`` (``found`` collects them)."""
    if schema is None:
        return
    if isinstance(value, dict):
        properties: JSON = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        preserve = bool(schema.get(PRESERVE)) or additional is True
        embedded = bool(schema.get(EMBEDDED))
        for key, item in value.items():
            where = _child(path, key)
            if embedded and key == "metadata":
                if isinstance(item, dict):
                    found += [f"{where}.{name}" for name in item if name not in OBJECT_META_FIELDS]
            elif key in properties:
                _unknown(item, properties[key], where, found)
            elif isinstance(additional, dict):
                _unknown(item, additional, where, found)
            elif not (preserve or (embedded and key in ("apiVersion", "kind"))):
                found.append(where)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _unknown(item, schema["items"], f"{path}[{index}]", found)


def unknown_fields(obj: JSON, schema: Schema) -> list[str]:
    """The fields of ``obj`` its schema does not declare (what :func:`prune` drops), as
    strict decoding names them: the root's metadata first, then the rest sorted."""
    found: list[str] = []
    _unknown(obj, {**schema, EMBEDDED: True}, "", found)
    meta = [path for path in found if path.startswith("metadata.")]
    return meta + sorted(path for path in found if not path.startswith("metadata."))


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


def _matches(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)
    return lambda text: compiled.search(text) is not None


#: strfmt's UUID patterns (dashes optional, any case)
_UUID: Final = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?%s[0-9a-f]{3}-?%s[0-9a-f]{3}-?[0-9a-f]{12}$"


def _is_cidr(text: str) -> bool:
    """``net.ParseCIDR``: an address, a slash and a prefix length."""
    address, slash, length = text.partition("/")
    if not slash or not length.isdigit():
        return False
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return bool(address)


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


#: the string formats checked (strfmt's registry, names without '-'); a format v1.37
#: supports but the simulator does not check is accepted as is, any other is dropped.
FORMATS: Final[dict[str, Callable[[str], bool]]] = {
    "datetime": _is_date_time,
    "date": _is_date,
    "uuid": _matches(_UUID % ("[0-9a-f]", "[0-9a-f]")),
    "uuid3": _matches(_UUID % ("3", "[0-9a-f]")),
    "uuid4": _matches(_UUID % ("4", "[89ab]")),
    "uuid5": _matches(_UUID % ("5", "[89ab]")),
    "ipv4": _is_ip(4),
    "ipv6": _is_ip(6),
    "cidr": _is_cidr,
    "byte": _is_byte,
    "hexcolor": _matches("^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"),
}
#: ``supportedVersionedFormats`` of v1.37 (names without '-', as go-openapi normalizes them).
STRING_FORMATS: Final = frozenset(
    {
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
        "datetime",
        "k8sshortname",
        "k8slongname",
    }
)
_NUMERIC_FORMATS: Final = {"integer": ("int32", "int64"), "number": ("float", "double")}
#: ``strconv.ParseInt`` bounds of the integer formats, ``ParseFloat``'s of float32.
_INT_BOUNDS: Final = {"int32": 2**31, "int64": 2**63}
_FLOAT32_MAX: Final = 3.4028234663852886e38


def format_of(schema: Schema) -> str:
    """The format the validator sees: ``StripUnsupportedFormatsPostProcessor``'s (``date-time``
    as ``datetime``), ``""`` when dropped."""
    raw = schema.get("format")
    if not isinstance(raw, str) or not raw:
        return ""
    kind = schema.get("type")
    if kind in (None, "string"):
        return raw if raw.replace("-", "") in STRING_FORMATS else ""
    if kind in _NUMERIC_FORMATS:
        return raw if raw in _NUMERIC_FORMATS[kind] else ""
    return ""


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _invalid(path: str, value: Any, message: str) -> FieldCause:
    return apierrors.invalid_value(path or _NO_FIELD, value, f"{path} in body {message}")


def _go_format(value: Any) -> tuple[str, str]:
    """``schemaInfoForType``: the JSON type and Go format a decoded value has (JSON decodes
    integers to int64 and other numbers to float64)."""
    if isinstance(value, bool):
        return "boolean", ""
    if isinstance(value, int):
        return "integer", "int64"
    if isinstance(value, float):
        return "number", "float64"
    if isinstance(value, str):
        return "string", ""
    return ("array", "") if isinstance(value, list) else ("object", "")


def _json_integer(value: float) -> bool:
    """``IsFloat64AJSONInteger``: integral and within JavaScript's exact range (2**53)."""
    return math.isfinite(value) and abs(value) <= 2**53 and float(value).is_integer()


def _type_causes(value: Any, schema: Schema, path: str) -> list[FieldCause]:
    """``typeValidator``: a value of another type (or, for a non-string, of another Go
    format than the schema's) is a ``FieldValueTypeInvalid`` cause."""
    wanted: list[str]
    if schema.get(INT_OR_STRING):
        wanted = ["integer", "string"]
    elif "type" in schema:
        wanted = [str(schema["type"])]
    else:
        wanted = []
    fmt = format_of(schema)
    if not wanted and not fmt:
        return []
    if value is None:
        if wanted and not schema.get("nullable"):
            return [_type_invalid(path, "null", f'must be of type {",".join(wanted)}: "null"')]
        return []
    actual, go_format = _go_format(value)
    float_int = actual == "number" and _json_integer(value) and "integer" in wanted
    int_float = actual == "integer" and "number" in wanted
    if (
        fmt
        and not isinstance(value, str | list)
        and not (
            actual in wanted
            or go_format == fmt
            or float_int
            or int_float
            or (fmt == "int64" and go_format == "int32")
            or (fmt == "double" and go_format == "float32")
        )
    ):
        return [_type_invalid(path, go_format, f'must be of type {fmt}: "{go_format}"')]
    if not wanted or actual in wanted or float_int or int_float:
        return []
    shown = json_type(value)
    return [_type_invalid(path, shown, f'must be of type {",".join(wanted)}: "{shown}"')]


def _type_invalid(path: str, value: Any, message: str) -> FieldCause:
    return apierrors.type_invalid(path or _NO_FIELD, value, f"{path} in body {message}")


def _range_causes(value: float, schema: Schema, path: str) -> list[FieldCause]:
    """``IsValueValidAgainstRange`` ("Checked"): an integer (by default an int64) or a
    ``float`` number fits the Go type."""
    kind, fmt = schema.get("type"), format_of(schema)
    if kind == "integer":
        bound = _INT_BOUNDS.get(fmt, _INT_BOUNDS["int64"])
        integral = isinstance(value, int) or (math.isfinite(value) and value.is_integer())
        fits = integral and -bound <= value < bound
    elif kind == "number" and fmt == "float":
        fits = abs(float(value)) <= _FLOAT32_MAX
    else:
        return []
    if fits:
        return []
    shown = f"with format {fmt}" if fmt else "(default format)"
    return [
        apierrors.invalid_value(
            _NO_FIELD, "", f"Checked value must be of type {kind} {shown} in {path}"
        )
    ]


def _combinator_causes(value: Any, schema: Schema, path: str, old: Any) -> list[FieldCause]:
    """``allOf``/``anyOf``/``oneOf``/``not``: the unnamed cause, then the best branch's."""
    causes: list[FieldCause] = []
    quoted = f'"{path}"'
    for branch in schema.get("allOf") or []:
        failed = validate(value, branch, path, old=old)
        if failed:
            causes.append(
                apierrors.invalid_value(
                    _NO_FIELD, "", f"{quoted} must validate all the schemas (allOf)"
                )
            )
            causes += failed
    any_of = schema.get("anyOf") or []
    if any_of:
        results = [validate(value, branch, path, old=old) for branch in any_of]
        if all(results):
            causes.append(
                apierrors.invalid_value(
                    _NO_FIELD, "", f"{quoted} must validate at least one schema (anyOf)"
                )
            )
            causes += results[0]
    one_of = schema.get("oneOf") or []
    if one_of:
        results = [validate(value, branch, path, old=old) for branch in one_of]
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
    """``stringValidator`` (its first failure only: maxLength, minLength, pattern), then the
    ``formatValidator``."""
    causes: list[FieldCause] = []
    pattern = schema.get("pattern")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        causes.append(apierrors.too_long(path or _NO_FIELD, schema["maxLength"]))
    elif "minLength" in schema and len(value) < schema["minLength"]:
        causes.append(_invalid(path, value, f"should be at least {schema['minLength']} chars long"))
    elif isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:  # a Go-only construct: the CRD was accepted, so is the value
            matched = True
        if not matched:
            causes.append(_invalid(path, value, f"should match '{pattern}'"))
    fmt = format_of(schema)
    check = FORMATS.get(fmt.replace("-", ""))
    if check is not None and not check(value):
        causes.append(_type_invalid(path, value, f'must be of type {fmt}: "{value}"'))
    return causes


def _number_causes(value: float, schema: Schema, path: str) -> list[FieldCause]:
    causes = _range_causes(value, schema, path)
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


def _array_causes(value: list[Any], schema: Schema, path: str, old: Any) -> list[FieldCause]:
    """``schemaSliceValidator``: the items, then minItems, maxItems, uniqueItems."""
    causes: list[FieldCause] = []
    items = schema.get("items")
    if isinstance(items, dict):
        olds = _correlated_items(value, old, schema)
        for index, (item, before) in enumerate(zip(value, olds, strict=True)):
            causes += validate(item, items, f"{path}[{index}]", old=before)
    count = len(value)
    if "minItems" in schema and count < schema["minItems"]:
        causes.append(_invalid(path, count, f"should have at least {schema['minItems']} items"))
    if "maxItems" in schema and count > schema["maxItems"]:
        causes.append(apierrors.too_many(path or _NO_FIELD, count, schema["maxItems"]))
    if schema.get("uniqueItems"):
        encoded = [orjson.dumps(item, option=orjson.OPT_SORT_KEYS) for item in value]
        if len(set(encoded)) != count:
            causes.append(_invalid(path, "", "shouldn't contain duplicates"))
    return causes


def _correlated_items(value: list[Any], old: Any, schema: Schema) -> list[Any]:
    """The old item each item is ratcheted against: by key (``x-kubernetes-list-type: map``)
    or by value (``set``); items of other lists are not correlated."""
    if not isinstance(old, list):
        return [MISSING] * len(value)
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        return [item if item in old else MISSING for item in value]
    if list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []

        def key_of(item: Any) -> Any:
            if not isinstance(item, dict):
                return None
            return tuple(orjson.dumps(item.get(name)) for name in keys)

        before = {key_of(item): item for item in old}
        return [before.get(key_of(item), MISSING) for item in value]
    return [MISSING] * len(value)


def _object_causes(value: JSON, schema: Schema, path: str, old: Any) -> list[FieldCause]:
    """``objectValidator``: min/maxProperties, the fields (in the object's order; Go's is a
    map's), then the required ones missing."""
    causes: list[FieldCause] = []
    count = len(value)
    if "minProperties" in schema and count < schema["minProperties"]:
        causes.append(
            _invalid(path, count, f"should have at least {schema['minProperties']} properties")
        )
    if "maxProperties" in schema and count > schema["maxProperties"]:
        causes.append(apierrors.too_many(path or _NO_FIELD, count, schema["maxProperties"]))
    properties: JSON = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for key, item in value.items():
        child = properties.get(key)
        if child is None and isinstance(additional, dict):
            child = additional
        if child is not None:
            before = old.get(key, MISSING) if isinstance(old, dict) else MISSING
            causes += validate(item, child, _child(path, key), old=before)
    causes += [
        apierrors.required(_child(path, str(name)))
        for name in schema.get("required") or []
        if name not in value
    ]
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


class _Missing:
    """No old value at this place (a create, or nothing to correlate with)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


def validate(value: Any, schema: Schema, path: str = "", *, old: Any = MISSING) -> list[FieldCause]:
    """Every field cause of ``value`` against ``schema``; ``path`` names ``value``, ``old`` is
    the value an update replaces there (ratcheting: an unchanged value is valid).

    The order is go-openapi's per node: type, combinators, string, format, number, array,
    enum, object (properties in the object's own order).
    """
    if old is not MISSING and old == value and type(old) is type(value):
        return []
    causes = _type_causes(value, schema, path)
    causes += _combinator_causes(value, schema, path, old)
    if isinstance(value, str):
        causes += _string_causes(value, schema, path)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        causes += _number_causes(value, schema, path)
    elif isinstance(value, list):
        causes += _array_causes(value, schema, path, old)
    causes += _enum_causes(value, schema, path)
    if isinstance(value, dict):
        causes += _object_causes(value, schema, path, old)
    return causes


def validate_at(value: Any, schema: Schema, root: str, *, old: Any = MISSING) -> list[FieldCause]:
    """:func:`validate` of a part of an object validated on its own (a ``/status`` write's
    status): messages name the field from the part down, causes from the root."""
    return [
        apierrors.FieldCause(
            cause.kind,
            root if cause.field == _NO_FIELD else f"{root}.{cause.field}",
            cause.value,
            cause.detail,
        )
        for cause in validate(value, schema, old=old)
    ]
