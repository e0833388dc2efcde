"""The shape of a reference plugin: plain methods with do-nothing defaults.

Each plugin overrides only the extension points it implements. ``filter`` and
``score`` are called once per node; the others once per pod. Statuses are
:class:`asched.framework.status.Status` values; the evaluator attributes them to the
plugin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from asched.framework.status import Status
from asched.tools.reference.cycle import Cycle, NodeState

Normalization = Literal["none", "default", "reverse", "minmax", "own"]


@dataclass(frozen=True, slots=True)
class PreFilterOutcome:
    """A PreFilter status and, optionally, the only node names worth filtering."""

    status: Status
    node_names: frozenset[str] | None = None


SUCCESS = PreFilterOutcome(Status.success())
SKIP = PreFilterOutcome(Status.skip())


class Plugin:
    """Base class: succeeds everywhere, scores nothing."""

    name: ClassVar[str] = ""
    #: How NormalizeScore rescales this plugin's raw scores over the feasible nodes.
    normalization: ClassVar[Normalization] = "none"
    #: False for plugins whose score asched does not implement: they are never present.
    implements_score: ClassVar[bool] = True

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        """Once per pod, before any Filter."""
        return SUCCESS

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        """Whether ``node`` can host the pod."""
        return Status.success()

    def pre_score(self, cycle: Cycle) -> bool:
        """Once per pod before scoring; False means Skip (the plugin's score is absent)."""
        return True

    def pre_score_status(self, cycle: Cycle) -> Status:
        """PreScore as a status: Success, Skip, or an Error that ends the evaluation."""
        return Status.success() if self.pre_score(cycle) else Status.skip()

    def score(self, cycle: Cycle, node: NodeState) -> int:
        """The raw score of ``node`` (before NormalizeScore)."""
        raise NotImplementedError(f"{self.name} has no Score extension")

    def normalize(self, cycle: Cycle, names: Sequence[str], raw: Sequence[int]) -> list[int]:
        """The plugin's own NormalizeScore (``normalization = "own"``) over the feasible nodes."""
        raise NotImplementedError(f"{self.name} has no NormalizeScore of its own")
