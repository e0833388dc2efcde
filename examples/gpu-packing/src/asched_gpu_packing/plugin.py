"""The plugin, its args and its declaration (see the package docstring)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Final

import numpy as np

from asched import plugin as ap

NAME: Final = "GPUPacking"
REASON: Final = "node(s) reserve their GPUs for GPU pods"


@dataclass(frozen=True)
class PackingArgs:
    resource_name: str = "nvidia.com/gpu"
    reserve_gpu_nodes: bool = True


def read_args(args: ap.ArgsSection) -> PackingArgs:
    defaults = PackingArgs()
    resource = args.string("resourceName", defaults.resource_name)
    if "/" not in resource:
        args.report(
            "resourceName", f"must be an extended resource name (domain/name), got {resource!r}"
        )
    reserve = args.boolean("reserveGPUNodes", default=defaults.reserve_gpu_nodes)
    return PackingArgs(resource, reserve)


class GPUPacking:
    """Filter and Score (see the package docstring). Both read one row at a time, so the
    answers are cached per pod shape (``row_local`` and ``sign``)."""

    name: Final = NAME
    row_local: Final = True
    normalizes: Final = False
    #: a node that gains or loses GPUs, or a new node, may undo a rejection
    events: Final = frozenset({ap.ClusterEvent.NODE_ADD, ap.ClusterEvent.NODE_ALLOCATABLE})

    def __init__(self, args: PackingArgs) -> None:
        self.resource = args.resource_name
        self.reserve = args.reserve_gpu_nodes

    def sign(self, pod: ap.PodInfo) -> Hashable:
        return pod.requests.get(self.resource, 0)

    # ------------------------------------------------------------------ Filter
    def filter(
        self, state: ap.CycleState, pod: ap.PodInfo, nodes: ap.Nodes, rows: ap.Rows
    ) -> ap.BoolMask:
        gpu_nodes = nodes.allocatable_of(self.resource)[rows] > 0
        if not self.reserve or pod.requests.get(self.resource, 0) > 0:
            return np.ones(len(gpu_nodes), dtype=np.bool_)
        keep: ap.BoolMask = ~gpu_nodes
        return keep

    def explain(
        self, state: ap.CycleState, pod: ap.PodInfo, nodes: ap.Nodes, row: int
    ) -> ap.Status:
        return ap.Status.unresolvable(REASON)

    # ------------------------------------------------------------------ Score
    def pre_score(self, state: ap.CycleState, pod: ap.PodInfo, nodes: ap.Nodes) -> ap.Status:
        return ap.Status.success() if pod.requests.get(self.resource, 0) > 0 else ap.Status.skip()

    def score(
        self, state: ap.CycleState, pod: ap.PodInfo, nodes: ap.Nodes, rows: ap.Rows
    ) -> ap.ScoreArray:
        """``100 * (allocatable - free_after) // allocatable``; 0 on nodes without GPUs (the
        fit filter rejects those for a GPU pod anyway)."""
        want = pod.requests.get(self.resource, 0)
        total = nodes.allocatable_of(self.resource)[rows]
        free_after = nodes.free_of(self.resource)[rows] - want
        used_after = np.clip(total - free_after, 0, total)
        scores = np.zeros(len(total), dtype=np.int64)
        has = total > 0
        scores[has] = used_after[has] * ap.MAX_SCORE // total[has]
        return scores

    def normalize(
        self, state: ap.CycleState, scores: ap.ScoreArray, taking_part: ap.BoolMask
    ) -> ap.ScoreArray:
        return scores


PLUGIN: Final = ap.declare(
    GPUPacking,
    api_version="1.0",
    args=ap.ArgsSpec(
        kind="GPUPackingArgs",
        fields=frozenset({"resourceName", "reserveGPUNodes"}),
        read=read_args,
    ),
)
