"""Go's ``encoding/json`` as kube-apiserver v1.37 uses it: its syntax errors and type errors.

v1.37 decodes request bodies with ``sigs.k8s.io/json``, a case-sensitive fork of the
standard library's decoder (v1.20 used json-iterator, whose messages differed). A client
reads two kinds of failure from it, and this module words both as Go does:

* :func:`syntax_error`: the scanner's message for a body that is not JSON at all
  (``unexpected end of JSON input``, ``invalid character '}' looking for beginning of
  object key string``, ``invalid character '{' after top-level value``...);
* :func:`type_error`: the first ``UnmarshalTypeError`` met, in document order, while
  decoding into a Go struct (``json: cannot unmarshal string into Go struct field
  DeleteOptions.gracePeriodSeconds of type int64``). A number that does not fit its Go
  integer is named with its literal (``number 1.5``), as the decoder read it, so
  :func:`loads_literal` keeps every number's text.

A struct is described by :class:`Struct`: its Go name and, per JSON field, the Go type
name the message prints and, for nested structs and slices, the element's description.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from asched.tools.sim.apiserver import apierrors

#: Go's integer types: (minimum, maximum).
_INT_RANGES: Final = {
    "int64": (-(2**63), 2**63 - 1),
    "int32": (-(2**31), 2**31 - 1),
}


class Number(str):
    """A JSON number kept as its literal text (what Go's decoder sees)."""

    __slots__ = ()


def loads_literal(raw: bytes) -> Any:
    """``raw`` decoded with every number as a :class:`Number` (its literal); the caller has
    checked the syntax already."""
    return json.loads(raw, parse_int=Number, parse_float=Number, parse_constant=Number)


@dataclass(frozen=True, slots=True)
class Field:
    """One JSON field of a Go struct: the Go type name and what it holds."""

    go_type: str
    #: ``string``, ``bool``, ``int`` (any integer kind, bounds from ``go_type``), ``struct``
    #: or ``slice``.
    kind: str
    struct: Struct | None = None
    item: Field | None = None


@dataclass(frozen=True, slots=True)
class Struct:
    """A Go struct: its name as errors print it (``DeleteOptions``) and its JSON fields."""

    name: str
    fields: dict[str, Field] = field(default_factory=dict)


def json_type(value: Any) -> str:
    """Go's name of a JSON value's type, as ``cannot unmarshal <type>`` prints it."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Number | int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _fits(literal: str, go_type: str) -> bool:
    low, high = _INT_RANGES.get(go_type, _INT_RANGES["int64"])
    try:
        number = int(literal, 10)  # a fraction or an exponent is no integer to Go
    except ValueError:
        return False
    return low <= number <= high


def _value_error(value: Any, spec: Field, path: str, owner: str) -> str | None:
    """The message of the first type error in ``value`` (a field of struct ``owner``)."""
    if value is None:
        return None
    kind = json_type(value)

    def failed(shown: str) -> str:
        return f"json: cannot unmarshal {shown} into Go struct field {owner}.{path} of type {spec.go_type}"

    if spec.kind == "struct":
        if kind != "object":
            return failed(kind)
        assert spec.struct is not None
        return _struct_error(value, spec.struct, path)
    if spec.kind == "slice":
        if kind != "array":
            return failed(kind)
        assert spec.item is not None
        for item in value:
            error = _value_error(item, spec.item, path, owner)
            if error is not None:
                return error
        return None
    if spec.kind == "int":
        if kind == "number":
            return None if _fits(str(value), spec.go_type) else failed(f"number {value}")
        return failed(kind)
    if spec.kind == "string":
        return None if kind == "string" else failed(kind)
    return None if kind == "bool" else failed(kind)


def _struct_error(body: dict[str, Any], struct: Struct, prefix: str = "") -> str | None:
    for key, value in body.items():  # document order: Go reports the first error it met
        spec = struct.fields.get(key)
        if spec is None:
            continue  # unknown fields are dropped (the decoder is not strict here)
        path = f"{prefix}.{key}" if prefix else key
        error = _value_error(value, spec, path, struct.name)
        if error is not None:
            return error
    return None


def type_error(body: dict[str, Any], struct: Struct) -> str | None:
    """The first ``json: cannot unmarshal ...`` of decoding ``body`` (from
    :func:`loads_literal`) into ``struct``, or None when every field decodes."""
    return _struct_error(body, struct)


class _Pairs(list[tuple[str, Any]]):
    """An object's members in document order, repeats kept (``object_pairs_hook``)."""


def _duplicates(value: Any, path: str, found: list[str]) -> None:
    if isinstance(value, _Pairs):
        seen: set[str] = set()
        for key, item in value:
            where = f"{path}.{key}" if path else key
            if key in seen and where not in found:
                found.append(where)
            seen.add(key)
            _duplicates(item, where, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _duplicates(item, f"{path}[{index}]", found)


def duplicate_fields(raw: bytes) -> list[str]:
    """The paths of the members a JSON document repeats (``spec.minMember``), in document
    order, as strict decoding names them; [] when ``raw`` is not JSON."""
    try:
        document = json.loads(raw, object_pairs_hook=_Pairs)
    except ValueError:
        return []
    found: list[str] = []
    _duplicates(document, "", found)
    return found


# -- the scanner ---------------------------------------------------------------------------

_WHITESPACE: Final = b" \t\r\n"


def _quote_char(byte: int) -> str:
    """``quoteChar``: how the scanner names the byte it stopped at (``'}'``, ``'\\x01'``)."""
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    return f"'{apierrors.go_quote(chr(byte))[1:-1]}'"


class _Syntax(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Scanner:
    """A recursive reading of Go's ``checkValid`` state machine (messages word for word)."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.pos = 0

    def _peek(self) -> int | None:
        return self.raw[self.pos] if self.pos < len(self.raw) else None

    def _skip(self) -> int | None:
        while self.pos < len(self.raw) and self.raw[self.pos] in _WHITESPACE:
            self.pos += 1
        return self._peek()

    def _fail(self, byte: int, context: str) -> _Syntax:
        return _Syntax(f"invalid character {_quote_char(byte)} {context}")

    def _need(self) -> int:
        byte = self._peek()
        if byte is None:
            raise _Syntax("unexpected end of JSON input")
        return byte

    def value(self) -> None:
        self._skip()
        byte = self._need()
        if byte == ord("{"):
            self.pos += 1
            self._object()
        elif byte == ord("["):
            self.pos += 1
            self._array()
        elif byte == ord('"'):
            self.pos += 1
            self._string()
        elif byte == ord("-") or ord("0") <= byte <= ord("9"):
            self._number()
        elif byte in b"tfn":
            self._literal()
        else:
            raise self._fail(byte, "looking for beginning of value")

    def _object(self) -> None:
        byte = self._skip()
        if byte == ord("}"):
            self.pos += 1
            return
        while True:
            byte = self._need()
            if byte != ord('"'):
                raise self._fail(byte, "looking for beginning of object key string")
            self.pos += 1
            self._string()
            byte = self._skip()
            byte = self._need()
            if byte != ord(":"):
                raise self._fail(byte, "after object key")
            self.pos += 1
            self.value()
            self._skip()
            byte = self._need()
            self.pos += 1
            if byte == ord("}"):
                return
            if byte != ord(","):
                raise self._fail(byte, "after object key:value pair")
            self._skip()

    def _array(self) -> None:
        if self._skip() == ord("]"):
            self.pos += 1
            return
        while True:
            self.value()
            self._skip()
            byte = self._need()
            self.pos += 1
            if byte == ord("]"):
                return
            if byte != ord(","):
                raise self._fail(byte, "after array element")

    def _string(self) -> None:
        while True:
            byte = self._need()
            self.pos += 1
            if byte == ord('"'):
                return
            if byte == ord("\\"):
                escape = self._need()
                self.pos += 1
                if escape == ord("u"):
                    for _ in range(4):
                        digit = self._need()
                        if chr(digit) not in "0123456789abcdefABCDEF":
                            raise self._fail(digit, "in \\u hexadecimal character escape")
                        self.pos += 1
                elif escape not in b'"\\/bfnrt':
                    raise self._fail(escape, "in string escape code")
            elif byte < 0x20:
                raise self._fail(byte, "in string literal")

    def _digits(self) -> int:
        start = self.pos
        while (byte := self._peek()) is not None and ord("0") <= byte <= ord("9"):
            self.pos += 1
        return self.pos - start

    def _number(self) -> None:
        if self._peek() == ord("-"):
            self.pos += 1
            byte = self._need()
            if not ord("0") <= byte <= ord("9"):
                raise self._fail(byte, "in numeric literal")
        if self._peek() == ord("0"):
            self.pos += 1
        else:
            self._digits()
        if self._peek() == ord("."):
            self.pos += 1
            byte = self._need()
            if not ord("0") <= byte <= ord("9"):
                raise self._fail(byte, "after decimal point in numeric literal")
            self._digits()
        if self._peek() in (ord("e"), ord("E")):
            self.pos += 1
            if self._peek() in (ord("+"), ord("-")):
                self.pos += 1
            byte = self._need()
            if not ord("0") <= byte <= ord("9"):
                raise self._fail(byte, "in exponent of numeric literal")
            self._digits()

    def _literal(self) -> None:
        word = {ord("t"): "true", ord("f"): "false", ord("n"): "null"}[self.raw[self.pos]]
        self.pos += 1
        for expected in word[1:]:
            byte = self._need()
            if byte != ord(expected):
                raise self._fail(byte, f"in literal {word} (expecting '{expected}')")
            self.pos += 1

    def document(self) -> None:
        self.value()
        byte = self._skip()
        if byte is not None:
            raise self._fail(byte, "after top-level value")


def syntax_error(raw: bytes) -> str | None:
    """Go's message for ``raw`` if it is not one JSON value (None when it is)."""
    try:
        _Scanner(raw).document()
    except _Syntax as error:
        return error.message
    except RecursionError:
        return "exceeded max depth"
    return None
