"""The raw Kubernetes objects a workload creates: named templates plus the group's overrides.

Templates are scheduler_perf's (``test/integration/scheduler_perf/templates``), built on
:mod:`asched.tools.bench.templates`: ``node-default`` (4 CPU, 32Gi, 110 pods, Ready; no
zone label unless the group gives one) and the pod templates below, all with requests =
limits. Order of application for a pod: template, then the group's shorthand fields
(``cpu``, ``memory``, ``labels``, ``priority``, ``nodeSelector``, ``tolerations``,
``affinity``, ``topologySpreadConstraints``), then the claim volumes of the group's
``boundVolumes`` and ``volumeClaimTemplates`` (:mod:`asched.tools.bench.volume_objects`),
then the group's ``patch`` (RFC 7386 JSON merge patch) over the whole object. Nodes
likewise.

``priority`` is expressed as ``priorityClassName: bench-priority-<value>``: the genuine
API server's Priority admission plugin rejects a bare ``spec.priority``, so the runner
creates one PriorityClass per value (:func:`priority_class`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import orjson

from asched.tools.bench import templates, volume_objects

if TYPE_CHECKING:
    from asched.tools.bench.workload import NodeGroup, PodGroup

Raw = dict[str, Any]

ZONE_LABEL: Final = "topology.kubernetes.io/zone"
HOSTNAME_LABEL: Final = "kubernetes.io/hostname"
_DNS_LABEL: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def is_dns_label(text: str) -> bool:
    """True for a DNS-1123 label (object name prefixes and namespaces)."""
    return 0 < len(text) <= 40 and _DNS_LABEL.match(text) is not None


@dataclass(frozen=True, slots=True)
class PodTemplate:
    """A named pod shape (scheduler_perf's template of the same name)."""

    cpu: str = "100m"
    memory: str = "500Mi"
    labels: Mapping[str, str] = field(default_factory=dict)
    priority: int | None = None
    affinity: Mapping[str, Any] | None = None
    topology_spread_constraints: tuple[Mapping[str, Any], ...] = ()
    termination_grace_period_seconds: int | None = None


def _required_terms(selector_label: tuple[str, str], topology_key: str, **extra: Any) -> Raw:
    key, value = selector_label
    term: Raw = {
        "labelSelector": {"matchLabels": {key: value}},
        "topologyKey": topology_key,
        **extra,
    }
    return {"requiredDuringSchedulingIgnoredDuringExecution": [term]}


POD_TEMPLATES: Final[Mapping[str, PodTemplate]] = {
    "pod-default": PodTemplate(),
    "pod-with-node-affinity": PodTemplate(
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": ZONE_LABEL, "operator": "In", "values": ["zone1", "zone2"]}
                            ]
                        }
                    ]
                }
            }
        }
    ),
    "pod-low-priority": PodTemplate(cpu="900m", termination_grace_period_seconds=0),
    "pod-high-priority": PodTemplate(cpu="3000m", priority=10),
    "pod-high-priority-large-cpu": PodTemplate(cpu="9", priority=10),
    "pod-with-pod-anti-affinity": PodTemplate(
        labels={"color": "green"},
        affinity={
            "podAntiAffinity": _required_terms(
                ("color", "green"), HOSTNAME_LABEL, namespaces=["sched-0", "sched-1"]
            )
        },
    ),
    "pod-with-pod-affinity": PodTemplate(
        labels={"color": "blue"},
        affinity={"podAffinity": _required_terms(("color", "blue"), ZONE_LABEL)},
    ),
    "pod-with-topology-spreading": PodTemplate(
        labels={"color": "blue"},
        topology_spread_constraints=(
            {
                "maxSkew": 5,
                "topologyKey": ZONE_LABEL,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"color": "blue"}},
            },
        ),
    ),
    "pod-with-preferred-topology-spreading": PodTemplate(
        labels={"color": "blue"},
        topology_spread_constraints=(
            {
                "maxSkew": 5,
                "topologyKey": ZONE_LABEL,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"color": "blue"}},
            },
        ),
    ),
}

