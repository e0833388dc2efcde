"""Decode raw Kubernetes JSON (dicts as the API serves them) into Pod and Node records.

This is the validation boundary of the cluster model: every quantity, selector and
enum is checked here, and a problem raises :class:`~asched.errors.DecodeError` naming
the object (``Pod default/web-1``), the field path and the value. Code past this point
trusts the records.

The checks of single fields are in :mod:`~asched.cluster.decode_context`; the parts of a
pod with rules of their own are decoded by :mod:`~asched.cluster.container_decode`
(requests, images, host ports), :mod:`~asched.cluster.taint_decode` (tolerations, and a
node's taints), :mod:`~asched.cluster.node_affinity_decode`,
:mod:`~asched.cluster.affinity` (inter-pod terms) and :mod:`~asched.cluster.pod_volumes`.
This module reads the objects' own fields, in the order that fixes which error a pod
with several problems reports.

A Node's allocatable defaults to its capacity when unset, as the API server defaults it
(snapshots and simulated objects may not have been through a real server).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asched.api.objects import NodeJSON, PodJSON
from asched.cluster import bounds
from asched.cluster.affinity import PodAffinity, decode_pod_affinity
from asched.cluster.container_decode import decode_containers, effective_requests
from asched.cluster.decode_context import DecodeContext, Raw
from asched.cluster.gangs import gang_key_of
from asched.cluster.node_affinity_decode import decode_node_affinity
from asched.cluster.pod_volumes import decode_pod_volumes
from asched.cluster.records import ImageState, NodeInfo, PodInfo
from asched.cluster.taint_decode import decode_taints, decode_tolerations


def decode_node(raw: NodeJSON | Raw, *, keep_annotations: bool = False) -> NodeInfo:
    """Decode a Node. Allocatable falls back to capacity, as the API server defaults it.

    ``keep_annotations``: decode ``metadata.annotations`` (checked: a map of string to
    string) into ``NodeInfo.annotations``; otherwise they are not read at all (no plugin
    reads them, see ``PluginSpec.reads_annotations``)."""
    ctx = DecodeContext("Node", raw)
    meta = ctx.mapping(raw.get("metadata"), "metadata")
    name = ctx.string(meta.get("name"), "metadata.name")
    if not name:
        raise ctx.fail("metadata.name", "Required value: name is required")
    spec = ctx.mapping(raw.get("spec"), "spec")
    status = ctx.mapping(raw.get("status"), "status")
    taints = decode_taints(ctx, spec)
    if status.get("allocatable") is not None:
        allocatable = ctx.quantities(status.get("allocatable"), "status.allocatable")
    else:
        allocatable = ctx.quantities(status.get("capacity"), "status.capacity")
    images = []
    for index, item in enumerate(ctx.items(status.get("images"), "status.images")):
        path = f"status.images[{index}]"
        item = ctx.mapping(item, path)
        names = tuple(
            ctx.string(n, f"{path}.names[{i}]")
            for i, n in enumerate(ctx.items(item.get("names"), f"{path}.names"))
        )
        size = bounds.clamp(ctx.integer(item.get("sizeBytes"), f"{path}.sizeBytes"))
        images.append(ImageState(names, size))
    return NodeInfo(
        name=name,
        uid=ctx.string(meta.get("uid"), "metadata.uid"),
        labels=ctx.labels(meta.get("labels"), "metadata.labels"),
        taints=tuple(taints),
        unschedulable=bool(spec.get("unschedulable", False)),
        allocatable=allocatable,
        images=tuple(images),
        annotations=ctx.annotations(meta.get("annotations"), "metadata.annotations")
        if keep_annotations
        else {},
    )


def _pod_parts(raw: object) -> tuple[DecodeContext, Raw, str, Raw, Raw]:
    """A Pod's decoding context, and its metadata, name, spec and status, checked in this
    order."""
    ctx = DecodeContext("Pod", raw)
    if not isinstance(raw, Mapping):
        raise ctx.fail("", "a Pod must be an object")
    meta = ctx.mapping(raw.get("metadata"), "metadata")
    name = ctx.string(meta.get("name"), "metadata.name")
    if not name:
        raise ctx.fail("metadata.name", "Required value: name or generateName is required")
    return (
        ctx,
        meta,
        name,
        ctx.mapping(raw.get("spec"), "spec"),
        ctx.mapping(raw.get("status"), "status"),
    )


def _pod_affinity(
    ctx: DecodeContext, affinity: Raw, namespace: str
) -> tuple[Raw | None, Raw | None, PodAffinity | None]:
    """``spec.affinity.podAffinity`` and ``podAntiAffinity`` as written (None when absent
    or empty), and their terms decoded (a term's namespaces default to ``namespace``)."""
    inter_pod = ctx.mapping(affinity.get("podAffinity"), "spec.affinity.podAffinity") or None
    anti = ctx.mapping(affinity.get("podAntiAffinity"), "spec.affinity.podAntiAffinity") or None
    pod_affinity, error = decode_pod_affinity(inter_pod, anti, namespace)
    if error is not None:
        raise ctx.fail(f"spec.affinity.{error[0]}", error[1])
    return inter_pod, anti, pod_affinity


def _spread_constraints(ctx: DecodeContext, raw_spread: Any) -> tuple[Raw, ...]:
    """``spec.topologySpreadConstraints``: each an object, kept as written (their fields
    are decoded where they are used, :mod:`asched.cluster.spread`)."""
    return (
        ()
        if raw_spread is None
        else tuple(
            ctx.mapping(c, f"spec.topologySpreadConstraints[{i}]")
            for i, c in enumerate(ctx.items(raw_spread, "spec.topologySpreadConstraints"))
        )
    )


def _scheduling_gates(ctx: DecodeContext, raw_gates: Any) -> tuple[str, ...]:
    """The names of ``spec.schedulingGates``."""
    return (
        ()
        if raw_gates is None
        else tuple(
            ctx.string(
                ctx.mapping(g, f"spec.schedulingGates[{i}]").get("name"),
                f"spec.schedulingGates[{i}].name",
            )
            for i, g in enumerate(ctx.items(raw_gates, "spec.schedulingGates"))
        )
    )


def decode_pod(raw: PodJSON | Raw, *, keep_annotations: bool = False) -> PodInfo:
    """Decode a Pod into a :class:`PodInfo`, computing its effective requests.

    ``keep_annotations``: decode ``metadata.annotations`` (checked: a map of string to
    string) into ``PodInfo.annotations``; otherwise they are not read at all (they may
    be large, and only plugins that declare ``reads_annotations`` see them). The owner
    references are always decoded."""
    ctx, meta, name, spec, status = _pod_parts(raw)
    containers, inits, images, ports = decode_containers(ctx, spec)
    requests, nonzero_cpu, nonzero_memory = effective_requests(ctx, spec, containers, inits)
    tolerations = decode_tolerations(ctx, spec)
    affinity = ctx.mapping(spec.get("affinity"), "spec.affinity")
    pvcs = _claim_names(ctx, spec, name)
    namespace = ctx.string(meta.get("namespace"), "metadata.namespace") or "default"
    inter_pod, anti, pod_affinity = _pod_affinity(ctx, affinity, namespace)
    priority = ctx.int32(spec.get("priority"), "spec.priority")
    spread = _spread_constraints(ctx, spec.get("topologySpreadConstraints"))
    gates = _scheduling_gates(ctx, spec.get("schedulingGates"))
    return PodInfo(
        namespace=namespace,
        name=name,
        uid=ctx.string(meta.get("uid"), "metadata.uid"),
        labels=ctx.labels(meta.get("labels"), "metadata.labels"),
        scheduler_name=ctx.string(spec.get("schedulerName"), "spec.schedulerName")
        or "default-scheduler",
        node_name=ctx.string(spec.get("nodeName"), "spec.nodeName"),
        priority=priority,
        preemption_policy=ctx.string(spec.get("preemptionPolicy"), "spec.preemptionPolicy")
        or "PreemptLowerPriority",
        deleting=meta.get("deletionTimestamp") is not None,
        nominated_node_name=ctx.string(status.get("nominatedNodeName"), "status.nominatedNodeName"),
        phase=ctx.string(status.get("phase"), "status.phase"),
        requests=requests,
        nonzero_cpu=nonzero_cpu,
        nonzero_memory=nonzero_memory,
        host_ports=tuple(ports),
        tolerations=tuple(tolerations),
        node_selector=ctx.labels(spec.get("nodeSelector"), "spec.nodeSelector"),
        node_affinity=decode_node_affinity(
            ctx, affinity.get("nodeAffinity"), "spec.affinity.nodeAffinity"
        ),
        images=tuple(images),
        pvc_names=pvcs,
        volumes=decode_pod_volumes(ctx, spec.get("volumes"), name),
        has_restartable_init=bool(inits) and any(c.restartable for c in inits),
        pod_affinity=inter_pod,
        pod_anti_affinity=anti,
        topology_spread_constraints=spread,
        scheduling_gates=gates,
        creation_timestamp=ctx.string(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
        affinity=pod_affinity,
        preempted=meta.get("deletionTimestamp") is not None and _preempted(status),
        out_of_range=ctx.out_of_range,
        scheduled_condition=_scheduled_condition(status),
        gang=gang_key_of(raw) or "",
        annotations=ctx.annotations(meta.get("annotations"), "metadata.annotations")
        if keep_annotations
        else {},
        owner_references=ctx.owner_references(meta.get("ownerReferences")),
    )


def _claim_names(ctx: DecodeContext, spec: Raw, name: str) -> tuple[str, ...]:
    """The claims of the pod's ``persistentVolumeClaim`` and generic ephemeral volumes
    (an ephemeral volume's claim is ``<pod>-<volume>``)."""
    pvcs = []
    for index, volume in enumerate(ctx.items(spec.get("volumes"), "spec.volumes")):
        if type(volume) is not dict:  # (the path is built only for the odd one)
            volume = ctx.mapping(volume, f"spec.volumes[{index}]")
        claim = volume.get("persistentVolumeClaim")
        if claim is not None:
            claim = ctx.mapping(claim, f"spec.volumes[{index}].persistentVolumeClaim")
            pvcs.append(
                ctx.string(
                    claim.get("claimName"), f"spec.volumes[{index}].persistentVolumeClaim.claimName"
                )
            )
        elif volume.get("ephemeral") is not None:
            pvcs.append(f"{name}-{ctx.string(volume.get('name'), f'spec.volumes[{index}].name')}")
    return tuple(pvcs)


def decode_pod_like(
    raw: PodJSON | Raw, shape: PodInfo, *, keep_annotations: bool = False
) -> PodInfo:
    """Decode a Pod whose spec-derived part is ``shape``'s: only what differs per pod is
    read from ``raw`` (metadata, status, ``spec.nodeName``, ``spec.volumes``, the gang).

    The caller guarantees that ``raw`` and the pod ``shape`` was decoded from agree on
    everything else :func:`decode_pod` reads (:mod:`asched.cluster.pod_shapes` keys on
    exactly that). The result then equals ``decode_pod(raw)``, and a malformed per-pod
    field raises the same error: the fields are checked in :func:`decode_pod`'s order, and
    the shared part cannot fail (it decoded for ``shape``). ``keep_annotations`` as
    for :func:`decode_pod` (annotations are metadata: read per pod, never shared).
    """
    ctx, meta, name, spec, status = _pod_parts(raw)
    pvcs = _claim_names(ctx, spec, name)
    deleting = meta.get("deletionTimestamp") is not None
    return PodInfo(
        namespace=shape.namespace,
        name=name,
        uid=ctx.string(meta.get("uid"), "metadata.uid"),
        labels=ctx.labels(meta.get("labels"), "metadata.labels"),
        scheduler_name=shape.scheduler_name,
        node_name=ctx.string(spec.get("nodeName"), "spec.nodeName"),
        priority=shape.priority,
        preemption_policy=shape.preemption_policy,
        deleting=deleting,
        nominated_node_name=ctx.string(status.get("nominatedNodeName"), "status.nominatedNodeName"),
        phase=ctx.string(status.get("phase"), "status.phase"),
        requests=shape.requests,
        nonzero_cpu=shape.nonzero_cpu,
        nonzero_memory=shape.nonzero_memory,
        host_ports=shape.host_ports,
        tolerations=shape.tolerations,
        node_selector=shape.node_selector,
        node_affinity=shape.node_affinity,
        images=shape.images,
        pvc_names=pvcs,
        volumes=decode_pod_volumes(ctx, spec.get("volumes"), name),
        has_restartable_init=shape.has_restartable_init,
        pod_affinity=shape.pod_affinity,
        pod_anti_affinity=shape.pod_anti_affinity,
        topology_spread_constraints=shape.topology_spread_constraints,
        scheduling_gates=shape.scheduling_gates,
        creation_timestamp=ctx.string(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
        affinity=shape.affinity,
        preempted=deleting and _preempted(status),
        out_of_range=shape.out_of_range,
        scheduled_condition=_scheduled_condition(status),
        gang=gang_key_of(raw) or "",
        annotations=ctx.annotations(meta.get("annotations"), "metadata.annotations")
        if keep_annotations
        else {},
        owner_references=ctx.owner_references(meta.get("ownerReferences")),
    )


def _preempted(status: Mapping[str, Any]) -> bool:
    """The first DisruptionTarget condition is True with reason PreemptionByScheduler."""
    conditions = status.get("conditions")
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and condition.get("type") == "DisruptionTarget":
            return bool(
                condition.get("status") == "True"
                and condition.get("reason") == "PreemptionByScheduler"
            )
    return False


def _scheduled_condition(status: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """The first PodScheduled condition's status, reason and message (non-strings read as
    ""): what the scheduler last said, so that it does not say it again."""
    conditions = status.get("conditions")
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and condition.get("type") == "PodScheduled":
            text = [condition.get(f) for f in ("status", "reason", "message")]
            state, reason, message = (t if isinstance(t, str) else "" for t in text)
            return state, reason, message
    return None
