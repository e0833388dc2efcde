"""Label and field selectors: parsing (with the server's 400 messages) and matching.

Label selectors follow ``k8s.io/apimachinery/pkg/labels`` syntax: requirements joined by
commas, each one of ``key``, ``!key``, ``key=v``, ``key==v``, ``key!=v``,
``key in (a,b)``, ``key notin (a,b)``, ``key>1``, ``key<1``. ``!=`` and ``notin`` match
objects *without* the key, as upstream.

Field selectors support ``=``, ``==`` and ``!=`` with backslash escapes, over a fixed set
of field labels per resource (see :mod:`asched.tools.sim.apiserver.resources`); any other label is a 400
``field label not supported: X``, as the real server answers.

Invariant: a parsed selector is immutable and matching never mutates the object.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from asched.tools.sim.apiserver import apierrors

JSON = dict[str, Any]
FieldGetter = Callable[[JSON], str]

_NAME_PART: Final = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_VALUE: Final = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_DNS_SUBDOMAIN: Final = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)


@dataclass(frozen=True, slots=True)
class Requirement:
    """One label requirement: ``key <op> values``."""

    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Return whether ``labels`` satisfies this requirement."""
        op = self.op
        if op == "exists":
            return self.key in labels
        if op == "!":
            return self.key not in labels
        value = labels.get(self.key)
        if op in ("=", "in"):
            return value is not None and value in self.values
        if op in ("!=", "notin"):
            return value is None or value not in self.values
        if value is None:
            return False
        try:
            actual = int(value)
        except ValueError:
            return False
        (bound,) = self.values
        return actual > int(bound) if op == "gt" else actual < int(bound)


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A conjunction of label requirements; empty matches everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Return whether an object with ``labels`` is selected."""
        if not self.requirements:
            return True
        have: Mapping[str, str] = labels or {}
        return all(req.matches(have) for req in self.requirements)

    @property
    def empty(self) -> bool:
        """True when the selector selects everything."""
        return not self.requirements


#: ``IsDNS1123Subdomain``'s regex message (also asched.tools.sim.apiserver.validation's)
SUBDOMAIN_MESSAGE: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. "
    "'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_QUALIFIED_REGEX: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def subdomain_errors(name: str, *, limit_in: str = "characters") -> list[str]:
    """``IsDNS1123Subdomain``: every reason ``name`` is not a subdomain (Go lists them all).

    v1.37 has two copies: ``util/validation``'s says ``characters`` of a name too long, the
    ``content`` package's (label key prefixes) ``bytes``.
    """
    errors = [f"must be no more than 253 {limit_in}"] if len(name) > 253 else []
    if not _DNS_SUBDOMAIN.match(name):
        errors.append(SUBDOMAIN_MESSAGE)
    return errors


def qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName`` (``content.IsLabelKey`` in v1.37: label keys, topology keys,
    finalizers): every reason, as Go gives them."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            f"a valid label key {_QUALIFIED_REGEX} with an optional DNS subdomain prefix and "
            "'/' (e.g. 'example.com/MyName')"
        ]
    errors: list[str] = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors += [f"prefix part {why}" for why in subdomain_errors(prefix, limit_in="bytes")]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 bytes")
    if not _NAME_PART.match(name):
        errors.append(f"name part {_QUALIFIED_REGEX}")
    return errors


def label_value_errors(value: str) -> list[str]:
    """``IsValidLabelValue``: every reason ``value`` is not a label value."""
    errors = ["must be no more than 63 bytes"] if len(value) > 63 else []
    if not _VALUE.match(value):
        errors.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', "
            "'_' or '.', and must start and end with an alphanumeric character (e.g. "
            "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        )
    return errors


def label_key_error(key: str) -> str | None:
    """The first reason ``key`` is not a valid qualified label key, or None."""
    errors = qualified_name_errors(key)
    return errors[0] if errors else None


def label_value_error(value: str) -> str | None:
    """The first reason ``value`` is not a valid label value, or None."""
    errors = label_value_errors(value)
    return errors[0] if errors else None


_SPECIAL: Final = "!=<>(),"
_BINARY_OPERATORS: Final = "in, notin, =, ==, !=, gt, lt"
_EOS: Final = ("EOS", "")
#: what ``strconv.ParseInt(s, 10, 64)`` reads (its range checked apart)
_INT64: Final = re.compile(r"[+-]?[0-9]+")


def _lex(text: str) -> list[tuple[str, str]]:
    """Go's selector lexer: (token kind, literal); kinds are the literal for symbols."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char.isspace():
            pos += 1
        elif char in _SPECIAL:
            pair = text[pos : pos + 2]
            symbol = pair if pair in ("!=", "==") else char
            tokens.append((symbol, symbol))
            pos += len(symbol)
        else:
            end = pos
            while end < len(text) and not text[end].isspace() and text[end] not in _SPECIAL:
                end += 1
            tokens.append(("ID", text[pos:end]))
            pos = end
    return tokens


