"""The extender step of ``asched explain``: the configured extenders, called as upstream's
cycle calls them, around the synchronous engine.

The engine stays synchronous; the awaits are here, between its two halves::

    engine.filter_nodes      PreFilter, PreScore, every in-tree Filter, every node
        -> filters           each filter extender in build_extenders order, sent the
                             nodes the previous one kept (run_filters, one at a time)
        -> prioritizers      every interested prioritizer at once, sent the survivors
                             (run_prioritizers, one task each)
    engine.score_nodes       Score over the survivors, plus one column per prioritizer,
                             the choice, or the FitError and preemption

Upstream's semantics (``schedule_one.go``): an extender sees the nodes that passed the
in-tree filters; here that is *every* such node, because explain does not sample
(``percentageOfNodesToScore`` is not applied). ``FailedNodes`` become Unschedulable and
``FailedAndUnresolvableNodes`` UnschedulableAndUnresolvable, with the extender's text as
the reason and its ``urlPrefix`` as the rejecting plugin; both count in the FitError
message and preemption sees them. A non-ignorable extender's failure ends the evaluation
as an Error with the error's text; an ignorable one is skipped, and its report says so.
A prioritizer's scores (``score * weight * 10``) are added to the totals; one whose call
fails adds nothing, ignorable or not. Nothing is called when no node passed the in-tree
filters, and no prioritizer when no node is left or PreScore ended the cycle.

When no node fits and the profile preempts, the extenders with a ``preemptVerb`` that
are interested in the pod narrow DefaultPreemption's candidates before one is selected,
as in the live cycle (:func:`~asched.extenders.preemption.narrow_candidates`):
the preemption shown, and the FitError message's PostFilter part, are what they leave
(``no candidate node for preemption`` when they leave none; a non-ignorable one's
failure is preemption's Error). Not consulted: ``bindVerb`` (explain binds nothing).

A gang member whose gang the whole-gang admission refuses is sent to no extender: the
live cycle refuses it before any (:mod:`asched.explain.gangs`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Literal

from asched.cluster.gangs import GangIndex
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.types import ExtenderConfig, Profile
from asched.engine.result import Evaluation, ExtenderCall, ExtenderReport
from asched.errors import ExtenderError
from asched.explain import engine, unfit as unfit_of
from asched.explain.engine import Column, Filtered, Rejections
from asched.extenders.extender import (
    EXTENDER_NAME,
    Extender,
    ExtenderTransport,
    NodeObjects,
    build_extenders,
)
from asched.extenders.filter_score import ExtenderScores, run_filters, run_prioritizers
from asched.extenders.preemption import NO_CANDIDATE, narrow_candidates, preempting
from asched.extenders.protocol import RawObject
from asched.framework.builtin.default_preemption import PREFIX as PREEMPTION_PREFIX
from asched.framework.cycle_state import CycleState
from asched.framework.interface import PostFilterResult
from asched.framework.registry import Registry
from asched.framework.status import Code, Status


def display_names(extenders: Sequence[Extender]) -> list[str]:
    """Each extender's name in the output: its ``urlPrefix``; a prefix configured more
    than once gets `` #2``, `` #3``... on its later extenders, so columns stay apart."""
    seen: Counter[str] = Counter()
    names = []
    for extender in extenders:
        seen[extender.name] += 1
        count = seen[extender.name]
        names.append(extender.name if count == 1 else f"{extender.name} #{count}")
    return names


def _not_called(
    extender: Extender, pod_json: RawObject, verb: Literal["filter", "prioritize"]
) -> ExtenderCall:
    """A ``verb`` call that did not happen: why it would not have anyway, if so."""
    if not (extender.is_filter if verb == "filter" else extender.is_prioritizer):
        return ExtenderCall("not-offered")
    if not extender.is_interested(pod_json):
        return ExtenderCall("not-interested")
    return ExtenderCall("not-called")


@dataclasses.dataclass(slots=True)
class _Filtering:
    """The filter extenders' running answer: the nodes left and why the others went."""

    feasible: list[str]
    statuses: dict[str, Status] = dataclasses.field(default_factory=dict)
    dropped: dict[str, str] = dataclasses.field(default_factory=dict)
    calls: list[ExtenderCall] = dataclasses.field(default_factory=list)
    error: Status | None = None

    def rejections(self) -> Rejections:
        return Rejections(self.statuses, self.dropped)


