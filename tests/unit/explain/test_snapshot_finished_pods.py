"""A snapshot's finished pods hold nothing on their nodes, as in the live scheduler.

`kubectl get pods -A -o yaml` exports Succeeded and Failed pods too; kube-scheduler's
informer never sees them (status.phase!=Succeeded,Failed), so neither must explain.
"""

from __future__ import annotations

from typing import Any

import pytest

from asched.cluster.snapshot import build_snapshot


def bound_pod(name: str, phase: str) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": name},
        "spec": {
            "nodeName": "n1",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}],
        },
        "status": {"phase": phase},
    }


@pytest.mark.parametrize(
    ("phase", "counted"),
    [
        pytest.param("Running", True, id="running: holds its 4 CPU"),
        pytest.param("Pending", True, id="bound but not started: holds them too"),
        pytest.param("Succeeded", False, id="succeeded: holds nothing"),
        pytest.param("Failed", False, id="failed: holds nothing"),
    ],
)
def test_finished_pods_are_left_out(phase: str, counted: bool) -> None:
    node = {
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
    snapshot = build_snapshot([node, bound_pod("done", phase)])
    assert [p.name for p in snapshot.pods] == (["done"] if counted else [])
