"""Extenders in preemption, over real HTTP.

Transcribed: ``TestConvertToMetaVictims`` and ``TestConvertToVictims``
(pkg/scheduler/extender_test.go: victims go out by UID to a nodeCacheCapable extender,
and the UIDs that come back are resolved to the pods on their node) and
``TestCallExtenders`` (pkg/scheduler/framework/preemption/preemption_test.go: the
extenders that support preemption narrow the candidates in turn). Upstream's fake
answers ``{"mock": {}}`` for "return no victims"; an HTTP extender answers the node with
an empty list instead (a node the cluster lacks fails earlier, see the last cases).
"""

from __future__ import annotations

import pytest

from asched.errors import ExtenderError
from asched.extenders.preempt_bind import run_preemption
from asched.extenders.protocol import NodeVictims
from asched.tools.bench.extender_server import ExtenderRules
from tests.builders import make_pod
from tests.unit.extender._support import pod, spec, started


def victim(name: str, uid: str, node: str, priority: int = 0) -> dict:
    raw = make_pod(name, node_name=node, priority=priority)
    raw["metadata"]["uid"] = uid
    return raw


def preempting(rules: ExtenderRules | None = None, **fields):
    return spec(rules, preempt=True, filterVerb="", prioritizeVerb="", **fields)


POD1, POD2, POD3, POD4 = (
    victim("pod1", "uid1", "node1"),
    victim("pod2", "uid2", "node2"),
    victim("pod3", "uid3", "node1"),
    victim("pod4", "uid4", "node2"),
)
ON_NODES = {
    "node1": {"uid1": POD1, "uid3": POD3},
    "node2": {"uid2": POD2, "uid4": POD4},
}
VICTIMS = {
    "node1": NodeVictims((POD1, POD3), num_pdb_violations=1),
    "node2": NodeVictims((POD2, POD4), num_pdb_violations=2),
}


async def test_convert_to_meta_victims_and_back() -> None:
    # TestConvertToMetaVictims: "NumPDBViolations is transferred from nodeNameToVictims to
    # nodeNameToMetaVictims"; TestConvertToVictims: "... from NodeNameToMetaVictims to
    # newNodeNameToVictims" (the server echoes what it got)
    _, raw = pod("preemptor", uid="preemptor", priority=1000)
    async with started(preempting(nodeCacheCapable=True)) as running:
        got = await running.extenders[0].process_preemption(raw, VICTIMS, ON_NODES.get)
    (call,) = running.servers[0].calls
    assert call.body["NodeNameToVictims"] is None
    assert call.body["NodeNameToMetaVictims"] == {
        "node1": {"Pods": [{"UID": "uid1"}, {"UID": "uid3"}], "NumPDBViolations": 1},
        "node2": {"Pods": [{"UID": "uid2"}, {"UID": "uid4"}], "NumPDBViolations": 2},
    }
    assert got == VICTIMS


async def test_full_victims_without_node_cache() -> None:
    _, raw = pod("preemptor", uid="preemptor")
    async with started(preempting()) as running:
        got = await running.extenders[0].process_preemption(raw, VICTIMS, ON_NODES.get)
    (call,) = running.servers[0].calls
    assert call.body["NodeNameToMetaVictims"] is None
    assert call.body["NodeNameToVictims"]["node2"] == {"Pods": [POD2, POD4], "NumPDBViolations": 2}
    assert call.body["Pod"] == raw
    assert got == VICTIMS


VICTIM = victim("victim", "victim", "node1", priority=100)
ONE = {"node1": NodeVictims((VICTIM,))}
PODS_ON = {"node1": {"victim": VICTIM}}.get


