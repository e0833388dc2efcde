"""InterPodAffinity (PreFilter, Filter, PreScore, Score): pods attract and repel pods.

Upstream: pkg/scheduler/framework/plugins/interpodaffinity. Counted per topology domain
with vectorised passes over the pod columns: a term's matching pods are a column mask,
their domains the node label ids of their nodes, and the count per domain one
``bincount``. Existing pods' terms are looked up per distinct term (a Deployment's
replicas share one), never per pod.

Not row-local: a pod placed anywhere in a domain changes every node of that domain, so
the runtime computes this plugin afresh each cycle (PreFilter/PreScore do the counting;
Filter/Score gather per node).

PreFilter keeps its counts per domain (:class:`_State`), not only the masks, so that its
PreFilterExtensions hooks follow one pod added to or removed from a row (preemption's
exact search runs PreFilter once per preemptor): the pod changes the counts of its own
row's domains only, and the masks follow from the counts.

Filter, in order: the pod's required affinity (UnschedulableAndUnresolvable), its
required anti-affinity (Unschedulable), existing pods' required anti-affinity matching
it (Unschedulable). Score: preferred terms of the pod and of existing pods, existing
pods' required affinity times hardPodAffinityWeight; min-max normalized; weight 2.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.affinity import AffinityTerm
from asched.cluster.columns import Rows, size_of
from asched.cluster.pods import PREFERRED, REQUIRED_AFFINITY, REQUIRED_ANTI
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.args import IN_TREE_ARGS
from asched.config.types import InterPodAffinityArgs
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.interface import (
    MAX_SCORE,
    PRE_FILTER_SKIP,
    PRE_FILTER_SUCCESS,
    BoolMask,
    FollowsPods,
    Handle,
    PreFilterResult,
    ScoreArray,
)
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "InterPodAffinity"
REASON_AFFINITY: Final = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY: Final = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY: Final = "node(s) didn't satisfy existing pods anti-affinity rules"
_FILTER_KEY: Final = f"{NAME}/prefilter"
_SCORE_KEY: Final = f"{NAME}/prescore"
Int64Array = npt.NDArray[np.int64]


def _namespaces(term: AffinityTerm, table: NodeTable) -> Collection[str] | None:
    """The incoming pod's term's namespaces, its selector resolved (None: every namespace)."""
    selector = term.namespace_selector
    if selector is None:
        return term.namespaces
    if selector.empty:
        return None
    selected = {n for n, labels in table.namespace_labels.items() if selector.matches(labels)}
    return (term.namespaces or frozenset()) | selected


def _matching_pods(term: AffinityTerm, table: NodeTable) -> BoolMask:
    pods = table.pod_columns
    if term.selector.nothing:
        return np.zeros(pods.size, dtype=np.bool_)
    return pods.matching({}, term.selector.column_requirements, _namespaces(term, table))


def _matches_itself(term: AffinityTerm, pod: PodInfo, table: NodeTable) -> bool:
    namespaces = _namespaces(term, table)
    in_namespace = namespaces is None or pod.namespace in namespaces
    return in_namespace and term.selector.matches(pod.labels)


def _per_node(
    table: NodeTable, key: str, pod_rows: npt.NDArray[np.intp] | BoolMask
) -> tuple[Int64Array, int]:
    """Matching pods counted per node row through its domain of ``key``; and their total."""
    label = table.labels.keys.get(key)
    column = None if label is None else label.column
    n_values = 0 if label is None else len(label.values)
    return table.pod_columns.per_node_counts(pod_rows, column, n_values, table.size)


def _label_ids(table: NodeTable, key: str, rows: Rows) -> npt.NDArray[np.intp]:
    """Per selected row, its label id of ``key`` plus one (0: the node lacks the key), the
    index into a :func:`_domain_counts` array."""
    label = table.labels.keys.get(key)
    if label is None:
        return np.zeros(size_of(rows), dtype=np.intp)
    ids: npt.NDArray[np.intp] = label.column[rows].astype(np.intp) + 1
    return ids


def _domain_counts(
    table: NodeTable, key: str, pod_rows: npt.NDArray[np.intp] | BoolMask
) -> tuple[Int64Array, int]:
    """Matching pods per domain of ``key``: ``int64[n_values + 1]``, slot ``id + 1`` for
    label id ``id`` and slot 0 (nodes lacking the key) always 0, as upstream records no
    topology pair there; and how many pods were counted."""
    label = table.labels.keys.get(key)
    if label is None:
        return np.zeros(1, dtype=np.int64), 0
    pods = table.pod_columns
    domains = label.column[pods.node_row[: pods.size][pod_rows]]
    domains = domains[domains >= 0]
    counts = np.zeros(len(label.values) + 1, dtype=np.int64)
    counts[1:] = np.bincount(domains, minlength=len(label.values))
    return counts, len(domains)


def _slot(table: NodeTable, key: str, row: int) -> int:
    """``row``'s slot in a :func:`_domain_counts` array of ``key`` (0: it lacks the key)."""
    label = table.labels.keys.get(key)
    return 0 if label is None else int(label.column[row]) + 1


