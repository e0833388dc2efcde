"""What one full evaluation of a pod against every node produced.

This is the contract of ``asched explain -o json`` and of the scalar reference
implementation: both produce an :class:`Evaluation`, so tests compare them field by
field. ``scores`` hold each plugin's score after its NormalizeScore and before its
weight (0..100); ``total`` is the weighted sum.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from asched.framework.status import Code

#: What became of one extender's filter or prioritize call in an evaluation:
#: ``not-offered`` (no such verb), ``not-interested`` (managedResources the pod does not
#: name), ``not-called`` (no node left to send, or an Error ended the evaluation first),
#: ``called`` (answered), ``skipped`` (filter only: an ignorable extender failed and was
#: passed over), ``error`` (filter only: a failure that ended the evaluation as an Error),
#: ``failed`` (prioritize only: the call failed and the extender adds nothing, ignorable
#: or not, as upstream).
CallOutcome = Literal[
    "not-offered", "not-interested", "not-called", "called", "skipped", "error", "failed"
]


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    """One node's outcome for the pod.

    Infeasible: ``plugin`` (first rejecting PreFilter/Filter), ``code`` and ``reasons``.
    Feasible: ``scores`` (plugin -> normalized score; absent when its PreScore skipped)
    and ``total``.
    """

    feasible: bool
    plugin: str | None = None
    code: Code | None = None
    reasons: tuple[str, ...] = ()
    scores: Mapping[str, int] = field(default_factory=dict)
    total: int = 0

    def to_json(self) -> dict[str, Any]:
        if not self.feasible:
            return {
                "feasible": False,
                "plugin": self.plugin,
                "code": self.code.upstream_name if self.code is not None else None,
                "reasons": list(self.reasons),
            }
        return {"feasible": True, "scores": dict(self.scores), "total": self.total}


@dataclass(frozen=True, slots=True)
class Victim:
    """A pod preemption would evict."""

    pod: str
    node: str
    priority: int

    def to_json(self) -> dict[str, Any]:
        return {"pod": self.pod, "node": self.node, "priority": self.priority}


@dataclass(frozen=True, slots=True)
class Preemption:
    """What DefaultPreemption would do for a pod that fits nowhere.

    ``code``: Success when a node would be nominated. ``node``: that node (None when
    preemption does not help). ``victims``: most important first. ``message``: the
    PostFilter message (empty on success).
    """

    code: Code
    node: str | None
    victims: tuple[Victim, ...]
    num_pdb_violations: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code.upstream_name,
            "node": self.node,
            "victims": [v.to_json() for v in self.victims],
            "pdbViolations": self.num_pdb_violations,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class ExtenderCall:
    """One call of an extender in an evaluation: its outcome, how many nodes it was sent
    (every node still feasible: explain does not sample) and the failure's message."""

    outcome: CallOutcome
    sent: int = 0
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "sent": self.sent, "error": self.error}


@dataclass(frozen=True, slots=True)
class ExtenderReport:
    """What one configured extender did for the pod, in upstream's call order.

    ``name`` is its ``urlPrefix`` (the name its rejections and scores go by; a
    ``urlPrefix`` configured twice gets `` #2``, `` #3``... after it).
    """

    name: str
    weight: int
    ignorable: bool
    filter: ExtenderCall
    prioritize: ExtenderCall

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "weight": self.weight,
            "ignorable": self.ignorable,
            "filter": self.filter.to_json(),
            "prioritize": self.prioritize.to_json(),
        }


@dataclass(frozen=True, slots=True)
class GangVerdict:
    """The gang of a member explained under a profile that enables Coscheduling.

    ``key``: the gang's key (``ns/name``, a Workload's ``ns/workload/group``);
    ``min_member``: its ``minMember`` (0 when its PodGroup or Workload is not there or does
    not decode); ``members``: the pods that name it (pending or placed, not finished; the
    pod explained included); ``placed``: those bound; ``admitted``: whether the scheduler
    would go on deciding this member (its whole-gang admission and Coscheduling's
    PreFilter let it through); ``reason``: why not, the scheduler's words.
    """

    key: str
    min_member: int
    members: int
    placed: int
    admitted: bool
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "minMember": self.min_member,
            "members": self.members,
            "placed": self.placed,
            "admitted": self.admitted,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The full answer for one pod: every node's verdict, the choice and the message."""

    pod: str
    profile: str
    nodes: Mapping[str, NodeVerdict]
    weights: Mapping[str, int]
    selected: str | None
    top: tuple[str, ...]
    message: str | None
    #: set when no node fits and the profile has DefaultPreemption
    preemption: Preemption | None = None
    #: the configured extenders' part (None: none configured, or ``--no-extenders``)
    extenders: tuple[ExtenderReport, ...] | None = None
    #: the pod's gang (None: no gang, or a profile without Coscheduling); when it is not
    #: admitted, ``selected`` is None and ``message`` the scheduler's for the refusal,
    #: while ``nodes`` keep what the member alone would meet on each node
    gang: GangVerdict | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "pod": self.pod,
            "profile": self.profile,
            "nodes": {name: verdict.to_json() for name, verdict in self.nodes.items()},
            "weights": dict(self.weights),
            "selected": self.selected,
            "top": list(self.top),
            "message": self.message,
            "preemption": None if self.preemption is None else self.preemption.to_json(),
        }
        if self.extenders is not None:
            out["extenders"] = [report.to_json() for report in self.extenders]
        if self.gang is not None:
            out["gang"] = self.gang.to_json()
        return out