@pytest.mark.parametrize(
    ("specs", "candidates", "expected"),
    [
        pytest.param([], ONE, ONE, id="no extenders"),
        pytest.param([preempting()], ONE, ONE, id="one extender supports preemption"),
        pytest.param(
            [preempting(ExtenderRules(preempt_no_victims=True))],
            ONE,
            'expected at least one victim pod on node "node1"',
            id="one extender with return no victims",
        ),
        pytest.param(
            [preempting(preemptVerb="")],
            ONE,
            ONE,
            id="one extender does not support preemption",
        ),
        pytest.param(
            [preempting(ExtenderRules(preempt_no_victims=True), ignorable=True)],
            ONE,
            {},
            id="one extender with no return victims and is ignorable",
        ),
        pytest.param(
            [preempting(ExtenderRules(faults={"preempt": "status-500"}), ignorable=True)],
            ONE,
            ONE,
            id="one extender returns error and is ignorable",
        ),
        pytest.param(
            [preempting(ExtenderRules(faults={"preempt": "status-500"}))],
            ONE,
            "HTTP status 500, expected 200: the test extender failed on purpose",
            id="one extender returns error and is not ignorable",
        ),
        pytest.param([preempting()], {}, {}, id="one extender with empty victims input"),
    ],
)
async def test_call_extenders(specs, candidates, expected) -> None:
    info, raw = pod("preemptor", uid="preemptor", priority=1000)
    async with started(*specs) as running:
        if isinstance(expected, str):
            with pytest.raises(ExtenderError) as caught:
                await run_preemption(running.extenders, info, raw, candidates, PODS_ON)
            assert caught.value.detail == expected
            assert caught.value.verb == "preempt"
        else:
            got = await run_preemption(running.extenders, info, raw, candidates, PODS_ON)
            assert got == expected
    if not candidates:
        assert [s.calls for s in running.servers] == [[]]  # nothing to ask about


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        pytest.param(
            # the first extender rejects node2 (its filter rules), the second keeps the rest
            [preempting(ExtenderRules(fail=frozenset({"node2"}))), preempting()],
            {"node1": VICTIMS["node1"]},
            id="a node the extender's rules reject is dropped; the next extender sees the rest",
        ),
        pytest.param(
            [preempting(ExtenderRules(passes=frozenset()), nodeCacheCapable=True), preempting()],
            {},
            id="no node left: the later extenders are not asked",
        ),
    ],
)
async def test_extenders_narrow_the_candidates_in_turn(specs, expected) -> None:
    info, raw = pod("preemptor", uid="preemptor", priority=1000)
    async with started(*specs) as running:
        got = await run_preemption(running.extenders, info, raw, VICTIMS, ON_NODES.get)
    assert got == expected
    later = running.servers[1].calls
    if expected:
        (call,) = later
        assert set(call.body["NodeNameToVictims"]) == set(expected)
    else:
        assert later == []


@pytest.mark.parametrize(
    ("answer_fault", "on_nodes", "detail"),
    [
        pytest.param(
            "unknown-node",
            ON_NODES,
            'NodeNameToMetaVictims["no-such-node"]: no node "no-such-node" in the cluster',
            id="answer names a node the cluster does not have",
        ),
        pytest.param(
            None,
            {"node1": {"uid1": POD1}, "node2": ON_NODES["node2"]},
            'claims to preempt pod UID "uid3" on node "node1", but the pod is not on that node',
            id="answer names a pod that is not on its node (cache inconsistency)",
        ),
        pytest.param(
            "wrong-shape",
            ON_NODES,
            'the answer must be a JSON object, got the string "a string where an object belongs"',
            id="answer of the wrong type",
        ),
    ],
)
async def test_bad_preemption_answers(answer_fault, on_nodes, detail) -> None:
    info, raw = pod("preemptor", uid="preemptor")
    faults = {"preempt": answer_fault} if answer_fault else {}
    async with started(preempting(ExtenderRules(faults=faults))) as running:
        with pytest.raises(ExtenderError) as caught:
            await run_preemption(running.extenders, info, raw, VICTIMS, on_nodes.get)
    assert caught.value.detail == detail
