"""Builders for the volume plugins' tests: storage records, pod volumes, snapshots."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from asched.cluster.snapshot import Snapshot
from asched.cluster.volumes import (
    IMMEDIATE,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from asched.engine.result import Evaluation
from asched.framework.status import Code
from tests.builders import make_pod, outcome, snapshot_of

Raw = dict[str, Any]
STORAGE = (PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode)


def claim(
    name: str,
    *,
    volume: str = "",
    storage_class: str | None = None,
    modes: Iterable[str] = (),
    owners: Iterable[str] = (),
    namespace: str = "default",
) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        namespace,
        name,
        volume_name=volume,
        storage_class=storage_class,
        access_modes=tuple(modes),
        owners=tuple(owners),
    )


def pv(
    name: str,
    labels: Mapping[str, str] | None = None,
    *,
    csi: tuple[str, str] = ("", ""),
    in_tree: tuple[str, str] = ("", ""),
) -> PersistentVolume:
    return PersistentVolume(
        name,
        labels=dict(labels or {}),
        csi_driver=csi[0],
        volume_handle=csi[1],
        in_tree_plugin=in_tree[0],
        in_tree_handle=in_tree[1],
    )


def storage_class(name: str, provisioner: str = "", mode: str = IMMEDIATE) -> StorageClass:
    return StorageClass(name, provisioner=provisioner, binding_mode=mode)


def csi_node(name: str, limits: Mapping[str, int | None]) -> CSINode:
    return CSINode(name, limits=dict(limits))


def pvc(claim_name: str, name: str = "") -> Raw:
    return {"name": name or f"v-{claim_name}", "persistentVolumeClaim": {"claimName": claim_name}}


def ephemeral(name: str) -> Raw:
    return {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}


def gce(pd: str, *, read_only: bool = False, name: str = "") -> Raw:
    source: Raw = {"pdName": pd, "readOnly": read_only}
    return {"name": name or f"gce-{pd}", "gcePersistentDisk": source}


def ebs(volume_id: str, *, read_only: bool = False, name: str = "") -> Raw:
    source: Raw = {"volumeID": volume_id, "readOnly": read_only}
    return {"name": name or f"ebs-{volume_id}", "awsElasticBlockStore": source}


def rbd(monitors: Iterable[str], pool: str, image: str, *, read_only: bool = False) -> Raw:
    source: Raw = {"monitors": list(monitors), "pool": pool, "image": image}
    source["readOnly"] = read_only
    return {"name": f"rbd-{pool}-{image}", "rbd": source}


def iscsi(iqn: str, *, read_only: bool = False) -> Raw:
    source: Raw = {"targetPortal": "127.0.0.1:3260", "iqn": iqn, "lun": 0}
    source["readOnly"] = read_only
    return {"name": f"iscsi-{iqn}", "iscsi": source}


def pod_with(*volumes: Raw, name: str = "pod", uid: str = "", node: str = "") -> Raw:
    raw = make_pod(name, volumes=list(volumes), node_name=node)
    if uid:
        raw["metadata"]["uid"] = uid
    return raw


def snapshot(
    nodes: Iterable[Raw], pods: Iterable[Raw] = (), storage: Iterable[object] = ()
) -> Snapshot:
    """Nodes, bound pods and storage records (claims, PVs, classes, CSINodes)."""
    out = snapshot_of(nodes, pods)
    for record in storage:
        if isinstance(record, PersistentVolumeClaim):
            out.volumes.put_claim(record)
        elif isinstance(record, PersistentVolume):
            out.volumes.put_pv(record)
        elif isinstance(record, StorageClass):
            out.volumes.put_class(record)
        elif isinstance(record, CSINode):
            out.volumes.put_csi_node(record)
        else:
            raise TypeError(f"not a storage record: {record!r}")
    return out


def verdicts(evaluation: Evaluation, nodes: Iterable[str]) -> list[object]:
    return [outcome(evaluation, n) for n in nodes]


def rejected(plugin: str, code: Code, reason: str) -> tuple[str, Code, tuple[str, ...]]:
    return (plugin, code, (reason,))
