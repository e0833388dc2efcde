"""Every metric documented in docs/metrics.md moves in a live run (issue 30).

asched runs in-process (:func:`running_scheduler`) against the test's cluster, and its
``/metrics`` is served by :func:`asched.serving.health.serve` on loopback (plain HTTP, the
way ``asched run`` serves it on a loopback ``--bind-address``); each scenario scrapes it
before and while it runs. What "moved" means, by the documented type:

* a counter: its series (the labels named) rose by at least the number the scenario
  causes, from its value in the scrape before the scenario;
* a histogram: its ``_count`` rose the same way;
* a gauge: it read 0 while the state it reports was empty, then the number of a state the
  scenario holds on purpose (a pod waiting at Permit, an extender that does not answer,
  a parked pod, the lease held). Gauges are refreshed once a second, so a state that only
  passes (a bind of a few milliseconds) would be seen by chance only.

The list of metrics is docs/metrics.md's table (:mod:`tests.metrics_doc`), not a copy:
:data:`SCENARIOS` says which scenario moves which metric, each scenario must show exactly
its own metrics moving, and :func:`test_the_scenarios_move_every_documented_metric`
fails for a documented metric no scenario moves. Nothing is exempt: leader election is on
in the first scenario, the extenders are the test extender server over real HTTP.

Two things the API server cannot be made to send are provoked inside asched instead: a
pod asched cannot decode (the decoder is given a gap for one labelled pod, as in
test_poison_pods.py: every object the API servers accept decodes today), and a plugin
that raises (a Permit plugin added to the profile, as test_permit_live.py adds one).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from asched.cluster.pod_shapes import PodShapes
from asched.errors import DecodeError
from asched.framework.status import Status
from asched.scheduler.app import App
from asched.serving import health
from asched.tools.bench.extender_server import ExtenderRules, serve_extender
from tests.integration.scheduler_harness import (
    leader_election,
    pods_of,
    running_scheduler,
    until,
)
from tests.metrics_doc import Documented, documented_metrics

DOCUMENTED: Final[Mapping[str, Documented]] = {row.name: row for row in documented_metrics()}

#: scenario -> the documented metrics it shows moving (the test of each asserts exactly these)
SCENARIOS: Final[Mapping[str, frozenset[str]]] = {
    "a leader binds, parks, holds, fails and reports": frozenset(
        {
            "asched_schedule_attempts_total",
            "asched_scheduling_attempt_duration_seconds",
            "asched_pod_scheduling_sli_duration_seconds",
            "asched_pod_scheduling_attempts",
            "asched_framework_extension_point_duration_seconds",
            "asched_pending_pods",
            "asched_binds_inflight",
            "asched_permit_waiting_pods",
            "asched_scheduler_cache_size",
            "asched_events_total",
            "asched_undecodable_objects_total",
            "asched_internal_errors_total",
            "asched_leader",
        }
    ),
    "a preemption with two victims": frozenset(
        {"asched_preemption_attempts_total", "asched_preemption_victims"}
    ),
    "an extender answers, another is still being asked": frozenset(
        {"asched_extender_request_duration_seconds", "asched_extender_consultations_inflight"}
    ),
}

PLUGIN = "HoldOrFail"
GPU = "example.com/gpu"
#: seconds a scrape may take to show what the scenario did (events are sent by a worker,
#: gauges refreshed once a second)
WITHIN: Final = 30.0

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(url: str) -> Samples:
    """Every sample of ``url``/metrics, keyed by series name and labels."""
    async with aiohttp.ClientSession() as http, http.get(f"{url}/metrics") as response:
        assert response.status == 200
        text = await response.text()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, series: str, labels: Mapping[str, str]) -> float:
    """The sum of ``series`` over its label sets that include ``labels``."""
    wanted = set(labels.items())
    return sum(v for (name, have), v in samples.items() if name == series and wanted <= have)


@dataclass
class Evidence:
    """What one scenario showed, scraped from its ``/metrics``: metric -> how it moved."""

    url: str
    before: Samples = field(default_factory=dict)
    moved: dict[str, list[str]] = field(default_factory=dict)
    #: gauge -> the values it was seen at, in order
    gauges: dict[str, list[float]] = field(default_factory=dict)

    async def start(self) -> None:
        """Scrape the values the scenario's counters and histograms are compared with."""
        self.before = await scrape(self.url)

    async def rose(self, metric: str, at_least: float, **labels: str) -> None:
        """Wait until ``metric`` (a counter, or a histogram's count) is ``at_least`` above
        its value before the scenario, in the series with ``labels``."""
        row = DOCUMENTED[metric]
        assert row.kind != "gauge", metric
        start = value(self.before, row.series, labels)
        seen = [start]

        async def risen() -> bool:
            seen.append(value(await scrape(self.url), row.series, labels))
            return seen[-1] - start >= at_least

        await self._wait(risen, f"{row.series}{labels} from {start} by {at_least}", seen)
        self.moved.setdefault(metric, []).append(f"{labels}: {start} -> {seen[-1]}")

    async def reads(self, metric: str, expected: float, **labels: str) -> None:
        """Wait until the gauge ``metric`` (summed over the series with ``labels``) reads
        ``expected``; it moved once it has read two different values, one not 0."""
        row = DOCUMENTED[metric]
        assert row.kind == "gauge", metric
        seen: list[float] = []

        async def reading() -> bool:
            seen.append(value(await scrape(self.url), row.series, labels))
            return seen[-1] == expected

        await self._wait(reading, f"{row.series}{labels} == {expected}", seen)
        values = self.gauges.setdefault(metric, [])
        values.append(expected)
        if len(set(values)) > 1 and any(values):
            self.moved.setdefault(metric, []).append(f"{labels}: {values}")

    async def _wait(self, check: Any, what: str, seen: list[float]) -> None:
        try:
            await until(check, within=WITHIN)
        except AssertionError:
            raise AssertionError(f"{what}: not within {WITHIN}s (read {seen[-5:]})") from None

    def assert_moved(self, scenario: str) -> None:
        """This scenario showed exactly the metrics :data:`SCENARIOS` gives it moving."""
        assert sorted(self.moved) == sorted(SCENARIOS[scenario]), self.moved


