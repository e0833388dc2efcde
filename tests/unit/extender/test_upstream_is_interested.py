"""``TestIsInterested`` (pkg/scheduler/extender_test.go), transcribed, plus the fields around it.

An extender without managedResources wants every pod; otherwise it wants a pod when any
container or init container names a managed resource in its requests *or* limits, even
with a zero amount. The extender is built from an ExtenderConfig directly, as upstream
builds the HTTPExtender directly: "memory" is not a valid managed resource for the
config loader, but is what upstream's case uses.
"""

from __future__ import annotations

import pytest

from asched.config.types import ExtenderConfig, ManagedResource
from asched.extenders.client import ExtenderClient
from asched.extenders.extender import Extender
from tests.builders import container, make_pod


def extender(*managed: str) -> Extender:
    config = ExtenderConfig(
        url_prefix="http://127.0.0.1:1",
        managed_resources=tuple(ManagedResource(name) for name in managed),
    )
    return Extender(config, ExtenderClient(config))  # never called


@pytest.mark.parametrize(
    ("managed", "pod", "want"),
    [
        pytest.param((), make_pod(), True, id="Empty managed resources"),
        pytest.param(
            ("memory",),
            make_pod(containers=[container("app")]),
            False,
            id="Managed memory, empty resources",
        ),
        pytest.param(
            ("memory",),
            make_pod(requests=[{"memory": "0"}]),
            True,
            id="Managed memory, container memory with Requests",
        ),
        pytest.param(
            ("memory",),
            make_pod(containers=[container(limits={"memory": "0"})]),
            True,
            id="Managed memory, container memory with Limits",
        ),
        pytest.param(
            ("memory",),
            make_pod(containers=[container("app")], init=[{"memory": "0"}]),
            True,
            id="Managed memory, init container memory",
        ),
        # beyond upstream's table
        pytest.param(
            ("example.com/gpu",),
            make_pod(
                containers=[container("app", requests={"cpu": "1"})],
                init_containers=[container("setup", limits={"example.com/gpu": "1"})],
            ),
            True,
            id="extended resource in an init container's limits",
        ),
        pytest.param(
            ("example.com/gpu",),
            make_pod(requests=[{"cpu": "1"}], overhead={"example.com/gpu": "1"}),
            False,
            id="pod overhead is not a container's: not interested",
        ),
        pytest.param(
            ("example.com/gpu", "example.com/fpga"),
            make_pod(requests=[{"cpu": "1"}, {"example.com/fpga": "2"}]),
            True,
            id="any one of several managed resources in any container",
        ),
    ],
)
def test_is_interested(managed, pod, want) -> None:
    assert extender(*managed).is_interested(pod) is want
