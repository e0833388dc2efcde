"""Inputs and result shapes shared by the cross-pod references.

InterPodAffinity (:mod:`asched.tools.reference.interpod`), PodTopologySpread
(:mod:`asched.tools.reference.topologyspread`) and DefaultPreemption
(:mod:`asched.tools.reference.preemption`) look at every pod of the cluster, not just the
node being filtered. They take the cluster as three plain inputs, so that a
vectorised twin can be called with exactly the same arguments:

* ``nodes``: the snapshot's :class:`~asched.cluster.records.NodeInfo` list, in order;
* ``pods_by_node``: node name -> the pods bound to it (see :func:`pods_by_node`);
* ``namespace_labels``: namespace name -> its labels (see :func:`namespace_labels`).

A whole-cluster answer is a :class:`FilterResult` (one status per node) or a
:class:`ScoreResult` (raw and normalized scores per feasible node).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from asched.cluster.records import NO_EXECUTE, NO_SCHEDULE, NodeInfo, PodInfo, tolerates
from asched.cluster.snapshot import Snapshot
from asched.framework.status import Status

#: node name -> pods bound to it.
PodsByNode = Mapping[str, Sequence[PodInfo]]
#: namespace name -> its labels.
NamespaceLabels = Mapping[str, Mapping[str, str]]
#: A topology domain: (topology key, the node label's value).
TopologyPair = tuple[str, str]


def pods_by_node(snapshot: Snapshot) -> dict[str, tuple[PodInfo, ...]]:
    """Group the snapshot's bound pods by node; pods on unknown nodes are dropped."""
    grouped: dict[str, list[PodInfo]] = {node.name: [] for node in snapshot.nodes}
    for pod in snapshot.pods:
        if pod.node_name in grouped:
            grouped[pod.node_name].append(pod)
    return {name: tuple(pods) for name, pods in grouped.items()}


def namespace_labels(objects: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """Namespace name -> labels, from raw Namespace objects (``snapshot.extras``).

    Label values that are not strings are skipped: a real API server never serves them.
    """
    out: dict[str, dict[str, str]] = {}
    for obj in objects:
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
            continue
        labels = meta.get("labels")
        labels = labels if isinstance(labels, Mapping) else {}
        out[meta["name"]] = {
            k: v for k, v in labels.items() if isinstance(k, str) and isinstance(v, str)
        }
    return out


def matches_required_node_affinity(pod: PodInfo, node: NodeInfo) -> bool:
    """The pod's nodeSelector and required node affinity both hold on ``node``."""
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    return pod.node_affinity is None or pod.node_affinity.required_matches(node.name, labels)


def tolerates_hard_taints(pod: PodInfo, node: NodeInfo) -> bool:
    """No NoSchedule/NoExecute taint of ``node`` is left untolerated by the pod."""
    return all(
        tolerates(pod.tolerations, taint)
        for taint in node.taints
        if taint.effect in (NO_SCHEDULE, NO_EXECUTE)
    )


@dataclass(frozen=True, slots=True)
class FilterResult:
    """PreFilter's status and every node's Filter status.

    ``pre_filter`` is Success, Skip (the plugin's Filter does not run: every node is
    Success) or a rejection (every node carries it) or an Error.
    """

    pre_filter: Status
    nodes: Mapping[str, Status]


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """PreScore's status and the scores of the feasible nodes.

    When ``pre_score`` is Skip or Error, ``raw`` and ``normalized`` are empty (the
    plugin takes no part in the total). Otherwise both map every feasible node to an
    int: ``raw`` as Score returned it, ``normalized`` after NormalizeScore (0..100).
    """

    pre_score: Status
    raw: Mapping[str, int] = field(default_factory=dict)
    normalized: Mapping[str, int] = field(default_factory=dict)
