"""Evaluate one pod against every node of a snapshot, with full attribution.

Unlike the live decision path this scores *all* feasible nodes (no sampling) and keeps
every plugin's normalized score per node, so it can say why the pod goes where it goes.
It drives the same vectorised framework and plugins as the scheduler; the scalar
:mod:`asched.reference` produces the same :class:`~asched.framework.result.Evaluation`
and the differential tests hold the two equal.

An Error (a PreFilter's, or a PreScore's when some node is feasible) ends the
evaluation as it ends upstream's cycle: no node is selected, the nodes that passed the
filters carry the Error, and the message is the error's.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from asched.cluster.budgets import decode_budget
from asched.cluster.records import PodInfo
from asched.cluster.snapshot import Snapshot
from asched.cluster.spread import SELECTOR_KINDS
from asched.cluster.table import NodeTable
from asched.config.types import Profile
from asched.framework import diagnosis
from asched.framework.cycle_state import SCORED_ROWS, CycleState
from asched.framework.plugins.default_preemption import DefaultPreemption
from asched.framework.registry import Registry
from asched.framework.result import Evaluation, NodeVerdict, Preemption, Victim
from asched.framework.runtime import Framework, weighted
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
    return table


def evaluate(snapshot: Snapshot, pod: PodInfo, profile: Profile, *, seed: int = 0) -> Evaluation:
    """Every node's verdict for ``pod`` under ``profile``; ``seed`` breaks ties."""
    table = table_of(snapshot)
    return evaluate_table(table, pod, profile, seed=seed)


def evaluate_table(
    table: NodeTable,
    pod: PodInfo,
    profile: Profile,
    *,
    seed: int = 0,
    registry: Registry | None = None,
) -> Evaluation:
    """As :func:`evaluate`, over an existing table (rows in table order); ``registry``:
    the plugins to build the profile from (default: this installation's)."""
    framework = Framework(profile, registry=registry)
    weights = dict(framework.weights)
    live = [int(r) for r in np.flatnonzero(table.alive[table.rows])]
    names = [table.name_of(r) for r in live]
    n_all = len(live)
    if n_all == 0:
        return Evaluation(
            pod.key, profile.scheduler_name, {}, weights, None, (), diagnosis.NO_NODES
        )
    state = CycleState()
    outcome = framework.run_pre_filter(state, pod, table)
    if not outcome.status.ok:
        status = outcome.status
        verdict = _verdict(status)
        if status.code == Code.ERROR:
            message, preemption = status.message, None
        else:
            statuses = dict.fromkeys(live, status)
            preemption = _preemption(table, pod, framework, statuses)
            message = diagnosis.fit_error_message(
                n_all, pre_filter_message=status.message, post_filter_message=_suffix(preemption)
            )
        return Evaluation(
            pod.key,
            profile.scheduler_name,
            dict.fromkeys(names, verdict),
            weights,
            None,
            (),
            message,
            preemption,
        )
    pre_score = framework.run_pre_score(state, pod, table)
    failures = framework.first_failures(state, pod, table, outcome)
    feasible = table.alive[table.rows].copy()
    if failures:
        feasible[np.fromiter(failures.keys(), dtype=np.intp)] = False
    if pre_score.code == Code.ERROR and feasible.any():
        # Upstream's PreScore runs only with feasible nodes, and its Error ends the cycle.
        error = _verdict(pre_score)
        ended = {
            name: error if feasible[row] else _verdict(failures[row])
            for row, name in zip(live, names, strict=True)
        }
        return Evaluation(
            pod.key, profile.scheduler_name, ended, weights, None, (), pre_score.message
        )

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

    verdicts: dict[str, NodeVerdict] = {}
    for row, name in zip(live, names, strict=True):
        failure = failures.get(row)
        if failure is not None:
            verdicts[name] = _verdict(failure)
        else:
            node_scores = {plugin: int(values[row]) for plugin, values in per_plugin.items()}
            verdicts[name] = NodeVerdict(feasible=True, scores=node_scores, total=int(total[row]))

    feasible_rows = [row for row in live if feasible[row]]
    if not feasible_rows:
        reasons = [reason for status in failures.values() for reason in status.reasons]
        preemption = _preemption(table, pod, framework, failures)
        message = diagnosis.fit_error_message(
            n_all, reasons, post_filter_message=_suffix(preemption)
        )
        return Evaluation(
            pod.key, profile.scheduler_name, verdicts, weights, None, (), message, preemption
        )
    best = max(int(total[row]) for row in feasible_rows)
    top = tuple(table.name_of(row) for row in feasible_rows if int(total[row]) == best)
    selected = top[int(np.random.default_rng(seed).integers(len(top)))]
    return Evaluation(pod.key, profile.scheduler_name, verdicts, weights, selected, top, None)


def _preemption(
    table: NodeTable, pod: PodInfo, framework: Framework, statuses: Mapping[int, Status]
) -> Preemption | None:
    """What DefaultPreemption would do (offset 0: deterministic), if the profile has it."""
    plugin = next((p for p in framework.post_filter if isinstance(p, DefaultPreemption)), None)
    if plugin is None:
        return None
    result = plugin.post_filter(CycleState(), pod, table, statuses, framework, offset=0)
    node = result.nominated_node or None
    victims = tuple(Victim(v.key, node or "", v.priority) for v in result.victims)
    message = "" if result.status.ok else result.status.message
    return Preemption(result.status.code, node, victims, result.num_pdb_violations, message)


def _suffix(preemption: Preemption | None) -> str:
    """The FailedScheduling message's PostFilter part: preemption's message, if it failed."""
    return "" if preemption is None else preemption.message
