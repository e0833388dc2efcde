"""The two plugins, their args and their declarations (see the package docstring)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from asched import plugin as ap

REASON: Final = "node(s) are in maintenance"


# ------------------------------------------------------------ Maintenance (a Filter)
@dataclass(frozen=True)
class MaintenanceArgs:
    node_annotation: str = "example.com/maintenance"
    pod_annotation: str = "example.com/ignore-maintenance"


def read_maintenance_args(args: ap.ArgsSection) -> MaintenanceArgs:
    """``MaintenanceArgs``: the two annotation keys, neither empty."""
    defaults = MaintenanceArgs()
    node_key = args.string("nodeAnnotation", defaults.node_annotation)
    pod_key = args.string("podAnnotation", defaults.pod_annotation)
    for key, value in (("nodeAnnotation", node_key), ("podAnnotation", pod_key)):
        if not value:
            args.report(key, "must not be empty")
    return MaintenanceArgs(node_key, pod_key)


class Maintenance:
    """Filter: a node annotated ``<nodeAnnotation>: "true"`` is in maintenance and
    rejected, unless the pod is annotated ``<podAnnotation>: "true"``."""

    name: Final = "Maintenance"
    row_local: Final = True  # a row's answer depends on that row and the pod only
    #: a node whose annotations change (its maintenance is over) or a new node may help
    events: Final = frozenset({ap.ClusterEvent.NODE_ANNOTATION, ap.ClusterEvent.NODE_ADD})

    def __init__(self, args: MaintenanceArgs) -> None:
        self.node_key = args.node_annotation
        self.pod_key = args.pod_annotation

    def ignores_maintenance(self, pod: ap.PodInfo) -> bool:
        return pod.annotations.get(self.pod_key) == "true"

    def sign(self, pod: ap.PodInfo) -> Hashable:
        return self.ignores_maintenance(pod)  # all the Filter reads of the pod

    def filter(
        self, state: ap.CycleState, pod: ap.PodInfo, nodes: ap.Nodes, rows: ap.Rows
    ) -> ap.BoolMask:
        """Over all rows at once: the annotation's column (str or None per row), compared."""
        values = nodes.annotation_values(self.node_key)[rows]
        if self.ignores_maintenance(pod):
            return np.ones(len(values), dtype=np.bool_)
        passing: ap.BoolMask = values != "true"
        return passing

    def explain(
        self, state: ap.CycleState, pod: ap.PodInfo, nodes: ap.Nodes, row: int
    ) -> ap.Status:
        # evicting pods does not end a maintenance: preemption skips such nodes
        return ap.Status.unresolvable(REASON)

    def queueing_hint(self, event: ap.ClusterEvent, pod: ap.PodInfo, changed: object) -> bool:
        """A node added or re-annotated helps only when it is not in maintenance."""
        if not isinstance(changed, ap.NodeInfo):
            return True
        return changed.annotations.get(self.node_key) != "true"


MAINTENANCE: Final = ap.declare(
    Maintenance,
    api_version="1.4",
    reads_annotations=True,  # without it, annotations read as empty
    args=ap.ArgsSpec(
        kind="MaintenanceArgs",
        fields=frozenset({"nodeAnnotation", "podAnnotation"}),
        read=read_maintenance_args,
    ),
)


# ------------------------------------------------------------ ZoneWeights (a Score)
@dataclass(frozen=True)
class ZoneArgs:
    zone_label: str = "topology.kubernetes.io/zone"
    zone_weights: Mapping[str, int] = field(default_factory=dict)  # zone -> 0..100
    default_weight: int = 0  # a node in a zone not listed, or with no zone label


def read_zone_args(args: ap.ArgsSection) -> ZoneArgs:
    """``ZoneWeightsArgs``: ``zoneWeights`` is a map whose keys are the user's zones."""
    defaults = ZoneArgs()
    label = args.string("zoneLabel", defaults.zone_label)
    weights = args.integer_map("zoneWeights", low=ap.MIN_SCORE, high=ap.MAX_SCORE)
    default = args.integer("defaultWeight", defaults.default_weight)
    if not ap.MIN_SCORE <= default <= ap.MAX_SCORE:
        args.report("defaultWeight", f"must be in {ap.MIN_SCORE}..{ap.MAX_SCORE}, got {default}")
        default = defaults.default_weight
    return ZoneArgs(label, weights, default)


class ZoneWeights:
    """Score: a node scores its zone's weight (``zoneWeights``), else ``defaultWeight``."""

    name: Final = "ZoneWeights"
    row_local: Final = True  # a row's score depends on that row only
    normalizes: Final = False  # the weights are final scores already (0..100)

    def __init__(self, args: ZoneArgs) -> None:
        self.args = args

    def sign(self, pod: ap.PodInfo) -> Hashable:
        return ()  # reads nothing of the pod: all pods share the cached scores

    def score(
        self, state: ap.CycleState, pod: ap.PodInfo, nodes: ap.Nodes, rows: ap.Rows
    ) -> ap.ScoreArray:
        codes, zones = nodes.label_codes(self.args.zone_label)  # -1: no zone label
        weights = self.args.zone_weights
        default = self.args.default_weight
        # one weight per distinct zone, and a last one that code -1 reads
        lookup = np.array([weights.get(z, default) for z in zones] + [default], dtype=np.int64)
        scores: ap.ScoreArray = lookup[codes[rows]]
        return scores

    def normalize(
        self, state: ap.CycleState, scores: ap.ScoreArray, taking_part: ap.BoolMask
    ) -> ap.ScoreArray:
        return scores  # required with score; not called, since normalizes is False


ZONE_WEIGHTS: Final = ap.declare(
    ZoneWeights,
    api_version="1.4",
    args=ap.ArgsSpec(
        kind="ZoneWeightsArgs",
        fields=frozenset({"zoneLabel", "zoneWeights", "defaultWeight"}),
        read=read_zone_args,
    ),
)
