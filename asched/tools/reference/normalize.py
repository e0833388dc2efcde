"""NormalizeScore helpers, as plain functions over a list of raw scores.

Upstream: pkg/scheduler/framework/plugins/helper/normalize_score.go, DefaultNormalizeScore.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from asched.tools.reference.gomath import go_div

MAX_NODE_SCORE: Final = 100


def default_normalize(
    scores: Sequence[int], *, reverse: bool, max_priority: int = MAX_NODE_SCORE
) -> list[int]:
    """Upstream's ``DefaultNormalizeScore``: scale to ``[0, max_priority]`` by the maximum.

    With ``reverse`` the scaled score is subtracted from ``max_priority``. When every
    score is 0 (or negative), the scores are kept as they are, or all set to
    ``max_priority`` when ``reverse``.
    """
    highest = max((s for s in scores if s > 0), default=0)
    if highest == 0:
        return [max_priority for _ in scores] if reverse else list(scores)
    out = []
    for raw in scores:
        scaled = go_div(max_priority * raw, highest)
        out.append(max_priority - scaled if reverse else scaled)
    return out
