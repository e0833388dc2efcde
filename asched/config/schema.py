"""Reading an untyped configuration document field by field, collecting every problem.

The loader never stops at the first mistake: each reader below checks one value, records
a :class:`~asched.errors.FieldError` when it is wrong, and hands back a usable
substitute (the default) so reading can go on and report the rest of the document in
the same pass. The caller raises one :class:`~asched.errors.ConfigError` at the end.

Paths are written the way the user wrote the document: camelCase keys joined by dots,
list positions in brackets (``profiles[0].pluginConfig[1].args.hardPodAffinityWeight``).

Type rules (as strict as upstream's strict decoding): a boolean must be a YAML/JSON
boolean; an integer must be an integer (never a boolean; a float only when it has no
fractional part, because JSON tools sometimes write ``5.0``); a string must be a string.
A ``null`` value counts as absent everywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any, Final

from asched.errors import FieldError

_NAME_PART: Final = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN: Final = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_EMPTY: Final[Mapping[str, Any]] = {}


class Problems:
    """The field errors found so far in one document, in the order they were found."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []

    def add(self, path: str, message: str) -> None:
        """Record that the field at ``path`` is wrong."""
        self.errors.append(FieldError(path, message))

    def check_range(self, path: str, value: int, low: int, high: int) -> bool:
        """Record an error unless ``low <= value <= high``; return whether it was in range."""
        if low <= value <= high:
            return True
        self.add(path, f"must be in {low}..{high}, got {value}")
        return False

    def count(self) -> int:
        """How many errors have been recorded (to tell whether a sub-reader found any)."""
        return len(self.errors)


def child(path: str, key: str) -> str:
    """The path of field ``key`` inside the object at ``path`` (``""`` is the root)."""
    return f"{path}.{key}" if path else key


def describe(value: Any) -> str:
    """A short description of a wrong value for a message: scalars quoted, containers named."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return repr(value)


def quote(text: str) -> str:
    """``text`` in double quotes, escaped like JSON (Go's ``%q``), for names in messages."""
    return json.dumps(text, ensure_ascii=False)


def as_integer(value: Any) -> int | None:
    """``value`` as an int when it is one (see the module docstring), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def is_qualified_name(text: str) -> bool:
    """True for a Kubernetes qualified name: ``[prefix/]name``, as label keys are written."""
    prefix, _, name = text.rpartition("/")
    if "/" in text and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and _NAME_PART.match(name) is not None


class Section:
    """One object of the document: its fields, its path, and where its errors go.

    Construction checks the object itself: a non-object is reported (and read as empty),
    and every key not in ``known`` is reported as an unknown field.
    """

    def __init__(self, problems: Problems, raw: Any, path: str, known: Collection[str]) -> None:
        self.problems = problems
        self.path = path
        if raw is None:
            raw = _EMPTY
        elif not isinstance(raw, Mapping):
            problems.add(path or "(document)", f"must be an object, got {describe(raw)}")
            raw = _EMPTY
        self.raw: Mapping[str, Any] = raw
        for key in raw:
            if key not in known:
                problems.add(child(path, str(key)), "unknown field")

    def at(self, key: str) -> str:
        """The full path of field ``key``."""
        return child(self.path, key)

    def report(self, key: str, message: str) -> None:
        """Record that field ``key`` of this object is wrong (``message`` names the value)."""
        self.problems.add(self.at(key), message)

    def has(self, key: str) -> bool:
        """True when ``key`` is present and not null."""
        return self.raw.get(key) is not None

    def get(self, key: str) -> Any:
        """The raw value of ``key`` (None when absent or null)."""
        return self.raw.get(key)

    def section(self, key: str, known: Collection[str]) -> Section:
        """The nested object at ``key`` (empty when absent)."""
        return Section(self.problems, self.raw.get(key), self.at(key), known)

    def items(self, key: str) -> Iterator[tuple[str, Any]]:
        """``(path, value)`` for each element of the list at ``key`` (none when absent)."""
        value = self.raw.get(key)
        if value is None:
            return
        if not isinstance(value, list | tuple):
            self.problems.add(self.at(key), f"must be a list, got {describe(value)}")
            return
        for index, element in enumerate(value):
            yield f"{self.at(key)}[{index}]", element

    def optional_integer(self, key: str) -> int | None:
        """The integer at ``key``, or None when absent or of the wrong type (reported)."""
        value = self.raw.get(key)
        if value is None:
            return None
        number = as_integer(value)
        if number is None:
            self.problems.add(self.at(key), f"must be an integer, got {describe(value)}")
        return number

    def integer(self, key: str, default: int) -> int:
        """The integer at ``key``, or ``default`` when absent or of the wrong type."""
        number = self.optional_integer(key)
        return default if number is None else number

    def number(self, key: str, default: float) -> float:
        """The number (integer or float) at ``key``, or ``default``."""
        value = self.raw.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.problems.add(self.at(key), f"must be a number, got {describe(value)}")
            return default
        return float(value)

    def boolean(self, key: str, *, default: bool) -> bool:
        """The boolean at ``key``, or ``default``."""
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problems.add(self.at(key), f"must be a boolean, got {describe(value)}")
            return default
        return value

    def string(self, key: str, default: str = "") -> str:
        """The string at ``key``, or ``default``."""
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            self.problems.add(self.at(key), f"must be a string, got {describe(value)}")
            return default
        return value

    def strings(self, key: str) -> Iterator[tuple[str, str]]:
        """``(path, text)`` for each string in the list at ``key``; others are reported."""
        for path, value in self.items(key):
            if isinstance(value, str):
                yield path, value
            else:
                self.problems.add(path, f"must be a string, got {describe(value)}")

    def entries(self, key: str) -> Iterator[tuple[str, Any]]:
        """``(name, value)`` for each entry of the object at ``key``, a map whose keys
        are the user's (none when absent; a non-object is reported, and so is a key that
        is not a string). Report a bad value with ``report(f"{key}.{name}", message)``."""
        value = self.raw.get(key)
        if value is None:
            return
        if not isinstance(value, Mapping):
            self.problems.add(self.at(key), f"must be an object, got {describe(value)}")
            return
        for name, element in value.items():
            if isinstance(name, str):
                yield name, element
            else:
                self.problems.add(self.at(key), f"keys must be strings, got {name!r}")

    def string_map(self, key: str) -> dict[str, str]:
        """The object at ``key`` as a map of string to string (empty when absent); an
        entry whose value is not a string is reported and left out."""
        out: dict[str, str] = {}
        for name, value in self.entries(key):
            if isinstance(value, str):
                out[name] = value
            else:
                self.report(f"{key}.{name}", f"must be a string, got {describe(value)}")
        return out

    def integer_map(
        self, key: str, *, low: int | None = None, high: int | None = None
    ) -> dict[str, int]:
        """The object at ``key`` as a map of string to integer (empty when absent); an
        entry that is not an integer, or lies outside ``low..high`` (each bound optional,
        inclusive), is reported and left out."""
        out: dict[str, int] = {}
        for name, value in self.entries(key):
            number = as_integer(value)
            if number is None:
                self.report(f"{key}.{name}", f"must be an integer, got {describe(value)}")
            elif (low is not None and number < low) or (high is not None and number > high):
                self.report(f"{key}.{name}", f"must be {_bounds(low, high)}, got {number}")
            else:
                out[name] = number
        return out


def _bounds(low: int | None, high: int | None) -> str:
    """``in LOW..HIGH``, ``>= LOW`` or ``<= HIGH``, for a range message."""
    if low is not None and high is not None:
        return f"in {low}..{high}"
    return f">= {low}" if low is not None else f"<= {high}"
