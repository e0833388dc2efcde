"""PodTopologySpread (PreFilter, Filter, PreScore, Score): spread matching pods over domains.

Upstream: pkg/scheduler/framework/plugins/podtopologyspread. The vectorised twin of
:mod:`asched.tools.reference.topologyspread` (same constraints, from
:func:`asched.cluster.spread.constraints_for`; same statuses and scores). Counting is
column work: a constraint's matching pods are a mask over the pod columns (its namespace,
not being deleted, its selector; a match-everything selector counts nothing), their number
per node one ``bincount`` of their node rows, and the number per domain one weighted
``bincount`` of those nodes' label ids. Loops run over constraints only. The counting is
in :mod:`~asched.framework.builtin.pod_topology_spread.counting`, Score's arithmetic in
:mod:`~asched.framework.builtin.pod_topology_spread.scoring`; this module holds the plugin
and PreFilter's state.

Not row-local: a pod placed anywhere in a domain changes every node of the domain, so
the runtime computes this plugin afresh each cycle. PreFilter keeps the counts per domain
(:class:`_FilterState`), which its PreFilterExtensions hooks update for one pod added to
or removed from a row (preemption's exact search); the codes and the minimum follow.

Filter. Counted nodes carry every constraint's key and pass the constraint's inclusion
policies (nodeAffinityPolicy Honor: the pod's nodeSelector and required node affinity;
nodeTaintsPolicy Honor: its NoSchedule/NoExecute taints tolerated). Per key, a node's
count is that of the *last* constraint on the key including it (upstream's per-node map).
Per constraint, in order, the first failure decides: a node without the key is
UnschedulableAndUnresolvable; ``matching + self - minimum > maxSkew`` Unschedulable,
with ``minimum`` the smallest counted domain (0 while fewer than minDomains domains).

Score depends on the feasible nodes (upstream's PreScore receives them): PreScore only
decodes, Score reads the rows taking part from :data:`SCORED_ROWS` and does the rest.
Weights ``ln(size + 2)`` are Python floats and the sums run per constraint in the
reference's order, so raw scores equal the reference's bit for bit.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.spread import (
    DO_NOT_SCHEDULE,
    REASON_MISSING_LABEL,
    REASON_SKEW,
    SCHEDULE_ANYWAY,
    SpreadConstraint,
    constraints_for,
    hard_constraints_error,
    requires_all_keys,
    soft_constraints_error,
)
from asched.cluster.table import NodeTable
from asched.config.args import IN_TREE_ARGS
from asched.config.types import PodTopologySpreadArgs
from asched.errors import DecodeError
from asched.framework.builtin.pod_topology_spread.counting import Cluster, KeyDomains, key_domains
from asched.framework.builtin.pod_topology_spread.scoring import ScoreSetup, raw_scores
from asched.framework.cycle_state import SCORED_ROWS, CycleState
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

NAME: Final = "PodTopologySpread"
_FILTER_KEY: Final = f"{NAME}/prefilter"
_SCORE_KEY: Final = f"{NAME}/prescore"
_IGNORED_KEY: Final = f"{NAME}/ignored"
_PASS, _SKEW, _MISSING = 0, 1, 2


@dataclass(slots=True)
class _FilterState:
    """PreFilter's counts per domain, from which the Filter's codes follow.

    ``included[i]`` (``bool[table.size]``): the rows constraint ``i`` counts (every key
    present, its inclusion policies passed), fixed for the cycle; ``domains``: per key,
    the matching pods per value id (``KeyDomains.counts``, ``int64[n_values]``; a node
    counts through the last constraint on the key including it); ``code``
    (``int8[table.size]``), the Filter's answer per row. A pod added or removed changes
    the count of its row's domain of each key (and so, maybe, the minimum); :meth:`codes`
    recomputes from the counts, the full array kept until a hook changes a count.
    """

    constraints: tuple[SpreadConstraint, ...]
    domains: dict[str, KeyDomains]
    included: tuple[BoolMask, ...]
    code: npt.NDArray[np.int8] | None  # per row: _PASS, _SKEW or _MISSING; None: stale

    def clone(self) -> _FilterState:
        domains = {
            key: KeyDomains(d.key, d.values, d.counts.copy(), d.counted)
            for key, d in self.domains.items()
        }
        return _FilterState(self.constraints, domains, self.included, self.code)

    def codes(self, pod: PodInfo, table: NodeTable, rows: Rows) -> npt.NDArray[np.int8]:
        """Per selected row, the first failing constraint's code (``table.rows``: kept)."""
        everything = isinstance(rows, slice) and rows == table.rows
        if self.code is not None:
            kept: npt.NDArray[np.int8] = self.code if everything else self.code[rows]
            return kept
        code = np.zeros(size_of(rows), dtype=np.int8)
        for c in self.constraints:
            label = table.labels.keys.get(c.topology_key)
            if label is None:
                ids = np.full(size_of(rows), -1, dtype=np.intp)
            else:
                ids = label.column[rows].astype(np.intp)
            undecided = code == _PASS
            code[undecided & (ids < 0)] = _MISSING
            found = self.domains[c.topology_key]
            n_domains = found.n_domains
            if not n_domains:
                continue  # no counted domain for this key: upstream skips the constraint
            minimum = found.minimum if n_domains >= c.min_domains else 0
            self_match = 1 if c.selector.matches(pod.labels) else 0
            matching = np.zeros(len(found.counts) + 1, dtype=np.int64)
            matching[1:] = np.where(found.counted, found.counts, 0)
            skewed = matching[ids + 1] + self_match - minimum > c.max_skew
            code[undecided & (ids >= 0) & skewed] = _SKEW
        if everything:
            self.code = code
        return code

    def count(self, pod: PodInfo, table: NodeTable, other: PodInfo, row: int, sign: int) -> None:
        """``other`` added on ``row`` (``sign`` +1) or removed from it (-1): the scalar
        twin of :meth:`Cluster.per_node` for the constraint counting the row per key."""
        if other.namespace != pod.namespace or other.deleting:
            return
        for key, found in self.domains.items():
            counting = None
            for c, included in zip(
                reversed(self.constraints), reversed(self.included), strict=True
            ):
                if c.topology_key == key and included[row]:
                    counting = c
                    break
            if counting is None:
                continue
            selector = counting.selector
            if selector.empty or selector.nothing or not selector.matches(other.labels):
                continue
            label = table.labels.keys[key]  # a counted row has every key
            found.counts[int(label.column[row])] += sign
            self.code = None


