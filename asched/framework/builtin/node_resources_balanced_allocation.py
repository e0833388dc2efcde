"""NodeResourcesBalancedAllocation (PreScore, Score): prefer nodes whose use stays even.

Upstream's balancedResourceScorer (noderesources/balanced_allocation.go):
``int((1 - std) * 100)`` over the requested/allocatable fractions of the configured
resources, real requests on both sides. A best-effort pod (no request for any configured
resource) is skipped at PreScore (v1.33 behaviour). Weight 1.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.args import IN_TREE_ARGS
from asched.config.types import NodeResourcesBalancedAllocationArgs
from asched.framework import resource_scoring as scoring
from asched.framework.cycle_state import CycleState
from asched.framework.interface import BoolMask, Handle, RowScore, ScoreArray
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "NodeResourcesBalancedAllocation"
_KEY: Final = f"{NAME}/prescore"


class NodeResourcesBalancedAllocation:
    name: Final = NAME
    row_local: Final = True
    normalizes: Final = False

    def sign(self, pod: PodInfo) -> Hashable:
        return tuple(sorted(pod.requests.items()))

    def __init__(self, args: NodeResourcesBalancedAllocationArgs) -> None:
        self._resources = args.resources

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): the pod's requests and the table's resource axes."""
        return False

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Status:
        if all(pod.requests.get(spec.name, 0) == 0 for spec in self._resources):
            return Status.skip()
        state.write(_KEY, scoring.resource_terms(table, pod, self._resources, use_requested=True))
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> ScoreArray:
        terms = state.get(_KEY)
        if terms is None:  # PreScore not enabled: score without its best-effort skip, as upstream
            terms = scoring.resource_terms(table, pod, self._resources, use_requested=True)
            state.write(_KEY, terms)
        return scoring.balanced_allocation(table, terms, rows, size_of(rows))

    def row_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> RowScore:
        """:meth:`score` for one row."""
        terms = state.get(_KEY)
        if terms is None:  # PreScore not enabled, as in score
            terms = scoring.resource_terms(table, pod, self._resources, use_requested=True)
            state.write(_KEY, terms)
        return lambda row: scoring.balanced_allocation_row(table, terms, row)

    def normalize(self, state: CycleState, scores: ScoreArray, taking_part: BoolMask) -> ScoreArray:
        return scores


def factory(args: object | None, handle: Handle | None) -> NodeResourcesBalancedAllocation:
    if not isinstance(args, NodeResourcesBalancedAllocationArgs):
        args = NodeResourcesBalancedAllocationArgs()
    return NodeResourcesBalancedAllocation(args)


SPEC: Final = declare(
    NodeResourcesBalancedAllocation,
    api_version=API_VERSION,
    factory=factory,
    args=IN_TREE_ARGS[NAME],
)
