"""Evaluate one pod against every node of a snapshot, with full attribution.

Unlike the live decision path this scores *all* feasible nodes (no sampling) and keeps
every plugin's normalized score per node, so it can say why the pod goes where it goes.
It drives the same vectorised framework and plugins as the scheduler; the scalar
:mod:`asched.tools.reference` produces the same :class:`~asched.engine.result.Evaluation`
and the differential tests hold the two equal.

An Error (a PreFilter's, or a PreScore's when some node is feasible) ends the
evaluation as it ends upstream's cycle: no node is selected, the nodes that passed the
filters carry the Error, and the message is the error's.

It runs in two synchronous halves, so that scheduler extenders can be awaited between
them (:mod:`asched.explain.extenders`): :func:`filter_nodes` (PreFilter, PreScore, every
Filter) and :func:`score_nodes` (Score over the nodes still feasible, the extenders'
columns, the choice or the FitError and preemption). :func:`evaluate_table` runs both
with nothing in between.

Gangs (:mod:`asched.explain.gangs`): under a profile that enables Coscheduling, the
framework has the scheduler's gang host, and a gang member goes through the whole-gang
admission the cycle runs before deciding it. A gang it refuses is not placed: no node is
selected and the message is the scheduler's for the refusal, while every node keeps
what the member alone would meet there. The evaluation's ``gang`` says which. The
FitError message of a gang member then carries every PostFilter's part, as the cycle
builds it (Coscheduling's rejection of the gang after DefaultPreemption's), where a pod
of no gang carries preemption's. Why no node fits, and what preemption would do, is
:mod:`asched.explain.unfit`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.budgets import decode_budget
from asched.cluster.gangs import GangIndex
from asched.cluster.records import PodInfo
from asched.cluster.snapshot import Snapshot
from asched.cluster.spread import SELECTOR_KINDS
from asched.cluster.table import NodeTable
from asched.config.types import Profile
from asched.engine.result import Evaluation, GangVerdict, NodeVerdict
from asched.explain import gangs as explain_gangs, unfit as unfit_of
from asched.framework import diagnosis
from asched.framework.cycle_state import SCORED_ROWS, CycleState
from asched.framework.registry import Registry
from asched.framework.runtime import Framework
from asched.framework.score_runs import weighted
from asched.framework.status import Code, Status


def _verdict(status: Status) -> NodeVerdict:
    """The verdict of a node rejected with ``status`` (a Filter's, PreFilter's or an Error)."""
    return NodeVerdict(
        feasible=False, plugin=status.plugin or None, code=status.code, reasons=status.reasons
    )


def table_of(snapshot: Snapshot) -> NodeTable:
    """A NodeTable holding the snapshot's nodes (rows in snapshot order) and bound pods."""
    table = NodeTable(capacity=max(64, len(snapshot.nodes)))
    for node in snapshot.nodes:
        table.upsert_node(node)
    for pod in snapshot.pods:
        table.add_pod(pod, pod.node_name)
    for namespace in snapshot.extras.get("Namespace", ()):
        meta = namespace.get("metadata") or {}
        if isinstance(meta.get("name"), str):
            labels = meta.get("labels") or {}
            table.namespace_labels[meta["name"]] = {
                k: v for k, v in labels.items() if isinstance(v, str)
            }
    for kind in SELECTOR_KINDS:
        table.workloads.replace(kind, snapshot.extras.get(kind, ()))
    for raw in snapshot.extras.get("PodDisruptionBudget", ()):
        budget = decode_budget(raw)
        table.budgets[f"{budget.namespace}/{budget.name}"] = budget
    table.volumes = snapshot.volumes
    return table


def evaluate(snapshot: Snapshot, pod: PodInfo, profile: Profile, *, seed: int = 0) -> Evaluation:
    """Every node's verdict for ``pod`` under ``profile``; ``seed`` breaks ties. A gang
    member is evaluated with the snapshot's gangs (``pod`` is recorded in them as a
    pending member)."""
    table = table_of(snapshot)
    return evaluate_table(table, pod, profile, seed=seed, gangs=snapshot.gangs)


