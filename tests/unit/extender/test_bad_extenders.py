"""Bad extenders: down, slow past httpTimeout, 500, not JSON, the wrong shape, unknown nodes.

Each failure is an :class:`~asched.errors.ExtenderError` whose message names the call
(verb and URL) and says what went wrong in one line; no aiohttp, OS or JSON error gets
out. What the semantics then do with it, per verb, as upstream:

* filter: a non-ignorable extender fails the attempt (the error propagates), an
  ignorable one is skipped and the nodes pass through it unchanged;
* prioritize: the extender's scores are left out, ignorable or not;
* bind: an Error status, or (ignorable) no binding by extenders, so the Bind plugins bind.

Timeouts are real (0.2 s) because the sockets are; the hanging server answers only when
it stops, so nothing waits beyond the timeout.
"""

from __future__ import annotations

import socket

import pytest

from asched.config.types import ExtenderConfig
from asched.errors import ExtenderError
from asched.extenders.client import ExtenderClient
from asched.extenders.extender import Extender
from asched.extenders.filter_score import run_filters, run_prioritizers
from asched.extenders.preempt_bind import run_bind
from asched.framework.status import Code
from asched.tools.bench.extender_server import ExtenderRules
from tests.unit.extender._support import nodes, pod, spec, started

NAMES = ["node1", "node2"]
NODES = nodes(*NAMES)
FAULTS = [
    pytest.param(
        "hang",
        False,
        "no answer within httpTimeout (0.2s)",
        id="slow past httpTimeout",
    ),
    pytest.param(
        "status-500",
        False,
        "HTTP status 500, expected 200: the test extender failed on purpose",
        id="HTTP 500",
    ),
    pytest.param(
        "not-json",
        True,
        "the answer is not JSON (unexpected character: line 1 column 1 (char 0))",
        id="garbage JSON",
    ),
    pytest.param(
        "wrong-shape",
        False,
        'the answer must be a JSON object, got the string "a string where an object belongs"',
        id="JSON of the wrong shape",
    ),
    pytest.param(
        "unknown-node",
        False,
        'Nodes names node "no-such-node", which was not sent',
        id="unknown node name",
    ),
    pytest.param(
        "error",
        False,
        "the test extender failed on purpose",
        id="the answer's Error field",
    ),
]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(("fault", "prefix_only", "detail"), FAULTS)
async def test_failing_filter_fails_the_attempt(fault, prefix_only, detail) -> None:
    info, raw = pod()
    rules = ExtenderRules(faults={"filter": fault})
    async with started(spec(rules, httpTimeout="200ms")) as running:
        with pytest.raises(ExtenderError) as caught:
            await run_filters(running.extenders, info, raw, NAMES, NODES.__getitem__)
    url = f"{running.servers[0].url}/filter"
    error = caught.value
    assert (error.url, error.verb) == (url, "filter")
    if prefix_only:  # the JSON parser's wording is its own; the start is ours
        assert error.detail.startswith(detail.split("(")[0])
    else:
        assert error.detail == detail
    assert str(error) == f"extender filter call to {url} failed: {error.detail}"
    assert "\n" not in str(error)


@pytest.mark.parametrize(("fault", "prefix_only", "detail"), FAULTS)
async def test_failing_ignorable_filter_is_skipped(fault, prefix_only, detail) -> None:
    info, raw = pod()
    failing = spec(ExtenderRules(faults={"filter": fault}), httpTimeout="200ms", ignorable=True)
    narrowing = spec(ExtenderRules(passes=frozenset({"node1"})))
    # the ignorable one is written first but called last (upstream's order)
    async with started(failing, narrowing) as running:
        outcome = await run_filters(running.extenders, info, raw, NAMES, NODES.__getitem__)
    assert outcome.feasible == ("node1",)
    assert set(outcome.statuses) == {"node2"}
    ((name, error),) = outcome.skipped
    assert name == running.servers[0].url
    assert error.detail.startswith(detail.split("(")[0])
    # the failing extender was asked about the survivor of the other one only
    assert [
        call.body["Nodes"]["items"][0]["metadata"]["name"] for call in running.servers[0].calls
    ] == ["node1"]


async def test_extender_that_is_down() -> None:
    info, raw = pod()
    port = closed_port()
    config = ExtenderConfig(url_prefix=f"http://127.0.0.1:{port}/", filter_verb="filter")
    extender = Extender(config, ExtenderClient(config))
    try:
        with pytest.raises(ExtenderError) as caught:
            await run_filters([extender], info, raw, NAMES, NODES.__getitem__)
    finally:
        await extender.close()
    assert caught.value.url == f"http://127.0.0.1:{port}/filter"  # the trailing / is trimmed
    assert caught.value.detail.startswith(
        f"Cannot connect to host 127.0.0.1:{port}: ConnectionRefusedError: "
    )


