"""NodeUnschedulable.

Cases transcribed from upstream ``nodeunschedulable/node_unschedulable_test.go``
(TestNodeUnschedulable), plus toleration variants of our own (the unschedulable taint
is ``node.kubernetes.io/unschedulable:NoSchedule`` with an empty value).
"""

from __future__ import annotations

import pytest

from asched.framework.status import Code
from tests.builders import (
    FITS,
    make_node,
    make_pod,
    outcome,
    pod_info,
    profile_with,
    snapshot_of,
    toleration,
)

UNSCHEDULABLE = "NodeUnschedulable"
CORDONED = (UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) were unschedulable",))
TAINT_KEY = "node.kubernetes.io/unschedulable"


@pytest.mark.parametrize(
    ("unschedulable", "tolerations", "want"),
    [
        pytest.param(
            True,
            [],
            CORDONED,
            id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param(False, [], FITS, id="Schedule pod to normal node"),
        pytest.param(
            True,
            [toleration(TAINT_KEY, effect="NoSchedule")],
            FITS,
            id="Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        # asched: the taint's value is empty; Exists tolerates whatever the value
        pytest.param(
            True,
            [toleration(TAINT_KEY, "Exists", effect="NoSchedule")],
            FITS,
            id="Exists toleration",
        ),
        pytest.param(
            True, [toleration(operator="Exists")], FITS, id="empty key with Exists tolerates it"
        ),
        pytest.param(
            True,
            [toleration(TAINT_KEY, "Exists", effect="NoExecute")],
            CORDONED,
            id="a NoExecute toleration does not tolerate the NoSchedule taint",
        ),
        pytest.param(
            True,
            [toleration(TAINT_KEY, "Equal", "true", "NoSchedule")],
            CORDONED,
            id="Equal with a non-empty value does not match the empty taint value",
        ),
    ],
)
def test_node_unschedulable(evaluate, unschedulable, tolerations, want) -> None:
    node = make_node("node", unschedulable=unschedulable)
    pod = make_pod(tolerations=tolerations)
    evaluation = evaluate(snapshot_of([node]), pod_info(pod), profile_with(filter=(UNSCHEDULABLE,)))
    assert outcome(evaluation, "node") == want
