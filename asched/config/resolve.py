"""From the plugin sets a user wrote to the plugins a profile runs, as kube-scheduler v1 does it.

Three steps, each a pure function of already-validated sets (see
:mod:`asched.config.plugin_sets`):

1. **Defaulting** (upstream ``mergePlugins``/``mergePluginSet``). The defaults are the
   ``DEFAULT_MULTIPOINT`` list at ``multiPoint`` and nothing at every other point. At each
   point the user's ``disabled`` names (or ``"*"``) remove defaults; a user ``enabled``
   entry naming a default replaces it in place (order kept, the user's weight taken); the
   other user entries are appended. The user's ``disabled`` list is kept, because step 2
   reads it.

2. **Expansion** (upstream framework ``expandMultiPointPlugins``). For a point P with
   merged explicit set E and disabled set D: if D holds ``"*"``, P runs exactly E.
   Otherwise the multiPoint list is walked in order, keeping plugins that implement P and
   are not in D. A kept plugin that E also names is an *override*. The final order is::

       overrides (in E's order) + multiPoint-only plugins (in multiPoint order) + rest of E

3. **Score weights** (upstream ``getScoreWeights``). Explicit ``score.enabled`` entries
   are looked at first, then multiPoint entries; the first weight seen for a plugin wins,
   and an unset weight (0) becomes 1. So a ``score.enabled`` entry *without* a weight
   resets a default weight (TaintToleration's 3) to 1, as upstream does.

With the defaults this yields exactly upstream's default plugin order (upstream:
pkg/scheduler/apis/config/v1/default_plugins.go, getDefaultPlugins; for example Filter:
NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from asched.config.catalogue import Catalogue
from asched.config.plugins import DEFAULT_MULTIPOINT
from asched.config.types import EXTENSION_POINTS, PluginRef, PluginSet, ResolvedPlugins

WILDCARD: Final = "*"

#: Extension point (camelCase) -> ResolvedPlugins field; multiPoint is not a field.
RESOLVED_FIELDS: Final[dict[str, str]] = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "queue_sort",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
}


def default_plugin_sets() -> dict[str, PluginSet]:
    """The v1 defaults: DEFAULT_MULTIPOINT at multiPoint, an empty set everywhere else."""
    sets = {point: PluginSet() for point in EXTENSION_POINTS}
    sets["multiPoint"] = PluginSet(tuple(PluginRef(name, w) for name, w in DEFAULT_MULTIPOINT))
    return sets


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Step 1 at one point: the user's set laid over the default set.

    ``custom.enabled`` must not name a plugin twice (checked when it was read).
    """
    disabled = tuple(dict.fromkeys(custom.disabled + default.disabled))
    by_name = {ref.name: ref for ref in custom.enabled}
    replaced: set[str] = set()
    enabled: list[PluginRef] = []
    if WILDCARD not in disabled:
        for ref in default.enabled:
            if ref.name in disabled:
                continue
            if ref.name in by_name:
                ref = by_name[ref.name]
                replaced.add(ref.name)
            enabled.append(ref)
    enabled.extend(ref for ref in custom.enabled if ref.name not in replaced)
    return PluginSet(tuple(enabled), disabled)


def merge_plugin_sets(user: Mapping[str, PluginSet]) -> dict[str, PluginSet]:
    """Step 1 at every point."""
    defaults = default_plugin_sets()
    return {p: merge_plugin_set(defaults[p], user.get(p, PluginSet())) for p in EXTENSION_POINTS}


def expand(
    point: str, explicit: PluginSet, multi_point: tuple[PluginRef, ...], catalogue: Catalogue
) -> tuple[str, ...]:
    """Step 2: the plugins that run at ``point``, in order."""
    named = [ref.name for ref in explicit.enabled]
    if WILDCARD in explicit.disabled:
        return tuple(named)
    overrides: set[str] = set()
    multi_only: list[str] = []
    for ref in multi_point:
        if point not in catalogue[ref.name].points or ref.name in explicit.disabled:
            continue
        if ref.name in named:
            overrides.add(ref.name)
        elif ref.name not in multi_only:
            multi_only.append(ref.name)
    first = [name for name in named if name in overrides]
    rest = [name for name in named if name not in overrides]
    return (*first, *multi_only, *rest)


def score_weights(merged: Mapping[str, PluginSet], catalogue: Catalogue) -> dict[str, int]:
    """Step 3: the effective weight (>= 1) of every plugin that could score."""
    weights: dict[str, int] = {}
    for ref in merged["score"].enabled + merged["multiPoint"].enabled:
        if "score" in catalogue[ref.name].points:
            weights.setdefault(ref.name, ref.weight or 1)
    return weights


def resolve(user: Mapping[str, PluginSet], catalogue: Catalogue) -> ResolvedPlugins:
    """All three steps: the plugins a profile with these user sets runs.

    Every name in ``user`` must be in ``catalogue`` (checked when the sets were read), and
    so must every default plugin."""
    merged = merge_plugin_sets(user)
    multi_point = merged["multiPoint"].enabled
    names = {
        point: expand(point, merged[point], multi_point, catalogue) for point in RESOLVED_FIELDS
    }
    weights = score_weights(merged, catalogue)
    return ResolvedPlugins(
        pre_enqueue=names["preEnqueue"],
        queue_sort=names["queueSort"],
        pre_filter=names["preFilter"],
        filter=names["filter"],
        post_filter=names["postFilter"],
        pre_score=names["preScore"],
        score=tuple((name, weights[name]) for name in names["score"]),
        reserve=names["reserve"],
        permit=names["permit"],
        pre_bind=names["preBind"],
        bind=names["bind"],
        post_bind=names["postBind"],
    )
