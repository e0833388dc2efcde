"""``bench suite`` says why a short workload has no throughput figure.

upstream's integration-test workloads bind 10 pods in milliseconds: no one-second (nor
10 ms) sample can be filled twice, and the first sample is skipped. The cell said only
"no samples" for 10 of 12 workloads.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from asched.tools.bench.perf_suite import no_samples


def _run(times: list[float]) -> SimpleNamespace:
    return SimpleNamespace(measured=SimpleNamespace(bind_times=times))


@pytest.mark.parametrize(
    ("times", "text"),
    [
        # 10 pods between 0.100 s and 0.106 s: 6 ms
        pytest.param(
            [0.100 + i * 0.000_666 for i in range(10)],
            "no samples: 10 pods bound within 6 ms, too few for two samples",
            id="ten pods in six milliseconds",
        ),
        pytest.param(
            [2.5], "no samples: 1 pod bound within 0 ms, too few for two samples", id="one pod"
        ),
        pytest.param([], "no samples: no pod bound", id="none bound"),
    ],
)
def test_the_cell_says_why_there_is_no_sample(times: list[float], text: str) -> None:
    assert no_samples(_run(times)) == text  # type: ignore[arg-type]