def evaluate_table(
    table: NodeTable,
    pod: PodInfo,
    profile: Profile,
    *,
    seed: int = 0,
    registry: Registry | None = None,
    gangs: GangIndex | None = None,
) -> Evaluation:
    """As :func:`evaluate`, over an existing table (rows in table order); ``registry``:
    the plugins to build the profile from (default: this installation's); ``gangs``: the
    gangs declared (None: none)."""
    filtered = filter_nodes(table, pod, profile, registry=registry, gangs=gangs)
    if isinstance(filtered, Evaluation):
        return filtered
    return score_nodes(filtered, seed=seed)


@dataclass(frozen=True, slots=True)
class Filtered:
    """Where the in-tree filters left an evaluation: what the extenders and scoring need.

    ``live``/``names``: the live rows in table order and their node names; ``failures``:
    row -> the first failing in-tree Filter's status; ``feasible``: ``bool[table.size]``,
    the rows that passed every in-tree filter; ``pre_score``: PreScore's status (it ran
    before the filters, as the live cycle runs it; an Error counts only if a node is left
    once every filter, the extenders' included, has had its say); ``gang``: the pod's
    gang verdict (a gang member under Coscheduling), and ``refused`` the admission's
    refusal, when the gang is refused (the nodes' verdicts are still the member's own).
    """

    table: NodeTable
    pod: PodInfo
    profile: Profile
    framework: Framework
    state: CycleState
    live: list[int]
    names: list[str]
    failures: dict[int, Status]
    feasible: npt.NDArray[np.bool_]
    pre_score: Status
    #: node name -> row, for the live rows
    rows: Mapping[str, int]
    gang: GangVerdict | None = None
    refused: Status | None = None

    def feasible_names(self) -> list[str]:
        """The names of the nodes that passed the in-tree filters, in table order."""
        return [name for row, name in zip(self.live, self.names, strict=True) if self.feasible[row]]


@dataclass(frozen=True, slots=True)
class Column:
    """A score column from outside the profile's plugins (an extender's prioritize).

    ``scores``: node name -> score on the plugins' scale (before ``weight``); a node it
    does not name scores 0. The column adds ``weight * score`` to each node's total.
    """

    name: str
    weight: int
    scores: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class Rejections:
    """Nodes that passed the in-tree filters and a later filter (an extender) removed.

    ``statuses``: node name -> its Unschedulable or UnschedulableAndUnresolvable status,
    tagged with the rejecting filter's name; they count in the FitError message and
    preemption sees them, as in upstream's diagnosis. ``dropped``: node name -> the name
    of the filter that left it out of its answer without a reason (upstream records no
    status for such a node: it counts nowhere).
    """

    statuses: Mapping[str, Status] = field(default_factory=dict)
    dropped: Mapping[str, str] = field(default_factory=dict)


#: The reason shown for a node an extender left out of its answer without naming it.
DROPPED_REASON: Final = "left out of the extender's answer without a reason"


def filter_nodes(
    table: NodeTable,
    pod: PodInfo,
    profile: Profile,
    *,
    registry: Registry | None = None,
    gangs: GangIndex | None = None,
) -> Filtered | Evaluation:
    """PreFilter, PreScore and every Filter over every live row (no sampling); before
    them, for a gang member under Coscheduling, the whole-gang admission (``gangs``: the
    gangs declared; the pod is recorded in them as a pending member).

    Returns the :class:`Evaluation` when that already ends it (no node at all, or a
    PreFilter rejection or Error: upstream calls no extender then), else
    :class:`Filtered` for :func:`score_nodes`.
    """
    framework, runtime = explain_gangs.framework_for(
        table, profile, pod, registry=registry, gangs=gangs
    )
    weights = dict(framework.weights)
    live = [int(r) for r in np.flatnonzero(table.alive[table.rows])]
    names = [table.name_of(r) for r in live]
    n_all = len(live)
    if n_all == 0:
        return Evaluation(
            pod.key, profile.scheduler_name, {}, weights, None, (), diagnosis.NO_NODES
        )
    refused = None
    if runtime is not None:
        refused = explain_gangs.admit(runtime, framework, table, pod)
    state = CycleState()
    outcome = framework.run_pre_filter(state, pod, table)
    gang = None
    if runtime is not None:
        gang = explain_gangs.verdict(runtime, pod, refused, outcome.status)
    if not outcome.status.ok:
        return _ended_by_pre_filter(
            framework, table, pod, profile, live, names, weights, outcome.status, refused, gang
        )
    pre_score = framework.run_pre_score(state, pod, table)
    failures = framework.first_failures(state, pod, table, outcome)
    feasible = table.alive[table.rows].copy()
    if failures:
        feasible[np.fromiter(failures.keys(), dtype=np.intp)] = False
    rows = dict(zip(names, live, strict=True))
    return Filtered(
        table,
        pod,
        profile,
        framework,
        state,
        live,
        names,
        failures,
        feasible,
        pre_score,
        rows,
        gang,
        refused,
    )


