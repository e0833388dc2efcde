"""Evaluate one pod against every node of a snapshot, with full attribution.

Unlike the live decision path this scores *all* feasible nodes (no sampling) and keeps
every plugin's normalized score per node, so it can say why the pod goes where it goes.
It drives the same vectorised framework and plugins as the scheduler; the scalar
:mod:`asched.reference` produces the same :class:`~asched.framework.result.Evaluation`
and the differential tests hold the two equal.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from asched.cluster.records import PodInfo
from asched.cluster.snapshot import Snapshot
from asched.cluster.table import NodeTable
from asched.config.types import Profile
from asched.framework import diagnosis
from asched.framework.cycle_state import CycleState
from asched.framework.result import Evaluation, NodeVerdict
from asched.framework.runtime import Framework, weighted


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
    return table


def evaluate(snapshot: Snapshot, pod: PodInfo, profile: Profile, *, seed: int = 0) -> Evaluation:
    """Every node's verdict for ``pod`` under ``profile``; ``seed`` breaks ties."""
    table = table_of(snapshot)
    return evaluate_table(table, pod, profile, seed=seed)


def evaluate_table(
    table: NodeTable, pod: PodInfo, profile: Profile, *, seed: int = 0
) -> Evaluation:
    """As :func:`evaluate`, over an existing table (rows in table order)."""
    framework = Framework(profile)
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
        verdict = NodeVerdict(
            feasible=False, plugin=status.plugin or None, code=status.code, reasons=status.reasons
        )
        message = diagnosis.fit_error_message(n_all, pre_filter_message=status.message)
        return Evaluation(
            pod.key,
            profile.scheduler_name,
            dict.fromkeys(names, verdict),
            weights,
            None,
            (),
            message,
        )
    framework.run_pre_score(state, pod, table)
    failures = framework.first_failures(state, pod, table, outcome)
    feasible = table.alive[table.rows].copy()
    if failures:
        feasible[np.fromiter(failures.keys(), dtype=np.intp)] = False

    per_plugin: dict[str, npt.NDArray[np.int64]] = {}
    total = np.zeros(table.size, dtype=np.int64)
    for plugin, weight in framework.active_scores(state):
        raw = framework.run_score(plugin, state, pod, table, table.rows)
        scores = framework.normalized(plugin, state, raw, feasible)
        per_plugin[plugin.name] = scores
        total += weighted(scores, weight)

    verdicts: dict[str, NodeVerdict] = {}
    for row, name in zip(live, names, strict=True):
        failure = failures.get(row)
        if failure is not None:
            verdicts[name] = NodeVerdict(
                feasible=False, plugin=failure.plugin, code=failure.code, reasons=failure.reasons
            )
        else:
            node_scores = {plugin: int(values[row]) for plugin, values in per_plugin.items()}
            verdicts[name] = NodeVerdict(feasible=True, scores=node_scores, total=int(total[row]))

    feasible_rows = [row for row in live if feasible[row]]
    if not feasible_rows:
        reasons = [reason for status in failures.values() for reason in status.reasons]
        message = diagnosis.fit_error_message(n_all, reasons)
        return Evaluation(pod.key, profile.scheduler_name, verdicts, weights, None, (), message)
    best = max(int(total[row]) for row in feasible_rows)
    top = tuple(table.name_of(row) for row in feasible_rows if int(total[row]) == best)
    selected = top[int(np.random.default_rng(seed).integers(len(top)))]
    return Evaluation(pod.key, profile.scheduler_name, verdicts, weights, selected, top, None)
