"""Hollow nodes (as KWOK makes them) and snapshot files.

The default template is scheduler_perf's ``node-default.yaml``: capacity = allocatable
``cpu: 4, memory: 32Gi, pods: 110`` and a ``Ready=True`` condition. Each hollow node
``node-<i>`` gets ``kubernetes.io/hostname=node-<i>`` and, with Z zones,
``topology.kubernetes.io/zone=zone-<i mod Z>`` (round robin, so zones stay balanced
for any node count).

A snapshot is what ``kubectl get nodes,pods,... -A -o yaml`` prints: a ``kind: List``
with ``items``, or a multi-document YAML stream (Lists inside are flattened).

File problems raise :class:`asched.errors.InputError`, one line naming the file (see
:mod:`asched.tools.sim.apiserver.files`); these functions never touch the store (see
:mod:`asched.tools.sim.apiserver.bootstrap`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import orjson

from asched.errors import InputError
from asched.tools.sim.apiserver import files

JSON = dict[str, Any]

DEFAULT_TEMPLATE: Final[JSON] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "labels": {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"},
        "annotations": {"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
    },
    "spec": {},
    "status": {
        "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
            }
        ],
        "phase": "Running",
        "nodeInfo": {
            "architecture": "amd64",
            "operatingSystem": "linux",
            "kubeletVersion": "fake",
            "kubeProxyVersion": "fake",
            "osImage": "",
            "kernelVersion": "",
            "containerRuntimeVersion": "",
            "machineID": "",
            "systemUUID": "",
            "bootID": "",
        },
    },
}


def load_template(path: Path) -> JSON:
    """A Node template from a YAML file (one document, ``kind: Node``)."""
    documents = files.yaml_documents(path, "node template")
    if (
        len(documents) != 1
        or not isinstance(documents[0], dict)
        or documents[0].get("kind", "Node") != "Node"
    ):
        raise InputError(f"node template {path}: expected exactly one document of kind Node")
    template: JSON = documents[0]
    if not isinstance(template.get("status", {}), dict) or not isinstance(
        template.get("metadata", {}), dict
    ):
        raise InputError(f"node template {path}: metadata and status must be mappings")
    return template


def load_snapshot(path: Path) -> list[JSON]:
    """Every object of a snapshot file, Lists flattened, in file order."""
    objects: list[JSON] = []
    for index, document in enumerate(files.yaml_documents(path, "snapshot")):
        if not isinstance(document, dict):
            raise InputError(f"snapshot {path}: document {index} is not a mapping")
        if str(document.get("kind", "")).endswith("List") and "items" in document:
            items = document.get("items") or []
            if not isinstance(items, list):
                raise InputError(f"snapshot {path}: document {index}: items must be a list")
            objects.extend(item for item in items if isinstance(item, dict))
        else:
            objects.append(document)
    return objects


def hollow_nodes(count: int, template: JSON | None, zones: int, now: str) -> Iterator[JSON]:
    """``count`` Ready nodes built from ``template`` (default: scheduler_perf's node-default)."""
    raw = orjson.dumps(template if template is not None else DEFAULT_TEMPLATE)
    for index in range(count):
        node: JSON = orjson.loads(raw)
        name = f"node-{index}"
        meta = node.setdefault("metadata", {})
        meta.pop("generateName", None)
        meta["name"] = name
        labels = meta.setdefault("labels", {})
        labels["kubernetes.io/hostname"] = name
        if zones > 0:
            labels["topology.kubernetes.io/zone"] = f"zone-{index % zones}"
        status = node.setdefault("status", {})
        capacity = status.get("capacity") or {}
        status.setdefault("allocatable", dict(capacity))
        for condition in status.get("conditions") or []:
            condition.setdefault("lastHeartbeatTime", now)
            condition.setdefault("lastTransitionTime", now)
        status.setdefault(
            "addresses",
            [
                {
                    "type": "InternalIP",
                    "address": f"10.{(index >> 16) & 255}.{(index >> 8) & 255}.{index & 255}",
                },
                {"type": "Hostname", "address": name},
            ],
        )
        yield node
