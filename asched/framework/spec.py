"""A plugin's declaration: its name, the extension points it implements, its args, its API.

Every plugin, in-tree or installed with ``pip``, is described by one :class:`PluginSpec`
made with :func:`declare`. The extension points are read from the plugin class (the
methods it defines, as upstream learns them by reflection on the plugin type), so a
declaration cannot claim a point its class does not implement; a class that implements
more than it should offer (a stand-in) names its points explicitly. The spec is the
plugin's factory: calling it with the args and the host handle builds the plugin.

Checked here, at load time, with errors naming the plugin and what to change:

* the plugin API version it was built for is compatible with :data:`API_VERSION`
  (same major, minor not newer);
* each point's companions exist: a Filter's ``explain`` and ``row_local``; a Score's
  ``row_local``, ``normalizes`` and ``normalize``; Reserve's ``unreserve``;
* a plugin has either the vectorised or the per-node form of a point, not both;
* ``reads_annotations`` is a boolean.

``reads_annotations=True`` says the plugin reads pod or node annotations
(``PodInfo.annotations``, ``NodeInfo.annotations``, ``Nodes.annotation_values``): they are
decoded only when an enabled plugin says so, since they may be large (kubectl's
last-applied-configuration) and most plugins never read them.

The per-node form (``filter_node``, ``score_node``) is wrapped in
:class:`~asched.framework.per_node.PerNode` when the plugin is built.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Final

from asched.config.catalogue import POINTS, ArgsSpec, PluginInfo
from asched.errors import PluginLoadError
from asched.framework.interface import Handle
from asched.framework.per_node import PerNode

#: The plugin API this asched provides (``asched.plugin.API_VERSION``): MAJOR.MINOR.
API_VERSION: Final = "1.5"

#: Method name -> the extension point it implements.
METHOD_POINTS: Final = {
    "pre_enqueue": "preEnqueue",
    "sort_key": "queueSort",
    "pre_filter": "preFilter",
    "filter": "filter",
    "filter_node": "filter",
    "post_filter": "postFilter",
    "pre_score": "preScore",
    "score": "score",
    "score_node": "score",
    "reserve": "reserve",
    "permit": "permit",
    "pre_bind": "preBind",
    "bind": "bind",
    "post_bind": "postBind",
}

#: Vectorised method -> what must come with it.
_COMPANIONS: Final = {
    "filter": ("explain", "row_local"),
    "score": ("row_local", "normalizes", "normalize"),
    "reserve": ("unreserve",),
}
_VERSION: Final = re.compile(r"^(\d+)\.(\d+)$")

Factory = Callable[[object | None, Handle | None], object]
"""``(args, handle) -> plugin``: args as the spec's reader returned them (None when the
plugin takes none), the host handle (None outside a live scheduler)."""


@dataclass(frozen=True, slots=True)
class PluginSpec:
    """One plugin's declaration; calling it builds the plugin (it is the factory)."""

    name: str
    plugin_type: type
    build: Factory
    points: frozenset[str]
    args: ArgsSpec | None = None
    api_version: str = API_VERSION
    #: ``in-tree``, or ``<distribution> <version>`` for an installed plugin
    origin: str = "in-tree"
    #: the entry point (``module:attribute``) it was loaded from, or the in-tree module
    source: str = ""
    #: the plugin reads pod or node annotations: decode them when it is enabled
    reads_annotations: bool = False

    @property
    def per_node(self) -> bool:
        """Whether the plugin uses the per-node form (``filter_node``/``score_node``)."""
        return _defines(self.plugin_type, "filter_node") or _defines(self.plugin_type, "score_node")

    @property
    def info(self) -> PluginInfo:
        """What the configuration layer reads."""
        return PluginInfo(self.name, self.points, self.args, self.origin)

    def __call__(self, args: object | None, handle: Handle | None) -> object:
        plugin = self.build(args, handle)
        if getattr(plugin, "name", None) != self.name:
            raise PluginLoadError(
                f"plugin {self.name!r}: the built object's name is "
                f"{getattr(plugin, 'name', None)!r}; it must be {self.name!r}"
            )
        return PerNode(plugin) if self.per_node else plugin


def _defines(cls: type, attribute: str) -> bool:
    return callable(getattr(cls, attribute, None))


def reflected_points(cls: type) -> frozenset[str]:
    """The extension points ``cls`` implements, by its methods."""
    return frozenset(point for method, point in METHOD_POINTS.items() if _defines(cls, method))


