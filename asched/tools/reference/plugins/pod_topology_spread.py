"""PodTopologySpread in the reference evaluator, via :mod:`asched.tools.reference.topologyspread`.

PreFilter counts over the whole snapshot once (kept in ``cycle.scratch``); Filter reads
per node. PreScore runs over the feasible nodes, as upstream's receives them; an Error
there (a ScheduleAnyway constraint that does not decode) ends the evaluation. The
default constraints' selector comes from the snapshot's Services, controllers and sets
(``cycle.extras``). NormalizeScore is the plugin's own (ignored nodes get 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from asched.cluster.records import PodInfo
from asched.config.types import PodTopologySpreadArgs
from asched.framework.status import Code, Status
from asched.tools.reference import topologyspread
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins.base import SKIP, Normalization, Plugin, PreFilterOutcome

NAME = topologyspread.NAME
_FILTER = f"{NAME}/prefilter"
_SCORE = f"{NAME}/prescore"


def _pods_by_node(cycle: Cycle) -> dict[str, tuple[PodInfo, ...]]:
    return {node.name: node.pods for node in cycle.nodes}


class PodTopologySpread(Plugin):
    normalization: ClassVar[Normalization] = "own"

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        status, state = topologyspread.pre_filter(
            [node.info for node in cycle.nodes],
            _pods_by_node(cycle),
            cycle.pod,
            cycle.args(NAME, PodTopologySpreadArgs),
            cycle.extras,
        )
        if status.code == Code.SKIP:
            return SKIP
        if state is None:
            return PreFilterOutcome(status)
        cycle.scratch[_FILTER] = state
        return PreFilterOutcome(Status.success())

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        return topologyspread.filter_node(cycle.scratch[_FILTER], cycle.pod, node.info)

    def pre_score_status(self, cycle: Cycle) -> Status:
        status, state = topologyspread.pre_score(
            [node.info for node in cycle.nodes],
            _pods_by_node(cycle),
            cycle.pod,
            cycle.args(NAME, PodTopologySpreadArgs),
            cycle.extras,
            cycle.scratch.get("feasible", ()),
        )
        cycle.scratch[_SCORE] = state
        return status

    def pre_score(self, cycle: Cycle) -> bool:
        return self.pre_score_status(cycle).ok

    def score(self, cycle: Cycle, node: NodeState) -> int:
        if cycle.scratch.get(_SCORE) is None:  # PreScore not enabled
            self.pre_score_status(cycle)
        state = cycle.scratch[_SCORE]
        if state is None:
            return 0
        return topologyspread.score_node(state, cycle.pod, node.info, node.pods)

    def normalize(self, cycle: Cycle, names: Sequence[str], raw: Sequence[int]) -> list[int]:
        state = cycle.scratch.get(_SCORE)
        ignored = state.ignored if state is not None else frozenset()
        return topologyspread.normalize(names, raw, ignored)
