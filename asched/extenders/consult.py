"""Extender consultations: the part of an attempt that waits for scheduler extenders.

Upstream calls extenders inside its cycle, so an extender's latency becomes the whole
scheduler's. asched splits an attempt whose pod some filtering or prioritizing extender
is interested in (:meth:`~asched.scheduler.cycle.Scheduler.schedule_one`):

1. **in the cycle** (synchronous): PreFilter, PreScore, the Filters and the sampling run
   as for any pod; the candidates' names go into a :class:`Consultation`, and the cycle
   moves on to the next pod. Nothing is assumed.
2. **in a task** (:func:`ask`, owned by the binder's TaskGroup, holding the pod's binder
   slot): the extenders' filters, chained, then every interested prioritizer at once
   when more than one node is left.
3. **in the same task, synchronous again**
   (:meth:`~asched.scheduler.cycle.Scheduler.conclude`): the in-tree Filters run again
   over the current table, the answer is kept to the nodes the extenders accepted, the
   in-tree scores are normalized over those and the extenders' scores added, and the
   pod is assumed, reserved and permitted as in the cycle. When the nodes the extenders
   accepted no longer fit, the pod is decided again (a new consultation), at most
   :data:`MAX_ROUNDS` times in all.

Whatever happened in between is seen by step 3: no over-commit, no pod bound twice. When
nothing changed, the filters answer as in step 1, so the nodes left, the scores and the
choice are upstream's.

Preemption with a ``preemptVerb`` extender takes the same path (:class:`Preemption`):
PostFilter's dry run finds the candidates in the cycle, the extenders narrow them in the
task (:func:`ask_preemption`), and the conclusion keeps the candidates whose victims are
all still on their node (:func:`still_valid`), selects one and nominates, as upstream's
SelectCandidate. The pod is in flight, and holds its slot, until then.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, cast

import numpy as np
import numpy.typing as npt

from asched.cluster.table import NodeTable
from asched.engine.algorithm import Decision
from asched.errors import ExtenderError
from asched.extenders.extender import Extender, NodeObjects
from asched.extenders.fast import AlignedScores, EncodedPod
from asched.extenders.filter_score import (
    ExtenderScores,
    FilterOutcome,
    run_filters,
    run_prioritizers,
)
from asched.extenders.preemption import narrow_candidates
from asched.extenders.protocol import RawObject
from asched.extenders.sent_names import NameTable, SentNames
from asched.framework.pre_state import PreState
from asched.framework.preemption import Candidate, CandidateSelector
from asched.framework.status import Status
from asched.queue.queued import QueuedPod

if TYPE_CHECKING:
    from asched.scheduler.parts import ProfileRuntime

#: Decisions of one attempt, the first included, before a pod whose extender-accepted
#: nodes keep changing under it is reported with the current reasons and retried later.
MAX_ROUNDS: Final = 3


@dataclass(frozen=True, slots=True)
class Consulted:
    """What the extenders said in a decision concluded after their answers (for the debug
    pages' record of the decision).

    ``sent``: the node names they were asked about; ``statuses``: name -> the status of
    a node an extender rejected; ``columns``: per prioritizing extender, its name, its
    weight and its contribution per node (weight x score x 10, what the total adds).
    """

    sent: tuple[str, ...]
    statuses: Mapping[str, Status]
    columns: tuple[tuple[str, int, Mapping[str, int]], ...] = ()


@dataclass(slots=True)
class Consultation:
    """One pod's attempt while its extenders are asked (see the module docstring).

    ``sent`` are the candidates of the in-tree half, in node order, as the first
    extender call sends them (:attr:`names`); ``rows`` (intp, ``(len(sent),)``) are
    their rows while the table's ``epoch`` is ``epoch`` (rows move only with the epoch).
    ``nominated_only`` says they are the pod's nominated node alone (upstream then
    evaluates every node when the extenders reject it). The task fills ``outcome`` and
    ``scores``, or ``error`` when a non-ignorable filter failed.
    """

    qp: QueuedPod
    profile: ProfileRuntime
    pod_json: RawObject
    sent: SentNames
    rows: npt.NDArray[np.intp]
    epoch: int
    nominated_only: bool
    started: float
    rounds: int = 1
    outcome: FilterOutcome | None = None
    scores: ExtenderScores | None = None
    error: ExtenderError | None = None
    #: name -> row of the names sent, built when an answer is read by names
    row_by_name: dict[str, int] | None = None
    #: the decision's PreFilter and PreScore state, for the conclusion to reuse while
    #: it holds (:mod:`asched.framework.pre_state`)
    pre_state: PreState | None = None

    @property
    def names(self) -> list[str]:
        """The candidates' names, in node order: what the extenders are sent."""
        return self.sent.names


