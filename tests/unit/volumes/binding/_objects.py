"""Raw storage objects for the VolumeBinding tests (as the API serves them), and a
snapshot holding them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from asched.cluster.snapshot import Snapshot
from asched.cluster.volume_decode import (
    decode_claim,
    decode_csi_driver,
    decode_persistent_volume,
    decode_storage_capacity,
    decode_storage_class,
)
from asched.cluster.volumes import VolumeCatalog
from tests.builders import snapshot_of

Raw = dict[str, Any]
HOSTNAME = "kubernetes.io/hostname"
RWO = "ReadWriteOnce"
WAIT = "WaitForFirstConsumer"
IMMEDIATE = "Immediate"


def storage_class(
    name: str,
    mode: str = WAIT,
    provisioner: str = "kubernetes.io/no-provisioner",
    topologies: Sequence[Mapping[str, Sequence[str]]] = (),
) -> Raw:
    """A StorageClass; ``topologies``: one ``{key: values}`` per allowedTopologies term."""
    raw: Raw = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }
    if topologies:
        raw["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": k, "values": list(v)} for k, v in t.items()]}
            for t in topologies
        ]
    return raw


def local_affinity(*hosts: str, key: str = HOSTNAME) -> Raw:
    return {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": key, "operator": "In", "values": list(hosts)}]}
            ]
        }
    }


def pv(
    name: str,
    size: str = "1Gi",
    storage_class_name: str = "wait",
    *,
    affinity: Raw | None = None,
    claim: tuple[str, str] | tuple[str, str, str] | None = None,
    phase: str = "Available",
    modes: Sequence[str] = (RWO,),
    volume_mode: str | None = None,
    labels: Mapping[str, str] | None = None,
    version: str = "1",
    deleting: bool = False,
) -> Raw:
    """A PV; ``claim``: (namespace, name[, uid]) of its claimRef."""
    spec: Raw = {
        "capacity": {"storage": size},
        "accessModes": list(modes),
        "storageClassName": storage_class_name,
        "local": {"path": "/mnt/" + name},
    }
    if affinity is not None:
        spec["nodeAffinity"] = affinity
    if claim is not None:
        ref = {"namespace": claim[0], "name": claim[1]}
        if len(claim) == 3:
            ref["uid"] = claim[2]
        spec["claimRef"] = ref
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    meta: Raw = {"name": name, "resourceVersion": version, "labels": dict(labels or {})}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase},
    }


def claim(
    name: str,
    size: str = "1Gi",
    storage_class_name: str | None = "wait",
    *,
    namespace: str = "default",
    volume: str = "",
    bound: bool = False,
    selected_node: str | None = None,
    phase: str = "",
    modes: Sequence[str] = (RWO,),
    selector: Raw | None = None,
    owner: str | None = None,
    uid: str = "",
    version: str = "1",
    deleting: bool = False,
) -> Raw:
    """A claim; ``bound`` adds the bind-completed annotation (``volume`` names the PV)."""
    annotations: dict[str, str] = {}
    if bound:
        annotations["pv.kubernetes.io/bind-completed"] = "yes"
    if selected_node is not None:
        annotations["volume.kubernetes.io/selected-node"] = selected_node
    meta: Raw = {
        "name": name,
        "namespace": namespace,
        "uid": uid or f"uid-{name}",
        "resourceVersion": version,
        "annotations": annotations,
    }
    if owner is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner, "controller": True}
        ]
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: Raw = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if storage_class_name is not None:
        spec["storageClassName"] = storage_class_name
    if volume:
        spec["volumeName"] = volume
    if selector is not None:
        spec["selector"] = selector
    status = {"phase": phase} if phase else {}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


def csi_driver(name: str, *, capacity: bool) -> Raw:
    return {"kind": "CSIDriver", "metadata": {"name": name}, "spec": {"storageCapacity": capacity}}


def capacity(
    name: str,
    storage_class_name: str,
    size: str | None,
    topology: Mapping[str, str] | None,
    maximum: str | None = None,
) -> Raw:
    raw: Raw = {
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": storage_class_name,
    }
    if size is not None:
        raw["capacity"] = size
    if maximum is not None:
        raw["maximumVolumeSize"] = maximum
    if topology is not None:
        raw["nodeTopology"] = {"matchLabels": dict(topology)}
    return raw


def fill(catalog: VolumeCatalog, objects: Iterable[Raw]) -> VolumeCatalog:
    """Decode ``objects`` into ``catalog``."""
    for obj in objects:
        kind = obj["kind"]
        if kind == "PersistentVolume":
            catalog.put_pv(decode_persistent_volume(obj))
        elif kind == "PersistentVolumeClaim":
            catalog.put_claim(decode_claim(obj))
        elif kind == "StorageClass":
            catalog.put_class(decode_storage_class(obj))
        elif kind == "CSIDriver":
            catalog.put_csi_driver(decode_csi_driver(obj))
        elif kind == "CSIStorageCapacity":
            catalog.put_capacity(decode_storage_capacity(obj))
        else:
            raise ValueError(kind)
    return catalog


def storage_snapshot(
    nodes: Iterable[Raw], objects: Iterable[Raw], pods: Iterable[Raw] = ()
) -> Snapshot:
    """A snapshot of ``nodes`` (and bound ``pods``) whose catalog holds ``objects``."""
    snapshot = snapshot_of(nodes, pods)
    fill(snapshot.volumes, objects)
    return snapshot