def _ended_by_pre_filter(
    framework: Framework,
    table: NodeTable,
    pod: PodInfo,
    profile: Profile,
    live: list[int],
    names: list[str],
    weights: dict[str, int],
    status: Status,
    refused: Status | None,
    gang: GangVerdict | None,
) -> Evaluation:
    """The evaluation a PreFilter rejection or Error (``status``) ends: every live node
    carries it, nothing is selected; the message (and preemption, when it is no Error) is
    the gang's refusal's when ``refused``, else the rejection's."""
    verdict = _verdict(status)
    if refused is not None:  # the cycle refuses the gang before any PreFilter runs
        status = refused
    if status.code == Code.ERROR:
        message, preemption = status.message, None
    else:
        unfit = unfit_of.of_pre_filter(framework, live, status, pod, table)
        preemption = unfit_of.preemption(table, pod, framework, unfit.statuses)
        message = unfit.message(preemption)
    return Evaluation(
        pod.key,
        profile.scheduler_name,
        dict.fromkeys(names, verdict),
        weights,
        None,
        (),
        message,
        preemption,
        gang=gang,
    )


def _gang_answer(filtered: Filtered, evaluation: Evaluation) -> Evaluation:
    """``evaluation`` with the gang's verdict; when the gang is refused, no node is
    selected and the message (and preemption, which PostFilter then tries) is the
    refusal's, as the cycle reports it (the nodes keep the member's own verdicts)."""
    if filtered.gang is None:
        return evaluation
    refused = filtered.refused
    if refused is None:
        return dataclasses.replace(evaluation, gang=filtered.gang)
    table, pod, framework = filtered.table, filtered.pod, filtered.framework
    unfit = unfit_of.of_pre_filter(framework, filtered.live, refused, pod, table)
    preemption = unfit_of.preemption(table, pod, framework, unfit.statuses)
    return dataclasses.replace(
        evaluation,
        selected=None,
        top=(),
        message=unfit.message(preemption),
        preemption=preemption,
        gang=filtered.gang,
    )


def ended_by_error(filtered: Filtered, error: Status, rejections: Rejections) -> Evaluation:
    """The evaluation an Error ends (a PreScore's, an extender's): no node is selected,
    the nodes still feasible carry the Error, and the message is the error's.

    ``rejections``: the nodes a later filter (an extender) already removed keep their
    verdicts."""
    return _gang_answer(filtered, _ended_by_error(filtered, error, rejections))


def _ended_by_error(filtered: Filtered, error: Status, rejections: Rejections) -> Evaluation:
    verdicts = _rejected_verdicts(filtered, rejections)
    failed = _verdict(error)
    ended = {
        name: verdicts.get(row, failed)
        for row, name in zip(filtered.live, filtered.names, strict=True)
    }
    weights = dict(filtered.framework.weights)
    return Evaluation(
        filtered.pod.key, filtered.profile.scheduler_name, ended, weights, None, (), error.message
    )


def score_nodes(
    filtered: Filtered,
    *,
    seed: int = 0,
    rejections: Rejections | None = None,
    columns: Sequence[Column] = (),
) -> Evaluation:
    """Score the nodes left after ``rejections``, and choose (or say why no node fits).

    Every plugin's Score and NormalizeScore run over the rows left (``SCORED_ROWS``), as
    upstream scores only the nodes its extenders kept; ``columns`` add their weighted
    scores to the totals. ``seed`` breaks ties among the best totals. A refused gang's
    member is scored too (its nodes' verdicts), but nothing is selected.
    """
    return _gang_answer(
        filtered, _scored(filtered, seed=seed, rejections=rejections, columns=columns)
    )


