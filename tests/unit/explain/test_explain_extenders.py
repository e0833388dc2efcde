"""``asched explain`` with scheduler extenders, over real HTTP to test extender servers.

Every case goes config -> HTTP client -> test extender (``serve_extender``) -> the explain
step (:func:`asched.explain.extenders.evaluate_with_extenders`). Unless a case says
otherwise the profile has one plugin, TaintToleration (filter, and score with weight 3),
so the in-tree totals are easy to derive: a node without taints scores 100 x3 = 300, a
node with an untolerated PreferNoSchedule taint 0, and a NoSchedule taint rejects it.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
from aiohttp import web
from rich.console import Console

from asched.cluster.snapshot import Snapshot
from asched.engine.result import Evaluation
from asched.explain.engine import DROPPED_REASON, evaluate, table_of
from asched.explain.extenders import evaluate_with_extenders
from asched.explain.render import render
from asched.extenders.client import ExtenderClient
from asched.extenders.extender import build_extenders
from asched.tools.bench.extender_server import ExtenderRules, Fault, RunningExtender, serve_extender
from tests.builders import make_node, make_pod, pod_info, profile_with, snapshot_of
from tests.configs import default_config, load_config
from tests.unit.extender._support import TYPE_META, Spec, names_sent, spec

PROFILE = profile_with(filter=("TaintToleration",), score=(("TaintToleration", 3),))
PREFER = [("dedicated", "batch", "PreferNoSchedule")]
NO_SCHEDULE = [("dedicated", "batch", "NoSchedule")]
GPU = "example.com/gpu"

Raw = dict[str, Any]


def cluster(*taints: tuple[str, list[tuple[str, str, str]]]) -> Snapshot:
    """Nodes named and tainted as given, each 4 cpu / 32Gi."""
    return snapshot_of([make_node(name, taints=node_taints) for name, node_taints in taints])


FOUR = cluster(("n1", []), ("n2", []), ("n3", []), ("n4", NO_SCHEDULE))
TWO = cluster(("n1", []), ("n2", PREFER))


@asynccontextmanager
async def extenders_of(
    *entries: Spec | str, tls: bool = False
) -> AsyncIterator[tuple[list[RunningExtender], Any]]:
    """Start a test extender per :class:`Spec` (a str is an ``extenders[]`` entry's URL
    for a server that is not there, made ignorable); yield the servers and the built
    extenders, in upstream's call order."""
    async with AsyncExitStack() as stack:
        servers: list[RunningExtender] = []
        raw_entries: list[Raw] = []
        for entry in entries:
            if isinstance(entry, str):
                raw_entries.append(
                    {
                        "urlPrefix": entry,
                        "filterVerb": "filter",
                        "ignorable": True,
                        "prioritizeVerb": "prioritize",
                        "weight": 1,
                    }
                )
                continue
            server = await stack.enter_async_context(serve_extender(entry.rules, tls=tls))
            servers.append(server)
            raw_entries.append(server.entry(**entry.fields))
        config = load_config({**TYPE_META, "extenders": raw_entries})
        extenders = build_extenders(config.extenders, ExtenderClient)
        try:
            yield servers, extenders
        finally:
            for extender in extenders:
                await extender.close()


async def explain(
    snapshot: Snapshot, pod_raw: Raw, *entries: Spec | str, profile: Any = PROFILE, seed: int = 0
) -> tuple[Evaluation, list[RunningExtender]]:
    async with extenders_of(*entries) as (servers, extenders):
        evaluation = await evaluate_with_extenders(
            table_of(snapshot),
            pod_info(pod_raw),
            pod_raw,
            profile,
            extenders,
            snapshot.raw_nodes.__getitem__,
            seed=seed,
        )
    return evaluation, servers


