"""PodTopologySpread (PreFilter, Filter, PreScore, Score): spread matching pods over domains.

Upstream: pkg/scheduler/framework/plugins/podtopologyspread. The vectorised twin of
:mod:`asched.tools.reference.topologyspread` (same constraints, from
:func:`asched.cluster.spread.constraints_for`; same statuses and scores). Counting is
column work: a constraint's matching pods are a mask over the pod columns (its namespace,
not being deleted, its selector; a match-everything selector counts nothing), their number
per node one ``bincount`` of their node rows, and the number per domain one weighted
``bincount`` of those nodes' label ids. Loops run over constraints only.

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
import math
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.labelselector import LabelSelector
from asched.cluster.records import NO_EXECUTE, NO_SCHEDULE, PodInfo
from asched.cluster.spread import (
    DO_NOT_SCHEDULE,
    HONOR,
    HOSTNAME,
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
from asched.framework import selectors
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
_HARD_EFFECTS: Final = frozenset({NO_SCHEDULE, NO_EXECUTE})
_PASS, _SKEW, _MISSING = 0, 1, 2
Int64Array = npt.NDArray[np.int64]
IdArray = npt.NDArray[np.int32]


class _Cluster:
    """One cycle's view of the table for one pod: label ids, pod counts, inclusion masks.

    Every array is over node rows ``[0, table.size)``; per-selector counts and the two
    policy masks are computed once and reused by every constraint.
    """

    def __init__(self, table: NodeTable, pod: PodInfo) -> None:
        self.table = table
        self.pod = pod
        self.size = table.size
        self.live: BoolMask = table.alive[: self.size]
        self._counts: dict[LabelSelector, Int64Array] = {}
        self._affinity: BoolMask | None = None
        self._tolerated: BoolMask | None = None

    def ids(self, key: str) -> tuple[IdArray, int]:
        """The key's label id per row (-1: no such label) and how many values it has."""
        label = self.table.labels.keys.get(key)
        if label is None:
            return np.full(self.size, -1, dtype=np.int32), 0
        return label.column[: self.size], len(label.values)

    def domains(self, key: str) -> tuple[IdArray, int]:
        """Domain ids for Score: the label id, or the id of ``""`` for rows without the key.

        The reference files a node without the key under the value ``""`` (so does
        upstream under the system defaults), sharing the domain of a label set to ``""``.
        """
        label = self.table.labels.keys.get(key)
        if label is None:
            return np.zeros(self.size, dtype=np.int32), 1
        empty = label.ids.get("", len(label.values))
        column = label.column[: self.size]
        domain: IdArray = np.where(column >= 0, column, np.int32(empty)).astype(np.int32)
        return domain, max(len(label.values), empty + 1)

    def has_all(self, constraints: tuple[SpreadConstraint, ...]) -> BoolMask:
        """Live rows carrying every constraint's key."""
        present: BoolMask = self.live.copy()
        for key in {c.topology_key for c in constraints}:
            present &= self.ids(key)[0] >= 0
        return present

    def per_node(self, selector: LabelSelector) -> Int64Array:
        """Pods of the pod's namespace, not being deleted, matching ``selector``, per row."""
        found = self._counts.get(selector)
        if found is not None:
            return found
        if selector.empty or selector.nothing:
            counts: Int64Array = np.zeros(self.size, dtype=np.int64)
        else:
            pods = self.table.pod_columns
            mask = pods.in_namespaces((self.pod.namespace,))
            mask &= ~pods.deleting[: pods.size]
            for req in selector.requirements:
                mask &= pods.labels.requirement(req.key, req.operator, tuple(req.values), pods.rows)
            rows = pods.node_row[: pods.size][mask]
            counts = np.bincount(rows, minlength=self.size).astype(np.int64)
        self._counts[selector] = counts
        return counts

    def included(self, constraint: SpreadConstraint) -> BoolMask:
        """Live rows passing the constraint's node inclusion policies."""
        mask: BoolMask = self.live
        if constraint.node_affinity_policy == HONOR:
            if self._affinity is None:
                rows = self.table.rows
                self._affinity = selectors.selector_mask(
                    self.table, self.pod.node_selector, rows
                ) & selectors.affinity_mask(self.table, self.pod.node_affinity, rows)
            mask = mask & self._affinity
        if constraint.node_taints_policy == HONOR:
            if self._tolerated is None:
                taints = self.table.taints
                untolerated = taints.untolerated(self.pod.tolerations, _HARD_EFFECTS)
                self._tolerated = ~taints.any_of(untolerated, self.table.rows)
            mask = mask & self._tolerated
        return mask


def _weighted_bincount(ids: IdArray, weights: Int64Array, n_ids: int) -> Int64Array:
    """Sum of ``weights`` per id (exact: counts stay far below 2**53)."""
    summed = np.bincount(ids, weights=weights, minlength=n_ids)
    return summed.astype(np.int64)