@pytest.mark.parametrize(
    ("fault", "node_cache_capable", "detail"),
    [
        pytest.param(
            "unknown-node",
            True,
            'NodeNames names node "no-such-node", which was not sent',
            id="nodeCacheCapable: unknown name in NodeNames",
        ),
    ],
)
async def test_unknown_feasible_node(fault, node_cache_capable, detail) -> None:
    info, raw = pod()
    rules = ExtenderRules(faults={"filter": fault})
    async with started(spec(rules, nodeCacheCapable=node_cache_capable)) as running:
        with pytest.raises(ExtenderError) as caught:
            await run_filters(running.extenders, info, raw, NAMES, NODES.__getitem__)
    assert caught.value.detail == detail


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param("hang", id="slow past httpTimeout"),
        pytest.param("status-500", id="HTTP 500"),
        pytest.param("not-json", id="garbage JSON"),
        pytest.param("wrong-shape", id="JSON of the wrong shape"),
    ],
)
@pytest.mark.parametrize("ignorable", [False, True], ids=["not ignorable", "ignorable"])
async def test_failing_prioritizer_only_loses_its_scores(fault, ignorable) -> None:
    info, raw = pod()
    failing = spec(
        ExtenderRules(faults={"prioritize": fault}), httpTimeout="200ms", ignorable=ignorable
    )
    working = spec(ExtenderRules(scores={"node1": 3, "node2": 7}), weight=2)
    async with started(failing, working) as running:
        scores = await run_prioritizers(running.extenders, info, raw, NAMES, NODES.__getitem__)
    # node1: 3 * 2 * 10 = 60; node2: 7 * 2 * 10 = 140
    assert scores.totals() == {"node1": 60, "node2": 140}
    ((name, error),) = scores.failed
    assert name == running.servers[0].url
    assert error.verb == "prioritize"


async def test_unknown_scored_host_is_dropped() -> None:
    # upstream adds scores only to the nodes it sent
    info, raw = pod()
    rules = ExtenderRules(scores={"node1": 1, "node2": 2}, faults={"prioritize": "unknown-node"})
    async with started(spec(rules, weight=1)) as running:
        scores = await run_prioritizers(running.extenders, info, raw, NAMES, NODES.__getitem__)
    assert scores.totals() == {"node1": 10, "node2": 20}
    assert scores.failed == ()


@pytest.mark.parametrize(
    ("rules", "ignorable", "expected"),
    [
        pytest.param(ExtenderRules(), False, (Code.SUCCESS, ""), id="bound"),
        pytest.param(
            ExtenderRules(bind_error="node1 is out of licences"),
            False,
            (Code.ERROR, "extender bind call to {url}/bind failed: node1 is out of licences"),
            id="the answer's Error: an Error status with the extender's text",
        ),
        pytest.param(
            ExtenderRules(faults={"bind": "status-500"}),
            False,
            (
                Code.ERROR,
                "extender bind call to {url}/bind failed: HTTP status 500, expected 200: "
                "the test extender failed on purpose",
            ),
            id="HTTP 500: an Error status",
        ),
        pytest.param(
            ExtenderRules(faults={"bind": "hang"}),
            False,
            (
                Code.ERROR,
                "extender bind call to {url}/bind failed: no answer within httpTimeout (0.2s)",
            ),
            id="slow past httpTimeout: an Error status",
        ),
        pytest.param(
            ExtenderRules(faults={"bind": "status-500"}),
            True,
            None,
            id="ignorable and failing: no extender binds (the Bind plugins do)",
        ),
    ],
)
async def test_bind(rules, ignorable, expected) -> None:
    info, raw = pod("web-1", uid="uid-web-1", namespace="shop")
    async with started(spec(rules, bind=True, httpTimeout="200ms", ignorable=ignorable)) as running:
        status = await run_bind(running.extenders, info, raw, "node1")
    (call,) = running.servers[0].calls
    assert call.body == {
        "PodName": "web-1",
        "PodNamespace": "shop",
        "PodUID": "uid-web-1",
        "Node": "node1",
    }
    if expected is None:
        assert status is None
    else:
        code, message = expected
        assert status is not None
        assert (status.code, status.message) == (code, message.format(url=running.servers[0].url))


async def test_no_binder_binds_nothing() -> None:
    info, raw = pod()
    uninterested = spec(bind=True, managedResources=[{"name": "example.com/gpu"}])
    async with started(spec(), uninterested) as running:
        assert await run_bind(running.extenders, info, raw, "node1") is None
    assert [server.calls for server in running.servers] == [[], []]