def verdicts(evaluation: Evaluation) -> dict[str, Any]:
    return evaluation.to_json()["nodes"]


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        pytest.param(
            ExtenderRules(fail=frozenset({"n2"}), fail_reason="no GPU budget left on {node}"),
            {"n2": ("Unschedulable", ["no GPU budget left on n2"])},
            id="FailedNodes: Unschedulable with the extender's text",
        ),
        pytest.param(
            ExtenderRules(unresolvable=frozenset({"n3"}), unresolvable_reason="{node} retired"),
            {"n3": ("UnschedulableAndUnresolvable", ["n3 retired"])},
            id="FailedAndUnresolvableNodes: UnschedulableAndUnresolvable",
        ),
        pytest.param(
            ExtenderRules(
                fail=frozenset({"n1", "n2"}),
                unresolvable=frozenset({"n2"}),
                fail_reason="{node} is busy",
                unresolvable_reason="{node} is gone",
            ),
            {
                "n1": ("Unschedulable", ["n1 is busy"]),
                # in both maps: the unresolvable reason wins, as upstream
                "n2": ("UnschedulableAndUnresolvable", ["n2 is gone"]),
            },
            id="both codes at once",
        ),
    ],
)
async def test_filter_rejections_name_the_extender(
    rules: ExtenderRules, expected: dict[str, tuple[str, list[str]]]
) -> None:
    evaluation, (server,) = await explain(FOUR, make_pod("web"), spec(rules))
    nodes = verdicts(evaluation)
    for name, (code, reasons) in expected.items():
        assert nodes[name] == {
            "feasible": False,
            "plugin": server.url,
            "code": code,
            "reasons": reasons,
        }
    # n4's NoSchedule taint rejects it in-tree: it is never sent, and keeps its verdict
    assert names_sent(server, "filter") == [["n1", "n2", "n3"]]
    assert nodes["n4"]["plugin"] == "TaintToleration"
    survivors = {"n1", "n2", "n3"} - set(expected)
    assert {name for name, v in nodes.items() if v["feasible"]} == survivors
    assert names_sent(server, "prioritize") == [sorted(survivors)]
    assert evaluation.selected in survivors


async def test_no_node_left_is_a_fit_error_counting_the_extenders_reasons() -> None:
    rules = ExtenderRules(
        fail=frozenset({"n1", "n2"}),
        unresolvable=frozenset({"n3"}),
        fail_reason="no GPU budget left",
        unresolvable_reason="node retired",
    )
    evaluation, (server,) = await explain(FOUR, make_pod("web"), spec(rules))
    # 4 nodes: n4 by TaintToleration, n1 and n2 (same text: counted together), n3
    assert evaluation.message == (
        "0/4 nodes are available: 1 node retired, 1 node(s) had untolerated taint "
        "{dedicated: batch}, 2 no GPU budget left."
    )
    assert evaluation.selected is None
    assert evaluation.top == ()
    assert server.verbs_called() == ["filter"]  # no survivor: no prioritize call
    report = evaluation.to_json()["extenders"][0]
    assert report["prioritize"] == {"outcome": "not-called", "sent": 0, "error": None}


async def test_no_node_left_with_preemption_in_the_profile() -> None:
    # the default profile: DefaultPreemption sees the extender's Unschedulable nodes as
    # potential ones (as upstream's diagnosis holds them); nothing to evict on them
    rules = ExtenderRules(passes=frozenset(), fail_reason="no GPU budget left")
    profile = default_config().profiles[0]
    evaluation, _ = await explain(FOUR, make_pod("web", cpu="1"), spec(rules), profile=profile)
    not_helpful = (
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, "
        "3 No preemption victims found for incoming pod."
    )
    assert evaluation.message == (
        "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: batch}, "
        "3 no GPU budget left. " + not_helpful
    )
    assert evaluation.preemption is not None
    assert evaluation.preemption.message == not_helpful


@pytest.mark.parametrize(
    ("weight", "score", "totals", "top"),
    [
        # n1: TaintToleration 100 x3 = 300; n2 (PreferNoSchedule): 0 x3 = 0
        pytest.param(
            4, 10, {"n1": 300, "n2": 0 + 10 * 4 * 10}, ("n2",), id="n2: 10 x4 x10 = 400 wins"
        ),
        pytest.param(1, 10, {"n1": 300, "n2": 10 * 1 * 10}, ("n1",), id="n2: 10 x1 x10 = 100"),
        pytest.param(3, 10, {"n1": 300, "n2": 10 * 3 * 10}, ("n1", "n2"), id="n2: 300, a tie"),
    ],
)
async def test_prioritize_adds_score_times_weight_times_ten(
    weight: int, score: int, totals: dict[str, int], top: tuple[str, ...]
) -> None:
    rules = ExtenderRules(scores={"n2": score})  # n1: the default score, 0
    in_tree = evaluate(TWO, pod_info(make_pod("web")), PROFILE)
    assert in_tree.selected == "n1"
    evaluation, (server,) = await explain(TWO, make_pod("web"), spec(rules, weight=weight))
    nodes = verdicts(evaluation)
    assert {name: v["total"] for name, v in nodes.items()} == totals
    # the column is on the plugins' scale (score x10) and carries the extender's weight
    assert nodes["n2"]["scores"] == {"TaintToleration": 0, server.url: score * 10}
    assert nodes["n1"]["scores"] == {"TaintToleration": 100, server.url: 0}
    assert evaluation.weights == {"TaintToleration": 3, server.url: weight}
    assert evaluation.top == top
    assert evaluation.selected in top


