"""NodeResourcesBalancedAllocation: favour nodes whose usage fractions agree.

Upstream: pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go.

Real requests (no non-zero defaults) on both sides. PreScore skips best-effort pods,
those requesting 0 of every configured resource (v1.33 behaviour).
"""

from __future__ import annotations

from typing import Final

from asched.config.types import NodeResourcesBalancedAllocationArgs
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins import resource_scoring
from asched.tools.reference.plugins.base import Plugin
from asched.tools.reference.plugins.node_resources_fit import scoring_inputs

NAME: Final = "NodeResourcesBalancedAllocation"


class BalancedAllocation(Plugin):
    """PreScore, Score (no normalization)."""

    name = NAME

    def pre_score(self, cycle: Cycle) -> bool:
        resources = cycle.args(NAME, NodeResourcesBalancedAllocationArgs).resources
        return any(cycle.pod.requests.get(spec.name, 0) != 0 for spec in resources)

    def score(self, cycle: Cycle, node: NodeState) -> int:
        resources = cycle.args(NAME, NodeResourcesBalancedAllocationArgs).resources
        requested, allocatable = scoring_inputs(cycle, node, resources, nonzero=False)
        return resource_scoring.balanced(requested, allocatable)
