"""scheduler_perf's node and pod templates, as raw Kubernetes JSON.

``node-default``: capacity = allocatable = 4 CPU, 32Gi, 110 pods, Ready. ``pod-default``:
the pause image with requests = limits = 100m CPU and 500Mi memory. Nodes get hostname
and zone labels (zones ``zone-0..``) so zone interleaving and spreading have something to
work with.
"""

from __future__ import annotations

from typing import Any

Raw = dict[str, Any]


def node(
    name: str, *, zone: str = "zone-0", cpu: str = "4", memory: str = "32Gi", pods: str = "110"
) -> Raw:
    """A hollow node in scheduler_perf's default shape."""
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "topology.kubernetes.io/zone": zone,
            },
        },
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "phase": "Running",
        },
    }


def pod(
    name: str,
    *,
    namespace: str = "default",
    cpu: str = "100m",
    memory: str = "500Mi",
    scheduler_name: str = "default-scheduler",
    node_name: str | None = None,
) -> Raw:
    """A pod in scheduler_perf's default shape (requests = limits)."""
    resources = {"cpu": cpu, "memory": memory}
    spec: Raw = {
        "schedulerName": scheduler_name,
        "containers": [
            {
                "name": "pause",
                "image": "registry.k8s.io/pause:3.9",
                "ports": [{"containerPort": 80}],
                "resources": {"requests": dict(resources), "limits": dict(resources)},
            }
        ],
    }
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "bench"}},
        "spec": spec,
    }
