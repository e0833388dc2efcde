"""What recording decisions for the debug pages costs per pod, at 5,000 nodes.

Usage::

    PYTHONPATH=. python bench/debug_recorder.py [--nodes 5000] [--pods 300] [--rounds 3]

The real Scheduler (default profile) over ``--nodes`` nodes (1 in 10 tainted, so every
decision has rejections to record; a pod on every third node, so scores differ) decides
``--pods`` pods without and with a :class:`~asched.debug.recorder.Recorder`, in
interleaved rounds; each pod is assumed where it goes (no binding: the cycle alone is
timed). Printed: the median milliseconds per pod of each, the difference, and the bytes
one record owns. Run with ``percentageOfNodesToScore`` adaptive (upstream's default:
10 % at 5,000 nodes) and 100 (every node examined and scored).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.debug.recorder import Recorder
from asched.engine.algorithm import Algorithm
from asched.framework.runtime import Framework
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.binder import Binder, BindJob
from asched.scheduler.cycle import Scheduler
from asched.scheduler.ledger import Ledger
from asched.scheduler.observe import Observers
from asched.scheduler.parts import ProfileRuntime
from tests.builders import make_node, make_pod
from tests.configs import load_config

PROFILE = "bench"


def scheduler(nodes: int, percentage: int, recorder: Recorder | None) -> Scheduler:
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
        taints = [("dedicated", "x", "NoSchedule")] if index % 10 == 0 else []
        table.upsert_node(decode_node(make_node(f"n{index:05}", cpu="32", taints=taints)))
        if index % 3 == 0:
            table.add_pod(decode_pod(make_pod(f"r{index}", cpu="2", memory="4Gi")), f"n{index:05}")
    clock = time.monotonic
    return Scheduler(
        profiles={
            PROFILE: ProfileRuntime(
                framework, Algorithm(framework, table, percentage=percentage, seed=1)
            )
        },
        queue=SchedulingQueue(clock=clock),
        ledger=Ledger(table),
        binder_factory=lambda s: Binder(s),
        observer=Observers(recorder=recorder),
        clock=clock,
    )


def per_pod_ms(s: Scheduler, pods: int, round_: int) -> float:
    for index in range(pods):
        raw = make_pod(f"p{round_}-{index}", cpu="100m", memory="100Mi")
        raw["spec"]["schedulerName"] = PROFILE
        s.queue.add(decode_pod(raw))
    started = time.perf_counter()
    for _ in range(pods):
        qp = s.queue.pop()
        assert qp is not None
        assert isinstance(s.schedule_one(qp), BindJob)
    return (time.perf_counter() - started) * 1000 / pods


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for percentage in (0, 100):
        recorder = Recorder(100)
        off = scheduler(args.nodes, percentage, None)
        on = scheduler(args.nodes, percentage, recorder)
        per_pod_ms(off, 20, -1)  # warm the class caches
        per_pod_ms(on, 20, -1)
        offs, ons = [], []
        for round_ in range(args.rounds):
            offs.append(per_pod_ms(off, args.pods, round_))
            ons.append(per_pod_ms(on, args.pods, round_))
        record = recorder.records()[0]
        names = sum(sys.getsizeof(n) for n in record.names) + sys.getsizeof(record.names)
        label = "adaptive" if percentage == 0 else f"{percentage} %"
        off_ms, on_ms = statistics.median(offs), statistics.median(ons)
        print(
            f"{args.nodes} nodes, percentageOfNodesToScore {label}: "
            f"examined {record.examined}, scored {len(record.scored)}; "
            f"off {off_ms:.3f} ms/pod, on {on_ms:.3f} ms/pod, "
            f"recording +{on_ms - off_ms:.3f} ms/pod; "
            f"record {record.nbytes():,} bytes (+ names shared: {names:,} bytes)"
        )


if __name__ == "__main__":
    main()
