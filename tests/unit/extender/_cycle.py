"""The real Scheduler over identical nodes and test extenders, for upstream's table tests.

:func:`scheduler_with` builds what ``App`` builds for one profile (Framework, Algorithm
with its extender flags, SchedulingQueue, Ledger, RawObjects), configured through a real
KubeSchedulerConfiguration whose ``extenders[]`` are the test extender servers of
:func:`~tests.unit.extender._support.started`. :meth:`Rig.attempt` then runs one pod the
way the scheduler's loop and extender task do: ``schedule_one``, and while that returns a
:class:`~asched.extenders.consult.Consultation`, ``ask`` then ``conclude``.

The profile disables every default Score and PostFilter plugin (upstream's cases register
neither, and call SchedulePod, which runs no PostFilter); the case's plugin scores come
from :class:`NodeScores`, a Score plugin declared here and enabled by name.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from asched import plugin as ap
from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.config.load import load_config
from asched.engine.algorithm import Algorithm
from asched.extenders.consult import Consultation
from asched.extenders.extender import EXTENDER_NAME, Extender, any_filter, any_prioritizer
from asched.framework.events import ANY
from asched.framework.registry import in_tree
from asched.framework.runtime import Framework
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.binder import Binder, BindJob
from asched.scheduler.cycle import Scheduler
from asched.scheduler.ledger import Ledger
from asched.scheduler.observe import Observers
from asched.scheduler.parts import ProfileRuntime
from asched.scheduler.raw import RawObjects
from asched.tools.bench.extender_server import RunningExtender
from tests.builders import make_node, make_pod
from tests.unit.extender._support import TYPE_META, Spec, started
from tests.unit.scheduler.test_cycle_guards import FakeClock, RecordingReporter

PROFILE = "upstream-cases"
CYCLE_LOGGER = "asched.scheduler.cycle"


# ---------------------------------------------------------------------- the Score plugin
@dataclass(frozen=True)
class NodeScoresArgs:
    """Score (0..100) by node name; nodes not named score 0."""

    scores: Mapping[str, int] = field(default_factory=dict)


def read_args(section: ap.ArgsSection) -> NodeScoresArgs:
    raw = section.get("scores")
    if raw is None:
        return NodeScoresArgs()
    if not isinstance(raw, Mapping):
        section.report("scores", f"must be an object of node name to score, got {raw!r}")
        return NodeScoresArgs()
    scores: dict[str, int] = {}
    for name, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int):
            section.report("scores", f"{name}: must be an integer, got {value!r}")
        else:
            scores[str(name)] = value  # 0..100 is the runtime's contract check
    return NodeScoresArgs(scores)


class NodeScores:
    """Upstream's EqualPrioritizerPlugin and Node2Prioritizer: a fixed score per node."""

    name = "NodeScores"
    row_local = True
    normalizes = False

    def __init__(self, args: NodeScoresArgs) -> None:
        self.scores = dict(args.scores)

    def sign(self, pod: ap.PodInfo) -> tuple[()]:
        return ()  # reads nothing of the pod

    def score(
        self, state: ap.CycleState, pod: ap.PodInfo, nodes: ap.Nodes, rows: ap.Rows
    ) -> ap.ScoreArray:
        by_row = np.zeros(nodes.size, dtype=np.int64)
        for row in np.flatnonzero(nodes.alive).tolist():
            by_row[row] = self.scores.get(nodes.name_of(row), 0)
        return by_row[rows]

    def normalize(
        self, state: ap.CycleState, scores: ap.ScoreArray, taking_part: ap.BoolMask
    ) -> ap.ScoreArray:
        return scores


NODE_SCORES = ap.declare(
    NodeScores,
    api_version="1.0",
    args=ap.ArgsSpec("NodeScoresArgs", frozenset({"scores"}), read_args),
)
REGISTRY = in_tree().adding(NODE_SCORES)


