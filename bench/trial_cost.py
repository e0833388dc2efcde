"""Preemption's dry runs on the live table: their own CPU cost and the cost they leave behind.

Usage (run from a checkout; ``PYTHONPATH`` picks which asched is measured)::

    PYTHONPATH=$PWD python bench/trial_cost.py --nodes 500,5000 --preemptors 7 --json out.json

The table is PreemptionBasic's shape (``bench/workloads/preemption-basic-500n.yaml``):
default nodes (4 CPU) each filled with four 900m pods of priority 0, so no node has room
for a 3 CPU pod of priority 10 and every one of them must preempt. Per preemptor kind:

* ``plain``: no cross-row constraint, so DefaultPreemption takes its vectorised search,
  which never writes the table (the control);
* ``anti``: a required pod anti-affinity (hostname) against its own app, which no placed
  pod carries: InterPodAffinity is active, so the search is the exact one, removing and
  re-adding pods row by row on the live table;
* ``ports``: a host port, which sends the search down the exact path too.

Each preemptor is first tried (``Algorithm.candidates``: it fits nowhere), then measured:

* ``dry_run``: DefaultPreemption's PostFilter (its candidate search; nothing is applied,
  so every preemptor sees the same table);
* ``pre_filter``: the part of ``dry_run`` spent in ``Framework.run_pre_filter`` (the
  exact search runs it once per preemptor when every PreFilter that reads the pods on
  the nodes has PreFilterExtensions hooks, as in the default profile; else again for
  every fit check of every visited row);
* ``hooks``: the part of ``dry_run`` spent in the PreFilterExtensions hooks
  (``Framework.run_pre_filter_add_pod``/``remove_pod``: the PreFilter state following
  each victim removed or put back, each nominated pod counted);
* ``table``: the part of ``dry_run`` spent in ``NodeTable.add_pod``/``remove_pod`` (the
  victims removed and re-added on the live table, the change log written);
* ``next``: the next ordinary decision, for a 100m pod whose class was cached before the
  dry run (``Algorithm.schedule``, not reserved): what the class cache pays to bring the
  rows the dry run logged up to date, and the class's run (``class_run``) it ends.
  ``plain`` logs nothing, so its ``next`` is what the decision costs when the dry run
  leaves the cache alone (a step of the class's run);
* ``next_all``: the next decision of each of ``--classes`` cached classes (100m pods whose
  memory overheads differ; 8 is the class cache's size), summed: what the dry run costs
  the cache at worst;
* ``logged``: how many change-log entries the dry run left.

CPU times (``time.process_time``, so a busy shared machine moves them less than wall
time), medians over ``--preemptors`` preemptors, in milliseconds. The wrappers that time
``pre_filter``, ``hooks`` and ``table`` add their own cost (two clock reads a call) to
``dry_run``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from asched.cluster.decode import decode_pod
from asched.cluster.records import PodInfo
from asched.config.load import default_config
from asched.config.types import DefaultPreemptionArgs
from asched.engine.algorithm import Algorithm
from asched.framework.builtin.default_preemption import DefaultPreemption
from asched.framework.cycle_state import CycleState
from asched.framework.registry import installed
from asched.framework.runtime import Framework
from asched.tools.bench import templates
from asched.tools.bench.core import build_table

KINDS = ("plain", "anti", "ports")
LOW_PER_NODE = 4


def _pod(name: str, cpu: str, priority: int, **spec: Any) -> PodInfo:
    raw = templates.pod(name, cpu=cpu, memory="100Mi")
    raw["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    raw["spec"]["priority"] = priority
    raw["spec"].update(spec)
    return decode_pod(raw)


def preemptor(kind: str, index: int) -> PodInfo:
    """A 3 CPU pod of priority 10 of ``kind`` (see the module docstring)."""
    spec: dict[str, Any] = {}
    if kind == "anti":
        term = {
            "labelSelector": {"matchLabels": {"app": "preemptor"}},
            "topologyKey": "kubernetes.io/hostname",
        }
        spec["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    pod = templates.pod(f"high-{kind}-{index}", cpu="3", memory="100Mi")
    pod["metadata"]["labels"] = {"app": "preemptor"}
    pod["spec"]["priority"] = 10
    pod["spec"].update(spec)
    if kind == "ports":
        pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    return decode_pod(pod)


def _timed(call: Callable[[], object]) -> tuple[float, object]:
    started = time.process_time()
    out = call()
    return (time.process_time() - started) * 1000, out


def measure(n_nodes: int, kind: str, preemptors: int, classes: int) -> dict[str, float]:
    table = build_table(n_nodes)
    for row in range(n_nodes):
        node = table.name_of(row)
        for slot in range(LOW_PER_NODE):
            table.add_pod(_pod(f"low-{row}-{slot}", "900m", 0), node)
    framework = Framework(default_config(installed().catalogue).profiles[0])
    algorithm = Algorithm(framework, table, seed=1)
    plugin = DefaultPreemption(DefaultPreemptionArgs(), seed=1)
    small = _pod("small", "100m", 0)
    others = [
        _pod(f"small-{i}", "100m", 0, overhead={"memory": f"{i + 1}Mi"}) for i in range(classes - 1)
    ]
    for pod in others:
        algorithm.schedule(pod)
    for _ in range(3):  # the class cached, a run of it started
        algorithm.schedule(small)

    spent = [0.0]
    original = framework.run_pre_filter

    def counted(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - started

    framework.run_pre_filter = counted  # type: ignore[method-assign]
    hooked = [0.0]
    add_hook, remove_hook = framework.run_pre_filter_add_pod, framework.run_pre_filter_remove_pod

    def hooking(hook: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any) -> Any:
            started = time.process_time()
            try:
                return hook(*args)
            finally:
                hooked[0] += time.process_time() - started

        return timed

    framework.run_pre_filter_add_pod = hooking(add_hook)  # type: ignore[method-assign]
    framework.run_pre_filter_remove_pod = hooking(remove_hook)  # type: ignore[method-assign]
    in_table = [0.0]
    add_pod, remove_pod = table.add_pod, table.remove_pod

    def adding(pod: PodInfo, node: str) -> bool:
        started = time.process_time()
        try:
            return add_pod(pod, node)
        finally:
            in_table[0] += time.process_time() - started

    def removing(key: str) -> PodInfo | None:
        started = time.process_time()
        try:
            return remove_pod(key)
        finally:
            in_table[0] += time.process_time() - started

    table.add_pod = adding  # type: ignore[method-assign,assignment]
    table.remove_pod = removing  # type: ignore[method-assign]
    rows: dict[str, list[float]] = {
        name: []
        for name in ("dry_run", "pre_filter", "hooks", "table", "next", "next_all", "logged")
    }
    for index in range(preemptors):
        pod = preemptor(kind, index)
        decision = algorithm.candidates(pod)
        assert not decision.status.ok, "the preemptor must fit nowhere"
        statuses = decision.statuses()
        mark = table.change_mark
        spent[0] = in_table[0] = hooked[0] = 0.0
        cost, result = _timed(
            lambda: plugin.post_filter(CycleState(), pod, table, statuses, framework)  # noqa: B023
        )
        assert getattr(result, "nominated_node", None), "the preemptor must find a node"
        rows["dry_run"].append(cost)
        rows["pre_filter"].append(spent[0] * 1000)
        rows["hooks"].append(hooked[0] * 1000)
        rows["table"].append(in_table[0] * 1000)
        rows["logged"].append(table.change_mark - mark)
        cost, _ = _timed(lambda: algorithm.schedule(small))
        rows["next"].append(cost)
        rest, _ = _timed(lambda: [algorithm.schedule(other) for other in others])
        rows["next_all"].append(cost + rest)
        for _ in range(2):  # the class's run started again, as before the first preemptor
            algorithm.schedule(small)
    out = {name: statistics.median(values) for name, values in rows.items()}
    out["search_exact"] = float(plugin.last_search == "exact")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="500,5000", help="comma-separated node counts")
    parser.add_argument("--kinds", default=",".join(KINDS), help="preemptor kinds")
    parser.add_argument("--preemptors", type=int, default=7, help="preemptors per case")
    parser.add_argument("--classes", type=int, default=8, help="cached classes for next_all")
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()
    results = []
    print(
        f"{'nodes':>6} {'kind':>6} {'search':>9} {'dry_run ms':>11} {'pre_filter ms':>14}"
        f" {'hooks ms':>9}"
        f" {'table ms':>9} {'next ms':>8} {'next_all ms':>12} {'logged':>7}"
    )
    for n_nodes in (int(n) for n in args.nodes.split(",")):
        for kind in args.kinds.split(","):
            found = measure(n_nodes, kind, args.preemptors, args.classes)
            search = "exact" if found["search_exact"] else "resources"
            print(
                f"{n_nodes:>6} {kind:>6} {search:>9} {found['dry_run']:>11.2f}"
                f" {found['pre_filter']:>14.2f} {found['hooks']:>9.2f} {found['table']:>9.2f}"
                f" {found['next']:>8.3f}"
                f" {found['next_all']:>12.3f} {found['logged']:>7.0f}"
            )
            results.append({"nodes": n_nodes, "kind": kind, "search": search, **found})
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
