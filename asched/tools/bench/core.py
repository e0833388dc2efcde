"""The core decision benchmark: how many scheduling decisions per second.

A decision is the synchronous part of a cycle on a table of ``N`` hollow nodes: PreFilter,
Filter over every row, sampling, Score, select, then the reserve (the pod's requests
enter its row). No API, no queue. Pods are scheduler_perf's default pod:

* ``uniform``: every pod has the same shape (a Deployment's replicas), so the
  equivalence-class cache recomputes only the row the previous pod changed;
* ``distinct``: every pod's memory request differs by a byte, so every decision is a full
  pass over all rows (the cache's worst case).

The scalar reference (:mod:`asched.tools.reference`) is timed on the same stream for the
vectorised/scalar ratio; it rebuilds per-node state each call, as written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import PodInfo
from asched.cluster.snapshot import Snapshot
from asched.cluster.table import NodeTable
from asched.config.load import default_config
from asched.engine.algorithm import Algorithm
from asched.framework.registry import installed
from asched.framework.runtime import Framework
from asched.tools.bench import templates

ZONES = 3


@dataclass(frozen=True, slots=True)
class CoreResult:
    """One measured configuration (``percentage`` 0 = adaptive)."""

    nodes: int
    percentage: int
    implementation: str
    pods: str
    decisions: int
    seconds: float
    decisions_per_second: float
    table_bytes: int
    table_bytes_per_node: float
    cache_bytes: int

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def grouped(results: list[CoreResult]) -> list[list[CoreResult]]:
    """The rounds of each configuration (nodes, percentage, implementation, pods), in the
    order each configuration first ran."""
    groups: dict[tuple[int, int, str, str], list[CoreResult]] = {}
    for r in results:
        groups.setdefault((r.nodes, r.percentage, r.implementation, r.pods), []).append(r)
    return list(groups.values())


def build_table(n_nodes: int) -> NodeTable:
    table = NodeTable(capacity=n_nodes)
    for index in range(n_nodes):
        table.upsert_node(
            decode_node(templates.node(f"node-{index}", zone=f"zone-{index % ZONES}"))
        )
    return table


def pod_stream(kind: str) -> Callable[[int], PodInfo]:
    """Pod ``i`` of a ``uniform`` or ``distinct`` stream."""

    def make(index: int) -> PodInfo:
        memory = "500Mi" if kind == "uniform" else str(500 * 1024 * 1024 + index)
        return decode_pod(templates.pod(f"pod-{index}", memory=memory))

    return make


def run_vectorised(
    n_nodes: int, percentage: int, kind: str, *, seconds: float, max_decisions: int
) -> CoreResult:
    table = build_table(n_nodes)
    algorithm = Algorithm(
        Framework(default_config(installed().catalogue).profiles[0]),
        table,
        percentage=percentage,
        seed=1,
    )
    make = pod_stream(kind)
    pods = [make(i) for i in range(min(max_decisions, 200_000))]
    done = 0
    start = time.perf_counter()
    deadline = start + seconds
    while done < len(pods):
        pod = pods[done]
        decision = algorithm.schedule(pod)
        if decision.node is None:
            break
        table.add_pod(pod, decision.node)
        done += 1
        if done % 64 == 0 and time.perf_counter() > deadline:
            break
    elapsed = time.perf_counter() - start
    return CoreResult(
        n_nodes,
        percentage,
        "vectorised",
        kind,
        done,
        elapsed,
        done / elapsed,
        table_bytes(table),
        table_bytes(table) / n_nodes,
        algorithm.cache.nbytes(),
    )


def run_scalar(n_nodes: int, kind: str, *, seconds: float, max_decisions: int) -> CoreResult:
    from asched.tools import reference

    table = build_table(n_nodes)
    snapshot = Snapshot(nodes=[table.node_at(r) for r in range(n_nodes)], pods=[])
    profile = default_config(installed().catalogue).profiles[0]
    make = pod_stream(kind)
    done = 0
    start = time.perf_counter()
    while done < max_decisions:
        pod = make(done)
        evaluation = reference.evaluate(snapshot, pod, profile, seed=done)
        if evaluation.selected is None:
            break
        snapshot.pods.append(decode_pod(templates.pod(pod.name, node_name=evaluation.selected)))
        done += 1
        if time.perf_counter() - start > seconds:
            break
    elapsed = time.perf_counter() - start
    return CoreResult(
        n_nodes,
        100,
        "scalar",
        kind,
        done,
        elapsed,
        done / elapsed,
        table_bytes(table),
        table_bytes(table) / n_nodes,
        0,
    )


def table_bytes(table: NodeTable) -> int:
    """Bytes held by the table's numeric columns (label, taint and port columns too)."""
    arrays: list[npt.NDArray[np.generic]] = [
        table.alive,
        table.unschedulable,
        table.zone,
        table.seq,
        table.nonzero_cpu,
        table.nonzero_memory,
        *table.allocatable,
        *table.requested,
        *table.free,
        *(key.column for key in table.labels.keys.values()),
        *table.taints.words,
        *table.ports.columns.values(),
    ]
    return sum(a.nbytes for a in arrays)
