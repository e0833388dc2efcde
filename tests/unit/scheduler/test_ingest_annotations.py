"""The ingest keeps annotations only when a profile's plugin reads them (issue 30).

``Ingest(keep_annotations=...)`` is what the App passes: True when any profile's
Framework has a plugin declared with ``reads_annotations=True``. Then pods and nodes keep
their annotations, a node whose annotations changed raises ``NodeAnnotationChange`` (a
parked pod a plugin rejected for an annotation moves), and a pending pod's annotation
update gives it another chance. Otherwise nothing of them is kept, and such updates move
nobody.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from asched.api.watch import WatchEvent
from asched.cluster.decode import decode_pod
from asched.cluster.table import NodeTable
from asched.config.types import Profile, ResolvedPlugins
from asched.framework.events import ClusterEvent
from asched.framework.registry import in_tree, reads_annotations
from asched.framework.runtime import Framework
from asched.framework.spec import declare
from asched.framework.status import Status
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.ingest import Ingest
from asched.scheduler.ledger import Ledger
from asched.tools.bench import templates
from tests.configs import default_config

OURS = "asched"
MAINTENANCE = "example.com/maintenance"
PLUGIN = "Maintenance"


def build(*, keep: bool) -> tuple[Ingest, SchedulingQueue]:
    table = NodeTable()
    queue = SchedulingQueue(
        clock=lambda: 100.0,
        initial_backoff=0.0,
        max_backoff=0.0,
        interests={PLUGIN: frozenset({ClusterEvent.NODE_ANNOTATION})},
    )
    return Ingest(table, Ledger(table), queue, {OURS}, keep_annotations=keep), queue


def node(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    raw = copy.deepcopy(templates.node("n1"))
    if annotations is not None:
        raw["metadata"]["annotations"] = annotations
    return raw


def pod(annotations: dict[str, str]) -> dict[str, Any]:
    raw = copy.deepcopy(templates.pod("web"))
    raw["metadata"]["annotations"] = annotations
    raw["spec"]["schedulerName"] = OURS
    return raw


def park(queue: SchedulingQueue) -> None:
    qp = queue.pop()
    assert qp is not None
    queue.requeue(qp, Status.unschedulable("node(s) are in maintenance", plugin=PLUGIN))
    assert queue.where("default/web") == "unschedulable"


@pytest.mark.parametrize(
    ("keep", "node_annotations", "pod_annotations"),
    [
        pytest.param(True, {MAINTENANCE: "true"}, {"example.com/team": "shop"}, id="kept"),
        pytest.param(False, {}, {}, id="not kept"),
    ],
)
def test_pods_and_nodes_keep_annotations_only_when_a_plugin_reads_them(
    keep: bool, node_annotations: dict[str, str], pod_annotations: dict[str, str]
) -> None:
    ingest, _ = build(keep=keep)
    ingest.apply(WatchEvent("nodes", "ADDED", node({MAINTENANCE: "true"})))
    ingest.apply(WatchEvent("pods", "ADDED", pod({"example.com/team": "shop"})))
    assert ingest.table.node_at(0).annotations == node_annotations
    assert ingest.table.annotation_values(MAINTENANCE).tolist() == [
        node_annotations.get(MAINTENANCE)
    ]
    assert ingest.pending["default/web"].annotations == pod_annotations


@pytest.mark.parametrize(
    ("keep", "where"),
    [
        pytest.param(True, "active", id="kept: NodeAnnotationChange moves the pod"),
        pytest.param(False, "unschedulable", id="not kept: no change seen, stays parked"),
    ],
)
def test_a_node_annotation_change_moves_the_pods_waiting_for_it(keep: bool, where: str) -> None:
    ingest, queue = build(keep=keep)
    ingest.apply(WatchEvent("nodes", "ADDED", node({MAINTENANCE: "true"})))
    ingest.apply(WatchEvent("pods", "ADDED", pod({})))
    park(queue)
    ingest.apply(WatchEvent("nodes", "MODIFIED", node({MAINTENANCE: "false"})))
    assert queue.where("default/web") == where


@pytest.mark.parametrize(
    ("keep", "where"),
    [
        pytest.param(True, "active", id="kept: an update the scheduler reads"),
        pytest.param(False, "unschedulable", id="not kept: stays parked"),
    ],
)
def test_a_pending_pods_annotation_update_gives_it_another_chance(keep: bool, where: str) -> None:
    ingest, queue = build(keep=keep)
    ingest.apply(WatchEvent("pods", "ADDED", pod({})))
    park(queue)
    ingest.apply(WatchEvent("pods", "MODIFIED", pod({"example.com/ignore-maintenance": "true"})))
    assert queue.where("default/web") == where


class Reading:
    name = "Reading"

    def pre_enqueue(self, pod: object) -> Status:
        return Status.success()


class NotReading:
    name = "NotReading"

    def pre_enqueue(self, pod: object) -> Status:
        return Status.success()


REGISTRY = in_tree().adding(
    declare(Reading, api_version="1.4", reads_annotations=True),
    declare(NotReading, api_version="1.0"),
)


def _profile(*names: str) -> Profile:
    base = default_config().profiles[0]
    return dataclasses.replace(base, resolved=ResolvedPlugins(pre_enqueue=names))


@pytest.mark.parametrize(
    ("profiles", "expected"),
    [
        pytest.param([("NotReading",)], False, id="a plugin that does not read them"),
        pytest.param([("Reading",)], True, id="a plugin that reads them"),
        pytest.param([("NotReading",), ("NotReading", "Reading")], True, id="in any profile"),
        pytest.param([()], False, id="in-tree plugins only"),
    ],
)
def test_annotations_are_kept_when_an_enabled_plugin_declares_it(
    profiles: list[tuple[str, ...]], expected: bool
) -> None:
    built = [_profile(*names) for names in profiles]
    assert reads_annotations(built, REGISTRY) is expected
    frameworks = [Framework(p, registry=REGISTRY) for p in built]
    # what the App passes to its Ingest
    assert any(f.reads_annotations for f in frameworks) is expected


def test_decoded_pods_equal_a_full_decode_with_annotations() -> None:
    ingest, _ = build(keep=True)
    raw = pod({"example.com/team": "shop"})
    ingest.apply(WatchEvent("pods", "ADDED", raw))
    assert ingest.pending["default/web"] == decode_pod(raw, keep_annotations=True)