def scaled(totals: Mapping[str, int]) -> tuple[dict[str, int], int]:
    """``(scores, weight)`` with every score in 0..100 and ``score * weight`` the total:
    the smallest weight that brings the largest total to 100 or less."""
    weight = max(1, math.ceil(max(totals.values()) / ap.MAX_SCORE))
    assert all(total % weight == 0 for total in totals.values()), (totals, weight)
    return {name: total // weight for name, total in totals.items()}, weight


def profile(plugin_scores: Mapping[str, int] | None) -> dict[str, Any]:
    """The profile entry: no default Score or PostFilter plugin; with ``plugin_scores``
    (total per node), :class:`NodeScores` scaled by its weight, else no Score plugin."""
    score: dict[str, Any] = {"disabled": [{"name": "*"}]}
    entry: dict[str, Any] = {
        "schedulerName": PROFILE,
        "plugins": {"score": score, "postFilter": {"disabled": [{"name": "*"}]}},
    }
    if plugin_scores is not None:
        scores, weight = scaled(plugin_scores)
        score["enabled"] = [{"name": NodeScores.name, "weight": weight}]
        entry["pluginConfig"] = [{"name": NodeScores.name, "args": {"scores": scores}}]
    return entry


# ---------------------------------------------------------------------- the scheduler
@dataclass
class Attempt:
    """One pod's attempt through the real path.

    ``job`` is the bind job (None: reported and requeued); ``consultations`` the ones the
    extenders were asked in, in order; ``decided`` is ``(feasible, examined)`` as the cycle
    logs them for a pod decided without consultation (None otherwise).
    """

    pod: PodInfo
    job: BindJob | None
    consultations: list[Consultation]
    decided: tuple[int, int] | None


@dataclass
class Rig:
    scheduler: Scheduler
    reporter: RecordingReporter
    servers: list[RunningExtender]

    async def attempt(self, name: str = "pod") -> Attempt:
        """Queue a pod with no requests (upstream's ``&v1.Pod{}``) and run its attempt to
        the end."""
        raw = make_pod(name)
        raw["spec"]["schedulerName"] = PROFILE
        pod = decode_pod(raw)
        scheduler = self.scheduler
        scheduler.raw.pods[pod.key] = raw
        scheduler.queue.add(pod)
        qp = scheduler.queue.pop()
        assert qp is not None
        assert qp.key == pod.key
        consultations: list[Consultation] = []
        with _decisions_logged() as logged:
            outcome = scheduler.schedule_one(qp)
            while isinstance(outcome, Consultation):
                consultations.append(outcome)
                await scheduler.ask(outcome)
                outcome = scheduler.conclude(outcome)
        assert outcome is None or isinstance(outcome, BindJob), outcome  # no preemption here
        decided = logged[-1] if logged and not consultations else None
        return Attempt(pod, outcome, consultations, decided)


def build_scheduler(
    framework: Framework,
    table: NodeTable,
    extenders: Sequence[Extender],
    raw_nodes: Mapping[str, Any],
) -> tuple[Scheduler, RecordingReporter]:
    """A Scheduler of one profile (:data:`PROFILE`) over ``table`` with ``extenders``, the
    queue's extender interest as the App registers it, fake time and a recording reporter."""
    algorithm = Algorithm(
        framework,
        table,
        seed=1,
        extender_filters=any_filter(extenders),
        extender_scores=any_prioritizer(extenders),
    )
    clock = FakeClock()
    reporter = RecordingReporter()
    scheduler = Scheduler(
        profiles={PROFILE: ProfileRuntime(framework, algorithm)},
        queue=SchedulingQueue(clock=clock, interests={EXTENDER_NAME: ANY}),
        ledger=Ledger(table),
        binder_factory=lambda s: Binder(s),
        observer=Observers(reporter=reporter),
        clock=clock,
        extenders=extenders,
        raw=RawObjects(nodes=True),
    )
    scheduler.raw.nodes.update(raw_nodes)
    return scheduler, reporter


@asynccontextmanager
async def scheduler_with(
    specs: Sequence[Spec], names: Sequence[str], plugin_scores: Mapping[str, int] | None
) -> AsyncIterator[Rig]:
    """A Scheduler over the nodes ``names`` (identical: the in-tree filters pass them all)
    whose profile is :func:`profile`, with the test extenders of ``specs``."""
    async with started(*specs) as running:
        entries = [
            server.entry(**s.fields) for server, s in zip(running.servers, specs, strict=True)
        ]
        document = {**TYPE_META, "profiles": [profile(plugin_scores)], "extenders": entries}
        config = load_config(document, catalogue=REGISTRY.catalogue)
        framework = Framework(config.profiles[0], registry=REGISTRY)
        table = NodeTable()
        raw_nodes = {name: make_node(name) for name in names}
        for node in raw_nodes.values():
            table.upsert_node(decode_node(node))
        scheduler, reporter = build_scheduler(framework, table, running.extenders, raw_nodes)
        yield Rig(scheduler, reporter, running.servers)


class _Decisions(logging.Handler):
    """Collects ``(feasible, examined)`` from the cycle's debug line on each decision."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.found: list[tuple[int, int]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg == "pod %s: %s of %d feasible nodes (%d examined)":
            assert isinstance(record.args, tuple)
            _, _, feasible, examined = record.args
            self.found.append((int(feasible), int(examined)))  # type: ignore[call-overload]


@contextmanager
def _decisions_logged() -> Iterator[list[tuple[int, int]]]:
    logger = logging.getLogger(CYCLE_LOGGER)
    handler = _Decisions()
    level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    try:
        yield handler.found
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
