"""The raw storage objects a workload creates: CSINodes, local PVs, classes, claims per pod.

Per pod, as scheduler_perf's ``CreatePodWithPersistentVolume`` (test/utils/runners.go)
does it for a ``createPods`` op with PV and claim templates: the claim, then the PV bound
to it, then the pod whose only volume ``vol`` names the claim. Names differ from
upstream's ``pvc-<i>`` / ``<namespace>-vol-<i>`` only in using the pod's name for ``i``
(our pod groups may share a namespace): the claim of pod ``p`` in namespace ``ns`` is
``pvc-<p>``, its PV ``<ns>-vol-<p>``. The PV's in-tree volume ID (AWS EBS) or CSI volume
handle is the PV's name, so every PV is a distinct volume for the volume-limit plugins.
A claim template without ``storageClassName`` gets ``""`` (what no class means when
matching), so a cluster with a default StorageClass does not give the claim a class its
PV lacks (upstream's test cluster has no default class).

Per node, as upstream's ``NodeAllocatableStrategy`` does: a CSINode named after the
node, one driver entry per CSI driver with ``nodeID`` the node name, and the
migrated-plugins annotation. Local PVs (asched's StatefulSet workloads) have node
affinity ``kubernetes.io/hostname In [<node>]``.

Every object carries the benchmark's phase label (``bench.asched.io/phase``), which is
how cleanup on an existing cluster finds it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any, Final

from asched.tools.bench.observe import PHASE_LABEL
from asched.tools.bench.volume_spec import (
    BoundVolumes,
    ClaimTemplate,
    CSINodeSpec,
    LocalVolumes,
    StorageClassSpec,
)

Raw = dict[str, Any]

MIGRATED_PLUGINS_ANNOTATION: Final = "storage.alpha.kubernetes.io/migrated-plugins"
BIND_COMPLETED_ANNOTATION: Final = "pv.kubernetes.io/bind-completed"
HOSTNAME_LABEL: Final = "kubernetes.io/hostname"
#: the pod volume upstream gives the claim of a pre-bound pair
BOUND_VOLUME_NAME: Final = "vol"

#: scheduler_perf's PV and claim templates (test/integration/scheduler_perf/templates/
#: pv-aws.yaml, pv-csi.yaml, pvc.yaml), the named templates of the workload format
PV_TEMPLATES: Final[Mapping[str, Mapping[str, Any]]] = {
    "pv-aws": {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "awsElasticBlockStore": {"volumeID": "<volume-id>"},
            "capacity": {"storage": "1Gi"},
            "persistentVolumeReclaimPolicy": "Retain",
        },
    },
    "pv-csi": {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "spec": {
            "accessModes": ["ReadOnlyMany"],
            "capacity": {"storage": "1Gi"},
            "csi": {"driver": "ebs.csi.aws.com"},
            "persistentVolumeReclaimPolicy": "Retain",
        },
    },
}
CLAIM_TEMPLATES: Final[Mapping[str, Mapping[str, Any]]] = {
    "pvc": {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"annotations": {BIND_COMPLETED_ANNOTATION: "true"}},
        "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}},
    },
}


def _labelled(raw: Raw, phase: str) -> Raw:
    raw.setdefault("metadata", {}).setdefault("labels", {})[PHASE_LABEL] = phase
    return raw


def claim_name(pod_name: str) -> str:
    """The pre-bound claim of pod ``pod_name``."""
    return f"pvc-{pod_name}"


def bound_pair(volumes: BoundVolumes, pod_name: str, namespace: str, phase: str) -> tuple[Raw, Raw]:
    """The PV and the claim of pod ``pod_name``, bound to each other (both with status
    phase Bound: the load generator writes the status after the create, as upstream's
    ``UpdateStatus`` calls do). The PV comes first: a PV controller running beside the API
    server (kube-controller-manager) marks a bound claim whose PV does not exist yet Lost,
    while a PV whose claimRef names a claim still to come just waits for it."""
    claim: Raw = copy.deepcopy(dict(volumes.claim))
    pv: Raw = copy.deepcopy(dict(volumes.persistent_volume))
    name = claim_name(pod_name)
    volume = f"{namespace}-vol-{pod_name}"
    meta = claim.setdefault("metadata", {})
    meta.pop("generateName", None)
    meta.update(name=name, namespace=namespace)
    claim_spec = claim.setdefault("spec", {})
    claim_spec["volumeName"] = volume
    # No class in the template means the empty class (the PV has none either); said
    # explicitly so a cluster's default StorageClass admission cannot give the claim one
    # its PV lacks.
    claim_spec.setdefault("storageClassName", "")
    claim["status"] = {"phase": "Bound"}
    pv_meta = pv.setdefault("metadata", {})
    pv_meta.pop("generateName", None)
    pv_meta["name"] = volume
    spec = pv.setdefault("spec", {})
    if isinstance(spec.get("csi"), Mapping):
        spec["csi"] = {**spec["csi"], "volumeHandle": volume}
    elif isinstance(spec.get("awsElasticBlockStore"), Mapping):
        spec["awsElasticBlockStore"] = {**spec["awsElasticBlockStore"], "volumeID": volume}
    spec["claimRef"] = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": namespace,
        "name": name,
    }
    pv["status"] = {"phase": "Bound"}
    return _labelled(pv, phase), _labelled(claim, phase)


def unbound_claim(template: ClaimTemplate, pod_name: str, namespace: str, phase: str) -> Raw:
    """The claim ``<template>-<pod>`` of a StatefulSet-like pod: unbound, of the template's
    class."""
    return _labelled(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": f"{template.name}-{pod_name}", "namespace": namespace},
            "spec": {
                "accessModes": list(template.access_modes),
                "storageClassName": template.storage_class,
                "resources": {"requests": {"storage": template.storage}},
            },
        },
        phase,
    )


def set_pod_volumes(
    spec: Raw, bound: BoundVolumes | None, templates: tuple[ClaimTemplate, ...], pod_name: str
) -> None:
    """Give a pod spec its claim volumes (in place).

    A pre-bound pair replaces ``spec.volumes`` with the one volume ``vol`` naming the
    claim (upstream sets ``pod.Spec.Volumes`` so); each claim template then adds a volume
    named after it, replacing one of the same name (as a StatefulSet does).
    """
    if bound is not None:
        spec["volumes"] = [
            {
                "name": BOUND_VOLUME_NAME,
                "persistentVolumeClaim": {"claimName": claim_name(pod_name)},
            }
        ]
    if templates:
        names = {t.name for t in templates}
        kept = [v for v in spec.get("volumes") or () if v.get("name") not in names]
        kept += [
            {"name": t.name, "persistentVolumeClaim": {"claimName": f"{t.name}-{pod_name}"}}
            for t in templates
        ]
        spec["volumes"] = kept


def csi_node(spec: CSINodeSpec, node_name: str) -> Raw:
    """The CSINode of node ``node_name``."""
    drivers: list[Raw] = []
    for driver, count in spec.drivers.items():
        entry: Raw = {"name": driver, "nodeID": node_name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    return _labelled(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {
                "name": node_name,
                "annotations": {MIGRATED_PLUGINS_ANNOTATION: ",".join(spec.migrated_plugins)},
            },
            "spec": {"drivers": drivers},
        },
        "node",
    )


def local_pvs(spec: LocalVolumes, node_name: str) -> Iterator[Raw]:
    """The local PVs of node ``node_name``: available, pinned to it by node affinity."""
    for index in range(spec.count):
        yield _labelled(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": f"{node_name}-{spec.name_prefix}-{index}"},
                "spec": {
                    "capacity": {"storage": spec.storage},
                    "accessModes": list(spec.access_modes),
                    "persistentVolumeReclaimPolicy": "Retain",
                    "storageClassName": spec.storage_class,
                    "volumeMode": "Filesystem",
                    "local": {"path": f"/mnt/disks/{spec.name_prefix}-{index}"},
                    "nodeAffinity": {
                        "required": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {
                                            "key": HOSTNAME_LABEL,
                                            "operator": "In",
                                            "values": [node_name],
                                        }
                                    ]
                                }
                            ]
                        }
                    },
                },
            },
            "node",
        )


def storage_class(spec: StorageClassSpec) -> Raw:
    """A StorageClass object."""
    return _labelled(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": spec.name},
            "provisioner": spec.provisioner,
            "volumeBindingMode": spec.binding_mode,
            "reclaimPolicy": "Delete",
        },
        "setup",
    )
