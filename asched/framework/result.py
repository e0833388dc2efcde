"""What one full evaluation of a pod against every node produced.

This is the contract of ``asched explain -o json`` and of the scalar reference
implementation: both produce an :class:`Evaluation`, so tests compare them field by
field. ``scores`` hold each plugin's score after its NormalizeScore and before its
weight (0..100); ``total`` is the weighted sum.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from asched.framework.status import Code


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

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "profile": self.profile,
            "nodes": {name: verdict.to_json() for name, verdict in self.nodes.items()},
            "weights": dict(self.weights),
            "selected": self.selected,
            "top": list(self.top),
            "message": self.message,
            "preemption": None if self.preemption is None else self.preemption.to_json(),
        }