@dataclass(slots=True)
class Preemption:
    """One pod's PostFilter while the preempting extenders are asked.

    ``candidates`` come from the dry run in the cycle; the task fills ``answer`` (the
    candidates as the extenders left them) or ``error`` (a non-ignorable one failed).
    ``rejectors`` are the failed attempt's, for the queue.
    """

    qp: QueuedPod
    profile: ProfileRuntime
    pod_json: RawObject
    decision: Decision
    selector: CandidateSelector
    candidates: list[Candidate]
    rejectors: frozenset[str] = frozenset()
    answer: list[Candidate] | None = None
    error: ExtenderError | None = None


#: What an extender task runs for: a decision, or a preemption.
Pending = Consultation | Preemption


async def ask_preemption(
    extenders: Sequence[Extender], preemption: Preemption, table: NodeTable
) -> None:
    """Fill ``preemption`` with what the preempting extenders leave of its candidates
    (:func:`~asched.extenders.preemption.narrow_candidates`), or the error of a
    non-ignorable one."""
    try:
        preemption.answer = await narrow_candidates(
            extenders, preemption.qp.pod, preemption.pod_json, preemption.candidates, table
        )
    except ExtenderError as exc:
        preemption.error = exc


def still_valid(table: NodeTable, candidates: Sequence[Candidate] | None) -> list[Candidate]:
    """The candidates whose node is still there and whose victims all still run on it."""
    out = []
    for candidate in candidates or ():
        if not table.alive[candidate.row]:
            continue
        placed = table.row_pods[candidate.row]
        if all(victim.key in placed for victim in candidate.victims):
            out.append(candidate)
    return out


class _OrderedNames:
    """The table's node names in node order, encoded (:class:`NameTable`) for
    :func:`names_of` to pick the candidates' from in C, without touching the name
    strings one by one (500 of them, cold in the CPU's caches, cost more than the rest
    of the pick).

    Valid while the table's ``order()`` is the same array (it is recomputed whenever a
    row is added or removed or a node changes zone) and its ``epoch`` is unchanged (a
    row's name changes only with the epoch: a node deleted and another taking its row).
    """

    __slots__ = ("encoded", "epoch", "order")

    def __init__(self, table: NodeTable, order: npt.NDArray[np.intp]) -> None:
        self.order = order  # held, so that its identity cannot be reused
        self.epoch = table.epoch
        found = [table.names[row] for row in order.tolist()]
        if None in found:  # a free row in the order: cannot be, but the table says so
            raise ValueError("a candidate row holds no node")
        self.encoded = NameTable(cast("list[str]", found))


#: per table: its names in node order (weakly held: a table's cache goes with it)
_ORDERED: Final[weakref.WeakKeyDictionary[NodeTable, _OrderedNames]] = weakref.WeakKeyDictionary()


def names_of(
    table: NodeTable, candidates: npt.NDArray[np.bool_]
) -> tuple[SentNames, npt.NDArray[np.intp]]:
    """The names of the live rows of ``candidates`` (bool, ``(table.size,)``), in node
    order (upstream's node tree order): what the extenders are sent, as their JSON array
    and hashes picked in C (:meth:`NameTable.pick`); and their rows (intp, same
    order)."""
    order = table.order()
    cached = _ORDERED.get(table)
    if cached is None or cached.order is not order or cached.epoch != table.epoch:
        cached = _ORDERED[table] = _OrderedNames(table, order)
    picked = np.flatnonzero(candidates[order])
    return cached.encoded.pick(picked), order[picked]


def _index(table: NodeTable, consultation: Consultation) -> Mapping[str, int]:
    """Name -> current row for the names the consultation sent: its own small map while
    no row moved (same epoch), else the table's."""
    if table.epoch != consultation.epoch:
        return table.index
    if consultation.row_by_name is None:
        rows = consultation.rows.tolist()
        consultation.row_by_name = dict(zip(consultation.names, rows, strict=True))
    return consultation.row_by_name


