"""One decision of the live scheduler, as it was made: compact copies, rendered on demand.

A :class:`DecisionRecord` holds what the cycle saw at the moment it decided, copied out
of the table and the class cache (which change right after: the pod is assumed, other
pods come and go), in arrays sized by the nodes rather than Python objects per node:

* ``names``: the live nodes in upstream's node order, ``n`` of them (shared between the
  records taken while the node set did not change: see :mod:`asched.debug.recorder`);
* ``verdicts``: ``int8[n]``, one of :data:`NOT_EXAMINED`, :data:`SCORED`,
  :data:`FEASIBLE` (the only candidate: not scored, as upstream) or :data:`REJECTED`;
* ``reasons``: ``int16[n]`` or ``int32[n]``, index into ``rejections`` (the distinct
  statuses that rejected a node, first rejecting plugin and reasons), -1 for none;
* ``scored``: ``int32[k]``, the positions of the scored nodes; ``scores``:
  ``uint8[p, k]``, each score plugin's normalized score (0..100) there; ``columns``:
  ``int64[e, k]``, each extender's score (its contribution divided by its weight, as
  ``asched explain`` shows it); ``totals``: ``int64[k]``, what the choice compared.

:meth:`DecisionRecord.evaluation` turns it into the
:class:`~asched.engine.result.Evaluation` of ``asched explain`` (its ``nodes`` hold
the examined nodes only: a node the sampling did not reach has no verdict, and is listed
under ``notExamined`` in :meth:`DecisionRecord.to_json`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from asched.engine.result import Evaluation, NodeVerdict, Preemption
from asched.framework.status import Status

#: the sampling stopped before this node (upstream's percentageOfNodesToScore)
NOT_EXAMINED: Final = 0
#: feasible and scored
SCORED: Final = 1
#: feasible, the only candidate: chosen without scoring (upstream scores only a choice)
FEASIBLE: Final = 2
#: a Filter (PreFilter, an extender) rejected it: ``reasons`` says which and why
REJECTED: Final = 3

VERDICT_NAMES: Final = {
    NOT_EXAMINED: "not-examined",
    SCORED: "scored",
    FEASIBLE: "feasible",
    REJECTED: "rejected",
}


@dataclass(slots=True)
class DecisionRecord:
    """One attempt's decision (see the module docstring for the arrays' shapes).

    ``wall`` is the Unix time (seconds) of the decision; ``attempt`` the pod's attempt
    number; ``examined`` how many nodes the cycle examined and ``feasible`` how many it
    chose among; ``outcome`` follows the pod after the decision (assumed, bound, rolled
    back), the only field written later.
    """

    seq: int
    pod: str
    uid: str
    profile: str
    attempt: int
    wall: float
    names: tuple[str, ...]
    verdicts: npt.NDArray[np.int8]
    reasons: npt.NDArray[np.signedinteger[Any]]
    rejections: tuple[Status, ...]
    weights: dict[str, int]
    plugins: tuple[str, ...] = ()
    scored: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, np.int32))
    scores: npt.NDArray[np.uint8] = field(default_factory=lambda: np.zeros((0, 0), np.uint8))
    extenders: tuple[str, ...] = ()
    columns: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros((0, 0), np.int64))
    totals: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    selected: str | None = None
    top: tuple[str, ...] = ()
    message: str | None = None
    examined: int = 0
    feasible: int = 0
    sampled: bool = False
    nominated_only: bool = False
    #: the extenders were consulted (the decision was concluded after their answers)
    consulted: bool = False
    preemption: Preemption | None = None
    outcome: str = ""

    @property
    def scheduled(self) -> bool:
        return self.selected is not None

    def nbytes(self) -> int:
        """Bytes of the arrays this record owns (``names`` is shared and not counted)."""
        arrays = (self.verdicts, self.reasons, self.scored, self.scores, self.columns, self.totals)
        return sum(a.nbytes for a in arrays)

    def evaluation(self) -> Evaluation:
        """The examined nodes' verdicts, in the contract of ``asched explain -o json``."""
        nodes: dict[str, NodeVerdict] = {}
        scored_at = {int(pos): index for index, pos in enumerate(self.scored.tolist())}
        verdicts = self.verdicts.tolist()
        reasons = self.reasons.tolist()
        for pos, name in enumerate(self.names):
            verdict = verdicts[pos]
            if verdict == REJECTED:
                status = self.rejections[reasons[pos]]
                nodes[name] = NodeVerdict(
                    feasible=False,
                    plugin=status.plugin or None,
                    code=status.code,
                    reasons=status.reasons,
                )
            elif verdict == SCORED:
                index = scored_at[pos]
                scores = {p: int(self.scores[i, index]) for i, p in enumerate(self.plugins)}
                scores.update(
                    (e, int(self.columns[i, index])) for i, e in enumerate(self.extenders)
                )
                nodes[name] = NodeVerdict(
                    feasible=True, scores=scores, total=int(self.totals[index])
                )
            elif verdict == FEASIBLE:
                nodes[name] = NodeVerdict(feasible=True)
        return Evaluation(
            self.pod,
            self.profile,
            nodes,
            dict(self.weights),
            self.selected,
            self.top,
            self.message,
            self.preemption,
        )

    def not_examined(self) -> list[str]:
        """The nodes the cycle did not reach, in node order."""
        positions = np.flatnonzero(self.verdicts == NOT_EXAMINED)
        return [self.names[pos] for pos in positions.tolist()]

    def summary(self) -> dict[str, Any]:
        """A line of the decisions list (no per-node data)."""
        return {
            "id": self.seq,
            "pod": self.pod,
            "uid": self.uid,
            "profile": self.profile,
            "attempt": self.attempt,
            "time": self.wall,
            "selected": self.selected,
            "message": self.message,
            "nodeCount": len(self.names),
            "examined": self.examined,
            "feasible": self.feasible,
            "sampled": self.sampled,
            "outcome": self.outcome,
        }

    def to_json(self) -> dict[str, Any]:
        """:meth:`evaluation`'s JSON plus what only a live decision has."""
        out = self.evaluation().to_json()
        out.update(self.summary())
        out["notExamined"] = self.not_examined()
        out["nominatedOnly"] = self.nominated_only
        out["consulted"] = self.consulted
        out["extenderColumns"] = list(self.extenders)
        out["scoredCount"] = len(self.scored)
        return out
