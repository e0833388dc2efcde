"""A decoded point-in-time view of a cluster, and the loader for snapshot files.

A snapshot file is what ``kubectl get nodes,pods,... -A -o yaml`` prints (a ``kind:
List`` with ``items``), or a multi-document YAML stream, or the JSON equivalents. Nodes
and bound pods are decoded, and each Node object is also kept as written (what a
scheduler extender that is not ``nodeCacheCapable`` is sent); unbound pods are not in ``pods``; Namespaces, Services,
ReplicaSets, StatefulSets, ReplicationControllers and PodDisruptionBudgets are kept raw
for the plugins that read them. Storage objects (PersistentVolumes, claims, StorageClasses,
CSINodes, CSIDrivers, CSIStorageCapacities) are decoded into ``volumes``, the catalog the
volume plugins read, by the scheduler's own :func:`asched.cluster.storage.apply`. Gangs
go into ``gangs``, a :class:`~asched.cluster.gangs.GangIndex` fed as the scheduler's ingest
feeds it: PodGroups and Workloads at the versions it watches (one that does not decode is kept in its ``invalid``,
with the reason), and every pod that names a gang, pending ones included (a finished one
as finished). Other kinds are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from asched import textfile
from asched.cluster import storage
from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.gangs import GANG_APIS, GangIndex
from asched.cluster.records import TERMINAL_PHASES, NodeInfo, PodInfo
from asched.cluster.volumes import VolumeCatalog
from asched.errors import DecodeError, InputError

#: The gang kinds, at the versions the scheduler watches (:data:`GANG_APIS`): another
#: version of a kind of that name (upstream's ``scheduling.k8s.io/v1beta1`` PodGroup) is
#: not what Coscheduling reads.
GANG_VERSIONS: Final = {
    "PodGroup": GANG_APIS["podgroups"].removeprefix("/apis/"),
    "Workload": GANG_APIS["workloads"].removeprefix("/apis/"),
}

KEPT_RAW_KINDS = (
    "Namespace",
    "Service",
    "ReplicaSet",
    "StatefulSet",
    "ReplicationController",
    "PodDisruptionBudget",
)


@dataclass(slots=True)
class Snapshot:
    """Nodes in the order they were listed, the pods bound to them, and raw extras.

    ``raw_nodes`` holds each Node object as the file gave it, by node name; ``gangs``
    the gangs declared and the pods (bound or pending) that name each.
    """

    nodes: list[NodeInfo] = field(default_factory=list)
    pods: list[PodInfo] = field(default_factory=list)
    extras: dict[str, list[Mapping[str, Any]]] = field(default_factory=dict)
    raw_nodes: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    volumes: VolumeCatalog = field(default_factory=VolumeCatalog)
    gangs: GangIndex = field(default_factory=GangIndex)


def objects_of(text: str, source: str) -> list[Mapping[str, Any]]:
    """Flatten a List / multi-document stream into its objects (in order)."""
    out: list[Mapping[str, Any]] = []
    for index, doc in enumerate(textfile.parse_yaml_all(text, source)):
        if doc is None:
            continue
        if not isinstance(doc, Mapping):
            raise InputError(f"{source}: document {index} is not an object")
        if str(doc.get("kind", "")).endswith("List") and "items" in doc:
            items = doc.get("items") or []
            if not isinstance(items, list):
                raise InputError(f"{source}: document {index}: items must be a list")
            for item_index, item in enumerate(items):
                if not isinstance(item, Mapping):
                    raise InputError(f"{source}: items[{item_index}] is not an object")
                out.append(item)
        else:
            out.append(doc)
    return out


def build_snapshot(
    objects: Iterable[Mapping[str, Any]], source: str = "", *, keep_annotations: bool = False
) -> Snapshot:
    """Decode the objects of a snapshot. Errors name the source file and the object.

    ``keep_annotations``: decode the nodes' and pods' annotations (when the profile's
    plugins read them, as the scheduler's ingest does)."""
    snapshot = Snapshot()
    for obj in objects:
        kind = obj.get("kind")
        try:
            if kind == "Node":
                node = decode_node(obj, keep_annotations=keep_annotations)
                snapshot.nodes.append(node)
                snapshot.raw_nodes[node.name] = obj
            elif kind == "Pod":
                pod = decode_pod(obj, keep_annotations=keep_annotations)
                # a finished pod holds nothing on its node, as in the live scheduler
                finished = pod.phase in TERMINAL_PHASES
                if pod.node_name and not finished:
                    snapshot.pods.append(pod)
                if pod.gang and finished:
                    snapshot.gangs.finish_member(pod.key, pod.gang, pod.phase)
                elif pod.gang:
                    snapshot.gangs.set_member(pod.key, pod.gang, pod)
            elif kind in GANG_VERSIONS:
                if obj.get("apiVersion", GANG_VERSIONS[kind]) != GANG_VERSIONS[kind]:
                    continue  # another API's kind of that name
                if kind == "PodGroup":
                    snapshot.gangs.set_pod_group(obj)
                else:
                    snapshot.gangs.set_workload(obj)
            elif kind in KEPT_RAW_KINDS:
                snapshot.extras.setdefault(str(kind), []).append(obj)
            elif kind in storage.BY_KIND:
                storage.apply(snapshot.volumes, storage.BY_KIND[str(kind)], obj)
        except DecodeError as exc:
            raise DecodeError(
                f"{source}: {exc.obj}" if source else exc.obj, exc.path, exc.message
            ) from None
    return snapshot


def load_snapshot(path: str | Path, *, keep_annotations: bool = False) -> Snapshot:
    """Read and decode a snapshot file (``keep_annotations`` as for :func:`build_snapshot`)."""
    text = textfile.read_text(path, "the snapshot")
    return build_snapshot(objects_of(text, str(path)), str(path), keep_annotations=keep_annotations)
