"""ImageLocality (Score): prefer nodes that already hold the pod's images.

Upstream: pkg/scheduler/framework/plugins/imagelocality/image_locality.go,
calculatePriority.

For each container (init containers included) whose normalized image name a node
lists: ``int(size * numNodes / totalNodes)``; the sum is clamped to
``[23 MiB, 1000 MiB * containers]`` and scaled to 0..100. Weight 1, no normalization.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

import numpy as np

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework.cycle_state import CycleState
from asched.framework.interface import MAX_SCORE, BoolMask, Handle, RowScore, ScoreArray
from asched.framework.spec import API_VERSION, declare

NAME: Final = "ImageLocality"
MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * MB
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Add ``:latest`` when the name carries no tag."""
    return name + ":latest" if name.rfind(":") <= name.rfind("/") else name


class ImageLocality:
    name: Final = NAME
    row_local: Final = True  # depends on the node count and image spread: table.epoch
    normalizes: Final = False

    def sign(self, pod: PodInfo) -> Hashable:
        return pod.images

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> ScoreArray:
        n = size_of(rows)
        total_nodes = table.n_nodes
        held_images = [table.images.holders(normalized_image_name(image)) for image in pod.images]
        if all(held is None for held in held_images):
            return np.zeros(n, dtype=np.int64)  # sum 0 clamps to the minimum: score 0
        sums = np.zeros(table.size, dtype=np.int64)
        for held in held_images:
            if held is None:
                continue
            holder_rows, sizes = held
            spread = len(holder_rows) / total_nodes
            np.add.at(sums, holder_rows, (sizes * spread).astype(np.int64))
        max_threshold = MAX_CONTAINER_THRESHOLD * len(pod.images)
        if max_threshold <= MIN_THRESHOLD:  # no containers: upstream's formula yields 0
            return np.zeros(n, dtype=np.int64)
        clamped = np.clip(sums[rows], MIN_THRESHOLD, max_threshold)
        score: ScoreArray = MAX_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)
        return score

    def row_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> RowScore | None:
        """:meth:`score` for one row in the common case (no node holds the pod's images:
        0 everywhere); otherwise None, and the vectorised :meth:`score` runs on the few
        rows (a pass over every row here would cost more than it saves)."""
        held_images = [table.images.holders(normalized_image_name(image)) for image in pod.images]
        if all(held is None for held in held_images):
            return lambda row: 0
        return None

    def normalize(self, state: CycleState, scores: ScoreArray, taking_part: BoolMask) -> ScoreArray:
        return scores


def factory(args: object | None, handle: Handle | None) -> ImageLocality:
    return ImageLocality()


SPEC: Final = declare(ImageLocality, api_version=API_VERSION, factory=factory)