def pair_counts(state: CycleState) -> dict[tuple[str, str], int]:
    """The PreFilter's counted domains as the reference shows them (tests, diagnostics).

    Empty when the PreFilter did not succeed for the cycle.
    """
    found: _FilterState | None = state.get(_FILTER_KEY)
    if found is None:
        return {}
    return {
        (d.key, d.values[i]): int(d.counts[i])
        for d in found.domains.values()
        for i in np.flatnonzero(d.counted)
    }


def domain_summary(state: CycleState) -> dict[str, tuple[int, int]]:
    """Per key with a counted domain: how many domains, and the global minimum the Filter
    uses (tests, diagnostics). Empty when the PreFilter did not succeed for the cycle."""
    found: _FilterState | None = state.get(_FILTER_KEY)
    if found is None:
        return {}
    return {d.key: (d.n_domains, d.minimum) for d in found.domains.values() if d.n_domains}


class PodTopologySpread(FollowsPods):
    name: Final = NAME
    #: the cluster events that may undo its rejection (upstream's EventsToRegister)
    events: Final = frozenset(
        {
            ClusterEvent.ASSIGNED_POD_ADD,
            ClusterEvent.ASSIGNED_POD_DELETE,
            ClusterEvent.NODE_ADD,
            ClusterEvent.NODE_LABEL,
            ClusterEvent.NODE_TAINT,
        }
    )
    row_local: Final = False
    normalizes: Final = True

    def __init__(self, args: PodTopologySpreadArgs) -> None:
        self._args = args

    def _constraints(
        self, pod: PodInfo, table: NodeTable, action: str
    ) -> tuple[SpreadConstraint, ...]:
        defaults = functools.partial(table.workloads.default_selector, pod)
        return constraints_for(pod, action, self._args, defaults)

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): a pod without constraints of either kind (its own, or
        the defaults the workloads give it) is skipped by both whatever the pods; constraints count
        the pods they select."""
        return NAME not in state.skip_filter or NAME not in state.skip_score

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        try:
            constraints = self._constraints(pod, table, DO_NOT_SCHEDULE)
        except DecodeError as exc:
            return PreFilterResult(Status.error(hard_constraints_error(pod, exc), plugin=NAME))
        if not constraints:
            return PRE_FILTER_SKIP
        cluster = Cluster(table, pod)
        has_all = cluster.has_all(constraints)
        included = tuple(has_all & cluster.included(c) for c in constraints)
        domains = {
            key: key_domains(cluster, key, constraints, included)
            for key in dict.fromkeys(c.topology_key for c in constraints)
        }
        found = _FilterState(constraints, domains, included, None)
        found.codes(pod, table, table.rows)
        state.write(_FILTER_KEY, found)
        return PRE_FILTER_SUCCESS

    def follow_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, other: PodInfo, row: int, sign: int
    ) -> Status:
        """The PreFilterExtensions hooks (:class:`FollowsPods`): whether PreFilter skips
        depends on the pod alone (its hard constraints); otherwise a pod added or removed
        changes one count per key."""
        found: _FilterState | None = state.get(_FILTER_KEY)
        if found is None:  # PreFilter skipped: the pod has no hard constraint
            return Status.skip()
        found.count(pod, table, other, row, sign)
        return Status.success()

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        found: _FilterState = state.read(_FILTER_KEY)
        passes: BoolMask = found.codes(pod, table, rows) == _PASS
        return passes

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        found: _FilterState = state.read(_FILTER_KEY)
        code = int(found.codes(pod, table, np.array([row], dtype=np.intp))[0])
        if code == _MISSING:
            return Status.unresolvable(REASON_MISSING_LABEL, plugin=NAME)
        if code == _SKEW:
            return Status.unschedulable(REASON_SKEW, plugin=NAME)
        return Status.success()

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Status:
        try:
            constraints = self._constraints(pod, table, SCHEDULE_ANYWAY)
        except DecodeError as exc:
            return Status.error(soft_constraints_error(exc), plugin=NAME)
        if not constraints:
            return Status.skip()
        state.write(_SCORE_KEY, ScoreSetup(constraints, requires_all_keys(pod, self._args)))
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> ScoreArray:
        """Raw scores; the rows taking part are :data:`SCORED_ROWS` (default: every live row)."""
        setup: ScoreSetup | None = state.get(_SCORE_KEY)
        if setup is None and self.pre_score(state, pod, table).ok:  # PreScore not enabled
            setup = state.get(_SCORE_KEY)
        size = table.size
        if setup is None:
            state.write(_IGNORED_KEY, np.zeros(size, dtype=np.bool_))
            return np.zeros(size, dtype=np.int64)[rows]
        cluster = Cluster(table, pod)
        taking_part: BoolMask | None = state.get(SCORED_ROWS)
        scored = cluster.live if taking_part is None else taking_part[:size] & cluster.live
        raw, ignored = raw_scores(setup, cluster, scored)
        state.write(_IGNORED_KEY, ignored)
        selected: ScoreArray = raw[rows]
        return selected

    def normalize(self, state: CycleState, scores: ScoreArray, taking_part: BoolMask) -> ScoreArray:
        """``100 * (max + min - s) // max`` over the rows not ignored; ignored rows get 0."""
        ignored: BoolMask | None = state.get(_IGNORED_KEY)
        if ignored is None or len(ignored) != len(scores):
            ignored = np.zeros(len(scores), dtype=np.bool_)
        valid = taking_part & ~ignored
        if valid.any():
            lowest = int(scores.min(where=valid, initial=np.iinfo(np.int64).max))
            highest = max(0, int(scores.max(where=valid, initial=0)))
        else:
            lowest = highest = 0
        if highest == 0:
            out = np.full(len(scores), MAX_SCORE, dtype=np.int64)
        else:
            numerator = MAX_SCORE * (highest + lowest - scores)
            quotient = np.abs(numerator) // highest  # Go's division truncates toward zero
            out = np.where(numerator >= 0, quotient, -quotient)
        normalized: ScoreArray = np.where(taking_part & ~ignored, out, 0)
        return normalized


def factory(args: object | None, handle: Handle | None) -> PodTopologySpread:
    return PodTopologySpread(
        args if isinstance(args, PodTopologySpreadArgs) else PodTopologySpreadArgs()
    )


SPEC: Final = declare(
    PodTopologySpread, api_version=API_VERSION, factory=factory, args=IN_TREE_ARGS[NAME]
)
