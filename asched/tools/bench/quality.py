"""Placement quality by replay, the same for any scheduler: regret, balance, fragmentation.

After a run, the observer's timeline (:mod:`asched.tools.bench.observe`) is replayed into a
fresh :class:`~asched.cluster.table.NodeTable`: the cluster as first listed, then every
node upsert/deletion and pod binding/deletion in the order the watch saw them, except
that each pod of the scheduler under test is placed at the point it entered the queue
(``order="queue"``, the default; see below). At each measured pod's placement, before
adding it, asched's full-scan scoring (100 % of nodes, the profile asched ran with) gives
the best total over all feasible nodes; the pod's

    regret = best total - total of the node it was bound to

in total-score points (plugin score 0..100 times weight, summed). A scheduler that scores
every node and picks the best has regret 0 up to ordering noise; sampling trades regret
for speed. kube-scheduler v1.37.2 scores with its own (slightly different) defaults: the
same weights, but a BalancedAllocation that scores the change in balance the pod makes
(asched's, as v1.33's, scores the balance after it), so its regret is measured against
*asched's* scoring.

Why queue order: with N binds in flight, bindings commit (and the watch sees them) in an
order that differs from the order of the decisions, so replaying in bind order judges a
pod against a table that lacks a neighbour decided just before it, or already holds one
decided just after: noise that shows up as regret even for a full-scan scheduler (the
docs give numbers). Both schedulers pop pods of equal priority first-in first-out, and
every watcher sees pod arrivals in the same resourceVersion order, so the order pods were
*added* is the order they were decided (up to retries), and at that point every earlier
pod is placed (bound or assumed) and no later one is. ``order="bind"`` replays bindings as
seen, for comparison. Where the chosen node is not even feasible in the replay, the pod
is counted in ``infeasible_at_replay`` instead of getting a regret.

At the end of measuring the same table gives the invariants (no node's requests above
its allocatable on any axis) and the final balance (std-dev of CPU utilisation across
live nodes) and fragmentation (how many more pods of the largest measured shape fit,
node by node, against how many would fit if free capacity were pooled).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import PodInfo
from asched.cluster.resources import PODS
from asched.cluster.table import NodeTable
from asched.config.types import Profile
from asched.engine.algorithm import Algorithm
from asched.framework.cycle_state import CycleState
from asched.framework.runtime import Framework
from asched.tools.bench.counting import percentile
from asched.tools.bench.observe import Observer, phase_of

Raw = dict[str, Any]
ReplayOrder = Literal["queue", "bind"]


@dataclass(frozen=True, slots=True)
class Overcommit:
    """One node above its allocatable on one resource axis (canonical units)."""

    node: str
    resource: str
    requested: int
    allocatable: int


@dataclass(slots=True)
class Quality:
    """Placement-quality figures; regrets in total-score points."""

    order: str = "queue"
    evaluated: int = 0
    infeasible_at_replay: int = 0
    max_total: int = 0
    regret_mean: float | None = None
    regret_p99: float | None = None
    regret_max: float | None = None
    zero_regret_fraction: float | None = None
    cpu_utilisation_mean: float | None = None
    balance_cpu_stddev: float | None = None
    largest_shape: dict[str, int] = field(default_factory=dict)
    fits_more: int | None = None
    fits_if_pooled: int | None = None
    regrets: list[int] = field(default_factory=list, repr=False)

    @property
    def fragmentation(self) -> float | None:
        """Share of the pooled capacity for the largest shape lost to fragmentation."""
        if self.fits_more is None or not self.fits_if_pooled:
            return None
        return 1.0 - self.fits_more / self.fits_if_pooled

    def to_json(self) -> dict[str, Any]:
        return {
            "replay_order": self.order,
            "evaluated": self.evaluated,
            "infeasible_at_replay": self.infeasible_at_replay,
            "max_total": self.max_total,
            "regret_mean": self.regret_mean,
            "regret_p99": self.regret_p99,
            "regret_max": self.regret_max,
            "zero_regret_fraction": self.zero_regret_fraction,
            "cpu_utilisation_mean": self.cpu_utilisation_mean,
            "balance_cpu_stddev": self.balance_cpu_stddev,
            "fragmentation": {
                "largest_shape": self.largest_shape,
                "fits_more": self.fits_more,
                "fits_if_pooled": self.fits_if_pooled,
                "lost_fraction": self.fragmentation,
            },
        }


@dataclass(slots=True)
class Replay:
    """What the replay found: quality (None when not evaluated) and the invariants."""

    quality: Quality | None
    overcommitted: list[Overcommit]
    pods_on_missing_nodes: int
    measured_seen: int


class _Scorer:
    """asched's full-scan best total vs the chosen node's total, for one pod at a time."""

    def __init__(self, profile: Profile, table: NodeTable) -> None:
        self.framework = Framework(profile)
        self.table = table
        self.algorithm = Algorithm(self.framework, table, percentage=100, seed=0)
        self.max_total = 100 * sum(w for _, w in self.framework.score)

    def regret(self, pod: PodInfo, node: str) -> int | None:
        """``best - chosen`` in points, or None when the chosen node is infeasible here."""
        table, fw = self.table, self.framework
        row = table.row_of(node)
        if row is None:
            return None
        state = CycleState()
        outcome = fw.run_pre_filter(state, pod, table)
        if not outcome.status.ok:
            return None
        fw.run_pre_score(state, pod, table)
        rows = np.array([row], dtype=np.intp)
        if not fw.filter_mask(state, pod, table, rows, fw.active_filters(state))[0]:
            return None
        allowed = fw.allowed_mask(table, outcome)
        if allowed is not None and not allowed[row]:
            return None
        best, totals = self.algorithm.best_total(state, pod)
        if allowed is not None:
            # TODO(best_total takes no allowed mask): its totals are normalized over all
            # feasible rows, not only the allowed ones the cycle saw, so under a
            # PreFilterResult the normalized plugins' part of the regret is approximate.
            feasible = fw.filter_mask(state, pod, table, table.rows, fw.active_filters(state))
            best = int(np.max(totals[: table.size], where=feasible & allowed, initial=-1))
        return max(0, best - int(totals[row]))


def _shape_key(pod: PodInfo) -> tuple[int, int]:
    return (pod.requests.get("cpu", 0), pod.requests.get("memory", 0))


#: Phases whose pods the scheduler under test places (in its queue's order).
QUEUED_PHASES = frozenset({"init", "measured", "churn"})


def replay(
    observer: Observer,
    profile: Profile,
    *,
    evaluate: bool = True,
    order: ReplayOrder = "queue",
    measured_phase: str = "measured",
    progress: Callable[[int], None] | None = None,
) -> Replay:
    """Replay the timeline up to the ``measure-end`` mark; see the module docstring.

    ``order="queue"`` places each pod of the scheduler under test where it entered the
    queue (its ``added`` entry), ``order="bind"`` where its binding was seen.
    """
    table = NodeTable(capacity=max(64, len(observer.initial_nodes)))
    for raw in observer.initial_nodes:
        table.upsert_node(decode_node(raw))
    for raw in observer.initial_pods:
        pod = decode_pod(raw)
        table.add_pod(pod, pod.node_name)
    scorer = _Scorer(profile, table) if evaluate else None
    quality = Quality(max_total=scorer.max_total, order=order) if scorer is not None else None
    bound_raw: dict[str, Raw] = {}
    for entry in observer.timeline:
        if entry[0] == "mark" and entry[1] == "measure-end":
            break
        if entry[0] == "bound":
            bound_raw[entry[1]] = entry[2]
    keys: dict[str, str] = {}
    measuring = False
    measured = 0
    largest: PodInfo | None = None

    def place(uid: str, raw: Raw) -> None:
        nonlocal measured, largest
        pod = decode_pod(raw)
        keys[uid] = pod.key
        if measuring and phase_of(raw) == measured_phase:
            measured += 1
            if largest is None or _shape_key(pod) > _shape_key(largest):
                largest = pod
            if scorer is not None and quality is not None:
                # As the scheduler saw it: not yet bound (NodeName would pin it).
                regret = scorer.regret(dataclasses.replace(pod, node_name=""), pod.node_name)
                if regret is None:
                    quality.infeasible_at_replay += 1
                else:
                    quality.regrets.append(regret)
                if progress is not None:
                    progress(measured)
        table.add_pod(pod, pod.node_name)

    for entry in observer.timeline:
        tag = entry[0]
        if tag == "mark":
            if entry[1] == "measure-start":
                measuring = True
            elif entry[1] == "measure-end":
                break
        elif tag == "node":
            table.upsert_node(decode_node(entry[1]))
        elif tag == "node-deleted":
            table.remove_node(entry[1])
        elif tag == "pod-deleted":
            key = keys.pop(entry[1], None)
            if key is not None:
                table.remove_pod(key)
        elif tag == "added":
            arrived = bound_raw.get(entry[1])
            if order == "queue" and arrived is not None and phase_of(arrived) in QUEUED_PHASES:
                place(entry[1], arrived)
        elif tag == "bound" and entry[1] not in keys:
            place(entry[1], entry[2])
    if quality is not None:
        _summarize(quality, table, largest)
    return Replay(
        quality=quality,
        overcommitted=overcommitted(table),
        pods_on_missing_nodes=sum(len(p) for p in table.orphans.values()),
        measured_seen=measured,
    )


def _summarize(quality: Quality, table: NodeTable, largest: PodInfo | None) -> None:
    regrets = quality.regrets
    quality.evaluated = len(regrets)
    if regrets:
        ordered = sorted(regrets)
        quality.regret_mean = sum(ordered) / len(ordered)
        quality.regret_p99 = percentile(ordered, 99)
        quality.regret_max = float(ordered[-1])
        quality.zero_regret_fraction = ordered.count(0) / len(ordered)
    live = table.alive[: table.size] & ~table.unschedulable[: table.size]
    cpu = table.axis_index["cpu"]
    allocatable = table.allocatable[cpu][: table.size]
    usable = live & (allocatable > 0)
    if usable.any():
        utilisation = table.requested[cpu][: table.size][usable] / allocatable[usable]
        quality.cpu_utilisation_mean = float(utilisation.mean())
        quality.balance_cpu_stddev = float(utilisation.std())
    if largest is not None:
        order = {"cpu": 0, "memory": 1}
        requests = sorted(largest.requests.items(), key=lambda kv: (order.get(kv[0], 2), kv[0]))
        shape = {k: v for k, v in requests if v > 0}
        quality.largest_shape = dict(shape)
        quality.fits_more, quality.fits_if_pooled = fits(table, shape, usable)


def fits(table: NodeTable, shape: Mapping[str, int], rows: np.ndarray) -> tuple[int, int]:
    """Pods of ``shape`` that still fit: node by node, and if free capacity were pooled.

    ``rows`` : bool mask of shape (table.size,), the nodes to count.
    """
    per_node = np.full(int(rows.sum()), np.iinfo(np.int64).max, dtype=np.int64)
    pooled = math.inf
    wanted = {**shape, PODS: 1}
    for resource, amount in wanted.items():
        axis = table.axis_index.get(resource)
        if axis is None or amount <= 0:
            continue
        free = np.maximum(table.free[axis][: table.size][rows], 0)
        per_node = np.minimum(per_node, free // amount)
        pooled = min(pooled, int(free.sum()) // amount)
    return int(per_node.sum()), int(pooled) if pooled != math.inf else 0


def overcommitted(table: NodeTable) -> list[Overcommit]:
    """Every (live node, axis) whose requests exceed its allocatable."""
    found: list[Overcommit] = []
    size = table.size
    live = table.alive[:size]
    for axis, resource in enumerate(table.axes):
        over = live & (table.requested[axis][:size] > table.allocatable[axis][:size])
        found.extend(
            Overcommit(
                table.name_of(int(row)),
                resource,
                int(table.requested[axis][row]),
                int(table.allocatable[axis][row]),
            )
            for row in np.flatnonzero(over)
        )
    return found
