"""The Bind extension point's answers and the metric labels of every point's runs."""

from __future__ import annotations

import asyncio

import pytest

from asched.cluster.decode import decode_pod
from asched.framework.cycle_state import CycleState
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status
from asched.tools.bench import templates
from tests.configs import default_config


class _Binder:
    def __init__(self, name: str, answer: Status) -> None:
        self.name = name
        self.answer = answer

    async def bind(self, state: CycleState, pod: object, node: str) -> Status:
        return self.answer


def _bind(binders: list[_Binder]) -> tuple[Status, list[tuple[str, str]]]:
    framework = Framework(default_config().profiles[0])
    framework.bind = binders  # type: ignore[assignment]
    observed: list[tuple[str, str]] = []
    framework.observe = lambda point, code, seconds: observed.append((point, code))
    pod = decode_pod(templates.pod("p"))
    status = asyncio.run(framework.run_bind(CycleState(), pod, "n1"))
    return status, observed


def test_the_first_binder_that_does_not_skip_answers() -> None:
    status, observed = _bind(
        [_Binder("Skipper", Status.skip()), _Binder("Binder", Status.success())]
    )
    assert (status.code, status.plugin) == (Code.SUCCESS, "Binder")
    assert observed == [("Bind", "Success")]


def test_no_binder_binding_the_pod_is_an_error() -> None:
    status, observed = _bind([_Binder("Skipper", Status.skip())])
    assert (status.code, status.message) == (Code.ERROR, "no bind plugin bound the pod")
    assert observed == [("Bind", "Error")]


@pytest.mark.parametrize(
    ("code", "upstream"),
    [
        pytest.param(Code.SUCCESS, "Success", id="Success"),
        pytest.param(Code.ERROR, "Error", id="Error"),
        pytest.param(Code.UNSCHEDULABLE, "Unschedulable", id="Unschedulable"),
        pytest.param(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "UnschedulableAndUnresolvable",
            id="UnschedulableAndUnresolvable",
        ),
        pytest.param(Code.WAIT, "Wait", id="Wait"),
        pytest.param(Code.SKIP, "Skip", id="Skip"),
        pytest.param(Code.PENDING, "Pending", id="Pending"),
    ],
)
def test_codes_are_spelled_as_kube_scheduler_spells_them(code: Code, upstream: str) -> None:
    assert code.upstream_name == upstream