@dataclass(slots=True)
class _Checks:
    """Per selected row (each mask ``bool[n_selected]``), which of the three filter checks
    fails."""

    affinity_fails: BoolMask
    anti_fails: BoolMask
    existing_fails: BoolMask
    passes: BoolMask = field(init=False)

    def __post_init__(self) -> None:
        self.passes = ~(self.affinity_fails | self.anti_fails | self.existing_fails)


@dataclass(slots=True)
class _State:
    """PreFilter's counts per topology domain, from which the checks follow.

    * ``affinity[i]``: pods matching all the pod's required affinity terms, per domain of
      term ``i``'s key (a :func:`_domain_counts` array, ``int64[n_values + 1]``, slot 0
      the nodes lacking the key, always 0); :attr:`affinity_counted`, their sum over the
      terms (upstream's "any counted"), with ``self_match`` (the pod matches its own
      terms) decides the first pod of a group.
    * ``anti[j]``: pods matching the pod's required anti-affinity term ``j``, per domain.
    * ``existing[key]``: existing pods' required anti-affinity terms matching the pod, per
      domain of their ``key`` (a term twice counts twice); :attr:`existing_counted` in all.

    :meth:`checks` gives the masks; the full one is kept until a hook changes a count.
    A pod added or removed changes the counts of its own row's domains only.
    """

    required: tuple[AffinityTerm, ...]
    required_anti: tuple[AffinityTerm, ...]
    self_match: bool
    affinity: list[Int64Array]
    anti: list[Int64Array]
    existing: dict[str, Int64Array]
    full: _Checks | None = None

    def clone(self) -> _State:
        return _State(
            self.required,
            self.required_anti,
            self.self_match,
            [c.copy() for c in self.affinity],
            [c.copy() for c in self.anti],
            {key: c.copy() for key, c in self.existing.items()},
            self.full,
        )

    @property
    def affinity_counted(self) -> int:
        """Pods counted for the required affinity terms, summed over the terms."""
        return sum(int(counts.sum()) for counts in self.affinity)

    @property
    def existing_counted(self) -> int:
        """Existing pods' anti-affinity terms counted against the pod."""
        return sum(int(counts.sum()) for counts in self.existing.values())

    @property
    def active(self) -> bool:
        """Whether the Filter runs (PreFilter's Skip otherwise)."""
        return bool(self.existing_counted or self.required or self.required_anti)

    def checks(self, table: NodeTable, rows: Rows) -> _Checks:
        """The three checks on the selected rows (``table.rows``: kept)."""
        if self.full is not None:
            if isinstance(rows, slice) and rows == table.rows:
                return self.full
            return _Checks(
                self.full.affinity_fails[rows],
                self.full.anti_fails[rows],
                self.full.existing_fails[rows],
            )
        n = size_of(rows)
        existing_fails = np.zeros(n, dtype=np.bool_)
        for key, counts in self.existing.items():
            existing_fails |= counts[_label_ids(table, key, rows)] > 0
        affinity_fails = np.zeros(n, dtype=np.bool_)
        if self.required:
            missing_key = np.zeros(n, dtype=np.bool_)
            lacking_pods = np.zeros(n, dtype=np.bool_)
            for term, counts in zip(self.required, self.affinity, strict=True):
                ids = _label_ids(table, term.topology_key, rows)
                missing_key |= ids == 0
                lacking_pods |= counts[ids] <= 0
            first_of_group = not self.affinity_counted and self.self_match
            affinity_fails = missing_key | (lacking_pods & (not first_of_group))
        anti_fails = np.zeros(n, dtype=np.bool_)
        for term, counts in zip(self.required_anti, self.anti, strict=True):
            anti_fails |= counts[_label_ids(table, term.topology_key, rows)] > 0
        found = _Checks(affinity_fails, anti_fails, existing_fails)
        if isinstance(rows, slice) and rows == table.rows:
            self.full = found
        return found

    def count(self, pod: PodInfo, table: NodeTable, other: PodInfo, row: int, sign: int) -> None:
        """``other`` added on ``row`` (``sign`` +1) or removed from it (-1)."""
        if self.required and all(_term_selects(t, other, table) for t in self.required):
            for term, counts in zip(self.required, self.affinity, strict=True):
                slot = _slot(table, term.topology_key, row)
                if slot:
                    counts[slot] += sign
                    self.full = None
        for term, counts in zip(self.required_anti, self.anti, strict=True):
            slot = _slot(table, term.topology_key, row)
            if slot and _term_selects(term, other, table):
                counts[slot] += sign
                self.full = None
        terms = other.affinity.required_anti if other.affinity is not None else ()
        if terms:
            own_ns = table.namespace_labels.get(pod.namespace, {})
            for term in terms:
                if not term.matches(pod.labels, pod.namespace, own_ns):
                    continue
                label = table.labels.keys.get(term.topology_key)
                if label is None or label.column[row] < 0:
                    continue
                if term.topology_key not in self.existing:
                    self.existing[term.topology_key] = np.zeros(
                        len(label.values) + 1, dtype=np.int64
                    )
                self.existing[term.topology_key][int(label.column[row]) + 1] += sign
                self.full = None


