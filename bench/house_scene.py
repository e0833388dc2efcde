"""The scene bench/house.py traces: the real Scheduler, the default profile, ``nodes``
nodes of 32 CPU, and one plain pod popped from the queue (scheduler_perf's default shape).

The one place that names the scheduler's modules, so that the tracer keeps working when
the house is rearranged.
"""

from __future__ import annotations

import time
from typing import Any

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.engine.algorithm import Algorithm
from asched.framework.runtime import Framework
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.binder import Binder
from asched.scheduler.cycle import Scheduler
from asched.scheduler.ledger import Ledger
from asched.scheduler.parts import ProfileRuntime
from tests.builders import make_node, make_pod
from tests.configs import load_config

PROFILE = "house"


def build(nodes: int) -> tuple[Scheduler, Any]:
    """(the scheduler, one popped pod) ready for ``schedule_one``; a warm-up pod of the
    same shape is decided first, so the trace is a steady-state cycle."""
    config = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": PROFILE}],
        }
    )
    framework = Framework(config.profiles[0])
    table = NodeTable(capacity=nodes)
    for index in range(nodes):
        table.upsert_node(decode_node(make_node(f"n{index:05}", cpu="32")))
    clock = time.monotonic
    scheduler = Scheduler(
        profiles={
            PROFILE: ProfileRuntime(framework, Algorithm(framework, table, percentage=100, seed=1))
        },
        queue=SchedulingQueue(clock=clock),
        ledger=Ledger(table),
        binder_factory=lambda s: Binder(s),
        clock=clock,
    )
    for name in ("warm", "traced"):
        raw = make_pod(name, cpu="100m", memory="500Mi")
        raw["spec"]["schedulerName"] = PROFILE
        scheduler.queue.add(decode_pod(raw))
    warm = scheduler.queue.pop()
    assert warm is not None
    assert scheduler.schedule_one(warm) is not None
    traced = scheduler.queue.pop()
    assert traced is not None
    return scheduler, traced
