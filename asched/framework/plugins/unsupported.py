"""Stand-ins for the default plugins asched does not model yet.

VolumeRestrictions, NodeVolumeLimits and VolumeZone keep their upstream names (so
existing configurations load); their PreFilter always Skips, and so do their Filter and
Score.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Final

import numpy as np

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.args import IN_TREE_ARGS
from asched.framework.cycle_state import CycleState
from asched.framework.interface import BoolMask, Handle, PreFilterResult, ScoreArray
from asched.framework.spec import API_VERSION, PluginSpec, declare
from asched.framework.status import Status

#: The stand-ins and the extension points each offers (upstream's plugins' points).
POINTS: Final = {
    "VolumeRestrictions": ("preFilter", "filter"),
    "NodeVolumeLimits": ("preFilter", "filter"),
    "VolumeZone": ("preFilter", "filter"),
}
NAMES: Final = tuple(POINTS)


_SKIP: Final = PreFilterResult(Status.skip())


class Unsupported:
    """A skipping PreFilter with pass-through Filter and a skipped Score."""

    row_local: Final = True
    normalizes: Final = False

    def sign(self, pod: PodInfo) -> Hashable:
        """Its Filter and Score answer the same for every pod."""
        return ()

    def __init__(self, name: str) -> None:
        self.name = name

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        return _SKIP

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        return np.ones(size_of(rows), dtype=np.bool_)

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        return Status.success()

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Status:
        return Status.skip()

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> ScoreArray:
        return np.zeros(size_of(rows), dtype=np.int64)

    def normalize(self, state: CycleState, scores: ScoreArray, taking_part: BoolMask) -> ScoreArray:
        return scores

    def reserve(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        return Status.success()

    def unreserve(self, state: CycleState, pod: PodInfo, node: str) -> None:
        return None

    async def pre_bind(self, state: CycleState, pod: PodInfo, node: str) -> Status:
        return Status.success()


def factory_for(name: str) -> Callable[[object | None, Handle | None], Unsupported]:
    """A registry factory producing the stand-in named ``name``."""

    def factory(args: object | None, handle: Handle | None) -> Unsupported:
        return Unsupported(name)

    return factory


SPECS: Final[tuple[PluginSpec, ...]] = tuple(
    declare(
        Unsupported,
        name=name,
        api_version=API_VERSION,
        factory=factory_for(name),
        args=IN_TREE_ARGS.get(name),
        points=points,
    )
    for name, points in POINTS.items()
)
