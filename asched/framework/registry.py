"""The plugins of this installation: the in-tree ones and those installed with ``pip``.

An installed plugin is found through the entry-point group ``asched.plugins``: the
entry point's name is the plugin name, and it points to the plugin's declaration (a
:class:`~asched.framework.spec.PluginSpec`, made with ``asched.plugin.declare``, which
is the plugin's factory). For example, in the plugin's ``pyproject.toml``::

    [project.entry-points."asched.plugins"]
    PreferCheaperNodes = "asched_price_score:PLUGIN"

An entry point that cannot be used does not stop asched: it is recorded as *broken*
with the reason (the import failed, it is not a declaration, its names disagree, its
name is taken, or it was built for another plugin API), and a configuration that names
it gets that reason as its error. In-tree plugins are declared the same way (each
module's ``SPEC``) and always win a name.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from asched.config.catalogue import Catalogue
from asched.config.load import default_config, load_config_file
from asched.config.types import Profile, SchedulerConfig
from asched.errors import PluginLoadError
from asched.framework.builtin import (
    coscheduling,
    default_binder,
    default_preemption,
    image_locality,
    inter_pod_affinity,
    node_affinity,
    node_name,
    node_ports,
    node_resources_balanced_allocation,
    node_resources_fit,
    node_unschedulable,
    node_volume_limits,
    pod_topology_spread,
    priority_sort,
    scheduling_gates,
    taint_toleration,
    volume_binding,
    volume_restrictions,
    volume_zone,
)
from asched.framework.spec import PluginSpec

logger = logging.getLogger(__name__)

#: The entry-point group installed plugins declare themselves in.
GROUP: Final = "asched.plugins"

IN_TREE: Final[tuple[PluginSpec, ...]] = (
    scheduling_gates.SPEC,
    priority_sort.SPEC,
    node_unschedulable.SPEC,
    node_name.SPEC,
    taint_toleration.SPEC,
    node_affinity.SPEC,
    node_ports.SPEC,
    node_resources_fit.SPEC,
    volume_restrictions.SPEC,
    node_volume_limits.SPEC,
    volume_binding.SPEC,
    volume_zone.SPEC,
    pod_topology_spread.SPEC,
    inter_pod_affinity.SPEC,
    default_preemption.SPEC,
    node_resources_balanced_allocation.SPEC,
    image_locality.SPEC,
    default_binder.SPEC,
    coscheduling.SPEC,
)


@dataclass(frozen=True)
class Registry:
    """Plugin name -> declaration, and the installed entry points that could not be used."""

    specs: Mapping[str, PluginSpec]
    broken: Mapping[str, str] = field(default_factory=dict)

    def __getitem__(self, name: str) -> PluginSpec:
        return self.specs[name]

    def __contains__(self, name: object) -> bool:
        return name in self.specs

    def adding(self, *specs: PluginSpec) -> Registry:
        """This registry with ``specs`` added (or replacing plugins of the same name)."""
        return Registry({**self.specs, **{spec.name: spec for spec in specs}}, self.broken)

    @functools.cached_property
    def catalogue(self) -> Catalogue:
        """What the configuration layer reads (names, points, args, origins)."""
        return Catalogue({name: spec.info for name, spec in self.specs.items()}, self.broken)


def _origin(entry: importlib.metadata.EntryPoint) -> str:
    dist = entry.dist
    return "an unknown distribution" if dist is None else f"{dist.name} {dist.version}"


def _load(entry: importlib.metadata.EntryPoint, taken: Mapping[str, PluginSpec]) -> PluginSpec:
    """The declaration behind ``entry``; raises with the reason it cannot be used."""
    if entry.name in taken:
        raise LookupError(f"the name is already taken by {taken[entry.name].origin}")
    try:
        loaded = entry.load()
    except PluginLoadError as exc:  # its declaration was refused while it imported
        raise LookupError(str(exc)) from exc
    except Exception as exc:  # a plugin's import may fail in any way: say how, go on
        raise LookupError(f"{entry.value} failed to import: {type(exc).__name__}: {exc}") from exc
    if not isinstance(loaded, PluginSpec):
        raise LookupError(
            f"{entry.value} is a {type(loaded).__name__}, not a plugin declaration "
            "(make it with asched.plugin.declare)"
        )
    if loaded.name != entry.name:
        raise LookupError(
            f"the entry point is named {entry.name!r} but {entry.value} declares {loaded.name!r}"
        )
    return dataclasses.replace(loaded, origin=_origin(entry), source=entry.value)


def discover(entries: Iterable[importlib.metadata.EntryPoint] | None = None) -> Registry:
    """The in-tree plugins and the installed ones (``entries``: the ``asched.plugins``
    entry points of the environment when None)."""
    specs: dict[str, PluginSpec] = {spec.name: spec for spec in IN_TREE}
    broken: dict[str, str] = {}
    found = importlib.metadata.entry_points(group=GROUP) if entries is None else entries
    for entry in found:
        try:
            specs[entry.name] = _load(entry, specs)
        except LookupError as exc:
            broken[entry.name] = f"{exc} ({_origin(entry)})"
            logger.warning("installed plugin %r cannot be used: %s", entry.name, broken[entry.name])
    return Registry(specs, broken)


@functools.cache
def installed() -> Registry:
    """:func:`discover` for this environment, once per process."""
    return discover()


def reads_annotations(profiles: Iterable[Profile], registry: Registry | None = None) -> bool:
    """Whether a plugin enabled in any of ``profiles`` declares ``reads_annotations``
    (``registry``: where the plugins come from, default this installation's): then pods
    and nodes are decoded with their annotations."""
    specs = installed() if registry is None else registry
    return any(
        name in specs and specs[name].reads_annotations
        for profile in profiles
        for name in profile.resolved.all_names()
    )


def in_tree() -> Registry:
    """Only the in-tree plugins (what a configuration may name without installing any)."""
    return Registry({spec.name: spec for spec in IN_TREE})


def configuration(path: str | None) -> SchedulerConfig:
    """The KubeSchedulerConfiguration at ``path`` (the defaults when None), read against
    the plugins of this installation."""
    catalogue = installed().catalogue
    return load_config_file(path, catalogue=catalogue) if path else default_config(catalogue)
