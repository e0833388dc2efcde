"""What VolumeBinding's PreFilter + Filter + Reserve cost per pod, with thousands of PVs.

Usage::

    PYTHONPATH=. python bench/volume_binding_cost.py [--nodes 5000] [--per-node 2] [--pods 500]

``--nodes`` nodes (each its own ``kubernetes.io/hostname``, 10 zones), ``--per-node``
local PVs per node (WaitForFirstConsumer class, hostname ``In`` affinity) plus, with
``--zonal``, as many zonal PVs (a ``zone In`` affinity: the general placement path).
With ``--provision``, no PV: the claims' class has a CSI provisioner whose driver asks
for capacity checks, and each node has its own CSIStorageCapacity (hostname topology).
Pods of a StatefulSet-like shape, one unbound claim each (``--claims`` per pod), are
decided one after the other: PreFilter, Filter over every row, Reserve on the first
feasible row (its PV is assumed, so the index changes every pod, as in a live run).
Printed: the median and p90 microseconds per pod, and the same for a pod without claims
(PreFilter's Skip).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.table import NodeTable
from asched.cluster.volume_decode import (
    decode_claim,
    decode_csi_driver,
    decode_persistent_volume,
    decode_storage_capacity,
    decode_storage_class,
)
from asched.config.types import VolumeBindingArgs
from asched.framework.builtin.volume_binding import VolumeBinding
from asched.framework.cycle_state import CycleState

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def _node(name: str, zone: str) -> dict[str, object]:
    return {
        "metadata": {"name": name, "labels": {HOST: name, ZONE: zone}},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    }


def _pv(name: str, key: str, value: str) -> dict[str, object]:
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
    return {
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
        },
        "status": {"phase": "Available"},
    }


def _capacity(node: str) -> dict[str, object]:
    return {
        "metadata": {"name": f"cap-{node}", "namespace": "kube-system"},
        "storageClassName": "local",
        "nodeTopology": {"matchLabels": {HOST: node}},
        "capacity": "100Gi",
    }


def _claim(name: str) -> dict[str, object]:
    return {
        "metadata": {"name": name, "namespace": "default", "uid": name, "resourceVersion": "1"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "local",
            "resources": {"requests": {"storage": "5Gi"}},
        },
    }


def build(args: argparse.Namespace) -> NodeTable:
    table = NodeTable(capacity=args.nodes)
    for i in range(args.nodes):
        table.upsert_node(decode_node(_node(f"node-{i}", f"zone-{i % 10}")))
    catalog = table.volumes
    provisioner = "hollow.csi.example.com" if args.provision else "kubernetes.io/no-provisioner"
    catalog.put_class(
        decode_storage_class(
            {
                "metadata": {"name": "local"},
                "provisioner": provisioner,
                "volumeBindingMode": "WaitForFirstConsumer",
            }
        )
    )
    if args.provision:
        driver = {"metadata": {"name": provisioner}, "spec": {"storageCapacity": True}}
        catalog.put_csi_driver(decode_csi_driver(driver))
        for i in range(args.nodes):
            catalog.put_capacity(decode_storage_capacity(_capacity(f"node-{i}")))
    for i in range(args.nodes if not args.provision else 0):
        for j in range(args.per_node):
            catalog.put_pv(decode_persistent_volume(_pv(f"pv-{i}-{j}", HOST, f"node-{i}")))
            if args.zonal:
                zone = f"zone-{i % 10}"
                catalog.put_pv(decode_persistent_volume(_pv(f"zpv-{i}-{j}", ZONE, zone)))
    for p in range(args.pods):
        for c in range(args.claims):
            catalog.put_claim(decode_claim(_claim(f"data-{c}-{p}")))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--per-node", type=int, default=2)
    parser.add_argument("--pods", type=int, default=500)
    parser.add_argument("--claims", type=int, default=1)
    parser.add_argument("--zonal", action="store_true")
    parser.add_argument("--provision", action="store_true")
    args = parser.parse_args()
    table = build(args)
    plugin = VolumeBinding(VolumeBindingArgs())
    timings: list[float] = []
    for p in range(args.pods):
        volumes = [
            {"name": f"v{c}", "persistentVolumeClaim": {"claimName": f"data-{c}-{p}"}}
            for c in range(args.claims)
        ]
        pod = decode_pod({"metadata": {"name": f"web-{p}"}, "spec": {"volumes": volumes}})
        started = time.perf_counter()
        state = CycleState()
        plugin.pre_filter(state, pod, table)
        mask = plugin.filter(state, pod, table, table.rows)
        rows = np.flatnonzero(mask)
        if len(rows):
            plugin.reserve(state, pod, table.name_of(int(rows[0])))
        timings.append(time.perf_counter() - started)
    plain = decode_pod({"metadata": {"name": "plain"}, "spec": {}})
    skips = []
    for _ in range(2000):
        started = time.perf_counter()
        plugin.pre_filter(CycleState(), plain, table)
        skips.append(time.perf_counter() - started)
    pvs = len(table.volumes.pvs) or f"0 (provisioning, {len(table.volumes.capacities)} capacities)"
    timings.sort()
    print(
        f"{args.nodes} nodes, {pvs} PVs, {args.claims} claim(s)/pod: "
        f"median {statistics.median(timings) * 1e6:.0f} us, "
        f"p90 {timings[int(0.9 * len(timings))] * 1e6:.0f} us per pod; "
        f"first pod (index built) {max(timings) * 1e6:.0f} us; "
        f"pod without claims {statistics.median(skips) * 1e6:.2f} us"
    )


if __name__ == "__main__":
    main()
