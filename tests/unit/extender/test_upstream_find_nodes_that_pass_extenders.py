"""``TestFindNodesThatPassExtenders`` and the extender case of ``TestSchedulerSchedulePod``
(pkg/scheduler/schedule_one_test.go), transcribed over real HTTP.

Upstream writes the extenders' statuses into the diagnosis the in-tree filters filled;
:func:`run_filters` returns them, and the caller merges them into its own (they can never
collide: an extender only sees nodes the in-tree filters passed). The merge below is that
caller. The fakes' reasons are ``FakeExtender: node "x" failed`` and ``FakeExtender: node
"x" failed and unresolvable``.
"""

from __future__ import annotations

import pytest

from asched.errors import ExtenderError
from asched.extenders.filter_score import run_filters
from asched.framework.status import Code, Status
from asched.tools.bench.extender_server import ExtenderRules
from tests.unit.extender._support import nodes, pod, spec, started

FAILED = 'FakeExtender: node "{node}" failed'
UNRESOLVABLE = 'FakeExtender: node "{node}" failed and unresolvable'


def fake(**rules) -> ExtenderRules:
    return ExtenderRules(fail_reason=FAILED, unresolvable_reason=UNRESOLVABLE, **rules)


def unschedulable(node: str) -> tuple[Code, str]:
    return Code.UNSCHEDULABLE, FAILED.format(node=node)


def unresolvable(node: str) -> tuple[Code, str]:
    return Code.UNSCHEDULABLE_AND_UNRESOLVABLE, UNRESOLVABLE.format(node=node)


A_OK_B_FAILS_C_UNRESOLVABLE = fake(fail=frozenset({"b"}), unresolvable=frozenset({"c"}))


@pytest.mark.parametrize(
    ("rules", "names", "previous", "expected_nodes", "expected_statuses"),
    [
        pytest.param(
            [ExtenderRules(faults={"filter": "error"}, fault_message="some error")],
            ["a"],
            {},
            ExtenderError,
            None,
            id="error",
        ),
        pytest.param([fake()], ["a"], {}, ("a",), {}, id="success"),
        pytest.param(
            [fake(passes=frozenset({"a"}))],
            ["a", "b"],
            {},
            ("a",),
            {"b": unschedulable("b")},
            id="unschedulable",
        ),
        pytest.param(
            [A_OK_B_FAILS_C_UNRESOLVABLE],
            ["a", "b", "c"],
            {},
            ("a",),
            {"b": unschedulable("b"), "c": unresolvable("c")},
            id="unschedulable and unresolvable",
        ),
        pytest.param(
            [A_OK_B_FAILS_C_UNRESOLVABLE],
            ["a", "b"],
            {"c": (Code.UNSCHEDULABLE, 'FakeFilterPlugin: node "c" failed')},
            ("a",),
            {
                "b": unschedulable("b"),
                "c": (Code.UNSCHEDULABLE, 'FakeFilterPlugin: node "c" failed'),
            },
            # the merge is the caller's; what run_filters owes it is statuses only for the
            # nodes it sent (checked for every case below), so "c" keeps the plugin's
            id="extender does not overwrite the previous statuses",
        ),
        pytest.param(
            [A_OK_B_FAILS_C_UNRESOLVABLE, fake(passes=frozenset({"a"}))],
            ["a", "b", "c"],
            {},
            ("a",),
            {"b": unschedulable("b"), "c": unresolvable("c")},
            id="multiple extenders",
        ),
    ],
)
async def test_find_nodes_that_pass_extenders(
    rules, names, previous, expected_nodes, expected_statuses
) -> None:
    info, raw = pod("1", uid="1")
    statuses = {node: Status(code, (reason,)) for node, (code, reason) in previous.items()}
    async with started(*(spec(r, prioritizeVerb="") for r in rules)) as running:
        if expected_nodes is ExtenderError:
            with pytest.raises(ExtenderError):
                await run_filters(running.extenders, info, raw, names, nodes(*names).__getitem__)
            return
        outcome = await run_filters(running.extenders, info, raw, names, nodes(*names).__getitem__)
    assert set(outcome.statuses) <= set(names)
    statuses.update(outcome.statuses)
    assert outcome.feasible == expected_nodes
    assert {n: (s.code, s.message) for n, s in statuses.items()} == expected_statuses


async def test_schedule_pod_with_extender_which_filters_out_some_nodes() -> None:
    # TestSchedulerSchedulePod "test with extender which filters out some Nodes": the
    # in-tree FakeFilter rejects node 3 (never sent), the FalsePredicateExtender the other
    # two; what run_filters owes the cycle: no feasible node, the extender's status for
    # each node it rejected, and ``filtered`` set (the cycle then adds "Extender" to the
    # unschedulable plugins, as upstream does)
    info, raw = pod("test-filter", uid="test-filter")
    passed = ["1", "2"]
    async with started(spec(fake(passes=frozenset()), prioritizeVerb="")) as running:
        outcome = await run_filters(
            running.extenders, info, raw, passed, nodes(*passed).__getitem__
        )
    assert outcome.feasible == ()
    assert {n: (s.code, s.message) for n, s in outcome.statuses.items()} == {
        "1": unschedulable("1"),
        "2": unschedulable("2"),
    }
    assert outcome.filtered