@pytest.fixture
async def evidence() -> AsyncIterator[Evidence]:
    """``/metrics`` served on a free loopback port for the test (the registry is the
    process's, so it shows the in-process scheduler's metrics)."""
    async with health.serve(health.HealthState(), "127.0.0.1", 0) as served:
        yield Evidence(served.url)


class HoldOrFail:
    """A Permit plugin deciding by the pod's ``permit`` label: ``wait`` holds the pod (for
    60 s, as Coscheduling holds a gang member for its siblings), ``raise`` is a bug."""

    name = PLUGIN

    def permit(self, state: Any, pod: Any, node: str) -> tuple[Status, float]:
        mode = pod.labels.get("permit", "allow")
        if mode == "wait":
            return Status.wait(plugin=PLUGIN), 60.0
        if mode == "raise":
            raise RuntimeError("a Permit plugin's bug, on purpose")
        return Status.success(), 0.0


def with_hold_or_fail(app: App) -> None:
    for profile in app.profiles.values():
        profile.framework.permit.append(HoldOrFail())


async def _node_of(cluster: Any, pod: str) -> str | None:
    found = await cluster.rest.get(f"/api/v1/namespaces/{cluster.namespace}/pods/{pod}")
    node: str | None = found["spec"].get("nodeName")
    return node


async def _bound(cluster: Any, names: list[str]) -> bool:
    bound = {p["metadata"]["name"] for p in await pods_of(cluster) if p["spec"].get("nodeName")}
    return set(names) <= bound