class _LabelParser:
    """A port of apimachinery's ``labels.Parser`` (v1.37), messages included: a bad key is a
    field error on no path (``<nil>: Invalid value: ...``), a bad value one on its place in the
    sorted values (``values[0][key]: ...``), as ``NewRequirement`` words them."""

    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.pos = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else _EOS

    def take(self) -> tuple[str, str]:
        token = self.peek()
        self.pos += 1
        return token

    def parse(self) -> LabelSelector:
        requirements: list[Requirement] = []
        while True:
            kind, literal = self.peek()
            if kind == "EOS":
                return LabelSelector(tuple(requirements))
            if kind not in ("ID", "!"):
                raise ValueError(f"found '{literal}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.requirement())
            except ValueError as exc:
                raise ValueError(f"unable to parse requirement: {exc}") from None
            kind, literal = self.take()
            if kind == "EOS":
                return LabelSelector(tuple(requirements))
            if kind != ",":
                raise ValueError(f"found '{literal}', expected: ',' or 'end of string'")
            kind, literal = self.peek()
            if kind not in ("ID", "!"):
                raise ValueError(f"found '{literal}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        kind, literal = self.take()
        negated = kind == "!"
        if negated:
            kind, literal = self.take()
        if kind != "ID":
            raise ValueError(f"found '{literal}', expected: identifier")
        key = literal
        _check_key(key)
        if self.peek()[0] in ("EOS", ","):
            return Requirement(key, "!" if negated else "exists")
        kind, literal = self.take()
        operators = {"=": "=", "==": "=", "!=": "!=", ">": "gt", "<": "lt"}
        if kind == "ID" and literal in ("in", "notin"):
            op = literal
            values = self.values()
            if not values:
                raise ValueError("for 'in', 'notin' operators, values set can't be empty")
        elif kind in operators:
            op = operators[kind]
            values = self.exact_value()
        else:
            raise ValueError(f"found '{literal}', expected: {_BINARY_OPERATORS}")
        errors: list[str] = []  # NewRequirement's, on the values' paths (Go sorts them)
        for index, value in enumerate(sorted(values)):
            if op in ("gt", "lt") and not (
                _INT64.fullmatch(value) and -(2**63) <= int(value) < 2**63
            ):
                errors.append(
                    f"values[{index}]: Invalid value: {apierrors.go_quote(value)}: for "
                    "'Gt', 'Lt' operators, the value must be an integer"
                )
            why = label_value_errors(value)
            if why:
                errors.append(
                    f"values[{index}][{key}]: Invalid value: {apierrors.go_quote(value)}: "
                    + "; ".join(why)
                )
        if errors:
            raise ValueError(_aggregate(errors))
        return Requirement(key, op, frozenset(values))

    def values(self) -> set[str]:
        kind, literal = self.take()
        if kind != "(":
            raise ValueError(f"found '{literal}' expected: '('")
        kind, literal = self.peek()
        if kind == ")":
            self.take()
            return {""}
        if kind not in ("ID", ","):
            raise ValueError(f"found '{literal}', expected: ',', ')' or identifier")
        found: set[str] = set()
        while True:
            kind, literal = self.take()
            if kind == "ID":
                found.add(literal)
                nxt, nxt_literal = self.peek()
                if nxt == ")":
                    self.take()
                    return found
                if nxt != ",":
                    raise ValueError(f"found '{nxt_literal}', expected: ',' or ')'")
            elif kind == ",":
                if not found:
                    found.add("")
                if self.peek()[0] == ")":
                    self.take()
                    found.add("")
                    return found
                if self.peek()[0] == ",":
                    self.take()
                    found.add("")
            else:
                raise ValueError(f"found '{literal}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        kind, literal = self.peek()
        if kind in ("EOS", ","):
            return {""}
        self.take()
        if kind == "ID":
            return {literal}
        raise ValueError(f"found '{literal}', expected: identifier")


def _check_key(key: str) -> None:
    """``validateLabelKey`` on the parser's path (none: Go prints ``<nil>``)."""
    errors = qualified_name_errors(key)
    if errors:
        raise ValueError(f"<nil>: Invalid value: {apierrors.go_quote(key)}: {'; '.join(errors)}")


def _aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message, or ``[a, b]`` (repeats once)."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def parse_labels(text: str) -> LabelSelector:
    """Parse a ``labelSelector`` query value; raise a 400 StatusError when malformed."""
    try:
        return _LabelParser(text).parse()
    except ValueError as exc:
        raise apierrors.bad_request(str(exc)) from None


@dataclass(frozen=True, slots=True)
class FieldTerm:
    """One field requirement: ``field = value`` or ``field != value``."""

    field: str
    value: str
    negated: bool
    getter: FieldGetter


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """A conjunction of field terms; empty matches everything."""

    terms: tuple[FieldTerm, ...] = ()

    def matches(self, obj: JSON) -> bool:
        """Return whether ``obj`` (a stored dict) is selected."""
        return all((term.getter(obj) == term.value) != term.negated for term in self.terms)

    @property
    def empty(self) -> bool:
        """True when the selector selects everything."""
        return not self.terms

    def required(self, field: str) -> str | None:
        """The value an ``=`` term pins ``field`` to, if any (for index-like shortcuts)."""
        for term in self.terms:
            if term.field == field and not term.negated:
                return term.value
        return None


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char == "\\":
            nxt = next(chars, "")
            if nxt not in ("\\", ",", "="):
                raise apierrors.bad_request(
                    f"invalid field selector: invalid escape sequence: \\{nxt}"
                )
            out.append(nxt)
        else:
            out.append(char)
    return "".join(out)


def parse_fields(text: str, getters: Mapping[str, FieldGetter]) -> FieldSelector:
    """Parse a ``fieldSelector`` query value against the resource's field labels."""
    terms: list[FieldTerm] = []
    for part in _split_unescaped(text, ","):
        if not part.strip():
            continue
        for op in ("!=", "==", "="):
            index = part.find(op)
            if index > 0:
                field = part[:index].strip()
                value = _unescape(part[index + len(op) :])
                negated = op == "!="
                break
        else:
            raise apierrors.bad_request(f"invalid selector: '{part}'; can't understand '{part}'")
        getter = getters.get(field)
        if getter is None:
            raise apierrors.bad_request(f"field label not supported: {field}")
        terms.append(FieldTerm(field, value, negated, getter))
    return FieldSelector(tuple(terms))


def structured_matches(selector: JSON | None, labels: Mapping[str, str] | None) -> bool:
    """Whether a ``metav1.LabelSelector`` (matchLabels + matchExpressions) selects ``labels``.

    An empty selector matches everything; a ``None`` selector matches nothing, as upstream.
    """
    if selector is None:
        return False
    have: Mapping[str, str] = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if have.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key = expression.get("key", "")
        values = expression.get("values") or []
        operator = expression.get("operator")
        if operator == "In" and have.get(key) not in values:
            return False
        if operator == "NotIn" and key in have and have[key] in values:
            return False
        if operator == "Exists" and key not in have:
            return False
        if operator == "DoesNotExist" and key in have:
            return False
    return True
