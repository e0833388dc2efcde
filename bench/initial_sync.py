"""The scheduler's initial sync of a large cluster: time to ready and memory.

Usage::

    PYTHONPATH=$PWD python bench/initial_sync.py --sizes 0x0,50000x0,50000x500000 --json out.json

For each ``NODESxPODS`` size, the simulator starts with ``NODES`` hollow nodes
(scheduler_perf's node-default: 4 CPU, 32Gi, 110 pods) and ``PODS`` bound, running pods
(scheduler_perf's default pod: 100m CPU, 500Mi), spread evenly over the nodes and over
namespaces of 1,000 pods, loaded from a JSON snapshot file. Then ``asched run`` starts
against it and the script measures:

- **sync seconds**: from starting the process to its ``synced:`` log line (interpreter
  start and imports, the paginated LIST of every watched resource, decoding every object
  into the node table and the pod columns, the first watch);
- **scheduler CPU** over the same time (user + system), and the simulator's CPU since
  it started (its own loading of the snapshot included);
- **peak RSS** (``VmHWM``) and **RSS once synced** (``VmRSS``) of the scheduler process.

With an empty size and sizes that differ only in nodes or only in pods, it prints the
memory per node and per pod (the RSS differences over the object counts, once synced).
Absolute figures depend on the machine; the script records its CPU model.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from asched.tools.backends.simulator import SimServer
from asched.tools.bench.procstat import cpu_seconds
from asched.tools.bench.schedulers import AschedProcess

PODS_PER_NAMESPACE = 1000


def _pods(nodes: int, pods: int) -> list[dict[str, Any]]:
    """``pods`` bound, running default pods spread round-robin over ``nodes``."""
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"pod-{index}",
                "namespace": f"sync-{index // PODS_PER_NAMESPACE}",
            },
            "spec": {
                "nodeName": f"node-{index % nodes}",
                "schedulerName": "default-scheduler",
                "containers": [
                    {
                        "name": "pause",
                        "image": "registry.k8s.io/pause:3.9",
                        "resources": {
                            "requests": {"cpu": "100m", "memory": "500Mi"},
                            "limits": {"cpu": "100m", "memory": "500Mi"},
                        },
                    }
                ],
            },
            "status": {"phase": "Running"},
        }
        for index in range(pods)
    ]


def _proc_status(pid: int) -> dict[str, int]:
    """``VmHWM`` and ``VmRSS`` of ``pid`` in bytes."""
    found: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            found[key] = int(value.split()[0]) * 1024
    return found


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return platform.processor()


def measure(nodes: int, pods: int, workdir: Path, timeout: float) -> dict[str, Any]:
    """Start the simulator with the cluster, then asched; time its sync."""
    if pods and not nodes:
        raise SystemExit("pods need nodes to be bound to")
    snapshot = workdir / f"snapshot-{nodes}x{pods}.json"
    snapshot.write_bytes(
        orjson.dumps({"apiVersion": "v1", "kind": "List", "items": _pods(nodes, pods)})
    )
    started = time.monotonic()
    extra = ("--snapshot", str(snapshot), "--history", "1000")
    with SimServer(
        nodes=nodes, extra_args=extra, ready_timeout=timeout, log_level="WARNING"
    ) as sim:
        sim_seconds = time.monotonic() - started
        run_dir = workdir / f"run-{nodes}x{pods}"
        run_dir.mkdir()
        scheduler = AschedProcess(sim.kubeconfig, run_dir, percentage=100, log_level="INFO")
        started = time.monotonic()
        scheduler.start()
        try:
            memory: dict[str, int] = {}
            while time.monotonic() - started < timeout:
                if not scheduler.alive():
                    raise SystemExit(f"asched exited during the sync:\n{scheduler.log_tail()}")
                if "synced:" in scheduler.log.read_text(errors="replace"):
                    break
                assert scheduler.pid is not None
                memory = _proc_status(scheduler.pid)  # last reading before ready
                time.sleep(0.05)
            else:
                raise SystemExit(f"asched did not sync within {timeout:.0f} s")
            seconds = time.monotonic() - started
            assert scheduler.pid is not None
            scheduler_cpu = cpu_seconds(scheduler.pid)
            sim_pids = list(sim.pids().values())
            sim_cpu = cpu_seconds(sim_pids[0]) if sim_pids else None
            time.sleep(1.0)  # let the first cycles and the GC freeze settle
            assert scheduler.pid is not None
            memory = _proc_status(scheduler.pid)
        finally:
            scheduler.stop()
    return {
        "nodes": nodes,
        "pods": pods,
        "sim_start_seconds": sim_seconds,
        "sync_seconds": seconds,
        "scheduler_cpu_seconds": scheduler_cpu,
        "sim_cpu_seconds_total": sim_cpu,
        "peak_rss_bytes": memory["VmHWM"],
        "rss_synced_bytes": memory["VmRSS"],
    }


def _per_object(results: list[dict[str, Any]]) -> list[str]:
    """Memory per node and per pod from pairs of sizes that differ in one count."""
    lines = []
    for low in results:
        for high in results:
            grown = high["rss_synced_bytes"] - low["rss_synced_bytes"]
            if high["pods"] == low["pods"] and high["nodes"] > low["nodes"]:
                count = high["nodes"] - low["nodes"]
                lines.append(
                    f"per node: {grown / count:,.0f} bytes ({low['nodes']:,} -> {high['nodes']:,} nodes, {low['pods']:,} pods)"
                )
            if high["nodes"] == low["nodes"] and high["pods"] > low["pods"]:
                count = high["pods"] - low["pods"]
                lines.append(
                    f"per pod: {grown / count:,.0f} bytes ({low['pods']:,} -> {high['pods']:,} pods, {low['nodes']:,} nodes)"
                )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="0x0,50000x0,50000x500000", help="NODESxPODS,...")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per phase")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sizes = [tuple(int(part) for part in size.split("x")) for size in args.sizes.split(",")]
    results = []
    with tempfile.TemporaryDirectory(prefix="asched-sync-") as scratch:
        for nodes, pods in sizes:
            print(f"{nodes:,} nodes, {pods:,} pods ...", flush=True)
            results.append(measure(nodes, pods, Path(scratch), args.timeout))
    mib = 1024 * 1024
    print(
        "\n| nodes | pods | sync (s) | scheduler CPU (s) | peak RSS (MiB) "
        "| RSS once synced (MiB) | simulator start (s) |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in results:
        print(
            f"| {row['nodes']:,} | {row['pods']:,} | {row['sync_seconds']:.1f} "
            f"| {row['scheduler_cpu_seconds'] or 0:.1f} "
            f"| {row['peak_rss_bytes'] / mib:,.0f} | {row['rss_synced_bytes'] / mib:,.0f} "
            f"| {row['sim_start_seconds']:.0f} |"
        )
    per_object = _per_object(results)
    for line in per_object:
        print(line)
    if args.json is not None:
        document = {"machine": {"cpu": _cpu_model()}, "results": results, "per_object": per_object}
        args.json.write_text(json.dumps(document, indent=2))


if __name__ == "__main__":
    main()