#: Node templates: name -> (cpu, memory, pods).
NODE_TEMPLATES: Final[Mapping[str, tuple[str, str, int]]] = {
    "node-default": ("4", "32Gi", 110),
}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge recursively, ``null`` deletes, else replace.

    Returns a new value; ``target`` is not modified.
    """
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result: Raw = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def node(group: NodeGroup, name: str, index: int) -> Raw:
    """Node ``index`` of ``group`` named ``name``, status included (Ready)."""
    if group.base is not None:
        return _node_from_base(group, name, index)
    cpu, memory, pods = NODE_TEMPLATES[group.template]
    raw = templates.node(
        name,
        cpu=group.cpu or cpu,
        memory=group.memory or memory,
        pods=str(group.pods or pods),
    )
    labels: dict[str, str] = raw["metadata"]["labels"]
    labels.pop(ZONE_LABEL, None)  # node-default has no zone; groups add one if they want
    labels.update(group.labels)
    for key, values in group.spread_labels.items():
        labels[key] = values[index % len(values)]
    if group.taints:
        raw["spec"]["taints"] = [dict(t) for t in group.taints]
    if group.unschedulable:
        raw["spec"]["unschedulable"] = True
    if group.patch:
        raw = merge_patch(raw, group.patch)
    return raw


def _node_from_base(group: NodeGroup, name: str, index: int) -> Raw:
    """A node from a template file's object, as scheduler_perf's node preparer makes it.

    The object is used as it is, named ``name`` (``generateName`` dropped), with the
    label ``kubernetes.io/hostname: <name>`` when the group asks for it, as upstream's
    IntegrationTestNodePreparer sets it on every node createNodes makes (no zone label is
    added; churned nodes get neither); ``status.allocatable``
    defaults to ``status.capacity``, as the API server's defaulting does. Then the group's
    labels, spread labels, unique label and patch, in that order.
    """
    raw: Raw = json_copy(group.base or {})
    meta: Raw = raw.setdefault("metadata", {})
    meta.pop("generateName", None)
    meta["name"] = name
    labels: dict[str, str] = meta.setdefault("labels", {}) or {}
    meta["labels"] = labels
    if group.hostname_label:
        labels[HOSTNAME_LABEL] = name
    status: Raw = raw.setdefault("status", {})
    if "allocatable" not in status and "capacity" in status:
        status["allocatable"] = dict(status["capacity"])
    raw.setdefault("spec", {})
    labels.update(group.labels)
    for key, values in group.spread_labels.items():
        labels[key] = values[index % len(values)]
    if group.unique_label is not None:
        labels[group.unique_label] = name
    if group.patch:
        raw = merge_patch(raw, group.patch)
    return raw


def priority_class_name(priority: int) -> str:
    """The PriorityClass the runner creates for pods of this priority."""
    return f"bench-priority-{priority}".replace("--", "-minus-")


def priority_class(priority: int) -> Raw:
    """A PriorityClass object of value ``priority`` (never the global default)."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": priority_class_name(priority)},
        "value": priority,
        "globalDefault": False,
        "description": "created by asched bench",
    }


def pod(group: PodGroup, name: str, *, scheduler_name: str) -> Raw:
    """A pod of ``group`` named ``name`` for scheduler ``scheduler_name``."""
    if group.base is not None:
        return _pod_from_base(group, name, scheduler_name=scheduler_name)
    shape = POD_TEMPLATES[group.template]
    raw = templates.pod(
        name,
        namespace=group.namespace,
        cpu=group.cpu or shape.cpu,
        memory=group.memory or shape.memory,
        scheduler_name=scheduler_name,
    )
    meta: Raw = raw["metadata"]
    spec: Raw = raw["spec"]
    meta["labels"].update(shape.labels)
    meta["labels"].update(group.labels)
    if group.priority is not None:
        spec["priorityClassName"] = priority_class_name(group.priority)
    if shape.termination_grace_period_seconds is not None:
        spec["terminationGracePeriodSeconds"] = shape.termination_grace_period_seconds
    affinity = group.affinity if group.affinity is not None else shape.affinity
    if affinity:
        spec["affinity"] = copy.deepcopy(dict(affinity))
    spread = group.topology_spread_constraints or shape.topology_spread_constraints
    if spread:
        spec["topologySpreadConstraints"] = [copy.deepcopy(dict(c)) for c in spread]
    if group.node_selector:
        spec["nodeSelector"] = dict(group.node_selector)
    if group.tolerations:
        spec["tolerations"] = [copy.deepcopy(dict(t)) for t in group.tolerations]
    volume_objects.set_pod_volumes(spec, group.bound_volumes, group.claim_templates, name)
    if group.patch:
        raw = merge_patch(raw, group.patch)
    return raw


def json_copy(template: Mapping[str, Any]) -> Raw:
    """A deep copy of ``template`` as plain dicts and lists.

    Through orjson when the round trip gives back an equal document (a JSON template:
    about 2 µs for scheduler_perf's default pod, where ``copy.deepcopy`` takes 30 µs, once
    per created pod); ``copy.deepcopy`` otherwise (tuples, dates or non-string keys from a
    YAML file, integers past 64 bits).
    """
    try:
        copied = orjson.loads(orjson.dumps(template))
    except orjson.JSONEncodeError:
        copied = None
    if isinstance(copied, dict) and copied == template:
        return copied
    return copy.deepcopy(dict(template))


def _pod_from_base(group: PodGroup, name: str, *, scheduler_name: str) -> Raw:
    """A pod from a template file's object: named ``name`` in the group's namespace
    (``generateName`` dropped), for ``scheduler_name``; the group's priority becomes its
    PriorityClass (the template's bare ``spec.priority`` is removed), then the group's
    labels and patch."""
    raw: Raw = json_copy(group.base or {})
    meta: Raw = raw.setdefault("metadata", {})
    meta.pop("generateName", None)
    meta["name"] = name
    meta["namespace"] = group.namespace
    labels: dict[str, str] = meta.get("labels") or {}
    labels.update(group.labels)
    meta["labels"] = labels
    spec: Raw = raw.setdefault("spec", {})
    spec["schedulerName"] = scheduler_name
    spec.pop("priority", None)
    if group.priority is not None:
        spec["priorityClassName"] = priority_class_name(group.priority)
    volume_objects.set_pod_volumes(spec, group.bound_volumes, group.claim_templates, name)
    if group.patch:
        raw = merge_patch(raw, group.patch)
    return raw


def service(name: str, namespace: str) -> Raw:
    """A ClusterIP Service selecting nothing in particular (scheduler_perf's churn service)."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"app": "bench-churn"}, "ports": [{"port": 80, "targetPort": 80}]},
    }


def namespace(name: str) -> Raw:
    """A Namespace object."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
