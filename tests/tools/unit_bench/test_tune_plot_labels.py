"""The tune plot's labels: beside their own point, never on another label or point.

Once each label alternated above and below its point, so with neighbours measured alike
"10 %" was drawn under the 100 % point. Coordinates are display points (1/72 inch).
"""

from __future__ import annotations

import itertools

import pytest

from asched.tools.bench.plot import LABEL_GAP, LABEL_HEIGHT, LABEL_WIDTH, label_offsets


def _boxes(points, offsets):
    """(left, bottom) of each label, as placed."""
    return [
        (x + dx, y + dy - LABEL_HEIGHT / 2)
        for (x, y), (dx, dy) in zip(points, offsets, strict=True)
    ]


@pytest.mark.parametrize(
    "points",
    [
        pytest.param([(100.0, 300.0)], id="one point"),
        # 100 %, 50 %, 25 % measured alike: three points within a label's height
        pytest.param([(60.0, 300.0), (64.0, 304.0), (68.0, 306.0)], id="neighbours alike"),
        pytest.param([(60.0, 300.0), (60.0, 300.0)], id="two settings on one point"),
        pytest.param([(60.0, 300.0), (90.0, 302.0), (400.0, 301.0)], id="one far to the right"),
        pytest.param([(50.0 + 3 * i, 200.0 + 2 * i) for i in range(8)], id="a crowd"),
    ],
)
def test_labels_overlap_neither_labels_nor_points(points):
    offsets = label_offsets(points)
    boxes = _boxes(points, offsets)

    for (a, b), (c, d) in itertools.combinations(boxes, 2):
        # labels side by side (within a label's width) are a label's height apart at least
        assert abs(a - c) >= LABEL_WIDTH or abs(b - d) >= LABEL_HEIGHT - 1e-9
    for (left, bottom), (x, y) in itertools.product(boxes, points):
        covers = left <= x < left + LABEL_WIDTH - LABEL_GAP and bottom < y < bottom + LABEL_HEIGHT
        assert not covers, (left, bottom, x, y)
    for dx, dy in offsets:
        assert dx == LABEL_GAP
        assert dy >= 0


def test_a_lone_label_sits_beside_its_point():
    assert label_offsets([(100.0, 300.0)]) == [(LABEL_GAP, 0.0)]
