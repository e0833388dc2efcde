"""ImageLocality: favour nodes that already hold the pod's images.

Upstream: pkg/scheduler/framework/plugins/imagelocality/image_locality.go.

Each container's (init containers included) image, normalized to ``:latest`` when it
has no tag, contributes ``int(size * nodes_with_image / all_nodes)`` if the node lists
it. The sum is clamped to ``[23 MiB, 1000 MiB * containers]`` and scaled to 0..100.
"""

from __future__ import annotations

from typing import Final

from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.gomath import go_div
from asched.tools.reference.plugins.base import Plugin

MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * MB
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB
MAX_NODE_SCORE: Final = 100


def normalized_image_name(name: str) -> str:
    """Append ``:latest`` to an image reference without a tag."""
    return name if name.rfind(":") > name.rfind("/") else f"{name}:latest"


class ImageLocality(Plugin):
    """Score only (no normalization)."""

    name = "ImageLocality"

    def score(self, cycle: Cycle, node: NodeState) -> int:
        total_nodes = len(cycle.nodes)
        total = 0
        for image in cycle.pod.images:
            name = normalized_image_name(image)
            size = node.image_sizes.get(name)
            if size is not None:
                total += int(float(size) * (cycle.image_spread[name] / total_nodes))
        max_threshold = MAX_CONTAINER_THRESHOLD * len(cycle.pod.images)
        if total < MIN_THRESHOLD:
            total = MIN_THRESHOLD
        elif total > max_threshold:
            total = max_threshold
        return go_div(MAX_NODE_SCORE * (total - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)