async def _filter(
    extenders: Sequence[Extender],
    names: Sequence[str],
    pod: PodInfo,
    pod_json: RawObject,
    feasible: Sequence[str],
    node_objects: NodeObjects,
) -> _Filtering:
    """Chain the filter extenders over ``feasible``, one :func:`run_filters` each (the same
    loop run_filters runs over them all, so each extender's part can be reported)."""
    state = _Filtering(list(feasible))
    for extender, name in zip(extenders, names, strict=True):
        if (
            state.error is not None
            or not state.feasible
            or not extender.is_filter
            or not extender.is_interested(pod_json)
        ):
            state.calls.append(_not_called(extender, pod_json, "filter"))
            continue
        sent = state.feasible
        try:
            outcome = await run_filters([extender], pod, pod_json, sent, node_objects)
        except ExtenderError as exc:
            state.error = Status.error(str(exc), plugin=name)
            state.calls.append(ExtenderCall("error", len(sent), str(exc)))
            continue
        if outcome.skipped:
            state.calls.append(ExtenderCall("skipped", len(sent), str(outcome.skipped[0][1])))
            continue
        state.calls.append(ExtenderCall("called", len(sent)))
        kept = set(outcome.feasible)
        for node in sent:
            if node in kept:
                continue
            status = outcome.statuses.get(node)
            if status is None:
                state.dropped[node] = name
            else:
                state.statuses[node] = status.with_plugin(name)
        state.feasible = list(outcome.feasible)
    return state