def _scored(
    filtered: Filtered,
    *,
    seed: int,
    rejections: Rejections | None,
    columns: Sequence[Column],
) -> Evaluation:
    rejections = rejections or Rejections()
    table, pod, framework, state = filtered.table, filtered.pod, filtered.framework, filtered.state
    profile_name = filtered.profile.scheduler_name
    weights = dict(framework.weights)
    rejected = _rejected_verdicts(filtered, rejections)
    feasible = filtered.feasible.copy()
    for row in rejected:
        feasible[row] = False
    pre_score = filtered.pre_score
    if pre_score.code == Code.ERROR and feasible.any():
        # Upstream's PreScore runs only with feasible nodes, and its Error ends the cycle.
        return _ended_by_error(filtered, pre_score, rejections)

    state.write(SCORED_ROWS, feasible)
    per_plugin: dict[str, npt.NDArray[np.int64]] = {}
    total = np.zeros(table.size, dtype=np.int64)
    # after a PreScore Error (no node feasible) the later PreScores did not run: no scoring
    scoring = framework.active_scores(state) if pre_score.code != Code.ERROR else []
    for plugin, weight in scoring:
        raw = framework.run_score(plugin, state, pod, table, table.rows)
        scores = framework.normalized(plugin, state, raw, feasible)
        per_plugin[plugin.name] = scores
        total += weighted(scores, weight)
    for column in columns:
        weights[column.name] = column.weight
        for name, score in column.scores.items():
            row = filtered.rows[name]
            if feasible[row]:
                total[row] += column.weight * score

    verdicts: dict[str, NodeVerdict] = {}
    for row, name in zip(filtered.live, filtered.names, strict=True):
        verdict = rejected.get(row)
        if verdict is not None:
            verdicts[name] = verdict
            continue
        node_scores = {plugin: int(values[row]) for plugin, values in per_plugin.items()}
        node_scores.update((column.name, column.scores.get(name, 0)) for column in columns)
        verdicts[name] = NodeVerdict(feasible=True, scores=node_scores, total=int(total[row]))

    feasible_rows = [row for row in filtered.live if feasible[row]]
    if not feasible_rows:
        unfit = filtered_unfit(filtered, rejections)
        preemption = unfit_of.preemption(table, pod, framework, unfit.statuses)
        message = unfit.message(preemption)
        return Evaluation(pod.key, profile_name, verdicts, weights, None, (), message, preemption)
    best = max(int(total[row]) for row in feasible_rows)
    top = tuple(table.name_of(row) for row in feasible_rows if int(total[row]) == best)
    selected = top[int(np.random.default_rng(seed).integers(len(top)))]
    return Evaluation(pod.key, profile_name, verdicts, weights, selected, top, None)


def _rejected_verdicts(filtered: Filtered, rejections: Rejections) -> dict[int, NodeVerdict]:
    """Row -> verdict of every node that is not feasible: the in-tree filters' first
    failure, else the later filter's rejection (or silent drop)."""
    verdicts = {row: _verdict(status) for row, status in filtered.failures.items()}
    for name, status in rejections.statuses.items():
        verdicts.setdefault(filtered.rows[name], _verdict(status))
    for name, plugin in rejections.dropped.items():
        verdicts.setdefault(
            filtered.rows[name],
            NodeVerdict(feasible=False, plugin=plugin, reasons=(DROPPED_REASON,)),
        )
    return verdicts


def filtered_unfit(filtered: Filtered, rejections: Rejections) -> unfit_of.Unfit:
    """The :class:`~asched.explain.unfit.Unfit` of a pod no node is left for after ``rejections``."""
    statuses = dict(filtered.failures)
    statuses.update((filtered.rows[name], status) for name, status in rejections.statuses.items())
    reasons = tuple(reason for status in statuses.values() for reason in status.reasons)
    return unfit_of.Unfit(
        filtered.framework,
        statuses,
        len(filtered.live),
        reasons,
        pod=filtered.pod,
        table=filtered.table,
    )


def pre_filter_unfit(
    table: NodeTable,
    pod: PodInfo,
    profile: Profile,
    *,
    registry: Registry | None = None,
    gangs: GangIndex | None = None,
) -> unfit_of.Unfit | None:
    """The :class:`~asched.explain.unfit.Unfit` of a pod PreFilter rejects (None if it does not: it ran
    before, in :func:`filter_nodes`; running it again gives the same answer)."""
    framework, _ = explain_gangs.framework_for(table, profile, pod, registry=registry, gangs=gangs)
    outcome = framework.run_pre_filter(CycleState(), pod, table)
    if outcome.status.ok or outcome.status.code == Code.ERROR:
        return None
    live = [int(r) for r in np.flatnonzero(table.alive[table.rows])]
    return unfit_of.of_pre_filter(framework, live, outcome.status, pod, table)
