"""Preempting extenders narrow DefaultPreemption's candidates (upstream's callExtenders).

One home for what the live scheduler (:mod:`asched.extenders.consult`, in a task outside
the cycle) and ``asched explain`` both do between the two halves of preemption: the dry
run's candidates are sent to every interested extender with a ``preemptVerb``, each
node's victims as :func:`summary` objects (by UID to ``nodeCacheCapable`` extenders); the
answer may name any pod on the node, and is resolved against the table when it arrives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.extenders.extender import Extender
from asched.extenders.preempt_bind import run_preemption
from asched.extenders.protocol import NodeVictims, RawObject
from asched.framework.preemption import Candidate, importance_order

#: upstream's message when no candidate is left for preemption (after the extenders)
NO_CANDIDATE: Final = "no candidate node for preemption"


def preempting(extenders: Sequence[Extender], pod_json: RawObject) -> bool:
    """Whether an extender with a preemptVerb is interested in the pod."""
    return any(e.supports_preemption and e.is_interested(pod_json) for e in extenders)


def summary(pod: PodInfo) -> RawObject:
    """A pod's identity as JSON, from its record: metadata (name, namespace, uid, labels)
    and spec (nodeName, schedulerName, priority). What a preempting extender is sent
    of a victim: asched keeps no JSON of bound pods."""
    meta: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid}
    if pod.labels:
        meta["labels"] = dict(pod.labels)
    spec: dict[str, Any] = {"schedulerName": pod.scheduler_name, "priority": pod.priority}
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    return {"metadata": meta, "spec": spec}


async def narrow_candidates(
    extenders: Sequence[Extender],
    pod: PodInfo,
    pod_json: RawObject,
    candidates: Sequence[Candidate],
    table: NodeTable,
) -> list[Candidate]:
    """What the preempting extenders leave of ``candidates``: each kept node with the
    victims the last extender named that still run on it, in importance order.

    Raises
    ------
    ExtenderError
        From a non-ignorable extender (see :func:`~asched.extenders.preempt_bind.run_preemption`).
    """
    victims = {
        table.name_of(c.row): NodeVictims(
            tuple(summary(v) for v in c.victims), c.num_pdb_violations
        )
        for c in candidates
    }

    def pods_on_node(node: str) -> dict[str, RawObject] | None:
        row = table.row_of(node)
        if row is None:
            return None
        return {p.info.uid: summary(p.info) for p in table.row_pods[row].values()}

    answer = await run_preemption(extenders, pod, pod_json, victims, pods_on_node)
    found: list[Candidate] = []
    for node, kept in answer.items():
        row = table.row_of(node)
        if row is None:
            continue
        by_uid = {p.info.uid: p.info for p in table.row_pods[row].values()}
        pods = [by_uid[uid] for v in kept.pods if (uid := _uid(v)) in by_uid]
        starts = [_start(table, p.key) for p in pods]
        ordered = tuple(pods[i] for i in importance_order(pods, starts))
        found.append(Candidate(row, ordered, kept.num_pdb_violations))
    return found


def _uid(pod_json: RawObject) -> str:
    meta = pod_json.get("metadata")
    return str(meta.get("uid", "")) if isinstance(meta, dict) else ""


def _start(table: NodeTable, key: str) -> float:
    columns = table.pod_columns
    return float(columns.start[columns.index[key]])
