"""The decoder's quick pass (``shapes._conforms``) against the full check: a body passes
the quick pass exactly when the full check neither refuses it nor drops a null from it,
so the full check (and its first error, in declared order) still decides everything else."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from asched.tools.sim.apiserver import shapes
from asched.tools.sim.apiserver.validation import DecodeFailure


def _pod(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"}},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "pause",
                    "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": 1}},
                }
            ],
            **spec,
        },
    }


def _full_check_leaves_alone(storage: str, body: dict[str, Any]) -> bool:
    """True when the full check neither raises nor changes ``body``."""
    copied = copy.deepcopy(body)
    try:
        shapes._check(copied, shapes.KINDS[storage], "")
    except DecodeFailure:
        return False
    return copied == body


@pytest.mark.parametrize(
    ("storage", "body", "conforms"),
    [
        pytest.param("pods", _pod(), True, id="a well-formed pod"),
        pytest.param("pods", _pod(priority=7), True, id="an int field"),
        pytest.param(
            "pods", {"metadata": {"creationTimestamp": None}}, True, id="a kept null timestamp"
        ),
        pytest.param("pods", _pod(nodeName=None), False, id="a null to drop"),
        pytest.param(
            "pods", {"metadata": {"labels": {"a": None}}}, False, id="a null map value to drop"
        ),
        pytest.param("pods", _pod(containers={"name": "c"}), False, id="an object for a list"),
        pytest.param("pods", _pod(priority=True), False, id="a boolean for an int"),
        pytest.param("pods", _pod(priority=2**63), False, id="an int past int64"),
        pytest.param("pods", _pod(priority=1.5), False, id="a float for an int"),
        pytest.param("pods", _pod(containers=[None]), False, id="a null list item"),
        pytest.param("pods", {"metadata": "p"}, False, id="a string for an object"),
        pytest.param("nodes", {"spec": {"unschedulable": 1}}, False, id="an int for a bool"),
    ],
)
def test_the_quick_pass_agrees_with_the_full_check(
    storage: str, body: dict[str, Any], conforms: bool
) -> None:
    assert shapes._conforms(body, shapes.KINDS[storage]) is conforms
    assert _full_check_leaves_alone(storage, body) is conforms


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["name", "labels", "spec", "containers", "priority", "image", "x"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(
    metadata=JSON_VALUES,
    spec=st.dictionaries(
        st.sampled_from(["containers", "priority", "nodeName", "tolerations", "x"]),
        JSON_VALUES,
        max_size=3,
    ),
)
def test_any_body_passes_the_quick_pass_only_when_the_full_check_leaves_it_alone(
    metadata: Any, spec: dict[str, Any]
) -> None:
    body = {"metadata": metadata, "spec": spec}
    assert shapes._conforms(body, shapes.KINDS["pods"]) == _full_check_leaves_alone("pods", body)
