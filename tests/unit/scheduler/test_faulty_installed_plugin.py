"""A faulty installed plugin is contained like an in-tree one (issue 12).

``Faulty`` is declared as an out-of-tree plugin would be and enabled in the profile by
name through the configuration. For a pod labelled ``fault: <kind>`` it raises, answers
a wrong shape, scores outside 0..100, or rejects every node and explains a rejection with
a string instead of a Status (as "the reason" in the docs may suggest); the pod gets an
Error status naming the plugin (reported, retried with backoff) and the next, healthy pod
is scheduled by the same scheduler.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_cycle_guards import RecordingReporter, build, pop_with_slot

from asched.cluster.decode import decode_pod
from asched.config.load import load_config
from asched.framework.registry import in_tree
from asched.framework.spec import declare
from asched.framework.status import Status
from asched.plugin import testing
from asched.scheduler.cycle import Scheduler

PROFILE = "custom"


class Faulty:
    name = "Faulty"
    row_local = False
    normalizes = False

    def filter(self, state, pod, nodes, rows):
        n = len(nodes.alive[rows])
        if pod.labels.get("fault") == "raise":
            raise KeyError("price-per-hour")
        if pod.labels.get("fault") == "shape":
            return np.ones(n + 1, dtype=np.bool_)
        if pod.labels.get("fault") == "explain":
            return np.zeros(n, dtype=np.bool_)
        return np.ones(n, dtype=np.bool_)

    def explain(self, state, pod, nodes, row):
        if pod.labels.get("fault") == "explain":
            return "node is in maintenance"
        return Status.success()

    def score(self, state, pod, nodes, rows):
        n = len(nodes.alive[rows])
        return np.full(n, 250 if pod.labels.get("fault") == "range" else 50, dtype=np.int64)

    def normalize(self, state, scores, taking_part):
        return scores


REGISTRY = in_tree().adding(declare(Faulty, api_version="1.0"))


def build_custom() -> tuple[Scheduler, RecordingReporter]:
    document = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {"schedulerName": PROFILE, "plugins": {"multiPoint": {"enabled": [{"name": "Faulty"}]}}}
        ],
    }
    profile = load_config(document, catalogue=REGISTRY.catalogue).profiles[0]
    scheduler, _, _, reporter = build(profile, REGISTRY)
    return scheduler, reporter


def pod(name: str, fault: str | None = None):
    raw = testing.pod(name, labels={"fault": fault} if fault else {}, requests={"cpu": "1"})
    raw["spec"]["schedulerName"] = PROFILE
    return decode_pod(raw)


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        pytest.param(
            "raise",
            "internal error in Filter of plugin Faulty: KeyError: 'price-per-hour'",
            id="raises",
        ),
        pytest.param(
            "shape",
            "plugin 'Faulty' returned a bool mask of shape (3,), expected bool of shape (2,)",
            id="wrong shape",
        ),
        pytest.param(
            "range",
            "plugin 'Faulty' returned scores in [250, 250], expected [0, 100]",
            id="scores out of range",
        ),
        pytest.param(
            "explain",
            "internal error in diagnose of plugin Faulty: PluginContractError: "
            "plugin 'Faulty' explain returned str, expected Status",
            id="explain returns a string",
        ),
    ],
)
async def test_the_pod_gets_an_error_naming_the_plugin_and_the_next_is_scheduled(
    fault: str, said: str
) -> None:
    scheduler, reporter = build_custom()
    victim, healthy = pod("victim", fault), pod("healthy")
    scheduler.queue.add(victim)
    slot, qp = await pop_with_slot(scheduler)
    job = scheduler.schedule_one(qp)
    assert job is None
    slot.release()
    assert said in reporter.said[victim.key]
    assert victim.key in reporter.errors
    assert scheduler.queue.where(victim.key) == "backoff"

    scheduler.queue.add(healthy)
    _, qp = await pop_with_slot(scheduler)
    job = scheduler.schedule_one(qp)
    assert job is not None  # the same scheduler goes on
    assert healthy.key not in reporter.said
