"""ResourceNeed: NodeResourcesFit's fit and reasons over free amounts by axis (upstream: pkg/scheduler/framework/plugins/noderesources/fit.go, fitsRequest).

Axes: 0 pods, 1 cpu (m), 2 memory; a pod asking 500m cpu and 100 memory, and
example.com/gpu, which no node has (axis None), in the last case. Four positions:
room for everything; no pod slot; cpu short; cpu and memory short.
"""

from __future__ import annotations

import numpy as np
import pytest

from asched.framework.diagnosis import TOO_MANY_PODS
from asched.framework.resource_fit import Check, ResourceNeed
from asched.framework.status import Code

CPU_MEM = (Check("cpu", 1, 500), Check("memory", 2, 100))
FREE = {
    0: np.array([1, 0, 3, 3], dtype=np.int64),
    1: np.array([500, 900, 499, 0], dtype=np.int64),  # 500 == 500 fits: equality fits
    2: np.array([100, 100, 100, 99], dtype=np.int64),
}


@pytest.mark.parametrize(
    ("checks", "fits", "reasons"),
    [
        pytest.param(
            CPU_MEM,
            [True, False, False, False],
            [
                [],
                [TOO_MANY_PODS],
                ["Insufficient cpu"],
                ["Insufficient cpu", "Insufficient memory"],
            ],
            id="pods first, then the checks in order",
        ),
        pytest.param(
            (Check("cpu", 1, 500), Check("example.com/gpu", None, 1)),
            [False] * 4,
            [
                ["Insufficient example.com/gpu"],
                [TOO_MANY_PODS, "Insufficient example.com/gpu"],
                ["Insufficient cpu", "Insufficient example.com/gpu"],
                ["Insufficient cpu", "Insufficient example.com/gpu"],
            ],
            id="a resource no node has fits nowhere",
        ),
    ],
)
def test_fit_and_reasons_agree_every_way(
    checks: tuple[Check, ...], fits: list[bool], reasons: list[list[str]]
) -> None:
    need = ResourceNeed(0, checks)
    assert need.fits(FREE, 4).tolist() == fits
    rows = np.arange(4, dtype=np.intp)
    assert need.fits(FREE, 4, rows).tolist() == fits  # through a row selection
    assert [need.reasons(FREE, at) for at in range(4)] == reasons
    codes = need.pattern(FREE, 4)
    assert [need.reasons_of(int(c)) for c in codes] == reasons
    statuses = need.statuses(codes, "Fit")
    assert [list(s.reasons) for s in statuses] == reasons
    assert [s.ok for s in statuses] == fits
    assert all(s.plugin == "Fit" for s in statuses if not s.ok)


def test_positions_short_of_the_same_things_share_one_status() -> None:
    need = ResourceNeed(0, CPU_MEM)
    # codes: bit 0 pods, bit 1 cpu, bit 2 memory; positions 0 and 2 both lack cpu only
    statuses = need.statuses(np.array([2, 6, 2, 0], dtype=np.int64), "Fit")
    assert statuses[0] is statuses[2]
    assert statuses[0].code == Code.UNSCHEDULABLE
    assert statuses[1].reasons == ("Insufficient cpu", "Insufficient memory")
    assert statuses[3].ok
