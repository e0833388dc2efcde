"""Kubernetes ``Status`` failures, shaped exactly like apimachinery's ``errors`` package.

Every expected "no" of the simulated server (not found, conflict, invalid, ...) is a
:class:`StatusError` raised from the synchronous registry code and turned into an HTTP
response in one place (:mod:`asched.tools.sim.apiserver.handlers`). The constructors mirror the Go ones
(``NewNotFound``, ``NewConflict``, ``NewInvalid``...) so that messages, reasons and
``details`` match what a genuine kube-apiserver answers, byte for byte where we could
check it:

* ``NotFound``: ``pods "web-1" not found``; ``details`` = name, group (omitted for the
  core group), kind = the *resource* (plural) name.
* ``Invalid`` (422): ``Pod "web-1" is invalid: <field errors>``; ``details.kind`` is the
  *Kind*, and each cause carries ``reason``, ``message`` and ``field``.

Invariant: :meth:`StatusError.body` is a fresh dict each call (callers may encode it).
"""

from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from typing import Any, Final

import orjson

JSON = dict[str, Any]

#: field.ErrorType -> (message prefix, cause reason); the first group never prints the value.
_REQUIRED: Final = ("Required value", "FieldValueRequired")
_FORBIDDEN: Final = ("Forbidden", "FieldValueForbidden")
_TOO_LONG: Final = ("Too long", "FieldValueTooLong")
_TOO_MANY: Final = ("Too many", "FieldValueTooMany")
_INVALID: Final = ("Invalid value", "FieldValueInvalid")
_TYPE_INVALID: Final = ("Invalid value", "FieldValueTypeInvalid")
_UNSUPPORTED: Final = ("Unsupported value", "FieldValueNotSupported")
_DUPLICATE: Final = ("Duplicate value", "FieldValueDuplicate")
_NOT_FOUND: Final = ("Not found", "FieldValueNotFound")
_WITHOUT_VALUE: Final = frozenset({_REQUIRED[0], _FORBIDDEN[0], _TOO_LONG[0]})


class GoLiteral(str):
    """A bad value already formatted as Go prints it (a struct's JSON in its field order)."""

    __slots__ = ()


def go_json(value: object, *, sort_keys: bool = True) -> GoLiteral:
    """``json.Marshal`` of ``value``: compact, ``<``, ``>`` and ``&`` escaped as Go escapes
    them, map keys sorted (``sort_keys=False`` keeps a struct's field order, built in it)."""
    encoded = orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0).decode()
    for char, escape in _HTML_ESCAPES:
        encoded = encoded.replace(char, escape)
    return GoLiteral(encoded)


_HTML_ESCAPES: Final = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def go_float(value: float) -> str:
    """``%v`` of a float64 (``%g`` with the shortest digits, ``%e`` from an exponent of 6 or
    below -4): ``1.5``, ``100000``, ``1e+06``, ``1e-05``."""
    if math.isnan(value) or math.isinf(value):
        return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digit_tuple, exponent = decimal.Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent += len(digit_tuple) - len(digits)  # value = digits * 10**exponent
    power = len(digits) - 1 + exponent
    minus = "-" if sign else ""
    if power < -4 or power >= 6:
        tail = f".{digits[1:]}" if len(digits) > 1 else ""
        return f"{minus}{digits[0]}{tail}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if exponent >= 0:
        return minus + digits + "0" * exponent
    point = len(digits) + exponent
    if point > 0:
        return f"{minus}{digits[:point]}.{digits[point:]}"
    return f"{minus}0.{'0' * -point}{digits}"


def go_quote(text: str) -> str:
    """``strconv.Quote``: the escapes Go uses for what a bad value may hold."""
    out = []
    for char in text:
        if char in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


