"""The node and pod groups of a scheduler_perf workload, from its templates.

A template renders to a raw Kubernetes object; the runner creates ``count`` alike objects
from one :class:`~asched.tools.bench.workload.NodeGroup` or
:class:`~asched.tools.bench.workload.PodGroup` that carries it as ``base``. Node groups
take their op's node strategy, pod groups their op's PV and claim pair per pod, and a
churn op's templates become its churned objects. What an object says that the runner
cannot honour (a PriorityClass or claims the config does not create, generic ephemeral
volumes, dynamic resource allocation) is refused here, with the op it came from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from asched.errors import InputError
from asched.tools.bench.perf_node_ops import (
    AllocatableStrategy,
    CreateNodesOp,
    LabelStrategy,
    UniqueLabelStrategy,
)
from asched.tools.bench.perf_ops import ChurnOp, CreatePodsOp
from asched.tools.bench.perf_templates import (
    OpRef,
    Unsupported,
    op_name,
    plain_template,
    read_plain,
)
from asched.tools.bench.volume_spec import BoundVolumes
from asched.tools.bench.workload import ChurnObject, NodeGroup, PodGroup

#: upstream's node when createNodes names no template
DEFAULT_NODE: Final[Mapping[str, Any]] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"generateName": "scheduler-perf-"},
    "spec": {},
    "status": {
        "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "conditions": [{"status": "True", "type": "Ready"}],
        "phase": "Running",
    },
}
#: upstream's pod when neither createPods nor its test case names a template
DEFAULT_POD: Final[Mapping[str, Any]] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"generateName": "pod-"},
    "spec": {
        "containers": [
            {
                "image": "registry.k8s.io/pause:3.10",
                "name": "pause",
                "ports": [{"containerPort": 80}],
                "resources": {
                    "limits": {"cpu": "100m", "memory": "500Mi"},
                    "requests": {"cpu": "100m", "memory": "500Mi"},
                },
            }
        ]
    },
}


def generate_name(raw: Mapping[str, Any], default: str) -> str:
    """A name prefix from the object's ``generateName`` (its trailing dashes dropped, cut
    to 24 characters: the runner appends the op and the object's index)."""
    meta = raw.get("metadata") or {}
    text = str(meta.get("generateName") or default).rstrip("-")
    return text[:24] or default


def named(group: PodGroup) -> PodGroup:
    """``group`` keeping its template's ``metadata.name`` (a run of one pod rendered with
    a name of its own, as upstream's event_handling templates name theirs:
    ``pod-blocker-{{ .Index }}``), which later ops (updateAny) refer to."""
    name = ((group.base or {}).get("metadata") or {}).get("name")
    if not name or group.count != 1:
        return group
    return dataclasses.replace(group, patch={**(group.patch or {}), "metadata": {"name": name}})


def pod_group(
    base: Mapping[str, Any],
    *,
    count: int,
    namespace: str,
    op: OpRef,
    volumes: BoundVolumes | None = None,
) -> PodGroup:
    """A pod group from a template's object; a bare ``spec.priority`` becomes the group's
    priority (the runner creates its PriorityClass: the API server's Priority admission
    refuses a bare priority). ``volumes``: a PV and claim per pod, whose volume replaces
    the template's."""
    spec = base.get("spec") or {}
    if spec.get("priorityClassName"):
        raise Unsupported(
            f"{op_name(op)}: priorityClassName {spec['priorityClassName']} (a PriorityClass "
            "the config does not create)"
        )
    priority = spec.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise InputError(f"{op_name(op)}: spec.priority must be an integer, got {priority!r}")
    own = spec.get("volumes") or () if volumes is None else ()
    if any("persistentVolumeClaim" in v for v in own):
        raise Unsupported(
            f"{op_name(op)}: pods whose template names claims (the config creates none; "
            "persistentVolumeClaimTemplatePath does)"
        )
    if any("ephemeral" in v for v in own):
        raise Unsupported(
            f"{op_name(op)}: generic ephemeral volumes (no controller creates their claims)"
        )
    if spec.get("resourceClaims"):
        raise Unsupported(f"{op_name(op)}: dynamic resource allocation (DRA) is out of scope")
    return PodGroup(
        count=count, namespace=namespace, base=dict(base), priority=priority, bound_volumes=volumes
    )


def node_group(op: CreateNodesOp, base: Mapping[str, Any], count: int, suffix: str) -> NodeGroup:
    """``count`` nodes of one rendering of the op's template, shaped by its strategy."""
    strategy = op.strategy
    spread = {strategy.key: strategy.values} if isinstance(strategy, LabelStrategy) else {}
    patch: dict[str, Any] | None = None
    if isinstance(strategy, AllocatableStrategy):
        patch = {"status": {"allocatable": dict(strategy.allocatable)}}
    fixed = (base.get("metadata") or {}).get("name")
    prefix = f"{generate_name(base, 'scheduler-perf')}-{op.index}{suffix}"
    if fixed:
        if count != 1:
            raise Unsupported(
                f"{op_name(op)}: {count} nodes from a template with the fixed name {fixed}"
            )
        patch = {**(patch or {}), "metadata": {"name": fixed}}
        prefix = f"{prefix}-fixed"
    return NodeGroup(
        count=count,
        name_prefix=prefix,
        base=base,
        spread_labels=spread,
        unique_label=strategy.key if isinstance(strategy, UniqueLabelStrategy) else None,
        hostname_label=True,
        patch=patch,
        csi_node=strategy.csi_node if isinstance(strategy, AllocatableStrategy) else None,
    )


def bound_volumes(op: CreatePodsOp) -> BoundVolumes | None:
    """A PV and a claim per pod, read from the op's templates."""
    if op.volumes is None:
        return None
    pv = plain_template(op.volumes.persistent_volume, "PersistentVolume", op)
    claim = plain_template(op.volumes.claim, "PersistentVolumeClaim", op)
    assert pv is not None  # (the path is given)
    assert claim is not None
    return BoundVolumes(persistent_volume=pv, claim=claim)


def churn_object(op: ChurnOp, path: Path) -> ChurnObject:
    """The object a churn op creates from its template ``path``: a Node, a Pod or a
    Service."""
    raw = read_plain(path, op)
    kind = raw.get("kind")
    if kind == "Node":
        prefix = f"{generate_name(raw, 'node-churn')}-{op.index}"
        return ChurnObject(kind="Node", node=NodeGroup(count=1, name_prefix=prefix, base=raw))
    if kind == "Pod":
        pod = pod_group(raw, count=1, namespace=op.namespace, op=op)
        return ChurnObject(kind="Pod", pod=pod)
    if kind == "Service":
        return ChurnObject(kind="Service")
    raise Unsupported(f"{op_name(op)}: churn of {kind} objects ({path.name})")
