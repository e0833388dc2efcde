"""What the configuration needs to know about the plugins of this installation.

The configuration is resolved and validated before any plugin object exists, so it
reads a :class:`Catalogue`: for every plugin its name, the extension points it
implements, how to read its ``pluginConfig`` args, and where it comes from. The
catalogue is built above this layer (:mod:`asched.framework.catalogue`) from the
plugins' own declarations, in-tree and installed alike, and handed to
:func:`asched.config.load.load_config`; nothing here lists plugins.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from asched.config.schema import Section, quote
from asched.config.types import EXTENSION_POINTS

#: The extension points a plugin can implement (camelCase, as in the YAML), in
#: upstream's Plugins struct order; ``multiPoint`` is not one of them.
POINTS: Final = tuple(point for point in EXTENSION_POINTS if point != "multiPoint")

ArgsReader = Callable[[Section], object]
"""Reads an opened ``args`` section: returns the typed args, reports problems on the
section (``section.report(field, message)``); defaults come from reading an empty one."""


@dataclass(frozen=True, slots=True)
class ArgsSpec:
    """How a plugin's ``pluginConfig`` args are read.

    ``kind`` is the args kind (``args.kind``, when written, must equal it); ``fields``
    the args' own fields (anything else is an unknown field); ``read`` the reader.
    """

    kind: str
    fields: frozenset[str]
    read: ArgsReader


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """One plugin as the configuration sees it."""

    name: str
    points: frozenset[str]
    args: ArgsSpec | None = None
    #: ``in-tree``, or the distribution that installed it (``asched-price 0.1``)
    origin: str = "in-tree"


@dataclass(frozen=True, slots=True)
class Catalogue:
    """The plugins a configuration may name, and the installed ones that failed to load."""

    plugins: Mapping[str, PluginInfo]
    #: plugin name -> why its entry point could not be loaded
    broken: Mapping[str, str] = field(default_factory=dict)

    def __contains__(self, name: object) -> bool:
        return name in self.plugins

    def __getitem__(self, name: str) -> PluginInfo:
        return self.plugins[name]

    def unknown(self, name: str) -> str:
        """The error for a name that is not a loadable plugin, listing what is installed."""
        if name in self.broken:
            return f"plugin {quote(name)} is installed but cannot be loaded: {self.broken[name]}"
        installed = ", ".join(sorted(self.plugins))
        return f"unknown plugin {quote(name)} (installed plugins: {installed})"
