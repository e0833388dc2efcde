"""Score normalization helpers shared by plugins.

Upstream: pkg/scheduler/framework/plugins/helper/normalize_score.go, DefaultNormalizeScore.
"""

from __future__ import annotations

import numpy as np

from asched.framework.interface import MAX_SCORE, BoolMask, ScoreArray


def default_normalize(scores: ScoreArray, taking_part: BoolMask, *, reverse: bool) -> ScoreArray:
    """Upstream's ``DefaultNormalizeScore`` over the rows taking part.

    ``mx = max``; if ``mx == 0``: every score becomes 100 when ``reverse`` else stays;
    otherwise ``s = 100 * s // mx`` and, when ``reverse``, ``100 - s``.
    """
    # all scores <= 0 (no taint, no preferred term matched: the common case): max is 0
    # without the masked reduction, which costs ~10x an unmasked one
    top = int(scores.max()) if scores.size else 0
    mx = 0 if top <= 0 else int(scores.max(where=taking_part, initial=0))
    if mx == 0:
        return np.full_like(scores, MAX_SCORE) if reverse else scores
    scaled: ScoreArray = scores * MAX_SCORE // mx
    return MAX_SCORE - scaled if reverse else scaled
