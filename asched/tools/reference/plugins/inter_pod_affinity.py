"""InterPodAffinity in the reference evaluator, via :mod:`asched.tools.reference.interpod`.

PreFilter counts over the whole snapshot once (kept in ``cycle.scratch``); Filter and
Score read per node; NormalizeScore is the plugin's own min-max over feasible nodes.
"""

from __future__ import annotations

from typing import ClassVar

from asched.cluster.records import PodInfo
from asched.config.types import InterPodAffinityArgs
from asched.framework.status import Code, Status
from asched.tools.reference import interpod
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins.base import SKIP, Normalization, Plugin, PreFilterOutcome

NAME = "InterPodAffinity"
_FILTER = f"{NAME}/prefilter"
_SCORE = f"{NAME}/prescore"


def _pods_by_node(cycle: Cycle) -> dict[str, tuple[PodInfo, ...]]:
    return {node.name: node.pods for node in cycle.nodes}


class InterPodAffinity(Plugin):
    normalization: ClassVar[Normalization] = "minmax"

    def pre_filter(self, cycle: Cycle) -> PreFilterOutcome:
        nodes = [node.info for node in cycle.nodes]
        status, state = interpod.pre_filter(
            nodes,
            _pods_by_node(cycle),
            cycle.namespace_labels,
            cycle.pod,
        )
        if status.code == Code.SKIP:
            return SKIP
        if state is None:
            return PreFilterOutcome(status)
        cycle.scratch[_FILTER] = state
        return PreFilterOutcome(Status.success())

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        return interpod.filter_node(cycle.scratch[_FILTER], cycle.pod, node.info)

    def pre_score(self, cycle: Cycle) -> bool:
        feasible = cycle.scratch.get("feasible", ())
        status, scores = interpod.pre_score(
            [node.info for node in cycle.nodes],
            _pods_by_node(cycle),
            cycle.namespace_labels,
            cycle.pod,
            cycle.args(NAME, InterPodAffinityArgs),
            feasible,
        )
        cycle.scratch[_SCORE] = scores
        return status.ok

    def score(self, cycle: Cycle, node: NodeState) -> int:
        return interpod.score_node(cycle.scratch[_SCORE], node.info)
