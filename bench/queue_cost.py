"""The scheduling queue at capacity: cost of one pop and of one unhelpful event, by parked pods.

Usage (run from a checkout; ``PYTHONPATH`` picks which asched is measured)::

    PYTHONPATH=$PWD python bench/queue_cost.py --parked 0,1000,10000,50000 --json out.json

A cluster at capacity holds many unschedulable pods parked in the queue while the
scheduler keeps popping the pods that do fit. For each count of parked pods (all rejected
by NodeResourcesFit, as when the cluster is full) this measures, in process with a fake
clock that does not move (so no parked pod times out):

- ``pop``: one pending pod added, popped and done (what every scheduling cycle pays);
- ``event``: one AssignedPodAdd, an event NodeResourcesFit does not wait for (what the
  ingest pays for every pod it sees bound).

The costs are medians over ``--repeat`` rounds of ``--ops`` operations, in microseconds
per operation. The script speaks the queue API of today's main and of the older commit
issue 14 compares against (``24a9163``), so both can be measured side by side::

    bench/queue_cost.py --against /path/to/worktree-of-24a9163

runs the same measurement in a child process for the other checkout and prints both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from side_by_side import commit_of  # bench/ is this script's folder

from asched.cluster.decode import decode_pod
from asched.framework.status import Status
from asched.queue.scheduling_queue import SchedulingQueue

try:  # today's layout: declared events live in the framework
    from asched.framework.events import ClusterEvent

    FIT_EVENTS: Any = frozenset(
        {ClusterEvent.NODE_ADD, ClusterEvent.NODE_ALLOCATABLE, ClusterEvent.ASSIGNED_POD_DELETE}
    )
    NEW_API = True
except ImportError:  # 24a9163: a static table in asched.queue.events
    from asched.queue.events import ClusterEvent  # type: ignore[import-not-found,no-redef]

    NEW_API = False


def _pod(name: str) -> Any:
    return decode_pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {
                "schedulerName": "default-scheduler",
                "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}
                ],
            },
        }
    )


def _queue() -> Any:
    if NEW_API:
        return SchedulingQueue(clock=lambda: 0.0, interests={"NodeResourcesFit": FIT_EVENTS})
    return SchedulingQueue(clock=lambda: 0.0)


def _park(queue: Any, count: int) -> None:
    rejected = Status.unschedulable("Insufficient cpu", plugin="NodeResourcesFit")
    for index in range(count):
        queue.add(_pod(f"parked-{index}"))
    while (qp := queue.pop()) is not None:
        queue.requeue(qp, rejected)


def measure(parked: int, ops: int, repeat: int) -> dict[str, Any]:
    """Medians of ``repeat`` rounds of ``ops`` operations each (microseconds per op)."""
    queue = _queue()
    _park(queue, parked)
    assert queue.pending().get("unschedulable", 0) == parked, queue.pending()
    pods = [_pod(f"p-{index}") for index in range(ops)]
    pops: list[float] = []
    events: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        for pod in pods:
            queue.add(pod)
            qp = queue.pop()
            queue.done(qp.key)
        pops.append((time.perf_counter() - started) / ops * 1e6)
        started = time.perf_counter()
        for _ in range(ops):
            queue.move(ClusterEvent.ASSIGNED_POD_ADD)
        events.append((time.perf_counter() - started) / ops * 1e6)
    assert queue.pending().get("unschedulable", 0) == parked, "an unhelpful event moved pods"
    return {
        "parked": parked,
        "pop_us": statistics.median(pops),
        "pop_runs_us": pops,
        "event_us": statistics.median(events),
        "event_runs_us": events,
    }


def _run_here(args: argparse.Namespace) -> list[dict[str, Any]]:
    results = []
    for parked in args.parked:
        ops = max(50, min(args.ops, 2_000_000 // max(parked, 1)))  # keep the slow case short
        results.append(measure(parked, ops, args.repeat))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parked", default="0,1000,10000,50000")
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--against", type=Path, help="another checkout, measured the same way")
    parser.add_argument("--raw", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.parked = [int(value) for value in args.parked.split(",")]
    here = Path(__file__).resolve().parent.parent
    if args.raw:
        print(json.dumps(_run_here(args)))
        return
    runs = {f"{commit_of(here)} (this checkout)": _run_here(args)}
    if args.against is not None:
        child = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--raw", "--parked",
             ",".join(map(str, args.parked)), "--ops", str(args.ops), "--repeat", str(args.repeat)],
            env={**os.environ, "PYTHONPATH": str(args.against.resolve())},
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        runs[commit_of(args.against)] = json.loads(child.stdout)
    print("| checkout | parked pods | pop (µs) | unhelpful event (µs) |")
    print("|---|---|---|---|")
    for name, results in runs.items():
        for row in results:
            print(f"| {name} | {row['parked']:,} | {row['pop_us']:.1f} | {row['event_us']:.1f} |")
    if args.json is not None:
        args.json.write_text(json.dumps(runs, indent=2))


if __name__ == "__main__":
    main()