async def _prioritize(
    extenders: Sequence[Extender],
    names: Sequence[str],
    pod: PodInfo,
    pod_json: RawObject,
    feasible: Sequence[str],
    node_objects: NodeObjects,
) -> tuple[list[ExtenderCall], list[Column]]:
    """Every interested prioritizer at once over ``feasible``: each one's report, and a
    score column (score x10, the plugins' scale, weighted by the extender's weight) for
    each one that answered."""
    async with asyncio.TaskGroup() as group:
        tasks = {
            index: group.create_task(
                run_prioritizers([extender], pod, pod_json, feasible, node_objects)
            )
            for index, extender in enumerate(extenders)
            if extender.is_prioritizer and extender.is_interested(pod_json)
        }
    calls: list[ExtenderCall] = []
    columns: list[Column] = []
    for index, (extender, name) in enumerate(zip(extenders, names, strict=True)):
        task = tasks.get(index)
        if task is None:
            calls.append(_not_called(extender, pod_json, "prioritize"))
            continue
        answer: ExtenderScores = task.result()
        if answer.failed:
            calls.append(ExtenderCall("failed", len(feasible), str(answer.failed[0][1])))
            continue
        calls.append(ExtenderCall("called", len(feasible)))
        # run_prioritizers scaled each score by weight * 10: the column keeps the x10
        # (the plugins' 0..100 scale) and carries the weight, as a plugin's column does
        contributions = answer.totals()
        weight = extender.weight or 1  # weight 0 (refused by the loader) contributes 0
        scores = {node: contributions.get(node, 0) // weight for node in feasible}
        columns.append(Column(name, extender.weight, scores))
    return calls, columns


async def evaluate_with_extenders(
    table: NodeTable,
    pod: PodInfo,
    pod_json: RawObject,
    profile: Profile,
    extenders: Sequence[Extender],
    node_objects: NodeObjects,
    *,
    seed: int = 0,
    registry: Registry | None = None,
    gangs: GangIndex | None = None,
) -> Evaluation:
    """Evaluate ``pod`` with ``extenders`` (in :func:`build_extenders` order) taking part.

    ``pod_json`` is the pod as the extenders are sent it; ``node_objects`` gives a node's
    JSON by name (asked only for extenders that are not ``nodeCacheCapable``); ``gangs``:
    the gangs declared. The result carries an :class:`ExtenderReport` per extender, in
    call order.
    """
    names = display_names(extenders)
    filtered = engine.filter_nodes(table, pod, profile, registry=registry, gangs=gangs)
    if isinstance(filtered, Filtered) and filtered.refused is not None:
        # a refused gang: the cycle calls no extender (its nodes' verdicts are still shown)
        filtered = engine.score_nodes(filtered, seed=seed)
    if isinstance(filtered, Evaluation):  # no node passed the in-tree part: nothing is sent
        unfit = None
        if filtered.gang is None or filtered.gang.admitted:
            unfit = engine.pre_filter_unfit(table, pod, profile, registry=registry, gangs=gangs)
        if unfit is not None:  # PreFilter rejected the pod: PostFilter still preempts
            filtered = await _preempt(filtered, unfit, table, pod, extenders, pod_json)
        reports = [
            _report(
                extender,
                name,
                _not_called(extender, pod_json, "filter"),
                _not_called(extender, pod_json, "prioritize"),
            )
            for extender, name in zip(extenders, names, strict=True)
        ]
        return dataclasses.replace(filtered, extenders=tuple(reports))
    return await _extend(filtered, extenders, names, pod_json, node_objects, seed=seed)


def _report(
    extender: Extender, name: str, filter_call: ExtenderCall, prioritize_call: ExtenderCall
) -> ExtenderReport:
    return ExtenderReport(
        name, extender.weight, extender.is_ignorable, filter_call, prioritize_call
    )


async def _extend(
    filtered: Filtered,
    extenders: Sequence[Extender],
    names: Sequence[str],
    pod_json: RawObject,
    node_objects: NodeObjects,
    *,
    seed: int,
) -> Evaluation:
    pod = filtered.pod
    filtering = await _filter(
        extenders, names, pod, pod_json, filtered.feasible_names(), node_objects
    )
    rejections = filtering.rejections()
    columns: list[Column] = []
    if filtering.error is not None:
        evaluation = engine.ended_by_error(filtered, filtering.error, rejections)
        prioritize_calls = [_not_called(e, pod_json, "prioritize") for e in extenders]
    elif filtering.feasible and filtered.pre_score.code != Code.ERROR:
        prioritize_calls, columns = await _prioritize(
            extenders, names, pod, pod_json, filtering.feasible, node_objects
        )
        evaluation = engine.score_nodes(filtered, seed=seed, rejections=rejections, columns=columns)
    else:  # no node left, or PreScore's Error ends the cycle before any prioritizer
        prioritize_calls = [_not_called(e, pod_json, "prioritize") for e in extenders]
        evaluation = engine.score_nodes(filtered, seed=seed, rejections=rejections)
        if evaluation.selected is None:
            unfit = engine.filtered_unfit(filtered, rejections)
            evaluation = await _preempt(evaluation, unfit, filtered.table, pod, extenders, pod_json)
    reports = tuple(
        _report(extender, name, filter_call, prioritize_call)
        for extender, name, filter_call, prioritize_call in zip(
            extenders, names, filtering.calls, prioritize_calls, strict=True
        )
    )
    return dataclasses.replace(evaluation, extenders=reports)


async def _preempt(
    evaluation: Evaluation,
    unfit: unfit_of.Unfit,
    table: NodeTable,
    pod: PodInfo,
    extenders: Sequence[Extender],
    pod_json: RawObject,
) -> Evaluation:
    """``evaluation`` (no node fits) with its preemption as the preempting extenders
    leave it; unchanged when none is interested, or DefaultPreemption found no candidate
    (upstream calls no extender then)."""
    if evaluation.preemption is None or not preempting(extenders, pod_json):
        return evaluation
    plugin = unfit_of.default_preemption(unfit.framework)
    if plugin is None:
        return evaluation
    found = plugin.find_candidates(
        CycleState(), pod, table, unfit.statuses, unfit.framework, offset=0
    )
    if isinstance(found, PostFilterResult):
        return evaluation
    try:
        narrowed = await narrow_candidates(extenders, pod, pod_json, found, table)
    except ExtenderError as exc:
        result = PostFilterResult(Status.error(f"{PREEMPTION_PREFIX}{exc}", plugin=EXTENDER_NAME))
    else:
        if narrowed:
            result = plugin.select_candidate(pod, table, narrowed)
        else:
            result = PostFilterResult(Status.unschedulable(f"{PREEMPTION_PREFIX}{NO_CANDIDATE}"))
    preemption = unfit_of.preemption_of(result)
    return dataclasses.replace(evaluation, message=unfit.message(preemption), preemption=preemption)


async def explain_with_extenders(
    configs: Sequence[ExtenderConfig],
    transport: Callable[[ExtenderConfig], ExtenderTransport],
    table: NodeTable,
    pod: PodInfo,
    pod_json: RawObject,
    profile: Profile,
    node_objects: NodeObjects,
    *,
    seed: int = 0,
    gangs: GangIndex | None = None,
) -> Evaluation:
    """Build the extenders of ``configs`` over ``transport`` (e.g. the HTTP client),
    evaluate with them, and close them."""
    extenders = build_extenders(configs, transport)
    try:
        return await evaluate_with_extenders(
            table, pod, pod_json, profile, extenders, node_objects, seed=seed, gangs=gangs
        )
    finally:
        for extender in extenders:
            await extender.close()