_QUOTE_ESCAPES: Final = {
    "\\": "\\\\",
    '"': '\\"',
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def _go_value(value: object) -> str:
    """Format a bad value as ``field.Error.ErrorBody`` does: ``%v`` for numbers and booleans,
    ``%q`` for strings, JSON for everything else (``null``, ``["a"]``, ``{"k":"v"}``)."""
    if isinstance(value, GoLiteral):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    return str(go_json(value))


@dataclass(frozen=True, slots=True)
class FieldCause:
    """One field error of an ``Invalid`` answer (Go's ``field.Error``)."""

    kind: tuple[str, str]
    field: str
    value: object = None
    detail: str = ""

    @property
    def body(self) -> str:
        """``ErrorBody()``: the type, the quoted value where it applies, the detail."""
        text = self.kind[0]
        if text not in _WITHOUT_VALUE:
            text = f"{text}: {_go_value(self.value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.field}: {self.body}"


def required(field: str, detail: str = "") -> FieldCause:
    """``field.Required``."""
    return FieldCause(_REQUIRED, field, None, detail)


def forbidden(field: str, detail: str) -> FieldCause:
    """``field.Forbidden``."""
    return FieldCause(_FORBIDDEN, field, None, detail)


def too_long(field: str, limit: int) -> FieldCause:
    """``field.TooLong``."""
    return FieldCause(_TOO_LONG, field, None, f"may not be more than {limit} bytes")


def invalid_value(field: str, value: object, detail: str) -> FieldCause:
    """``field.Invalid``."""
    return FieldCause(_INVALID, field, value, detail)


def too_many(field: str, actual: int, limit: int) -> FieldCause:
    """``field.TooMany``: ``Too many: 3: must have at most 2 items``."""
    unit = "item" if limit == 1 else "items"
    return FieldCause(_TOO_MANY, field, actual, f"must have at most {limit} {unit}")


def type_invalid(field: str, value: object, detail: str) -> FieldCause:
    """``field.TypeInvalid``: printed as ``Invalid value``, reason ``FieldValueTypeInvalid``."""
    return FieldCause(_TYPE_INVALID, field, value, detail)


def not_supported(field: str, value: object, supported: list[str]) -> FieldCause:
    """``field.NotSupported``: the detail lists the quoted supported values."""
    quoted = ", ".join(f'"{item}"' for item in supported)
    return FieldCause(_UNSUPPORTED, field, value, f"supported values: {quoted}")


def duplicate(field: str, value: object) -> FieldCause:
    """``field.Duplicate``."""
    return FieldCause(_DUPLICATE, field, value)


def not_found_field(field: str, value: object) -> FieldCause:
    """``field.NotFound``."""
    return FieldCause(_NOT_FOUND, field, value)


class StatusError(Exception):
    """A failure answered with a ``kind: Status`` body and an HTTP status code."""

    def __init__(self, code: int, reason: str, message: str, details: JSON | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def body(self) -> JSON:
        """The Status object in the key order of the real server."""
        status: JSON = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:
            status["reason"] = self.reason
        if self.details is not None:
            status["details"] = self.details
        status["code"] = self.code
        return status


def _qualified(resource: str, group: str) -> str:
    """``schema.GroupResource.String()``: ``pods`` or ``replicasets.apps``."""
    return f"{resource}.{group}" if group else resource


def _details(resource: str, group: str, name: str) -> JSON:
    details: JSON = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = resource
    return details


def not_found(resource: str, group: str, name: str) -> StatusError:
    """``NewNotFound``: the object does not exist."""
    return StatusError(
        404,
        "NotFound",
        f'{_qualified(resource, group)} "{name}" not found',
        _details(resource, group, name),
    )


def path_not_found() -> StatusError:
    """The 404 for a URL that names no served resource."""
    return StatusError(404, "NotFound", "the server could not find the requested resource", {})


class PageNotFound(StatusError):
    """A path outside every served group/version: the real server's mux answers a plain
    ``404 page not found`` text, not a Status."""

    def __init__(self) -> None:
        super().__init__(404, "NotFound", "404 page not found")


def already_exists(resource: str, group: str, name: str) -> StatusError:
    """``NewAlreadyExists``."""
    return StatusError(
        409,
        "AlreadyExists",
        f'{_qualified(resource, group)} "{name}" already exists',
        _details(resource, group, name),
    )


def conflict(resource: str, group: str, name: str, why: str) -> StatusError:
    """``NewConflict``: ``Operation cannot be fulfilled on pods "x": <why>``."""
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {why}',
        _details(resource, group, name),
    )


STALE_OBJECT: Final = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def fold(causes: list[FieldCause]) -> list[FieldCause]:
    """``causes`` with repeats (the same field and message) left out, first ones kept: what
    v1.37's declarative validation does to a built-in kind's errors on its way (it filters
    them through ``ToAggregate``)."""
    seen: set[str] = set()
    kept: list[FieldCause] = []
    for cause in causes:
        text = str(cause)
        if text not in seen:
            seen.add(text)
            kept.append(cause)
    return kept


def invalid(kind: str, group: str, name: str, causes: list[FieldCause]) -> StatusError:
    """``NewInvalid``: 422 with one cause per field error (duplicates folded in the message,
    as Go's aggregate folds them; :func:`fold` folds the causes of built-in kinds)."""
    messages: list[str] = []
    for cause in causes:
        text = str(cause)
        if text not in messages:
            messages.append(text)
    aggregate = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    qualified_kind = f"{kind}.{group}" if group else kind
    details: JSON = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [
        {"reason": cause.kind[1], "message": cause.body, "field": cause.field} for cause in causes
    ]
    return StatusError(
        422, "Invalid", f'{qualified_kind} "{name}" is invalid: {aggregate}', details
    )


def bad_request(message: str, details: JSON | None = None) -> StatusError:
    """``NewBadRequest``: a malformed request (body, query, selector)."""
    return StatusError(400, "BadRequest", message, details)


def forbidden_error(resource: str, group: str, name: str, why: str) -> StatusError:
    """``NewForbidden``: ``pods "x" is forbidden: <why>``."""
    return StatusError(
        403,
        "Forbidden",
        f'{_qualified(resource, group)} "{name}" is forbidden: {why}',
        _details(resource, group, name),
    )


def method_not_allowed() -> StatusError:
    """The 405 for a verb the resource does not support."""
    return StatusError(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        {},
    )


def unsupported_media_type(content_type: str, accepted: list[str]) -> StatusError:
    """The 415 for a body in a format the endpoint cannot decode."""
    return StatusError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join(accepted)}",
        {},
    )


def not_acceptable(accepted: list[str]) -> StatusError:
    """The 406 for an ``Accept`` header the server cannot satisfy."""
    return StatusError(
        406,
        "NotAcceptable",
        f"only the following media types are accepted: {', '.join(accepted)}",
        {},
    )


def unauthorized() -> StatusError:
    """The 401 for a missing or wrong bearer token."""
    return StatusError(401, "Unauthorized", "Unauthorized")


def expired(message: str) -> StatusError:
    """``NewResourceExpired``: 410 Gone, reason ``Expired``."""
    return StatusError(410, "Expired", message)


def too_large_resource_version(requested: int, current: int) -> StatusError:
    """The 504 of a list or watch whose resourceVersion the server has not reached."""
    return StatusError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        {
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
    )


def request_entity_too_large(limit: int) -> StatusError:
    """``NewRequestEntityTooLargeError``: a body over the server's limit (bytes)."""
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def internal(message: str) -> StatusError:
    """``NewInternalError``: 500, reason ``InternalError``."""
    return StatusError(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        {"causes": [{"message": message}]},
    )


def unknown(code: int, message: str) -> StatusError:
    """A plain Go error surfaced as a Status: no reason, no details (``ErrorToAPIStatus``)."""
    return StatusError(code, "", message)