@dataclass(frozen=True, slots=True)
class KeyDomains:
    """Per value id of one key: matching pods, and whether a counted node has the value."""

    key: str
    values: list[str]
    counts: Int64Array
    counted: BoolMask

    @property
    def n_domains(self) -> int:
        return int(np.count_nonzero(self.counted))

    @property
    def minimum(self) -> int:
        return int(self.counts[self.counted].min()) if self.n_domains else 0


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
        twin of :meth:`_Cluster.per_node` for the constraint counting the row per key."""
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


def _key_domains(
    cluster: _Cluster,
    key: str,
    constraints: tuple[SpreadConstraint, ...],
    included: tuple[BoolMask, ...],
) -> KeyDomains:
    """Counted domains of ``key``; a later constraint on the key overwrites a node's count.

    ``included[i]``: the rows constraint ``i`` counts (``bool[cluster.size]``)."""
    per_node = np.zeros(cluster.size, dtype=np.int64)
    counted = np.zeros(cluster.size, dtype=np.bool_)
    for c, rows in zip(constraints, included, strict=True):
        if c.topology_key != key:
            continue
        per_node = np.where(rows, cluster.per_node(c.selector), per_node)
        counted |= rows
    ids, n_values = cluster.ids(key)
    label = cluster.table.labels.keys.get(key)
    values = [] if label is None else label.values
    in_domain = ids[counted]
    return KeyDomains(
        key,
        values,
        _weighted_bincount(in_domain, per_node[counted], n_values),
        np.bincount(in_domain, minlength=n_values) > 0,
    )


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


@dataclass(frozen=True, slots=True)
class _ScoreSetup:
    constraints: tuple[SpreadConstraint, ...]
    require_all: bool


def _go_round(values: npt.NDArray[np.float64]) -> Int64Array:
    """Go's ``math.Round`` (half away from zero), elementwise, as the reference computes it."""
    whole = np.trunc(values)
    bump = np.abs(values - whole) >= 0.5
    step = np.where(values > 0, 1.0, -1.0)
    rounded: Int64Array = (whole + np.where(bump, step, 0.0)).astype(np.int64)
    return rounded


def _raw_scores(
    setup: _ScoreSetup, cluster: _Cluster, scored: BoolMask
) -> tuple[Int64Array, BoolMask]:
    """Raw scores over all rows and the ignored rows, for the rows taking part ``scored``."""
    constraints = setup.constraints
    has_all = cluster.has_all(constraints)
    if setup.require_all:
        ignored: BoolMask = scored & ~has_all
        eligible = has_all
    else:
        ignored = np.zeros(cluster.size, dtype=np.bool_)
        eligible = cluster.live
    kept = scored & ~ignored
    # Domains seen on the kept rows, per key; the first constraint on a key takes its size.
    seen: dict[str, BoolMask] = {}
    weights: list[float] = []
    for c in constraints:
        if c.topology_key == HOSTNAME:
            weights.append(math.log(int(np.count_nonzero(kept)) + 2))
        elif c.topology_key in seen:
            weights.append(math.log(0 + 2))
        else:
            domain, n_domains = cluster.domains(c.topology_key)
            seen[c.topology_key] = np.bincount(domain[kept], minlength=n_domains) > 0
            weights.append(math.log(int(np.count_nonzero(seen[c.topology_key])) + 2))
    # Matching pods per seen domain, over every eligible node, summed over constraints.
    totals: dict[str, Int64Array] = {}
    for c in constraints:
        if c.topology_key == HOSTNAME:
            continue
        domain, n_domains = cluster.domains(c.topology_key)
        included = eligible & cluster.included(c)
        counts = _weighted_bincount(
            domain[included], cluster.per_node(c.selector)[included], n_domains
        )
        previous = totals.get(c.topology_key)
        totals[c.topology_key] = counts if previous is None else previous + counts
    total = np.zeros(cluster.size, dtype=np.float64)
    for c, weight in zip(constraints, weights, strict=True):
        ids, _ = cluster.ids(c.topology_key)
        if c.topology_key == HOSTNAME:
            count = cluster.per_node(c.selector)
        else:
            domain, _ = cluster.domains(c.topology_key)
            count = np.where(seen[c.topology_key], totals[c.topology_key], 0)[domain]
        term = count * weight + float(c.max_skew - 1)
        np.add(total, term, out=total, where=ids >= 0)
    raw = _go_round(total)
    raw[ignored] = 0
    return raw, ignored


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
        cluster = _Cluster(table, pod)
        has_all = cluster.has_all(constraints)
        included = tuple(has_all & cluster.included(c) for c in constraints)
        domains = {
            key: _key_domains(cluster, key, constraints, included)
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
        state.write(_SCORE_KEY, _ScoreSetup(constraints, requires_all_keys(pod, self._args)))
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> ScoreArray:
        """Raw scores; the rows taking part are :data:`SCORED_ROWS` (default: every live row)."""
        setup: _ScoreSetup | None = state.get(_SCORE_KEY)
        if setup is None and self.pre_score(state, pod, table).ok:  # PreScore not enabled
            setup = state.get(_SCORE_KEY)
        size = table.size
        if setup is None:
            state.write(_IGNORED_KEY, np.zeros(size, dtype=np.bool_))
            return np.zeros(size, dtype=np.int64)[rows]
        cluster = _Cluster(table, pod)
        taking_part: BoolMask | None = state.get(SCORED_ROWS)
        scored = cluster.live if taking_part is None else taking_part[:size] & cluster.live
        raw, ignored = _raw_scores(setup, cluster, scored)
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