def _term_selects(term: AffinityTerm, other: PodInfo, table: NodeTable) -> bool:
    """Does the pod's own ``term`` select ``other`` (the scalar :func:`_matching_pods`)?"""
    if term.selector.nothing:
        return False
    return _matches_itself(term, other, table)


class InterPodAffinity(FollowsPods):
    name: Final = NAME
    #: the cluster events that may undo its rejection (upstream's EventsToRegister)
    events: Final = frozenset(
        {
            ClusterEvent.ASSIGNED_POD_ADD,
            ClusterEvent.ASSIGNED_POD_DELETE,
            ClusterEvent.NODE_ADD,
            ClusterEvent.NODE_LABEL,
        }
    )
    row_local: Final = False
    normalizes: Final = True

    def __init__(self, args: InterPodAffinityArgs) -> None:
        self._hard_weight = args.hard_pod_affinity_weight
        self._ignore_existing_preferred = args.ignore_preferred_terms_of_existing_pods

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): without terms of its own, the pod is matched against
        the terms of pods that have some (a plain pod has none), in the namespaces' labels, on the
        nodes' labels; its own terms count every pod they match."""
        return pod.affinity is not None and not pod.affinity.empty

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        if pod.affinity is not None and pod.affinity.errors:
            reason = f"parsing pod: {pod.affinity.error_message}"
            return PreFilterResult(Status.unresolvable(reason, plugin=NAME))
        own_ns = table.namespace_labels.get(pod.namespace, {})
        existing: dict[str, Int64Array] = {}  # only keys with a counted term
        for term, _ in table.pod_columns.term_groups[REQUIRED_ANTI]:
            if not term.matches(pod.labels, pod.namespace, own_ns):
                continue
            rows = table.pod_columns.group_rows(REQUIRED_ANTI, term, 0)
            counts, counted = _domain_counts(table, term.topology_key, rows)
            if not counted:
                continue
            previous = existing.get(term.topology_key)
            existing[term.topology_key] = counts if previous is None else previous + counts
        affinity = pod.affinity
        required = affinity.required if affinity is not None else ()
        required_anti = affinity.required_anti if affinity is not None else ()
        if not existing and not required and not required_anti:
            return PRE_FILTER_SKIP
        per_term: list[Int64Array] = []
        if required:
            match_all = np.ones(table.pod_columns.size, dtype=np.bool_)
            for term in required:
                match_all &= _matching_pods(term, table)
            per_term = [_domain_counts(table, term.topology_key, match_all)[0] for term in required]
        anti = [
            _domain_counts(table, term.topology_key, _matching_pods(term, table))[0]
            for term in required_anti
        ]
        found = _State(
            required,
            required_anti,
            all(_matches_itself(t, pod, table) for t in required),
            per_term,
            anti,
            existing,
        )
        found.checks(table, table.rows)
        state.write(_FILTER_KEY, found)
        return PRE_FILTER_SUCCESS

    def follow_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, other: PodInfo, row: int, sign: int
    ) -> Status:
        """The PreFilterExtensions hooks (:class:`FollowsPods`): the counts of ``row``'s
        domains follow ``other``; Skip as PreFilter would (a skipped PreFilter stored
        nothing: the pod has no required terms and no existing pod's anti-affinity matched
        it, so the counts start empty)."""
        found: _State | None = state.get(_FILTER_KEY)
        if found is None:
            if other.affinity is None or not other.affinity.required_anti:
                return Status.skip()  # only an existing pod's anti-affinity ends the Skip
            found = _State(
                required=(),
                required_anti=(),
                self_match=True,
                affinity=[],
                anti=[],
                existing={},
            )
            state.write(_FILTER_KEY, found)
        found.count(pod, table, other, row, sign)
        return Status.success() if found.active else Status.skip()

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        found: _State = state.read(_FILTER_KEY)
        return found.checks(table, rows).passes

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        found: _State = state.read(_FILTER_KEY)
        checks = found.checks(table, np.array([row], dtype=np.intp))
        if checks.affinity_fails[0]:
            return Status.unresolvable(REASON_AFFINITY, plugin=NAME)
        if checks.anti_fails[0]:
            return Status.unschedulable(REASON_ANTI_AFFINITY, plugin=NAME)
        if checks.existing_fails[0]:
            return Status.unschedulable(REASON_EXISTING_ANTI_AFFINITY, plugin=NAME)
        return Status.success()

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Status:
        affinity = pod.affinity
        has_preferred = affinity is not None and bool(affinity.preferred or affinity.preferred_anti)
        if self._ignore_existing_preferred and not has_preferred:
            return Status.skip()
        if affinity is not None and affinity.errors:
            return Status.error(f"failed to parse pod: {affinity.error_message}", plugin=NAME)
        own_ns = table.namespace_labels.get(pod.namespace, {})
        raw = np.zeros(table.size, dtype=np.int64)
        contributed = False
        if affinity is not None:
            weighted = [(w.term, w.weight) for w in affinity.preferred]
            weighted += [(w.term, -w.weight) for w in affinity.preferred_anti]
            for term, weight in weighted:
                per_node, counted = _per_node(table, term.topology_key, _matching_pods(term, table))
                raw += weight * per_node
                contributed |= counted > 0
        pods = table.pod_columns
        existing: list[tuple[str, AffinityTerm, int, int]] = []
        if self._hard_weight > 0:
            existing += [
                (REQUIRED_AFFINITY, t, w, self._hard_weight)
                for t, w in pods.term_groups[REQUIRED_AFFINITY]
            ]
        if not self._ignore_existing_preferred:
            existing += [(PREFERRED, t, w, w) for t, w in pods.term_groups[PREFERRED]]
        for kind, term, group_weight, weight in existing:
            if not term.matches(pod.labels, pod.namespace, own_ns):
                continue
            per_node, counted = _per_node(
                table, term.topology_key, pods.group_rows(kind, term, group_weight)
            )
            raw += weight * per_node
            contributed |= counted > 0
        if not contributed:
            return Status.skip()
        state.write(_SCORE_KEY, raw)
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> ScoreArray:
        raw: ScoreArray = state.read(_SCORE_KEY)[rows]
        return raw

    def normalize(self, state: CycleState, scores: ScoreArray, taking_part: BoolMask) -> ScoreArray:
        if not taking_part.any():
            return scores
        low = int(scores.min(where=taking_part, initial=np.iinfo(np.int64).max))
        high = int(scores.max(where=taking_part, initial=np.iinfo(np.int64).min))
        if high <= low:
            return np.zeros_like(scores)
        scaled: ScoreArray = (MAX_SCORE * ((scores - low) / (high - low))).astype(np.int64)
        return np.where(taking_part, scaled, 0)


def factory(args: object | None, handle: Handle | None) -> InterPodAffinity:
    return InterPodAffinity(
        args if isinstance(args, InterPodAffinityArgs) else InterPodAffinityArgs()
    )


SPEC: Final = declare(
    InterPodAffinity, api_version=API_VERSION, factory=factory, args=IN_TREE_ARGS[NAME]
)
