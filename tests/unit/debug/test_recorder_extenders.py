"""A decision concluded after the extenders answered is recorded as ``asched explain``
(with the same extenders) evaluates it: their rejections on the nodes, their score
columns, the totals that include them."""

from __future__ import annotations

from asched.cluster.decode import decode_pod
from asched.debug.recorder import Recorder
from asched.explain.extenders import evaluate_with_extenders
from asched.scheduler.observe import Observers
from asched.tools.bench.extender_server import ExtenderRules
from tests.builders import make_pod
from tests.unit.extender._cycle import PROFILE, REGISTRY, scheduler_with
from tests.unit.extender._support import spec

# node3 fails the extender's filter; its prioritizer answers node1 2 and node2 8, which
# count weight 3 x 10 (the plugins' scale) each: node1 50 + 60 = 110, node2 50 + 240 = 290
# with the NodeScores test plugin's 50 everywhere; node2 has the best total
RULES = ExtenderRules(fail=frozenset({"node3"}), scores={"node1": 2, "node2": 8})
NODES = ["node1", "node2", "node3"]


async def test_extenders_columns_and_rejections_are_recorded_as_explain_shows_them() -> None:
    plugin_scores = dict.fromkeys(NODES, 50)
    async with scheduler_with([spec(RULES, weight=3)], NODES, plugin_scores) as rig:
        scheduler = rig.scheduler
        recorder = Recorder(10)
        scheduler.observer = Observers(reporter=rig.reporter, recorder=recorder)
        raw = make_pod("pod")
        raw["spec"]["schedulerName"] = PROFILE
        pod = decode_pod(raw)
        framework = scheduler.profiles[PROFILE].framework
        explained = await evaluate_with_extenders(
            scheduler.ledger.table,
            pod,
            raw,
            framework.profile,
            scheduler.extenders,
            scheduler.raw.node,
            registry=REGISTRY,
        )
        attempt = await rig.attempt()
        assert attempt.job is not None
        assert attempt.consultations
        record = recorder.latest(attempt.pod.key)
        assert record is not None
        recorded = record.evaluation()
        assert record.consulted
        assert recorded.nodes == explained.nodes
        assert recorded.weights == explained.weights
        assert recorded.top == explained.top == ("node2",)
        assert recorded.selected == attempt.job.node == "node2"
        assert [recorded.nodes[n].total for n in ("node1", "node2")] == [110, 290]
        [extender] = scheduler.extenders
        assert recorded.nodes["node3"].plugin == extender.name
        assert record.to_json()["extenderColumns"] == [extender.name]
