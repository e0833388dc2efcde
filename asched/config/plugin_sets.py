"""Reading a profile's ``plugins`` section: one ``{enabled, disabled}`` set per extension point.

What is checked here, per entry, before any merging with defaults:

* a name is a plugin of the catalogue (in-tree or installed); in ``disabled`` it may also be ``"*"``.
  Upstream ignores unknown names in ``disabled``; asched reports them, because a typo
  there silently leaves a default plugin running;
* a plugin enabled at a specific point implements that point (``multiPoint`` takes any
  plugin: it is expanded to the points the plugin implements);
* a name appears at most once in an ``enabled`` list (upstream fails at framework start
  with "already registered");
* a weight is an integer in 0..100, where 0 (or absent) means "unset".

Entries with a problem are dropped from the returned sets, so the caller can still
resolve what is left, but it should not report resolution-level errors (such as "no
queueSort plugin") for a profile whose sets had problems: they would only echo these.
"""

from __future__ import annotations

from typing import Final

from asched.config.catalogue import POINTS, Catalogue
from asched.config.schema import Problems, Section, describe, quote
from asched.config.types import EXTENSION_POINTS, PluginRef, PluginSet

PLUGIN_SET_FIELDS: Final = frozenset({"enabled", "disabled"})
PLUGIN_FIELDS: Final = frozenset({"name", "weight"})
MAX_WEIGHT: Final = 100
WILDCARD: Final = "*"


def _name(
    problems: Problems, entry: Section, catalogue: Catalogue, *, wildcard: bool
) -> str | None:
    """The entry's plugin name when it is a known plugin (or ``*`` when allowed)."""
    path = entry.at("name")
    value = entry.get("name")
    if value is None or value == "":
        problems.add(path, "required")
        return None
    if not isinstance(value, str):
        problems.add(path, f"must be a string, got {describe(value)}")
        return None
    if value in catalogue or (wildcard and value == WILDCARD):
        return value
    problems.add(path, catalogue.unknown(value))
    return None


def _read_set(problems: Problems, section: Section, point: str, catalogue: Catalogue) -> PluginSet:
    enabled: list[PluginRef] = []
    first_at: dict[str, str] = {}
    for path, raw in section.items("enabled"):
        entry = Section(problems, raw, path, PLUGIN_FIELDS)
        weight = entry.integer("weight", 0)
        weight_ok = problems.check_range(entry.at("weight"), weight, 0, MAX_WEIGHT)
        name = _name(problems, entry, catalogue, wildcard=False)
        if name is None:
            continue
        points = catalogue[name].points
        if point != "multiPoint" and point not in points:
            implemented = ", ".join(p for p in POINTS if p in points)
            problems.add(
                entry.at("name"),
                f"plugin {quote(name)} does not implement {point} (it implements: {implemented})",
            )
            continue
        if name in first_at:
            problems.add(
                entry.at("name"), f"duplicate plugin {quote(name)} (first at {first_at[name]})"
            )
            continue
        first_at[name] = path
        if weight_ok:
            enabled.append(PluginRef(name, weight))
    disabled: list[str] = []
    for path, raw in section.items("disabled"):
        entry = Section(problems, raw, path, PLUGIN_FIELDS)
        name = _name(problems, entry, catalogue, wildcard=True)
        if name is not None and name not in disabled:
            disabled.append(name)
    return PluginSet(tuple(enabled), tuple(disabled))


def read_plugins(section: Section, catalogue: Catalogue) -> dict[str, PluginSet]:
    """The user's plugin sets for every extension point (empty where not written).

    ``section`` is the profile's ``plugins`` object, built with ``EXTENSION_POINTS`` as
    its known fields; errors go to its ``problems``.
    """
    return {
        point: _read_set(
            section.problems, section.section(point, PLUGIN_SET_FIELDS), point, catalogue
        )
        for point in EXTENSION_POINTS
    }
