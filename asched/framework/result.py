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
class Evaluation:
    """The full answer for one pod: every node's verdict, the choice and the message."""

    pod: str
    profile: str
    nodes: Mapping[str, NodeVerdict]
    weights: Mapping[str, int]
    selected: str | None
    top: tuple[str, ...]
    message: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "profile": self.profile,
            "nodes": {name: verdict.to_json() for name, verdict in self.nodes.items()},
            "weights": dict(self.weights),
            "selected": self.selected,
            "top": list(self.top),
            "message": self.message,
        }
