"""Field readers for workload documents: one value each, every problem recorded with its path.

The shape of :mod:`asched.config.schema` (a :class:`~asched.config.schema.Section` per
object, errors collected in :class:`~asched.config.schema.Problems`), plus what workloads
need: unknown fields with a did-you-mean hint, counts, quantities checked with the cluster
model's parser, label maps, raw Kubernetes objects, templates and taints. Each reader
returns a usable substitute after recording an error, so one pass reports everything.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Final

from asched.cluster import quantity as quantities
from asched.config.schema import Problems, Section, describe, is_qualified_name
from asched.errors import FieldError

TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def unknown_fields(section: Section, known: tuple[str, ...]) -> None:
    """Replace Section's bare "unknown field" errors with a did-you-mean hint."""
    problems = section.problems
    for key in section.raw:
        if key in known:
            continue
        path = section.at(str(key))
        close = difflib.get_close_matches(str(key), known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        for index, error in enumerate(problems.errors):
            if error.path == path and error.message == "unknown field":
                problems.errors[index] = FieldError(path, f"unknown field{hint}")


def strict_section(problems: Problems, raw: Any, path: str, known: tuple[str, ...]) -> Section:
    section = Section(problems, raw, path, known)
    unknown_fields(section, known)
    return section


def count(section: Section, *, minimum: int = 1) -> int:
    if not section.has("count"):
        section.problems.add(section.at("count"), "required")
        return 0
    value = section.optional_integer("count")
    if value is None:
        return 0
    if value < minimum:
        section.problems.add(section.at("count"), f"must be an integer >= {minimum}, got {value}")
        return 0
    return value


def quantity_text(section: Section, key: str, resource: str) -> str | None:
    value = section.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        section.problems.add(section.at(key), f"must be a quantity string, got {describe(value)}")
        return None
    text = str(value)
    try:
        amount = quantities.canonical(resource, text)
    except ValueError as exc:
        section.problems.add(section.at(key), f"not a valid quantity {text!r}: {exc}")
        return None
    if amount < 0:
        section.problems.add(section.at(key), f"must not be negative, got {text!r}")
        return None
    return text


def labels(section: Section, key: str) -> dict[str, str]:
    value = section.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        section.problems.add(section.at(key), f"must be an object, got {describe(value)}")
        return {}
    out: dict[str, str] = {}
    for label, text in value.items():
        path = f"{section.at(key)}.{label}"
        if not isinstance(label, str) or not is_qualified_name(label):
            section.problems.add(path, f"not a valid label key {label!r}")
        elif not isinstance(text, str):
            section.problems.add(path, f"label values are strings, got {describe(text)}")
        else:
            out[label] = text
    return out


def raw_objects(section: Section, key: str) -> tuple[Mapping[str, Any], ...]:
    out: list[Mapping[str, Any]] = []
    for path, element in section.items(key):
        if isinstance(element, Mapping):
            out.append(dict(element))
        else:
            section.problems.add(path, f"must be an object, got {describe(element)}")
    return tuple(out)


def raw_object(section: Section, key: str) -> Mapping[str, Any] | None:
    value = section.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        section.problems.add(section.at(key), f"must be an object, got {describe(value)}")
        return None
    return dict(value)


def template(section: Section, known: Mapping[str, Any], default: str) -> str:
    name = section.string("template", default)
    if name not in known:
        close = difflib.get_close_matches(name, list(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        choices = ", ".join(sorted(known))
        section.problems.add(
            section.at("template"), f"unknown template {name!r}{hint}; one of {choices}"
        )
        return default
    return name


def taints(section: Section) -> tuple[Mapping[str, str], ...]:
    out: list[Mapping[str, str]] = []
    for path, raw in section.items("taints"):
        taint = strict_section(section.problems, raw, path, ("key", "value", "effect"))
        key = taint.string("key")
        if not key or not is_qualified_name(key):
            section.problems.add(taint.at("key"), f"required, a qualified name; got {key!r}")
        effect = taint.string("effect")
        if effect not in TAINT_EFFECTS:
            section.problems.add(
                taint.at("effect"), f"must be one of {', '.join(TAINT_EFFECTS)}; got {effect!r}"
            )
        entry = {"key": key, "effect": effect}
        if taint.has("value"):
            entry["value"] = taint.string("value")
        out.append(entry)
    return tuple(out)


def spread_labels(section: Section) -> dict[str, tuple[str, ...]]:
    value = section.get("spreadLabels")
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        section.problems.add(
            section.at("spreadLabels"), f"must be an object, got {describe(value)}"
        )
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for key, values in value.items():
        path = f"{section.at('spreadLabels')}.{key}"
        if not isinstance(key, str) or not is_qualified_name(key):
            section.problems.add(path, f"not a valid label key {key!r}")
        elif not isinstance(values, list) or not values:
            section.problems.add(
                path, f"must be a non-empty list of strings, got {describe(values)}"
            )
        elif not all(isinstance(v, str) for v in values):
            section.problems.add(path, "label values are strings")
        else:
            out[key] = tuple(values)
    return out