def rows_of(
    table: NodeTable, consultation: Consultation, names: Sequence[str]
) -> npt.NDArray[np.intp]:
    """The current rows of the nodes ``names`` (sent by ``consultation``; those still in
    the table), in their order: resolved once, in C (``map`` over a dict)."""
    found = list(map(_index(table, consultation).get, names))
    if None in found:
        found = [row for row in found if row is not None]
    return np.fromiter(found, dtype=np.intp, count=len(found))


def _positioned_rows(table: NodeTable, consultation: Consultation) -> npt.NDArray[np.intp] | None:
    """The rows of the extenders' feasible names from their positions among the names
    sent (no lookup by name), while no row moved; None when not known."""
    outcome = consultation.outcome
    if outcome is None or outcome.positions is None or table.epoch != consultation.epoch:
        return None
    return consultation.rows[outcome.positions]


def feasible_rows(table: NodeTable, consultation: Consultation) -> npt.NDArray[np.intp]:
    """The current rows of the nodes the extenders left (those still in the table), in
    the extenders' order."""
    rows = _positioned_rows(table, consultation)
    if rows is not None:
        return rows
    assert consultation.outcome is not None
    return rows_of(table, consultation, consultation.outcome.feasible)


def score_rows(table: NodeTable, consultation: Consultation) -> npt.NDArray[np.int64] | None:
    """Every prioritizer's scaled contribution per row (int64, ``(table.size,)``), summed
    over the extenders; None when none scored. Nodes no longer in the table are dropped."""
    scores = consultation.scores
    if scores is None or not scores.by_extender:
        return None
    extra = np.zeros(table.size, dtype=np.int64)
    outcome = consultation.outcome
    for _, contributions in scores.by_extender:
        if (
            isinstance(contributions, AlignedScores)
            and outcome is not None
            and contributions.names is outcome.feasible
            and (positioned := _positioned_rows(table, consultation)) is not None
        ):
            extra[positioned] += contributions.scores  # one row per name sent
            continue
        found = list(map(_index(table, consultation).get, contributions))
        if None in found:
            kept = [
                (row, v)
                for row, v in zip(found, contributions.values(), strict=True)
                if row is not None
            ]
            rows = np.fromiter((row for row, _ in kept), np.intp, len(kept))
            values = np.fromiter((v for _, v in kept), np.int64, len(kept))
        else:
            rows = np.fromiter(found, np.intp, len(found))
            values = np.fromiter(contributions.values(), np.int64, len(found))
        # each mapping names a node once, so a plain fancy-index add is exact
        extra[rows] += values
    return extra


def interested(extenders: Sequence[Extender], pod_json: RawObject) -> bool:
    """Whether a filtering or prioritizing extender is interested in the pod."""
    return any(
        (extender.is_filter or extender.is_prioritizer) and extender.is_interested(pod_json)
        for extender in extenders
    )


async def ask(
    extenders: Sequence[Extender], consultation: Consultation, node_objects: NodeObjects
) -> None:
    """Fill ``consultation`` with the extenders' answers (upstream's
    findNodesThatPassExtenders, then the extender half of prioritizeNodes)."""
    pod = consultation.qp.pod
    encoded = EncodedPod(consultation.pod_json)  # one encoding for every call
    try:
        outcome = await run_filters(
            extenders,
            pod,
            consultation.pod_json,
            consultation.sent,
            node_objects,
            encoded=encoded,
        )
    except ExtenderError as exc:
        consultation.error = exc
        return
    consultation.outcome = outcome
    if len(outcome.feasible) > 1:  # upstream scores only when there is a choice
        consultation.scores = await run_prioritizers(
            extenders, pod, consultation.pod_json, outcome.feasible, node_objects, encoded=encoded
        )


def consulted(consultation: Consultation, extenders: Sequence[Extender]) -> Consulted:
    """What the extenders said in ``consultation`` (answered), for the decision's record."""
    outcome = consultation.outcome
    assert outcome is not None
    weights = {e.name: e.weight for e in extenders}
    scores = consultation.scores
    columns = tuple(
        (name, weights.get(name, 1), contributions)
        for name, contributions in (scores.by_extender if scores is not None else ())
    )
    return Consulted(tuple(consultation.names), outcome.statuses, columns)
