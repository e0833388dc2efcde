"""NodeAffinity PreFilter, Filter and Score.

Cases transcribed from upstream ``nodeaffinity/node_affinity_test.go`` (TestNodeAffinity,
TestNodeAffinityPriority). Where upstream checks a PreFilterResult, asched checks its
effect: a node outside the ``metadata.name`` set is rejected as
``node(s) didn't satisfy plugin NodeAffinity`` without running Filter.
Not transcribed: "Pod with an invalid value in Affinity term" (the decoder does not
validate label values, see the report of issue 5).
"""

from __future__ import annotations

import pytest

from asched.config.types import NodeAffinityArgs
from asched.framework.status import Code
from tests.builders import (
    FITS,
    added_affinity,
    expr,
    make_node,
    make_pod,
    name_in,
    node_affinity,
    outcome,
    pod_info,
    profile_with,
    scores_of,
    snapshot_of,
    term,
)

AFFINITY = "NodeAffinity"
UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
POD_MISMATCH = (AFFINITY, UNRESOLVABLE, ("node(s) didn't match Pod's node affinity/selector",))
ENFORCED_MISMATCH = (
    AFFINITY,
    UNRESOLVABLE,
    ("node(s) didn't match scheduler-enforced node affinity",),
)
OUTSIDE_RESULT = (AFFINITY, UNRESOLVABLE, ("node(s) didn't satisfy plugin NodeAffinity",))
CONFLICT = (AFFINITY, UNRESOLVABLE, ("pod affinity terms conflict",))


def required(*terms):
    return node_affinity(required=list(terms))