def check_api_version(name: str, wanted: object) -> None:
    """Raise unless a plugin built for API ``wanted`` runs on this asched's API."""
    ours = _VERSION.match(API_VERSION)
    theirs = _VERSION.match(wanted) if isinstance(wanted, str) else None
    assert ours is not None
    if theirs is None:
        raise PluginLoadError(
            f"plugin {name!r}: api_version must be 'MAJOR.MINOR' (e.g. {API_VERSION!r}), "
            f"got {wanted!r}"
        )
    major, minor = int(theirs[1]), int(theirs[2])
    if major != int(ours[1]) or minor > int(ours[2]):
        raise PluginLoadError(
            f"plugin {name!r} was built for asched plugin API {wanted}, but this asched "
            f"provides API {API_VERSION}: install a release of the plugin built for API "
            f"{ours[1]}.x (or an asched that provides {wanted})"
        )


def _check_companions(name: str, cls: type) -> None:
    if _defines(cls, "filter") and _defines(cls, "filter_node"):
        raise PluginLoadError(f"plugin {name!r} defines both filter and filter_node: keep one")
    if _defines(cls, "score") and _defines(cls, "score_node"):
        raise PluginLoadError(f"plugin {name!r} defines both score and score_node: keep one")
    for method, needed in _COMPANIONS.items():
        if not _defines(cls, method):
            continue
        missing = [attribute for attribute in needed if not hasattr(cls, attribute)]
        if missing:
            raise PluginLoadError(
                f"plugin {name!r} implements {method} but lacks {', '.join(missing)} "
                "(see the extension-point protocols in asched.plugin)"
            )


def declare(
    plugin_type: type,
    *,
    api_version: str,
    name: str | None = None,
    factory: Factory | None = None,
    args: ArgsSpec | None = None,
    points: Collection[str] | None = None,
    reads_annotations: bool = False,
) -> PluginSpec:
    """Declare a plugin class.

    Parameters
    ----------
    plugin_type : type
        The plugin class; its methods say which extension points it implements.
    api_version : str
        The plugin API the plugin was written for (``asched.plugin.API_VERSION`` at the
        time, written as a literal such as ``"1.1"``).
    name : str, optional
        The plugin name (default: the class's ``name`` attribute).
    factory : callable, optional
        ``(args, handle) -> plugin`` (default: ``plugin_type(args)`` when the plugin takes
        args, else ``plugin_type()``).
    args : ArgsSpec, optional
        How its ``pluginConfig`` args are read; None when it takes none.
    points : collection of str, optional
        The points to offer, when the class implements more (default: all it implements).
    reads_annotations : bool, optional
        True when the plugin reads pod or node annotations (``PodInfo.annotations``,
        ``NodeInfo.annotations``, ``Node.annotations``, ``Nodes.annotation_values``):
        asched decodes annotations only when an enabled plugin declares it (default
        False: they read as empty). Since plugin API 1.4.

    Raises
    ------
    PluginLoadError
        When the declaration is inconsistent (see the module docstring).
    """
    resolved = _plugin_name(plugin_type, name)
    check_api_version(resolved, api_version)
    _check_companions(resolved, plugin_type)
    offered = _offered_points(resolved, plugin_type, points)
    _check_reads_annotations(resolved, reads_annotations)
    if factory is None:
        factory = _default_factory(plugin_type, takes_args=args is not None)
    return PluginSpec(
        resolved,
        plugin_type,
        factory,
        offered,
        args,
        api_version,
        reads_annotations=reads_annotations,
    )


def _plugin_name(plugin_type: type, name: str | None) -> str:
    """``name``, else the class's ``name`` attribute; it must be a non-empty string."""
    resolved = name if name is not None else getattr(plugin_type, "name", None)
    if not isinstance(resolved, str) or not resolved:
        raise PluginLoadError(
            f"{plugin_type.__qualname__}: a plugin needs a non-empty string name "
            "(a class attribute `name`, or declare(..., name=...))"
        )
    return resolved


def _offered_points(name: str, plugin_type: type, points: Collection[str] | None) -> frozenset[str]:
    """The points the plugin offers: ``points`` when given, else all its class implements;
    each known and implemented, and at least one."""
    implemented = reflected_points(plugin_type)
    offered = implemented if points is None else frozenset(points)
    unknown = sorted(offered - set(POINTS))
    if unknown:
        raise PluginLoadError(f"plugin {name!r}: unknown extension points {unknown}")
    lacking = sorted(offered - implemented)
    if lacking:
        raise PluginLoadError(
            f"plugin {name!r} declares {', '.join(lacking)} but does not implement it"
        )
    if not offered:
        methods = ", ".join(sorted(METHOD_POINTS))
        raise PluginLoadError(
            f"plugin {name!r} implements no extension point (define one of: {methods})"
        )
    return offered


def _check_reads_annotations(name: str, reads_annotations: object) -> None:
    if not isinstance(reads_annotations, bool):
        raise PluginLoadError(
            f"plugin {name!r}: reads_annotations must be True or False, got {reads_annotations!r}"
        )


def _default_factory(plugin_type: type, *, takes_args: bool) -> Factory:
    def build(args: object | None, handle: Handle | None) -> object:
        return plugin_type(args) if takes_args else plugin_type()

    return build