async def test_a_leader_binds_parks_holds_fails_and_reports(
    cluster: Any, evidence: Evidence, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One node of 4 CPU. Three plain pods (100m) bind; one asks for 100 CPU and parks;
    one waits at Permit (held by the test); one's Permit plugin raises; one is refused by
    the decoder. The scheduler leads its lease while it runs and gives it back at stop."""
    scenario = "a leader binds, parks, holds, fails and reports"
    real_decode = PodShapes.decode

    def decode_with_a_gap(self: PodShapes, raw: Any) -> Any:
        if (raw.get("metadata", {}).get("labels") or {}).get("gap") == "yes":
            raise DecodeError(f"Pod {cluster.namespace}/gap", "spec.odd", "not understood")
        return real_decode(self, raw)

    monkeypatch.setattr(PodShapes, "decode", decode_with_a_gap)
    name = cluster.unique_name("sched")
    await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    await evidence.start()
    # no takeover here: durations long enough that a loaded machine keeps the lease
    lease = {
        **leader_election(cluster, cluster.unique_name("lease")),
        "leaseDuration": "30s",
        "renewDeadline": "20s",
        "retryPeriod": "2s",
    }
    async with running_scheduler(
        cluster, name, prepare=with_hold_or_fail, leaderElection=lease
    ) as running:
        await evidence.reads("asched_leader", 1)  # acquired
        # nothing of this profile pending, assumed, waiting or binding yet
        await evidence.reads("asched_pending_pods", 0)
        await evidence.reads("asched_binds_inflight", 0)
        await evidence.reads("asched_permit_waiting_pods", 0)
        await evidence.reads("asched_scheduler_cache_size", 0, type="assumed_pods")

        plain = [f"plain-{index}" for index in range(3)]
        for pod in plain:
            await cluster.create_pod(pod, scheduler_name=name, cpu="100m", memory="64Mi")
        await cluster.create_pod("big", scheduler_name=name, cpu="100", memory="64Mi")
        await cluster.create_pod("held", scheduler_name=name, labels={"permit": "wait"})
        await cluster.create_pod("buggy", scheduler_name=name, labels={"permit": "raise"})
        await cluster.create_pod("gap", scheduler_name=name, labels={"gap": "yes"})
        await until(lambda: _bound(cluster, plain), within=WITHIN)

        # held at Permit: assumed on the node, its binding cycle waiting, not bound
        key = f"{cluster.namespace}/held"
        await evidence.reads("asched_permit_waiting_pods", 1)
        await evidence.reads("asched_binds_inflight", 1)  # the held pod's binding cycle
        await evidence.reads("asched_scheduler_cache_size", 1, type="assumed_pods")
        assert [w.key for w in running.scheduler.waiting] == [key]
        # big is parked in the unschedulable queue, buggy in backoff or being retried:
        # wait for the moment both are queued (1 + 1 = 2)
        await evidence.reads("asched_pending_pods", 2)

        # profile-labelled series start at 0 (the profile is this test's)
        profile = {"profile": name}
        # plain 3 + held 1 (assumed, then waiting) = 4 scheduled attempts
        await evidence.rose("asched_schedule_attempts_total", 4, result="scheduled", **profile)
        await evidence.rose("asched_schedule_attempts_total", 1, result="unschedulable", **profile)
        await evidence.rose("asched_schedule_attempts_total", 1, result="error", **profile)
        # every attempt is timed: 4 scheduled + 1 unschedulable + 1 error >= 6
        await evidence.rose("asched_scheduling_attempt_duration_seconds", 6, **profile)
        # Filter ran for the 6 attempts at least (big's too: it fits nowhere)
        await evidence.rose(
            "asched_framework_extension_point_duration_seconds",
            6,
            extension_point="Filter",
            **profile,
        )
        # the plain pods bound at their first attempt: 3 observations of "1 attempt"
        await evidence.rose("asched_pod_scheduling_sli_duration_seconds", 3, attempts="1")
        await evidence.rose("asched_pod_scheduling_attempts", 3)
        # the Permit plugin raised at least once (retried with backoff: maybe more)
        await evidence.rose("asched_internal_errors_total", 1, phase="Permit")
        # gap: refused by the decoder once, at least (its status write echoes back)
        await evidence.rose("asched_undecodable_objects_total", 1, kind="pods")
        # FailedScheduling on big, buggy and gap: 1 + 1 + 1 = 3 (repeats fold into series)
        await evidence.rose("asched_events_total", 3, type="Warning", reason="FailedScheduling")

        # let the held pod go: it binds; Scheduled events: plain 3 + held 1 = 4
        [held] = running.scheduler.waiting
        held.allow(PLUGIN)
        assert await _until_bound(cluster, "held")
        await evidence.rose("asched_events_total", 4, type="Normal", reason="Scheduled")
        await evidence.reads("asched_permit_waiting_pods", 0)
        assert await _node_of(cluster, "big") is None
    # stopped: the lease is given back
    await evidence.reads("asched_leader", 0)
    evidence.assert_moved(scenario)


async def _until_bound(cluster: Any, pod: str) -> bool:
    async def bound() -> bool:
        return await _node_of(cluster, pod) is not None

    await until(bound, within=WITHIN)
    return True


@pytest.fixture
async def priorities(cluster: Any) -> AsyncIterator[dict[str, str]]:
    """PriorityClasses low (10) and high (1000), deleted afterwards."""
    suffix = uuid.uuid4().hex[:8]
    names = {}
    for level, priority in (("low", 10), ("high", 1000)):
        class_name = f"{level}-{suffix}"
        await cluster.rest.create(
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": class_name},
                "value": priority,
            },
        )
        names[level] = class_name
    yield names
    for class_name in names.values():
        await cluster.rest.delete(f"/apis/scheduling.k8s.io/v1/priorityclasses/{class_name}")


async def test_a_preemption_with_two_victims(
    cluster: Any, evidence: Evidence, priorities: dict[str, str]
) -> None:
    """One node of 1 CPU holding two low-priority pods of 500m; a high-priority pod of
    1 CPU fits only once both are gone: PostFilter preempts them (grace 0: gone at once)
    and the preemptor binds."""
    scenario = "a preemption with two victims"
    name = cluster.unique_name("sched")
    node = cluster.unique_name("n")
    await cluster.create_node(node, cpu="1", memory="8Gi")
    for victim in ("low-1", "low-2"):
        await cluster.create_pod(
            victim, cpu="500m", node_name=node, spec={"priorityClassName": priorities["low"]}
        )
    await evidence.start()
    async with running_scheduler(cluster, name):
        await cluster.create_pod(
            "high", scheduler_name=name, cpu="1", spec={"priorityClassName": priorities["high"]}
        )
        assert await _until_bound(cluster, "high")
        # PostFilter ran for high's failed attempt: at least 1 attempt (1 plugin x 1 attempt)
        await evidence.rose("asched_preemption_attempts_total", 1)
        # one preemption chose its victims: one observation (of 2)
        await evidence.rose("asched_preemption_victims", 1)
    assert {p["metadata"]["name"] for p in await pods_of(cluster)} == {"high"}
    evidence.assert_moved(scenario)


async def test_an_extender_answers_another_is_still_being_asked(
    cluster: Any, evidence: Evidence
) -> None:
    """Two nodes, two extenders: the first filters and scores every pod; the second manages
    example.com/gpu (so only the GPU pod is sent to it) and does not answer. A plain pod
    binds through the first; the GPU pod is held in its consultation of the second."""
    scenario = "an extender answers, another is still being asked"
    for _ in range(2):  # two nodes: with one feasible node nothing is scored
        await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    name = cluster.unique_name("ext")
    managed = [{"name": GPU, "ignoredByScheduler": True}]
    gpu = {"requests": {GPU: "1"}, "limits": {GPU: "1"}}
    await evidence.start()
    async with serve_extender(ExtenderRules()) as answering, AsyncExitStack() as stack:
        silent = await stack.enter_async_context(
            serve_extender(ExtenderRules(faults={"filter": "hang"}))
        )
        extenders = [
            answering.entry(nodeCacheCapable=True),
            silent.entry(managedResources=managed, httpTimeout="60s", nodeCacheCapable=True),
        ]
        async with running_scheduler(cluster, name, extenders=extenders) as running:
            await evidence.reads("asched_extender_consultations_inflight", 0)
            await cluster.create_pod("plain", scheduler_name=name)
            assert await _until_bound(cluster, "plain")
            container = {"name": "c", "image": "registry.k8s.io/pause:3.9", "resources": gpu}
            await cluster.create_pod("gpu", scheduler_name=name, spec={"containers": [container]})
            await silent.wait_for_calls(1, "filter")
            # the GPU pod's consultation waits for the second extender: 1 in flight
            await evidence.reads("asched_extender_consultations_inflight", 1)
            assert running.scheduler.binder.consulting == 1
            # filter and prioritize answered by the first extender for the plain pod (1
            # each), and its filter for the GPU pod before the second was asked: 1 + 1 = 2
            ok = {"extender": answering.url, "result": "ok"}
            await evidence.rose("asched_extender_request_duration_seconds", 2, verb="filter", **ok)
            await evidence.rose(
                "asched_extender_request_duration_seconds", 1, verb="prioritize", **ok
            )
            # the second extender goes away: the call it held fails (1 error, at least:
            # the pod is retried against an address nobody listens on) and the
            # consultation ends (a stop would otherwise wait for the call's httpTimeout)
            await stack.aclose()
            failed = {"extender": silent.url, "verb": "filter", "result": "error"}
            await evidence.rose("asched_extender_request_duration_seconds", 1, **failed)
            assert await _node_of(cluster, "gpu") is None
    evidence.assert_moved(scenario)


def test_the_scenarios_move_every_documented_metric() -> None:
    """A metric added to docs/metrics.md fails here until a scenario moves it."""
    shown = frozenset().union(*SCENARIOS.values())
    assert sorted(set(DOCUMENTED) - shown) == []  # documented, moved by no scenario
    assert sorted(shown - set(DOCUMENTED)) == []  # moved, but not documented
    # 13 + 2 + 2 = 17 rows of the table, each in one scenario only
    assert sum(len(metrics) for metrics in SCENARIOS.values()) == len(DOCUMENTED) == 17
