"""The plugin lists a :class:`~asched.framework.runtime.Framework` runs, built once per profile.

From a profile's instantiated plugins: the list per extension point (in the profile's
order), and what the runners precompute from those lists so that nothing is looked up
per pod: the declared events and queueing hints, the signers of the scheduling
signature, the row-local plugins' scalar forms, the Filter plugins with a per-node form,
and the PreFilter hooks and pre-state scopes.

Separate from the runners because it runs once, when the profile is built, and decides
what the runners see; the runners (:mod:`~asched.framework.prefilter_runs`,
:mod:`~asched.framework.filter_runs`, :mod:`~asched.framework.score_runs`,
:mod:`~asched.framework.bind_phase`) only read what is built here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, Final, NamedTuple, cast

from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import ResolvedPlugins
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.interface import (
    READS_PODS,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    FiltersCandidates,
    FiltersRow,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueingHint,
    QueueingHints,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    ScoresRow,
    SignPlugin,
)
from asched.framework.pre_state import PreStateScope
from asched.framework.status import Status

#: Score plugins with their weights, in profile order.
WeightedScores = list[tuple[ScorePlugin, int]]
#: A PreFilterExtensions hook, bound: ``(state, pod, table, changed pod, row) -> status``.
Hook = Callable[[CycleState, PodInfo, NodeTable, PodInfo, int], Status]
#: A row-local plugin's ``sign``, with its plugin name.
Signer = tuple[str, Callable[[PodInfo], Hashable | None]]
#: A PreFilter or PreScore plugin's ``pre_state_follows_pods``.
Scope = Callable[[CycleState, PodInfo], bool]
#: At most this many skip sets keep their split plugin lists (a skip set is a subset of
#: the profile's plugins, so a handful occur; the bound only guards memory).
SKIP_SETS: Final = 256


class ExtensionPoints(NamedTuple):
    """A profile's plugins per extension point, in the profile's order."""

    pre_enqueue: list[PreEnqueuePlugin]
    queue_sort: list[QueueSortPlugin]
    pre_filter: list[PreFilterPlugin]
    filter: list[FilterPlugin]
    post_filter: list[PostFilterPlugin]
    pre_score: list[PreScorePlugin]
    score: WeightedScores
    reserve: list[ReservePlugin]
    permit: list[PermitPlugin]
    pre_bind: list[PreBindPlugin]
    bind: list[BindPlugin]
    post_bind: list[PostBindPlugin]


def extension_points(resolved: ResolvedPlugins, plugins: Mapping[str, Any]) -> ExtensionPoints:
    """The instances of ``plugins`` (by name) each point of ``resolved`` names."""
    get = plugins.__getitem__
    return ExtensionPoints(
        pre_enqueue=[cast(PreEnqueuePlugin, get(n)) for n in resolved.pre_enqueue],
        queue_sort=[cast(QueueSortPlugin, get(n)) for n in resolved.queue_sort],
        pre_filter=[cast(PreFilterPlugin, get(n)) for n in resolved.pre_filter],
        filter=[cast(FilterPlugin, get(n)) for n in resolved.filter],
        post_filter=[cast(PostFilterPlugin, get(n)) for n in resolved.post_filter],
        pre_score=[cast(PreScorePlugin, get(n)) for n in resolved.pre_score],
        score=[(cast(ScorePlugin, get(n)), w) for n, w in resolved.score],
        reserve=[cast(ReservePlugin, get(n)) for n in resolved.reserve],
        permit=[cast(PermitPlugin, get(n)) for n in resolved.permit],
        pre_bind=[cast(PreBindPlugin, get(n)) for n in resolved.pre_bind],
        bind=[cast(BindPlugin, get(n)) for n in resolved.bind],
        post_bind=[cast(PostBindPlugin, get(n)) for n in resolved.post_bind],
    )


def declared_events(plugins: Mapping[str, Any]) -> dict[str, frozenset[ClusterEvent]]:
    """Plugin name -> the cluster events that may undo its rejection (its declaration)."""
    return {
        name: plugin.events
        for name, plugin in plugins.items()
        if isinstance(plugin, EnqueueExtensions)
    }


def declared_hints(plugins: Mapping[str, Any]) -> dict[str, QueueingHint]:
    """Plugin name -> its queueing hint (declared with its events)."""
    return {
        name: plugin.queueing_hint
        for name, plugin in plugins.items()
        if isinstance(plugin, QueueingHints)
    }


def candidate_filters(filters: list[FilterPlugin]) -> dict[str, FiltersCandidates]:
    """Filter plugins that answer only on the rows still in play (the per-node form)."""
    return {p.name: p for p in filters if isinstance(p, FiltersCandidates)}


def signers(filters: list[FilterPlugin], scores: WeightedScores) -> list[Signer] | None:
    """The signers of the pod's scheduling signature: every row-local Filter and Score
    plugin's ``sign``, or None when one of them does not sign (no pod is batched)."""
    local: dict[str, object] = {p.name: p for p in filters if p.row_local}
    local.update((p.name, p) for p, _ in scores if p.row_local)
    return (
        [(name, p.sign) for name, p in local.items() if isinstance(p, SignPlugin)]
        if all(isinstance(p, SignPlugin) for p in local.values())
        else None
    )


def row_forms(
    filters: list[FilterPlugin], scores: WeightedScores
) -> tuple[dict[str, FiltersRow], dict[str, ScoresRow]]:
    """The row-local plugins' scalar forms (:mod:`asched.engine.row_recompute`): the
    Filter ones, the Score ones."""
    return (
        {p.name: p for p in filters if p.row_local and isinstance(p, FiltersRow)},
        {p.name: p for p, _ in scores if p.row_local and isinstance(p, ScoresRow)},
    )


def pre_filter_hooks(
    pre_filter: list[PreFilterPlugin],
) -> tuple[bool, list[tuple[str, Hook]], list[tuple[str, Hook]]]:
    """Whether every PreFilter either has hooks (:class:`PreFilterExtensions`) or declares
    it never reads the pods (:data:`READS_PODS`), and ``(name, hook)`` per hooked plugin
    for an added pod, then for a removed one, bound once (a search calls them per change).
    """
    hooked = [p for p in pre_filter if isinstance(p, PreFilterExtensions)]
    extensible = all(getattr(p, READS_PODS, True) is False for p in pre_filter if p not in hooked)
    added: list[tuple[str, Hook]] = [(p.name, p.pre_filter_add_pod) for p in hooked]
    removed: list[tuple[str, Hook]] = [(p.name, p.pre_filter_remove_pod) for p in hooked]
    return extensible, added, removed


def pre_state_scopes(
    pre_filter: list[PreFilterPlugin], pre_score: list[PreScorePlugin]
) -> list[Scope] | None:
    """Each PreFilter and PreScore plugin's word on what it reads
    (:mod:`asched.framework.pre_state`); None when one has none: never reused."""
    scoped = list(dict.fromkeys([*pre_filter, *pre_score]))
    return (
        [p.pre_state_follows_pods for p in scoped]  # type: ignore[attr-defined]
        if all(isinstance(p, PreStateScope) for p in scoped)
        else None
    )