@pytest.mark.parametrize(
    ("fault", "detail"),
    [
        pytest.param(
            "status-500",
            "HTTP status 500, expected 200: the test extender failed on purpose",
            id="HTTP 500",
        ),
        pytest.param("error", "the test extender failed on purpose", id="the answer's Error"),
        pytest.param(
            "unknown-node", 'Nodes names node "no-such-node", which was not sent', id="unknown node"
        ),
        pytest.param("not-json", "the answer is not JSON", id="garbage"),
    ],
)
async def test_a_failing_extender_ends_the_evaluation_as_an_error(
    fault: Fault, detail: str
) -> None:
    rules = ExtenderRules(faults={"filter": fault})
    evaluation, (server,) = await explain(FOUR, make_pod("web"), spec(rules))
    prefix = f"extender filter call to {server.url}/filter failed: "
    assert evaluation.message is not None
    assert evaluation.message.startswith(prefix + detail)
    assert evaluation.selected is None
    assert evaluation.top == ()
    nodes = verdicts(evaluation)
    for name in ("n1", "n2", "n3"):  # the nodes it was sent carry the Error
        assert nodes[name] == {
            "feasible": False,
            "plugin": server.url,
            "code": "Error",
            "reasons": [evaluation.message],
        }
    assert nodes["n4"]["plugin"] == "TaintToleration"
    assert server.verbs_called() == ["filter"]
    report = evaluation.to_json()["extenders"][0]
    assert report["filter"] == {"outcome": "error", "sent": 3, "error": evaluation.message}
    assert report["prioritize"]["outcome"] == "not-called"


