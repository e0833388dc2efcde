"""records.bound_to is dataclasses.replace(pod, node_name=...) exactly."""

from __future__ import annotations

import dataclasses

import pytest

from asched.cluster.decode import decode_pod
from asched.cluster.records import PodInfo, bound_to
from asched.tools.bench import templates


def _pod(**spec: object) -> PodInfo:
    raw = templates.pod("web-1", cpu="250m", memory="1Gi")
    raw["spec"].update(spec)
    return decode_pod(raw)


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(_pod(), id="plain"),
        pytest.param(_pod(priority=7, nodeName="old"), id="bound-elsewhere"),
        pytest.param(
            _pod(tolerations=[{"key": "k", "operator": "Exists"}], nodeSelector={"a": "b"}),
            id="tolerations-and-selector",
        ),
    ],
)
def test_bound_to_is_replace(pod: PodInfo) -> None:
    bound = bound_to(pod, "node-9")
    assert bound == dataclasses.replace(pod, node_name="node-9")
    assert not hasattr(PodInfo, "__post_init__")  # what bound_to relies on
    assert bound.node_name == "node-9"
    assert pod.node_name != "node-9"  # the original is untouched
    for field in dataclasses.fields(PodInfo):  # every other field is the same object
        if field.name != "node_name":
            assert getattr(bound, field.name) is getattr(pod, field.name), field.name
