"""Pods on nodes as columns, for vectorised inter-pod questions.

Inter-pod affinity, topology spreading and preemption ask "how many pods matching this
selector sit in each topology domain?". With one row per counted pod (its node's row,
namespace id, priority, terminating flag, and its labels dictionary-encoded exactly as
node labels are, via :class:`~asched.cluster.labels.LabelColumns`), a selector is a few
column comparisons over all pods, and the counts per domain are one ``bincount`` of the
matching pods' node label ids.

Rows mirror :attr:`NodeTable.pods` (assumed pods included) and are written only by the
table, so rollback (forget) restores them exactly; deleted rows are reused.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.affinity import AffinityTerm
from asched.cluster.columns import grown, new_column
from asched.cluster.labels import LabelColumns
from asched.cluster.records import PodInfo, Requirement

BoolMask = npt.NDArray[np.bool_]


#: Kinds of existing-pod terms the inter-pod plugins look up.
REQUIRED_AFFINITY: Final = "required"
REQUIRED_ANTI: Final = "required_anti"
PREFERRED: Final = "preferred"  # affinity with +weight, anti-affinity with -weight
TERM_KINDS: Final = (REQUIRED_AFFINITY, REQUIRED_ANTI, PREFERRED)


def start_time(pod: PodInfo) -> float:
    """Seconds since the epoch the pod started (its creationTimestamp); inf when unknown.

    PodInfo carries no ``status.startTime``; preemption ranks pods by this instead.
    """
    if not pod.creation_timestamp:
        return math.inf
    try:
        return datetime.fromisoformat(pod.creation_timestamp).timestamp()
    except ValueError:
        return math.inf


def _terms_of(pod: PodInfo) -> list[tuple[str, tuple[AffinityTerm, int]]]:
    affinity = pod.affinity
    if affinity is None:
        return []
    found = [(REQUIRED_AFFINITY, (t, 0)) for t in affinity.required]
    found += [(REQUIRED_ANTI, (t, 0)) for t in affinity.required_anti]
    found += [(PREFERRED, (w.term, w.weight)) for w in affinity.preferred]
    found += [(PREFERRED, (w.term, -w.weight)) for w in affinity.preferred_anti]
    return found


class PodColumns:
    """Counted pods as rows; see the module docstring."""

    def __init__(self, capacity: int = 64) -> None:
        cap = max(1, capacity)
        self.capacity = cap
        self.size = 0
        self.alive: npt.NDArray[np.bool_] = new_column(cap, np.bool_, fill=False)
        self.node_row: npt.NDArray[np.int32] = new_column(cap, np.int32, -1)
        self.namespace: npt.NDArray[np.int32] = new_column(cap, np.int32, -1)
        self.priority: npt.NDArray[np.int64] = new_column(cap, np.int64, 0)
        self.deleting: npt.NDArray[np.bool_] = new_column(cap, np.bool_, fill=False)
        #: the pod has volumes (``PodInfo.volumes``): only such pods change what the volume
        #: filters answer when preemption takes pods off a node
        self.has_volumes: npt.NDArray[np.bool_] = new_column(cap, np.bool_, fill=False)
        #: seconds since the epoch (inf: unknown), for preemption's importance order
        self.start: npt.NDArray[np.float64] = new_column(cap, np.float64, math.inf)
        #: per node-table resource axis, the pod's request on it (the table's units)
        self.requests: list[npt.NDArray[np.int64]] = []
        self.labels = LabelColumns(cap)
        self.namespace_ids: dict[str, int] = {}
        #: existing pods' terms, grouped: term kind -> (term, signed weight) -> pod rows
        self.term_groups: dict[str, dict[tuple[AffinityTerm, int], dict[int, int]]] = {
            kind: {} for kind in TERM_KINDS
        }
        self._group_arrays: dict[tuple[str, AffinityTerm, int], npt.NDArray[np.intp]] = {}
        self.index: dict[str, int] = {}
        self.infos: list[PodInfo | None] = [None] * cap
        self._free: list[int] = []

    def _grow(self) -> None:
        cap = self.capacity * 2
        self.alive = grown(self.alive, cap, fill=False)
        self.node_row = grown(self.node_row, cap, -1)
        self.namespace = grown(self.namespace, cap, -1)
        self.priority = grown(self.priority, cap, 0)
        self.deleting = grown(self.deleting, cap, fill=False)
        self.has_volumes = grown(self.has_volumes, cap, fill=False)
        self.start = grown(self.start, cap, math.inf)
        self.requests = [grown(c, cap, 0) for c in self.requests]
        self.labels.grow(cap)
        self.infos.extend([None] * (cap - self.capacity))
        self.capacity = cap

    def add(self, pod: PodInfo, node_row: int, deltas: Sequence[tuple[int, int]] = ()) -> int:
        """Count ``pod`` on ``node_row`` (replacing an earlier row of the same pod).

        ``deltas`` are ``(axis, amount)`` pairs: what the pod adds to the node table's
        resource axes (kept per pod row for preemption's vectorised victim search).
        """
        self.remove(pod.key)
        if self._free:
            row = self._free.pop()
        else:
            if self.size == self.capacity:
                self._grow()
            row = self.size
            self.size += 1
        self.index[pod.key] = row
        self.infos[row] = pod
        self.alive[row] = True
        self.node_row[row] = node_row
        self.namespace[row] = self.namespace_ids.setdefault(pod.namespace, len(self.namespace_ids))
        self.priority[row] = pod.priority
        self.deleting[row] = pod.deleting
        self.has_volumes[row] = bool(pod.volumes)
        self.start[row] = start_time(pod)
        for axis, amount in deltas:
            while axis >= len(self.requests):
                self.requests.append(new_column(self.capacity, np.int64, 0))
            self.requests[axis][row] = amount
        self.labels.set_row(row, pod.labels)
        for kind, key in _terms_of(pod):
            members = self.term_groups[kind].setdefault(key, {})
            members[row] = members.get(row, 0) + 1  # a term twice counts twice, as upstream
            self._group_arrays.pop((kind, *key), None)
        return row

    def remove(self, key: str) -> None:
        row = self.index.pop(key, None)
        if row is None:
            return
        pod = self.infos[row]
        if pod is not None:
            for kind, group in _terms_of(pod):
                members = self.term_groups[kind].get(group)
                if members is not None:
                    members.pop(row, None)
                    if not members:
                        del self.term_groups[kind][group]
                self._group_arrays.pop((kind, *group), None)
        self.alive[row] = False
        self.node_row[row] = -1
        self.namespace[row] = -1
        self.has_volumes[row] = False
        for column in self.requests:
            column[row] = 0
        self.labels.clear_row(row)
        self.infos[row] = None
        self._free.append(row)

    def group_rows(self, kind: str, term: AffinityTerm, weight: int) -> npt.NDArray[np.intp]:
        """Rows of the pods carrying ``term`` (with ``weight``) as a ``kind`` term.

        A pod carrying the term twice appears twice (upstream counts per term).
        """
        cached = self._group_arrays.get((kind, term, weight))
        if cached is None:
            members = self.term_groups[kind].get((term, weight), {})
            rows = np.fromiter(members.keys(), dtype=np.intp, count=len(members))
            times = np.fromiter(members.values(), dtype=np.intp, count=len(members))
            cached = np.repeat(rows, times)
            self._group_arrays[(kind, term, weight)] = cached
        return cached

    @property
    def rows(self) -> slice:
        return slice(0, self.size)

    def in_namespaces(self, namespaces: Collection[str] | None) -> BoolMask:
        """Live rows in any of ``namespaces`` (None: every namespace)."""
        live: BoolMask = self.alive[: self.size].copy()
        if namespaces is None:
            return live
        ids = [self.namespace_ids[n] for n in namespaces if n in self.namespace_ids]
        if not ids:
            return np.zeros(self.size, dtype=np.bool_)
        column = self.namespace[: self.size]
        if len(ids) == 1:  # the common case (a pod's own namespace): a comparison, not isin
            one: BoolMask = live & (column == ids[0])
            return one
        inside: BoolMask = live & np.isin(column, ids)
        return inside

    def matching(
        self,
        match_labels: Mapping[str, str],
        expressions: Collection[Requirement],
        namespaces: Collection[str] | None = None,
    ) -> BoolMask:
        """Live rows whose labels satisfy the selector, in ``namespaces`` (None: any)."""
        mask = self.in_namespaces(namespaces)
        for key, value in match_labels.items():
            mask &= self.labels.equals(key, value, self.rows)
        for req in expressions:
            mask &= self.labels.requirement(req.key, req.operator, req.values, self.rows)
        return mask

    def per_node_counts(
        self,
        pods: npt.NDArray[np.intp] | BoolMask,
        node_label: npt.NDArray[np.int32] | None,
        n_values: int,
        n_nodes: int,
    ) -> tuple[npt.NDArray[np.int64], int]:
        """Per node row, how many of ``pods`` sit in that node's domain; and how many counted.

        ``pods`` is a mask over pod rows or an array of pod rows (repeats count twice);
        ``node_label`` is the node table's id column of the topology key (None: no node has
        the key). Nodes lacking the key get 0, and pods on such nodes count nowhere, as
        upstream records no topology pair for them.
        """
        if node_label is None:
            return np.zeros(n_nodes, dtype=np.int64), 0
        domains = node_label[self.node_row[: self.size][pods]]
        domains = domains[domains >= 0]
        counts = np.zeros(n_values + 1, dtype=np.int64)
        counts[1:] = np.bincount(domains, minlength=n_values)
        per_node: npt.NDArray[np.int64] = counts[node_label[:n_nodes] + 1]
        return per_node, len(domains)