@pytest.fixture
def dead_url() -> Any:
    """A loopback URL that refuses connections (bound, never listening)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{holder.getsockname()[1]}"


async def test_an_ignorable_extender_that_is_down_is_skipped_and_said(dead_url: str) -> None:
    in_tree = evaluate(TWO, pod_info(make_pod("web")), PROFILE)
    evaluation, _ = await explain(TWO, make_pod("web"), dead_url)
    # the in-tree answer, untouched
    assert evaluation.nodes == in_tree.nodes
    assert (evaluation.selected, evaluation.top, evaluation.message) == ("n1", ("n1",), None)
    (report,) = evaluation.to_json()["extenders"]
    assert report["ignorable"] is True
    assert report["filter"]["outcome"] == "skipped"
    assert report["filter"]["error"].startswith(f"extender filter call to {dead_url}/filter")
    assert "Cannot connect" in report["filter"]["error"]
    # upstream still asks it to prioritize; that fails too and adds nothing
    assert report["prioritize"]["outcome"] == "failed"
    console = Console(record=True, width=200)
    render(evaluation, console)
    assert "skipped (ignorable, failed): extender filter call to" in console.export_text()


async def test_a_failing_prioritizer_adds_nothing_even_when_not_ignorable() -> None:
    rules = ExtenderRules(scores={"n2": 10}, faults={"prioritize": "status-500"})
    evaluation, (server,) = await explain(TWO, make_pod("web"), spec(rules, weight=4))
    # upstream logs the error and lets the other scores decide: n1 300, n2 0
    assert evaluation.selected == "n1"
    assert verdicts(evaluation)["n2"] == {
        "feasible": True,
        "scores": {"TaintToleration": 0},
        "total": 0,
    }
    assert server.url not in evaluation.weights
    report = evaluation.to_json()["extenders"][0]
    assert report["prioritize"]["outcome"] == "failed"
    assert "HTTP status 500" in report["prioritize"]["error"]


@pytest.mark.parametrize(
    ("requests", "called"),
    [
        pytest.param({"cpu": "1"}, [], id="pod names no managed resource: not called"),
        pytest.param({GPU: "1"}, ["filter", "prioritize"], id="requests it: called"),
    ],
)
async def test_managed_resources_decide_whether_an_extender_is_called(
    requests: dict[str, str], called: list[str]
) -> None:
    managed = [{"name": GPU, "ignoredByScheduler": True}]
    rules = ExtenderRules(fail=frozenset({"n1"}))
    evaluation, (server,) = await explain(
        TWO, make_pod("web", requests=[requests]), spec(rules, managedResources=managed)
    )
    assert server.verbs_called() == called
    report = evaluation.to_json()["extenders"][0]
    if not called:
        assert report["filter"]["outcome"] == report["prioritize"]["outcome"] == "not-interested"
        assert verdicts(evaluation)["n1"]["feasible"] is True
    else:
        assert verdicts(evaluation)["n1"]["plugin"] == server.url


@pytest.mark.parametrize("node_cache_capable", [False, True], ids=["full Nodes", "NodeNames"])
async def test_what_the_extender_is_sent(node_cache_capable: bool) -> None:
    pod_raw = make_pod("web", cpu="500m")
    pod_raw["metadata"]["annotations"] = {"team": "search"}  # sent as given, not as decoded
    _, (server,) = await explain(FOUR, pod_raw, spec(nodeCacheCapable=node_cache_capable))
    assert server.verbs_called() == ["filter", "prioritize"]
    for call in server.calls:
        assert call.body["Pod"] == pod_raw
        if node_cache_capable:
            assert call.body["Nodes"] is None
            assert call.body["NodeNames"] == ["n1", "n2", "n3"]
        else:
            assert call.body["NodeNames"] is None
            # the snapshot's Node objects as the file gave them (n4 failed in-tree)
            assert call.body["Nodes"]["items"] == [FOUR.raw_nodes[n] for n in ("n1", "n2", "n3")]


async def test_filters_chain_in_upstream_order() -> None:
    # configured: an ignorable extender first, then two others; upstream calls the
    # non-ignorable ones first (in order), then the ignorable one, each sent the
    # previous one's survivors
    ignorable = spec(ExtenderRules(fail=frozenset({"n3"})), ignorable=True, prioritizeVerb="")
    first = spec(ExtenderRules(fail=frozenset({"n1"})), prioritizeVerb="")
    second = spec(ExtenderRules(fail=frozenset({"n2"})), prioritizeVerb="")
    evaluation, servers = await explain(FOUR, make_pod("web"), ignorable, first, second)
    assert [names_sent(s, "filter") for s in servers] == [
        [["n3"]],
        [["n1", "n2", "n3"]],
        [["n2", "n3"]],
    ]
    nodes = verdicts(evaluation)
    assert [nodes[n]["plugin"] for n in ("n1", "n2", "n3")] == [
        s.url for s in servers[1:] + servers[:1]
    ]
    assert (
        evaluation.message == "0/4 nodes are available: 1 node n1 failed the test extender, "
        "1 node n2 failed the test extender, 1 node n3 failed the test extender, "
        "1 node(s) had untolerated taint {dedicated: batch}."
    )
    assert [r.name for r in evaluation.extenders or ()] == [
        servers[1].url,
        servers[2].url,
        servers[0].url,
    ]
    reports = evaluation.extenders or ()
    assert [(r.filter.outcome, r.filter.sent) for r in reports] == [
        ("called", 3),
        ("called", 2),
        ("called", 1),
    ]
    assert {r.prioritize.outcome for r in reports} == {"not-offered"}


async def test_nothing_is_sent_when_no_node_passes_the_in_tree_filters() -> None:
    snapshot = cluster(("n1", NO_SCHEDULE), ("n2", NO_SCHEDULE))
    evaluation, (server,) = await explain(snapshot, make_pod("web"), spec())
    assert server.calls == []
    assert evaluation.message == (
        "0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: batch}."
    )
    report = evaluation.to_json()["extenders"][0]
    assert report["filter"]["outcome"] == report["prioritize"]["outcome"] == "not-called"


async def test_one_url_prefix_configured_twice_gets_two_columns() -> None:
    async with serve_extender(ExtenderRules(scores={"n2": 3})) as server:
        entries = [
            {**server.entry(), "filterVerb": "", "weight": 1},
            {**server.entry(), "filterVerb": "", "weight": 2},
        ]
        config = load_config({**TYPE_META, "extenders": entries})
        extenders = build_extenders(config.extenders, ExtenderClient)
        try:
            evaluation = await evaluate_with_extenders(
                table_of(TWO),
                pod_info(make_pod("web")),
                make_pod("web"),
                PROFILE,
                extenders,
                TWO.raw_nodes.__getitem__,
            )
        finally:
            for extender in extenders:
                await extender.close()
    # n2: 0 x3 + 30 x1 + 30 x2 = 90
    assert verdicts(evaluation)["n2"] == {
        "feasible": True,
        "scores": {"TaintToleration": 0, server.url: 30, f"{server.url} #2": 30},
        "total": 90,
    }


@asynccontextmanager
async def terse_extender() -> AsyncIterator[str]:
    """A nodeCacheCapable extender whose filter keeps no node and names none as failed
    (nodes left out without a reason, which upstream accepts)."""

    async def keep_none(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response({"NodeNames": []})

    app = web.Application()
    app.router.add_post("/filter", keep_none)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


async def test_a_node_left_out_without_a_reason_counts_nowhere() -> None:
    async with terse_extender() as url:
        entry = {"urlPrefix": url, "filterVerb": "filter", "nodeCacheCapable": True}
        config = load_config({**TYPE_META, "extenders": [entry]})
        extenders = build_extenders(config.extenders, ExtenderClient)
        try:
            evaluation = await evaluate_with_extenders(
                table_of(FOUR),
                pod_info(make_pod("web")),
                make_pod("web"),
                PROFILE,
                extenders,
                FOUR.raw_nodes.__getitem__,
            )
        finally:
            for extender in extenders:
                await extender.close()
    nodes = verdicts(evaluation)
    # upstream records no status for them: the FitError counts n4's taint only
    assert evaluation.message == (
        "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: batch}."
    )
    for name in ("n1", "n2", "n3"):
        assert nodes[name] == {
            "feasible": False,
            "plugin": url,
            "code": None,
            "reasons": [DROPPED_REASON],
        }


def test_without_extenders_the_json_has_no_extenders_key() -> None:
    evaluation = evaluate(TWO, pod_info(make_pod("web")), PROFILE)
    assert evaluation.extenders is None
    assert "extenders" not in evaluation.to_json()


def _victim(name: str, node: str) -> Raw:
    raw = make_pod(name, cpu="3", node_name=node, priority=0)
    raw["metadata"]["uid"] = f"uid-{name}"
    return raw


#: n1 and n2 (4 cpu each) each run a low-priority pod of 3 cpu: a 2-cpu pod of priority
#: 100 fits nowhere, and evicting either pod makes room (DefaultPreemption, offset 0,
#: prefers n1: the candidates tie on every criterion and n1 comes first)
CROWDED = snapshot_of(
    [make_node("n1"), make_node("n2")], [_victim("low-1", "n1"), _victim("low-2", "n2")]
)
CROWDED_FIT = "0/2 nodes are available: 2 Insufficient cpu."


@pytest.mark.parametrize(
    ("rules", "fields", "node", "victims", "post_filter"),
    [
        pytest.param(
            ExtenderRules(passes=frozenset({"n2"})),
            {},
            "n2",
            ["default/low-2"],
            "",
            id="the extender keeps n2 only: n2 is nominated, not n1",
        ),
        pytest.param(
            ExtenderRules(passes=frozenset({"n2"})),
            {"nodeCacheCapable": True},
            "n2",
            ["default/low-2"],
            "",
            id="nodeCacheCapable: victims go by UID and come back resolved",
        ),
        pytest.param(
            ExtenderRules(passes=frozenset()),
            {},
            None,
            [],
            "preemption: no candidate node for preemption",
            id="the extender keeps no node: no candidate (upstream's message)",
        ),
        pytest.param(
            ExtenderRules(faults={"preempt": "status-500"}),
            {},
            None,
            [],
            "preemption: ",
            id="a non-ignorable extender fails: preemption's Error",
        ),
        pytest.param(
            ExtenderRules(passes=frozenset({"n2"})),
            {"managedResources": [{"name": GPU}]},
            "n1",
            ["default/low-1"],
            "",
            id="not interested (no GPU asked): DefaultPreemption's own choice",
        ),
    ],
)
async def test_preempting_extenders_narrow_the_candidates(
    rules: ExtenderRules,
    fields: dict[str, Any],
    node: str | None,
    victims: list[str],
    post_filter: str,
) -> None:
    profile = default_config().profiles[0]
    pod_raw = make_pod("urgent", cpu="2", priority=100)
    preempting = spec(rules, preempt=True, filterVerb="", prioritizeVerb="", **fields)
    evaluation, servers = await explain(CROWDED, pod_raw, preempting, profile=profile)
    preemption = evaluation.preemption
    assert preemption is not None
    assert preemption.node == node
    assert [v.pod for v in preemption.victims] == victims
    assert preemption.message.startswith(post_filter)
    # the FitError message ends with preemption's when it failed, as the live one does
    assert evaluation.message == " ".join(filter(None, (CROWDED_FIT, preemption.message)))
    called = [call.verb for call in servers[0].calls]
    assert called == ([] if "managedResources" in fields else ["preempt"])
    if rules.faults:  # the extender's URL names the failure
        assert preemption.code.name == "ERROR"
        assert servers[0].url in preemption.message