FILTER_CASES = [
    pytest.param(
        make_pod(node_selector={"foo": "bar"}), {}, "node1", None, POD_MISMATCH, id="missing labels"
    ),
    pytest.param(
        make_pod(node_selector={"foo": "bar"}),
        {"foo": "bar"},
        "node1",
        None,
        FITS,
        id="same labels",
    ),
    pytest.param(
        make_pod(node_selector={"foo": "bar"}),
        {"foo": "bar", "baz": "blah"},
        "node1",
        None,
        FITS,
        id="node labels are superset",
    ),
    pytest.param(
        make_pod(node_selector={"foo": "bar", "baz": "blah"}),
        {"foo": "bar"},
        "node1",
        None,
        POD_MISMATCH,
        id="node labels are subset",
    ),
    pytest.param(
        make_pod(affinity=required(term(expr("foo", "In", "bar", "value2")))),
        {"foo": "bar"},
        "node1",
        None,
        FITS,
        id="Pod with matchExpressions using In operator that matches the existing node",
    ),
    # Gt compares integers: 0206 > 0204
    pytest.param(
        make_pod(affinity=required(term(expr("kernel-version", "Gt", "0204")))),
        {"kernel-version": "0206"},
        "node1",
        None,
        FITS,
        id="Pod with matchExpressions using Gt operator that matches the existing node",
    ),
    pytest.param(
        make_pod(affinity=required(term(expr("mem-type", "NotIn", "DDR", "DDR2")))),
        {"mem-type": "DDR3"},
        "node1",
        None,
        FITS,
        id="Pod with matchExpressions using NotIn operator that matches the existing node",
    ),
    # upstream's selector parser rejects the value, so the whole term matches nothing
    pytest.param(
        make_pod(affinity=required(term(expr("mem-type", "NotIn", "invalid value: ___@#$%^")))),
        {"mem-type": "DDR"},
        "node1",
        None,
        POD_MISMATCH,
        id="Pod with an invalid value in a NotIn expression matches no node",
    ),
    pytest.param(
        make_pod(affinity=required(term(expr("GPU", "Exists")))),
        {"GPU": "NVIDIA-GRID-K1"},
        "node1",
        None,
        FITS,
        id="Pod with matchExpressions using Exists operator that matches the existing node",
    ),
    pytest.param(
        make_pod(affinity=required(term(expr("foo", "In", "value1", "value2")))),
        {"foo": "bar"},
        "node1",
        None,
        POD_MISMATCH,
        id="Pod with affinity that don't match node's labels won't schedule onto the node",
    ),
    # a term with an empty matchExpressions list matches nothing
    pytest.param(
        make_pod(affinity=required({"matchExpressions": []})),
        {"foo": "bar"},
        "node1",
        None,
        POD_MISMATCH,
        id="Pod with empty MatchExpressions is not a valid value will match no objects",
    ),
    # nothing required: PreFilter skips, every node fits
    pytest.param(
        make_pod(),
        {"foo": "bar"},
        "node1",
        None,
        FITS,
        id="Pod with no Affinity will schedule onto a node",
    ),
    pytest.param(
        make_pod(affinity={}),
        {"foo": "bar"},
        "node1",
        None,
        FITS,
        id="Pod with Affinity but nil NodeSelector will schedule onto a node",
    ),
    pytest.param(
        make_pod(
            affinity=required(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")))
        ),
        {"GPU": "NVIDIA-GRID-K1"},
        "node1",
        None,
        FITS,
        id="Pod with multiple matchExpressions ANDed that matches the existing node",
    ),
    pytest.param(
        make_pod(affinity=required(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")))),
        {"GPU": "NVIDIA-GRID-K1"},
        "node1",
        None,
        POD_MISMATCH,
        id="Pod with multiple matchExpressions ANDed that doesn't match the existing node",
    ),
    pytest.param(
        make_pod(
            affinity=required(
                term(expr("foo", "In", "bar", "value2")),
                term(expr("diffkey", "In", "wrong", "value2")),
            )
        ),
        {"foo": "bar"},
        "node1",
        None,
        FITS,
        id="Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels",
    ),
    pytest.param(
        make_pod(node_selector={"foo": "bar"}, affinity=required(term(expr("foo", "Exists")))),
        {"foo": "bar"},
        "node1",
        None,
        FITS,
        id="Pod with an Affinity and a PodSpec.NodeSelector both are satisfied",
    ),
    pytest.param(
        make_pod(node_selector={"foo": "bar"}, affinity=required(term(expr("foo", "Exists")))),
        {"foo": "barrrrrr"},
        "node1",
        None,
        POD_MISMATCH,
        id="Pod with an Affinity matches node's labels but the PodSpec.NodeSelector is not satisfied",
    ),
    pytest.param(
        make_pod(affinity=required(term(fields=[name_in("node1")]))),
        {},
        "node1",
        None,
        FITS,
        id="Pod with matchFields using In operator that matches the existing node",
    ),
    # PreFilter keeps only node1: node2 is never filtered
    pytest.param(
        make_pod(affinity=required(term(fields=[name_in("node1")]))),
        {},
        "node2",
        None,
        OUTSIDE_RESULT,
        id="Pod with matchFields using In operator that does not match the existing node",
    ),
    # the first term's names intersect to nothing, the second term has no name field:
    # no restriction; node2 matches the second term
    pytest.param(
        make_pod(
            affinity=required(
                term(fields=[name_in("node1"), name_in("node2")]), term(expr("foo", "In", "bar"))
            )
        ),
        {"foo": "bar"},
        "node2",
        None,
        FITS,
        id="Pod with two terms: matchFields does not match, but matchExpressions matches",
    ),
    pytest.param(
        make_pod(affinity=required(term(expr("foo", "In", "bar"), fields=[name_in("node1")]))),
        {"foo": "bar"},
        "node2",
        None,
        OUTSIDE_RESULT,
        id="Pod with one term: matchFields does not match, but matchExpressions matches",
    ),
    pytest.param(
        make_pod(affinity=required(term(expr("foo", "In", "bar"), fields=[name_in("node1")]))),
        {"foo": "bar"},
        "node1",
        None,
        FITS,
        id="Pod with one term: both matchFields and matchExpressions match",
    ),
    pytest.param(
        make_pod(
            affinity=required(
                term(fields=[name_in("node1")]), term(expr("foo", "In", "not-match-to-bar"))
            )
        ),
        {"foo": "bar"},
        "node2",
        None,
        POD_MISMATCH,
        id="Pod with two terms: both matchFields and matchExpressions do not match",
    ),
    # union of the terms' names: {node1, node2}
    pytest.param(
        make_pod(
            affinity=required(term(fields=[name_in("node1")]), term(fields=[name_in("node2")]))
        ),
        {},
        "node2",
        None,
        FITS,
        id="Pod with two terms of node.Name affinity",
    ),
    # node1 AND node2 in one term: empty set, PreFilter rejects the pod on every node
    pytest.param(
        make_pod(affinity=required(term(fields=[name_in("node1"), name_in("node2")]))),
        {"foo": "bar"},
        "node2",
        None,
        CONFLICT,
        id="Pod with two conflicting mach field requirements",
    ),
    pytest.param(
        make_pod(affinity=required(term(expr("zone", "In", "foo")))),
        {"zone": "foo"},
        "node2",
        required(term(fields=[name_in("node2")])),
        FITS,
        id="Matches added affinity and Pod's node affinity",
    ),
    pytest.param(
        make_pod(affinity=required(term(expr("zone", "In", "bar")))),
        {"zone": "foo"},
        "node2",
        required(term(fields=[name_in("node2")])),
        POD_MISMATCH,
        id="Matches added affinity but not Pod's node affinity",
    ),
    pytest.param(
        make_pod(),
        {"zone": "foo"},
        "node2",
        required(term(expr("zone", "In", "bar"))),
        ENFORCED_MISMATCH,
        id="Doesn't match added affinity",
    ),
    # asched: the scheduler-enforced affinity is checked first
    pytest.param(
        make_pod(node_selector={"zone": "bar"}),
        {"zone": "foo"},
        "node2",
        required(term(expr("zone", "In", "bar"))),
        ENFORCED_MISMATCH,
        id="added affinity is reported before the pod's own selector",
    ),
    # asched: Lt with a label that is not an integer never matches
    pytest.param(
        make_pod(affinity=required(term(expr("kernel-version", "Lt", "10")))),
        {"kernel-version": "v2"},
        "node1",
        None,
        POD_MISMATCH,
        id="Lt against a non-integer label does not match",
    ),
    # asched: DoesNotExist and NotIn on a missing label both match
    pytest.param(
        make_pod(affinity=required(term(expr("gpu", "DoesNotExist"), expr("zone", "NotIn", "a")))),
        {"foo": "bar"},
        "node1",
        None,
        FITS,
        id="DoesNotExist and NotIn match a node without the label",
    ),
]


@pytest.mark.parametrize(
    "run_pre_filter", [True, False], ids=["with PreFilter", "without PreFilter"]
)
@pytest.mark.parametrize(("pod", "labels", "node_name", "added", "want"), FILTER_CASES)
def test_node_affinity_filter(
    evaluate, pod, labels, node_name, added, want, run_pre_filter
) -> None:
    if not run_pre_filter and want in (OUTSIDE_RESULT, CONFLICT):
        # without PreFilter, only Filter judges the node: the pod's terms do not match it
        want = POD_MISMATCH
    node = make_node(node_name, labels=labels)
    args = {AFFINITY: NodeAffinityArgs(added_affinity=added_affinity(added))} if added else None
    profile = profile_with(filter=(AFFINITY,), pre_filter=None if run_pre_filter else (), args=args)
    evaluation = evaluate(snapshot_of([node]), pod_info(pod), profile)
    assert outcome(evaluation, node_name) == want


def test_pre_filter_rejection_message(evaluate) -> None:
    nodes = [make_node("node1"), make_node("node2")]
    pod = make_pod(affinity=required(term(fields=[name_in("node1"), name_in("node2")])))
    evaluation = evaluate(snapshot_of(nodes), pod_info(pod), profile_with(filter=(AFFINITY,)))
    assert [outcome(evaluation, n) for n in ("node1", "node2")] == [CONFLICT, CONFLICT]
    assert evaluation.message == "0/2 nodes are available: pod affinity terms conflict."


def test_nodes_outside_the_name_set_are_counted_in_the_message(evaluate) -> None:
    # node1 and node3 are named; node3 fails the expression; node2 is not named
    nodes = [
        make_node("node1", labels={"foo": "bar"}),
        make_node("node2", labels={"foo": "bar"}),
        make_node("node3"),
    ]
    pod = make_pod(
        affinity=required(
            term(expr("foo", "In", "bar"), fields=[name_in("node1")]),
            term(expr("foo", "In", "bar"), fields=[name_in("node3")]),
        )
    )
    evaluation = evaluate(snapshot_of(nodes), pod_info(pod), profile_with(filter=(AFFINITY,)))
    assert [outcome(evaluation, n) for n in ("node1", "node2", "node3")] == [
        FITS,
        OUTSIDE_RESULT,
        POD_MISMATCH,
    ]
    assert evaluation.selected == "node1"
    evaluation = evaluate(snapshot_of(nodes[1:]), pod_info(pod), profile_with(filter=(AFFINITY,)))
    assert evaluation.message == (
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) didn't satisfy plugin NodeAffinity."
    )


# --- TestNodeAffinityPriority ----------------------------------------------------------

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

AFFINITY1 = node_affinity(preferred=[(2, term(expr("foo", "In", "bar")))])
AFFINITY2 = node_affinity(
    preferred=[
        (2, term(expr("foo", "In", "bar"))),
        (4, term(expr("key", "In", "value"))),
        (5, term(expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1"))),
    ]
)

PRIORITY_CASES = [
    # no preferred terms anywhere: PreScore skips, the plugin is absent
    pytest.param(
        make_pod(),
        {"node1": LABEL1, "node2": LABEL2, "node3": LABEL3},
        None,
        {"node1": None, "node2": None, "node3": None},
        id="all nodes are same priority as NodeAffinity is nil",
    ),
    # raw 0 everywhere: normalization keeps 0
    pytest.param(
        make_pod(affinity=AFFINITY1),
        {"node1": LABEL4, "node2": LABEL2, "node3": LABEL3},
        None,
        {"node1": 0, "node2": 0, "node3": 0},
        id="no node matches preferred scheduling requirements in NodeAffinity of pod",
    ),
    # raw 2, 0, 0 -> 100 * 2 / 2 = 100, 0, 0
    pytest.param(
        make_pod(affinity=AFFINITY1),
        {"node1": LABEL1, "node2": LABEL2, "node3": LABEL3},
        None,
        {"node1": 100, "node2": 0, "node3": 0},
        id="only node1 matches the preferred scheduling requirements of pod",
    ),
    # raw node1 2, node5 2 + 4 + 5 = 11, node2 4 -> 100 * 2 / 11 = 18, 100, 100 * 4 / 11 = 36
    pytest.param(
        make_pod(affinity=AFFINITY2),
        {"node1": LABEL1, "node5": LABEL5, "node2": LABEL2},
        None,
        {"node1": 18, "node5": 100, "node2": 36},
        id="all nodes matches the preferred scheduling requirements of pod but with different priorities",
    ),
    # the scheduler-enforced preference alone: raw 2, 0 -> 100, 0
    pytest.param(
        make_pod(),
        {"node1": LABEL1, "node2": LABEL2},
        AFFINITY1,
        {"node1": 100, "node2": 0},
        id="added affinity",
    ),
    # raw node1 2 (pod), node2 3 (added), node3 2 + 3 = 5 -> 40, 60, 100
    pytest.param(
        make_pod(affinity=AFFINITY1),
        {"node1": LABEL1, "node2": LABEL2, "node3": LABEL5},
        node_affinity(preferred=[(3, term(expr("key", "In", "value")))]),
        {"node1": 40, "node2": 60, "node3": 100},
        id="added affinity and pod has default affinity",
    ),
    # asched: a preferred term on metadata.name; weight 0 terms count nothing
    # raw node1 7, node2 0 -> 100, 0
    pytest.param(
        make_pod(
            affinity=node_affinity(
                preferred=[(7, term(fields=[name_in("node1")])), (0, term(expr("key", "Exists")))]
            )
        ),
        {"node1": LABEL1, "node2": LABEL2},
        None,
        {"node1": 100, "node2": 0},
        id="preferred matchFields term, weight 0 term ignored",
    ),
]


@pytest.mark.parametrize(("pod", "labels", "added", "want"), PRIORITY_CASES)
def test_node_affinity_priority(evaluate, pod, labels, added, want) -> None:
    nodes = [make_node(name, labels=node_labels) for name, node_labels in labels.items()]
    args = {AFFINITY: NodeAffinityArgs(added_affinity=added_affinity(added))} if added else None
    profile = profile_with(score=((AFFINITY, 2),), args=args)
    evaluation = evaluate(snapshot_of(nodes), pod_info(pod), profile)
    assert scores_of(evaluation, AFFINITY) == want


def test_priority_is_computed_even_if_pre_score_is_not_called(evaluate) -> None:
    nodes = [
        make_node("node1", labels=LABEL1),
        make_node("node5", labels=LABEL5),
        make_node("node2", labels=LABEL2),
    ]
    profile = profile_with(score=((AFFINITY, 2),), pre_score=())
    evaluation = evaluate(snapshot_of(nodes), pod_info(make_pod(affinity=AFFINITY2)), profile)
    assert scores_of(evaluation, AFFINITY) == {"node1": 18, "node5": 100, "node2": 36}
