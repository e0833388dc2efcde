"""What exists before the first request: the objects a fresh v1.37 server creates itself,
the hollow nodes, and the replayed snapshot.

A genuine server starts with the namespaces ``default``, ``kube-system``,
``kube-public`` and ``kube-node-lease``, the two system PriorityClasses and the
``default/kubernetes`` Service; the sim creates the same. Everything goes through the
registry (defaults and validation apply); snapshot objects use ``restore`` mode (status,
uid and timestamps kept, admission skipped) and are skipped with a warning when invalid.
Afterwards the watch history is reset, so watches start from the loaded state, as a
fresh server's watch cache does.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from asched.tools.sim.apiserver import apierrors, nodes, resources
from asched.tools.sim.apiserver.registry import Registry

logger = logging.getLogger(__name__)

JSON = dict[str, Any]

NAMESPACES: Final = ("default", "kube-system", "kube-public", "kube-node-lease")
SYSTEM_PRIORITY_CLASSES: Final = (
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
)
#: snapshot objects are created in this order (dependencies first), then the rest.
_FIRST: Final = (
    "CustomResourceDefinition",
    "Namespace",
    "PriorityClass",
    "StorageClass",
    "CSIDriver",
    "Node",
    "CSINode",
    "PersistentVolume",
)


def _spec(group: str, version: str, resource: str) -> resources.ResourceSpec:
    return resources.BY_GVR[(group, version, resource)]


def builtins(registry: Registry) -> None:
    """The objects a fresh kube-apiserver creates for itself."""
    namespaces = _spec("", "v1", "namespaces")
    for name in NAMESPACES:
        registry.create(namespaces, "", {"metadata": {"name": name}})
    classes = _spec("scheduling.k8s.io", "v1", "priorityclasses")
    for name, value, description in SYSTEM_PRIORITY_CLASSES:
        registry.create(
            classes, "", {"metadata": {"name": name}, "value": value, "description": description}
        )
    registry.create(
        _spec("", "v1", "services"),
        "default",
        {
            "metadata": {
                "name": "kubernetes",
                "labels": {"component": "apiserver", "provider": "kubernetes"},
            },
            "spec": {
                "ports": [{"name": "https", "port": 443, "targetPort": 6443}],
                "clusterIP": "10.96.0.1",
            },
        },
    )


def hollow(registry: Registry, count: int, template: JSON | None, zones: int) -> None:
    """Create ``count`` hollow nodes."""
    spec = _spec("", "v1", "nodes")
    for node in nodes.hollow_nodes(count, template, zones, registry.clock.now()):
        registry.create(spec, "", node)


def _served(registry: Registry, api_version: str, kind: str) -> resources.ResourceSpec | None:
    """The built-in or custom view serving ``kind`` at ``api_version`` (custom resources
    are served once their CRD, restored first, is Established, as a snapshot's CRDs are)."""
    found = resources.by_kind(api_version, kind)
    if found is not None:
        return found
    for spec in registry.catalog.custom_specs():
        if spec.kind == kind and spec.api_version == api_version:
            return spec
    return None


def restore(registry: Registry, objects: list[JSON]) -> int:
    """Replay snapshot objects; return how many were loaded."""
    rank = {kind: position for position, kind in enumerate(_FIRST)}
    ordered = sorted(objects, key=lambda obj: rank.get(str(obj.get("kind")), len(rank)))
    namespaces = _spec("", "v1", "namespaces")
    loaded = 0
    for obj in ordered:
        spec = _served(registry, str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        raw_meta = obj.get("metadata")
        meta: JSON = raw_meta if isinstance(raw_meta, dict) else {}
        label = f"{obj.get('kind')} {meta.get('namespace', '')}/{meta.get('name', '')}"
        if spec is None:
            logger.warning("snapshot: skipping %s: %s is not served", label, obj.get("apiVersion"))
            continue
        namespace = str(meta.get("namespace") or "default") if spec.namespaced else ""
        try:
            if namespace and registry.find("namespaces", namespace) is None:
                registry.create(namespaces, "", {"metadata": {"name": namespace}})
            registry.create(spec, namespace, obj, restore=True)
        except apierrors.StatusError as error:
            logger.warning("snapshot: skipping %s: %s", label, error.message)
            continue
        loaded += 1
    return loaded
