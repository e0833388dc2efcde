"""Recording the live scheduler's decisions, at the moment they are made, for the debug pages.

The cycle calls :meth:`Recorder.chosen` once it has chosen a node (before the pod is
assumed: the table is still the one the decision read), and :meth:`Recorder.failed`
once a failed attempt's message is known. Both run synchronously in the cycle, between
the decision and the next ``await``, so what they copy is what the cycle saw:

* the rows examined: all of them, or (sampling, upstream's percentageOfNodesToScore)
  the ``examined`` nodes from the sampler's start index in node order; the others are
  recorded as not examined, which is what the cycle did (it never looked for more);
* each rejected node's first rejecting plugin and reasons, from
  :meth:`~asched.engine.algorithm.Decision.failures` (the cold path the FitError
  message reads; a failed attempt has computed it already);
* each score plugin's normalized scores on the candidates: the row-local plugins' raw
  scores come from the pod class's cache entry the decision read, normalized again over
  the same candidates, and the cross-row plugins run again, with the same state on the
  same table (nothing can have changed in between), so they equal what
  :meth:`~asched.engine.algorithm.Algorithm.totals` summed; the recorder checks the
  chosen node has the best recorded total and logs once if not;
* the extenders' filter answers and scores when they took part.

Costs: nothing when the debug listener is off (the scheduler then has no recorder: its
hooks are ``if self.recorder is not None``). When on, a record of a decision over ``n``
nodes with ``k`` candidates and ``p`` score plugins owns ``n`` bytes of verdicts, ``2n``
of reason indices and about ``(p + 12) k`` of scores and totals, and shares the node
names with the other records taken while the node set was the same (measured figures:
docs/debugging.md). The ring keeps the last ``capacity`` records.

Nothing here may stop the cycle: a bug in recording is logged once (then at DEBUG),
counted in :attr:`Recorder.dropped`, and the record is dropped.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from asched.cluster.table import NodeTable
from asched.debug.record import FEASIBLE, REJECTED, SCORED, DecisionRecord
from asched.engine.algorithm import Algorithm, Decision
from asched.engine.result import Preemption, Victim
from asched.extenders.consult import Consulted
from asched.extenders.extender import EXTENDER_NAME
from asched.framework.interface import PostFilterResult
from asched.framework.status import Code, Status
from asched.queue.queued import QueuedPod

logger = logging.getLogger(__name__)

#: Decisions kept by default (``--debug-decisions``).
DEFAULT_DECISIONS: Final = 100
#: Pods whose last reported reason is remembered (the oldest is forgotten first).
MAX_REASONS: Final = 10_000
#: The reason recorded for a node an extender left out of its answer without naming it
#: (the same words as ``asched explain``'s).
DROPPED_REASON: Final = "left out of the extender's answer without a reason"


@dataclass(slots=True)
class _Order:
    """The live nodes' names in node order and each row's position, for one node set."""

    order: npt.NDArray[np.intp]
    size: int
    names: tuple[str, ...]
    #: ``int32[table.size]``: row -> position in ``names`` (-1: not a live row)
    position: npt.NDArray[np.int32]


class Recorder:
    """The ring of the last ``capacity`` decisions, and the pods' last reported reasons."""

    def __init__(
        self,
        capacity: int = DEFAULT_DECISIONS,
        *,
        clock: Callable[[], float] = time.time,
        max_reasons: int = MAX_REASONS,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity: expected at least 1 decision, got {capacity}")
        self.capacity = capacity
        self._clock = clock
        self._ring: deque[DecisionRecord] = deque(maxlen=capacity)
        #: pod key -> its newest record still in the ring
        self._latest: dict[str, DecisionRecord] = {}
        self._seq = itertools.count(1)
        self._order: _Order | None = None
        self._reasons: OrderedDict[str, str] = OrderedDict()
        self._max_reasons = max_reasons
        self._warned = False
        #: records dropped because recording failed (a bug)
        self.dropped = 0

    def chosen(
        self,
        qp: QueuedPod,
        algorithm: Algorithm,
        decision: Decision,
        mask: npt.NDArray[np.bool_],
        consulted: Consulted | None = None,
    ) -> None:
        """Record a decision that chose ``decision.node`` among ``mask`` (``bool[size]``).

        Call it right after the choice, before the pod is assumed. Never raises."""
        try:
            record = self._chosen(qp, algorithm, decision, mask, consulted)
        except Exception as exc:
            self._failed_to_record(qp.key, exc)
            return
        self._keep(record)

    def failed(
        self,
        qp: QueuedPod,
        algorithm: Algorithm | None,
        decision: Decision,
        message: str,
        post_filter: PostFilterResult | None = None,
    ) -> None:
        """Record a failed attempt: every node's rejection and the FailedScheduling
        ``message`` (with PostFilter's part); ``post_filter``: what preemption decided.
        Never raises."""
        try:
            record = self._failed(qp, algorithm, decision, message, post_filter)
        except Exception as exc:
            self._failed_to_record(qp.key, exc)
            return
        self._keep(record)

    def outcome(self, key: str, text: str) -> None:
        """What became of the pod after its newest recorded decision."""
        record = self._latest.get(key)
        if record is not None:
            record.outcome = text

    def reason(self, key: str, message: str) -> None:
        """The FailedScheduling message just reported for the pod."""
        self._reasons[key] = message
        self._reasons.move_to_end(key)
        while len(self._reasons) > self._max_reasons:
            self._reasons.popitem(last=False)

    def forget_reason(self, key: str) -> None:
        """The pod left the queue (bound): it has no pending reason any more."""
        self._reasons.pop(key, None)

    def records(self) -> list[DecisionRecord]:
        """The kept records, newest first."""
        return list(reversed(self._ring))

    def get(self, seq: int) -> DecisionRecord | None:
        """The record numbered ``seq``, if still kept."""
        return next((r for r in self._ring if r.seq == seq), None)

    def latest(self, key: str) -> DecisionRecord | None:
        """The pod's newest kept record."""
        return self._latest.get(key)

    def last_reason(self, key: str) -> str | None:
        """The last FailedScheduling message reported for the pod, if remembered."""
        return self._reasons.get(key)

    def __len__(self) -> int:
        return len(self._ring)

    def __iter__(self) -> Iterator[DecisionRecord]:
        return iter(self.records())

    def _keep(self, record: DecisionRecord) -> None:
        if len(self._ring) == self.capacity:
            oldest = self._ring[0]
            if self._latest.get(oldest.pod) is oldest:
                del self._latest[oldest.pod]
        self._ring.append(record)
        self._latest[record.pod] = record

    def _failed_to_record(self, key: str, exc: Exception) -> None:
        self.dropped += 1
        if not self._warned:
            self._warned = True
            logger.error("recording the decision for %s failed: dropped", key, exc_info=exc)
        else:
            logger.debug("recording the decision for %s failed: %r", key, exc)

    def _positions(self, table: NodeTable) -> _Order:
        """The node order's names and positions, rebuilt only when the order changed."""
        order = table.order()
        cached = self._order
        if cached is not None and cached.order is order and cached.size == table.size:
            return cached
        names = tuple(str(table.names[row]) for row in order.tolist())
        position = np.full(table.size, -1, dtype=np.int32)
        position[order] = np.arange(len(order), dtype=np.int32)
        self._order = _Order(order, table.size, names, position)
        return self._order

    def _record(
        self, qp: QueuedPod, profile: str, order: _Order | None, weights: Mapping[str, int]
    ) -> DecisionRecord:
        n = 0 if order is None else len(order.names)
        return DecisionRecord(
            seq=next(self._seq),
            pod=qp.key,
            uid=qp.pod.uid,
            profile=profile,
            attempt=qp.attempts,
            wall=self._clock(),
            names=() if order is None else order.names,
            verdicts=np.zeros(n, dtype=np.int8),
            reasons=np.full(n, -1, dtype=np.int16),
            rejections=(),
            weights=dict(weights),
        )

    def _chosen(
        self,
        qp: QueuedPod,
        algorithm: Algorithm,
        decision: Decision,
        mask: npt.NDArray[np.bool_],
        consulted: Consulted | None,
    ) -> DecisionRecord:
        table = algorithm.table
        framework = algorithm.framework
        order = self._positions(table)
        record = self._record(qp, framework.name, order, framework.weights)
        n = len(order.names)
        candidate_rows = np.flatnonzero(mask)
        candidates = order.position[candidate_rows]
        examined = np.zeros(n, dtype=np.bool_)
        if consulted is not None:
            # the conclusion filtered every node again; the extenders saw ``sent``
            reasons, rejections = self._rejections(algorithm, decision, order, None)
            examined |= reasons >= 0
            reasons, rejections = _with_extenders(
                reasons, rejections, consulted, examined, candidates, table, order
            )
        elif decision.nominated_only:
            examined[candidates] = True
        elif decision.examined >= n:
            examined[:] = True
        else:  # the sampler advanced its start index by the nodes it examined
            start = (algorithm.sampler.start - decision.examined) % n
            examined[(start + np.arange(decision.examined)) % n] = True
        if consulted is None:
            reasons, rejections = self._rejections(algorithm, decision, order, examined)
        record.reasons, record.rejections = reasons, rejections
        record.verdicts[examined & (reasons >= 0)] = REJECTED
        record.examined = int(np.count_nonzero(examined))
        record.feasible = len(candidate_rows)
        record.sampled = record.examined < n
        record.nominated_only = decision.nominated_only
        record.consulted = consulted is not None
        record.selected = decision.node
        if len(candidate_rows) == 1 and consulted is None:
            record.verdicts[candidates] = FEASIBLE
            record.top = (str(decision.node),)
            return record
        record.verdicts[candidates] = SCORED
        self._scores(record, algorithm, decision, mask, candidate_rows, candidates, consulted)
        return record

    @staticmethod
    def _rejections(
        algorithm: Algorithm,
        decision: Decision,
        order: _Order,
        examined: npt.NDArray[np.bool_] | None,
    ) -> tuple[npt.NDArray[np.signedinteger[Any]], tuple[Status, ...]]:
        """The first rejecting plugin's status on each rejected row among ``examined``
        (positions; None: every row), as :meth:`Decision.failures` finds them: a sampled
        decision explains only the nodes it examined (a tenth of them at 5,000 nodes)."""
        outcome = decision.pre_filter
        n = len(order.names)
        if outcome is None or not outcome.status.ok:
            return _interned(decision.statuses(), order.position, n)
        table = algorithm.table
        within = None
        if examined is not None and not examined.all():
            within = np.zeros(table.size, dtype=np.bool_)
            within[order.order[examined]] = True
        failures = algorithm.framework.first_failures(
            decision.state, decision.pod, table, outcome, within
        )
        for row, status in (
            *decision.nominated_failures.items(),
            *decision.extender_failures.items(),
        ):
            if within is None or within[row]:
                failures.setdefault(row, status)
        return _interned(failures, order.position, n)

    def _scores(
        self,
        record: DecisionRecord,
        algorithm: Algorithm,
        decision: Decision,
        mask: npt.NDArray[np.bool_],
        rows: npt.NDArray[np.intp],
        positions: npt.NDArray[np.int32],
        consulted: Consulted | None,
    ) -> None:
        """Each score plugin's normalized scores on the candidates, as ``totals`` has them."""
        framework, table, state = algorithm.framework, algorithm.table, decision.state
        entry = decision.entry
        assert entry is not None
        local = {p.name for p, _ in framework.local_scores(state)}
        plugins: list[str] = []
        scores = np.zeros((len(framework.active_scores(state)), len(rows)), dtype=np.uint8)
        totals = np.zeros(len(rows), dtype=np.int64)
        for index, (plugin, weight) in enumerate(framework.active_scores(state)):
            if plugin.name in local:
                raw = entry.raw[plugin.name]
            else:
                raw = framework.run_score(plugin, state, decision.pod, table, table.rows)
            normalized = (
                framework.normalized(plugin, state, raw, mask) if plugin.normalizes else raw
            )
            taken = normalized[rows]
            scores[index] = taken
            totals += taken * weight
            plugins.append(plugin.name)
        # order the scored nodes by position (node order), as the verdicts are
        by_position = np.argsort(positions, kind="stable")
        record.scored = positions[by_position].astype(np.int32)
        record.plugins = tuple(plugins)
        record.scores = scores[:, by_position]
        totals = totals[by_position]
        if consulted is not None and consulted.columns:
            names = [record.names[pos] for pos in record.scored.tolist()]
            columns = np.zeros((len(consulted.columns), len(names)), dtype=np.int64)
            for index, (name, weight, contributions) in enumerate(consulted.columns):
                added = np.fromiter(
                    (contributions.get(node, 0) for node in names), np.int64, len(names)
                )
                totals += added
                columns[index] = added // max(weight, 1)
                record.weights[name] = weight
            record.extenders = tuple(name for name, _, _ in consulted.columns)
            record.columns = columns
        record.totals = totals
        best = int(totals.max())
        record.top = tuple(record.names[pos] for pos in record.scored[totals == best].tolist())
        if record.selected not in record.top and not self._warned:
            self._warned = True
            logger.warning(
                "recorded decision for %s: %s chosen but %s have the best total %d",
                record.pod,
                record.selected,
                ", ".join(record.top[:3]),
                best,
            )

    def _failed(
        self,
        qp: QueuedPod,
        algorithm: Algorithm | None,
        decision: Decision,
        message: str,
        post_filter: PostFilterResult | None,
    ) -> DecisionRecord:
        profile = qp.pod.scheduler_name if algorithm is None else algorithm.framework.name
        weights = {} if algorithm is None else algorithm.framework.weights
        order = None if algorithm is None else self._positions(algorithm.table)
        record = self._record(qp, profile, order, weights)
        record.message = message
        rejected_everywhere = decision.pre_filter is not None and not decision.pre_filter.status.ok
        if order is not None and (decision.status.code != Code.ERROR or rejected_everywhere):
            n = len(order.names)
            reasons, rejections = _interned(decision.statuses(), order.position, n)
            record.reasons, record.rejections = reasons, rejections
            record.verdicts[reasons >= 0] = REJECTED
            record.examined = int(np.count_nonzero(reasons >= 0))
        if post_filter is not None:
            record.preemption = _preemption(post_filter)
        return record


def _interned(
    failures: Mapping[int, Status], position: npt.NDArray[np.int32], n: int
) -> tuple[npt.NDArray[np.signedinteger[Any]], tuple[Status, ...]]:
    """``int[n]`` indices into the distinct statuses (-1: none), and those statuses.

    Plugins share one Status among the rows they reject for the same reason, so the
    identity is tried before the (slower) equality."""
    by_id: dict[int, int] = {}
    by_value: dict[Status, int] = {}
    distinct: list[Status] = []
    indices = np.empty(len(failures), dtype=np.int32)
    for at, status in enumerate(failures.values()):
        found = by_id.get(id(status))
        if found is None:
            found = by_value.get(status)
            if found is None:
                found = by_value[status] = len(distinct)
                distinct.append(status)
            by_id[id(status)] = found
        indices[at] = found
    reasons: npt.NDArray[np.signedinteger[Any]]
    if len(distinct) < np.iinfo(np.int16).max:
        reasons = np.full(n, -1, dtype=np.int16)
    else:
        reasons = np.full(n, -1, dtype=np.int32)
    if failures:
        rows = np.fromiter(failures.keys(), dtype=np.intp, count=len(failures))
        reasons[position[rows]] = indices
    return reasons, tuple(distinct)


def _with_extenders(
    reasons: npt.NDArray[np.signedinteger[Any]],
    rejections: tuple[Status, ...],
    consulted: Consulted,
    examined: npt.NDArray[np.bool_],
    candidates: npt.NDArray[np.int32],
    table: NodeTable,
    order: _Order,
) -> tuple[npt.NDArray[np.signedinteger[Any]], tuple[Status, ...]]:
    """The extenders' rejections added where no in-tree filter rejected the node; a node
    sent and neither accepted nor named is recorded as dropped (as explain shows it)."""
    distinct = list(rejections)
    index = {status: at for at, status in enumerate(distinct)}
    accepted = np.zeros(len(reasons), dtype=np.bool_)
    accepted[candidates] = True
    reasons = reasons.astype(np.int32)
    dropped = Status.unschedulable(DROPPED_REASON, plugin=EXTENDER_NAME)
    for name in consulted.sent:
        row = table.row_of(name)
        if row is None:
            continue
        pos = int(order.position[row])
        if pos < 0:
            continue
        examined[pos] = True
        if reasons[pos] >= 0 or accepted[pos]:
            continue
        status = consulted.statuses.get(name, dropped)
        at = index.get(status)
        if at is None:
            at = index[status] = len(distinct)
            distinct.append(status)
        reasons[pos] = at
    return reasons.astype(np.int32, copy=False), tuple(distinct)


def _preemption(result: PostFilterResult) -> Preemption:
    """What PostFilter decided, in the contract of ``asched explain``."""
    node = result.nominated_node or None
    victims = tuple(Victim(v.key, node or "", v.priority) for v in result.victims)
    message = "" if result.status.ok else result.status.message
    return Preemption(result.status.code, node, victims, result.num_pdb_violations, message)
