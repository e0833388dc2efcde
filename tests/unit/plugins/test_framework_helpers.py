"""The reference's framework helpers: DefaultNormalizeScore, the FitError message and
the number of feasible nodes to find.

Cases transcribed from upstream ``helper/normalize_score_test.go``
(TestDefaultNormalizeScore), ``framework/types_test.go`` (TestFitError_Error) and
``schedule_one_test.go`` (TestNumFeasibleNodesToFind). These are pure functions of the
reference; the vectorised engine is held to the same numbers by the plugin tables and
the differential test.
"""

from __future__ import annotations

import pytest

from asched.engine import selection
from asched.framework import diagnosis
from asched.tools.reference.gomath import go_div, go_round
from asched.tools.reference.message import fit_error_message
from asched.tools.reference.normalize import default_normalize
from asched.tools.reference.sampling import num_feasible_nodes_to_find


@pytest.mark.parametrize(
    ("scores", "reverse", "want"),
    [
        # max 4: 100 * s / 4
        pytest.param([1, 2, 3, 4], False, [25, 50, 75, 100], id="case_0"),
        pytest.param([1, 2, 3, 4], True, [75, 50, 25, 0], id="case_1"),
        # max 1000: 100 * 10 / 1000 = 1, ...
        pytest.param([1000, 10, 20, 30], False, [100, 1, 2, 3], id="case_2"),
        pytest.param([1000, 10, 20, 30], True, [0, 99, 98, 97], id="case_3"),
        pytest.param([1, 1, 1, 1], False, [100, 100, 100, 100], id="case_4"),
        # 100 * 1 / 1000 = 0.1 -> 0
        pytest.param([1000, 1, 1, 1], False, [100, 0, 0, 0], id="case_5"),
        pytest.param([0, 1, 1, 1], True, [100, 0, 0, 0], id="case_6"),
        # asched: all zero stays zero, or becomes 100 in reverse
        pytest.param([0, 0], False, [0, 0], id="all zero"),
        pytest.param([0, 0], True, [100, 100], id="all zero reversed"),
    ],
)
def test_default_normalize_score(scores, reverse, want) -> None:
    assert default_normalize(scores, reverse=reverse) == want


PRE_FILTER_MSG = "Node(s) failed PreFilter plugin FalsePreFilter"
POST_FILTER_MSG = "Error running PostFilter plugin FailedPostFilter"
FILTER_1 = "Node(s) failed Filter plugin FalseFilter-1"
FILTER_2 = "Node(s) failed Filter plugin FalseFilter-2"


