"""NodeResourcesFit: free allocatable must hold the pod's requests; scoring.

Upstream: pkg/scheduler/framework/plugins/noderesources/fit.go.

Filter (``fitsRequest``, v1.31+ behaviour): the pod count first, then cpu, memory and
ephemeral-storage, then every scalar resource in sorted name order; a resource is
compared only when the pod requests more than 0 of it, and equality fits. All failing
reasons are reported together, as one Unschedulable status. ``ignoredResources`` and
``ignoredResourceGroups`` exempt extended resources only.

Score: the configured strategy over the configured resources. cpu and memory use the
non-zero requests (100m / 200Mi when unset) on both the pod and the node side; other
resources the real ones. A scalar resource the pod does not request takes no part; a
resource the node does not report (and ``pods``, which upstream never scores) takes no
part either.
"""

from __future__ import annotations

from typing import Final

from asched.cluster.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    group_of,
    is_extended,
    is_scalar,
)
from asched.config.types import NodeResourcesFitArgs, ResourceSpec
from asched.framework.status import Status
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins import resource_scoring
from asched.tools.reference.plugins.base import Plugin

NAME: Final = "NodeResourcesFit"
TOO_MANY_PODS: Final = "Too many pods"


def insufficient(resource: str) -> str:
    """The reason for a resource that does not fit (``Insufficient cpu``)."""
    return f"Insufficient {resource}"


def fit_reasons(cycle: Cycle, node: NodeState, args: NodeResourcesFitArgs) -> list[str]:
    """Every reason the pod does not fit ``node``, in upstream order (empty: it fits)."""
    reasons = []
    if len(node.pods) + 1 > node.allocatable(PODS):
        reasons.append(TOO_MANY_PODS)
    requests = cycle.pod.requests
    for resource in (CPU, MEMORY, EPHEMERAL_STORAGE):
        wanted = requests.get(resource, 0)
        if wanted > 0 and wanted > node.allocatable(resource) - node.requested.get(resource, 0):
            reasons.append(insufficient(resource))
    for resource in sorted(r for r in requests if is_scalar(r) and r != PODS):
        wanted = requests[resource]
        if wanted == 0:
            continue
        if is_extended(resource) and (
            resource in args.ignored_resources or group_of(resource) in args.ignored_resource_groups
        ):
            continue
        if wanted > node.allocatable(resource) - node.requested.get(resource, 0):
            reasons.append(insufficient(resource))
    return reasons


def scoring_inputs(
    cycle: Cycle, node: NodeState, resources: tuple[ResourceSpec, ...], *, nonzero: bool
) -> tuple[list[int], list[int]]:
    """``(requested, allocatable)`` per configured resource, 0/0 for resources left out.

    ``nonzero`` selects the scoring requests for cpu/memory (NodeResourcesFit); without
    it the real requests are used everywhere (BalancedAllocation).
    """
    pod = cycle.pod
    requested, allocatable = [], []
    for spec in resources:
        name = spec.name
        if nonzero and name == CPU:
            pod_request, node_request = pod.nonzero_cpu, node.nonzero_cpu
        elif nonzero and name == MEMORY:
            pod_request, node_request = pod.nonzero_memory, node.nonzero_memory
        else:
            pod_request, node_request = pod.requests.get(name, 0), node.requested.get(name, 0)
        alloc = 0 if name == PODS else node.allocatable(name)
        if (pod_request == 0 and is_scalar(name)) or alloc == 0:
            requested.append(0)
            allocatable.append(0)
        else:
            requested.append(node_request + pod_request)
            allocatable.append(alloc)
    return requested, allocatable


class NodeResourcesFit(Plugin):
    """PreFilter (nothing to reject), Filter, PreScore, Score (no normalization)."""

    name = NAME

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        reasons = fit_reasons(cycle, node, cycle.args(NAME, NodeResourcesFitArgs))
        return Status.unschedulable(*reasons) if reasons else Status.success()

    def score(self, cycle: Cycle, node: NodeState) -> int:
        strategy = cycle.args(NAME, NodeResourcesFitArgs).scoring_strategy
        requested, allocatable = scoring_inputs(cycle, node, strategy.resources, nonzero=True)
        weights = [spec.weight for spec in strategy.resources]
        if strategy.type == "MostAllocated":
            return resource_scoring.most_allocated(requested, allocatable, weights)
        if strategy.type == "RequestedToCapacityRatio":
            return resource_scoring.requested_to_capacity_ratio(
                requested, allocatable, weights, strategy.shape
            )
        return resource_scoring.least_allocated(requested, allocatable, weights)