@pytest.mark.parametrize(
    ("num_nodes", "node_reasons", "pre_filter", "post_filter", "want"),
    [
        # the per-node copies of a PreFilter rejection are not counted
        pytest.param(
            3,
            [[PRE_FILTER_MSG]] * 3,
            PRE_FILTER_MSG,
            "",
            f"0/3 nodes are available: {PRE_FILTER_MSG}.",
            id="nodes failed Prefilter plugin",
        ),
        pytest.param(
            3,
            [[PRE_FILTER_MSG]] * 3,
            PRE_FILTER_MSG,
            POST_FILTER_MSG,
            f"0/3 nodes are available: {PRE_FILTER_MSG}. {POST_FILTER_MSG}",
            id="nodes failed Prefilter plugin and the preemption also failed",
        ),
        pytest.param(
            3,
            [[FILTER_1]] * 3,
            "",
            "",
            f"0/3 nodes are available: 3 {FILTER_1}.",
            id="nodes failed one Filter plugin with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            [[FILTER_1]] * 3,
            "",
            POST_FILTER_MSG,
            f"0/3 nodes are available: 3 {FILTER_1}. {POST_FILTER_MSG}",
            id="nodes failed one Filter plugin with a non-empty PostFilterMsg",
        ),
        # counts 1 and 2; "1 ..." sorts first
        pytest.param(
            3,
            [[FILTER_1], [FILTER_1], [FILTER_2]],
            "",
            "",
            f"0/3 nodes are available: 1 {FILTER_2}, 2 {FILTER_1}.",
            id="nodes failed two Filter plugins with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            [[FILTER_1], [FILTER_1], [FILTER_2]],
            "",
            POST_FILTER_MSG,
            f"0/3 nodes are available: 1 {FILTER_2}, 2 {FILTER_1}. {POST_FILTER_MSG}",
            id="nodes failed two Filter plugins with a non-empty PostFilterMsg",
        ),
        pytest.param(
            1,
            [["Node failed Permit plugin Permit-1"]],
            "",
            "",
            "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
            id="failed to Permit on node",
        ),
        pytest.param(
            1,
            [["Node failed Reserve plugin Reserve-1"]],
            "",
            "",
            "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1.",
            id="failed to Reserve on node",
        ),
        # asched: the sort is on the whole string, so "10 ..." comes before "2 ..."
        pytest.param(
            12,
            [["Y"]] * 2 + [["X"]] * 10,
            "",
            "",
            "0/12 nodes are available: 10 X, 2 Y.",
            id="counts sort as strings",
        ),
        # asched: every reason of a node counts (two per node here)
        pytest.param(
            2,
            [["Insufficient cpu", "Insufficient memory"], ["Insufficient cpu"]],
            "",
            "",
            "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.",
            id="several reasons per node",
        ),
    ],
)
@pytest.mark.parametrize("implementation", ["reference", "vectorised"])
def test_fit_error_message(
    implementation, num_nodes, node_reasons, pre_filter, post_filter, want
) -> None:
    if implementation == "reference":
        message = fit_error_message(
            num_nodes,
            node_reasons,
            pre_filter_message=pre_filter,
            post_filter_message=post_filter,
        )
    else:  # the framework's helper takes every node's reasons flattened
        message = diagnosis.fit_error_message(
            num_nodes,
            [reason for reasons in node_reasons for reason in reasons],
            pre_filter_message=pre_filter,
            post_filter_message=post_filter,
        )
    assert message == want


@pytest.mark.parametrize(
    ("percentage", "num_all_nodes", "want"),
    [
        pytest.param(
            0, 10, 10, id="not set percentageOfNodesToScore and nodes number not more than 50"
        ),
        pytest.param(
            40, 10, 10, id="set percentageOfNodesToScore and nodes number not more than 50"
        ),
        # adaptive: 50 - 1000 / 125 = 42 % -> 420
        pytest.param(
            0, 1000, 420, id="not set percentageOfNodesToScore and nodes number more than 50"
        ),
        pytest.param(
            40, 1000, 400, id="set percentageOfNodesToScore and nodes number more than 50"
        ),
        # adaptive: 50 - 6000 / 125 = 2 % -> raised to 5 % -> 300
        pytest.param(
            0, 6000, 300, id="not set percentageOfNodesToScore and nodes number more than 50*125"
        ),
        pytest.param(
            40, 6000, 2400, id="set percentageOfNodesToScore and nodes number more than 50*125"
        ),
        pytest.param(0, 99, 99, id="fewer than 100 nodes are all examined"),
        pytest.param(0, 100, 100, id="100 nodes: 50 - 0 = 50 % = 50 -> at least 100"),
        # 50 - 500 / 125 = 46 % -> 230
        pytest.param(0, 500, 230, id="500 nodes"),
        # 50 - 5000 / 125 = 10 % -> 500
        pytest.param(0, 5000, 500, id="5000 nodes"),
        pytest.param(0, 10000, 500, id="10000 nodes"),
        pytest.param(1, 1000, 100, id="a tiny percentage still finds 100"),
    ],
)
@pytest.mark.parametrize(
    "find",
    [num_feasible_nodes_to_find, selection.num_feasible_nodes_to_find],
    ids=["reference", "vectorised"],
)
def test_num_feasible_nodes_to_find(find, percentage, num_all_nodes, want) -> None:
    assert find(num_all_nodes, percentage) == want


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (-700, 30, -23), (0, -5, 0)],
)
def test_go_div_truncates_toward_zero(a, b, want) -> None:
    assert go_div(a, b) == want


@pytest.mark.parametrize(
    ("x", "want"),
    [(0.5, 1), (1.5, 2), (2.5, 3), (-0.5, -1), (-2.5, -3), (0.49999999999999994, 0), (3.875, 4)],
)
def test_go_round_half_away_from_zero(x, want) -> None:
    assert go_round(x) == want
