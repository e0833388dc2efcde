"""Builders for raw Kubernetes objects (plain dicts, as the API serves them) and profiles.

The asched twin of upstream's ``st.MakePod()`` / ``st.MakeNode()``: tests describe
objects by the few fields that matter and go through the real decoder
(:func:`snapshot_of` -> ``build_snapshot``), so the cluster model is exercised too.

Conventions, chosen to make upstream cases easy to transcribe:

* ``make_node`` quantities are strings (``cpu="4000"`` is 4000 cores); pass None to
  leave a resource out of ``status.allocatable`` entirely.
* ``make_pod`` creates one container per entry of ``requests`` (or one from ``cpu`` /
  ``memory``); with neither it has no containers at all, like ``st.MakePod().Obj()``
  (which matters for the non-zero scoring defaults). ``images`` and ``host_ports``
  add containers as needed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from asched.cluster.decode import decode_node_affinity, decode_pod, object_context
from asched.cluster.records import NodeAffinity, PodInfo
from asched.cluster.snapshot import Snapshot, build_snapshot
from asched.config.plugins import CAPABILITIES, DEFAULT_MULTIPOINT
from asched.config.types import PluginArgs, Profile, ResolvedPlugins
from asched.framework.result import Evaluation
from asched.framework.status import Code

Raw = dict[str, Any]
Taint = tuple[str, str, str]
#: ``port`` or ``(port, protocol)`` or ``(port, protocol, host_ip)``.
PortSpec = int | tuple[int, str] | tuple[int, str, str]

MB = 1024 * 1024


# --- nodes -----------------------------------------------------------------------------


def make_node(
    name: str,
    cpu: str | None = "4",
    memory: str | None = "32Gi",
    pods: str | None = "110",
    *,
    labels: Mapping[str, str] | None = None,
    taints: Iterable[Taint] = (),
    unschedulable: bool = False,
    images: Iterable[tuple[str | Sequence[str], int]] = (),
    allocatable: Mapping[str, str] | None = None,
) -> Raw:
    """A raw Node. ``allocatable`` adds (or overrides) entries, e.g. extended resources.

    ``taints`` are ``(key, value, effect)``; ``images`` are ``(names, size_bytes)``.
    """
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    alloc = {k: v for k, v in resources.items() if v is not None}
    alloc.update(allocatable or {})
    node: Raw = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": {},
        "status": {"allocatable": alloc},
    }
    taint_list = [{"key": k, "value": v, "effect": e} for k, v, e in taints]
    if taint_list:
        node["spec"]["taints"] = taint_list
    if unschedulable:
        node["spec"]["unschedulable"] = True
    image_list = [
        {"names": [names] if isinstance(names, str) else list(names), "sizeBytes": size}
        for names, size in images
    ]
    if image_list:
        node["status"]["images"] = image_list
    return node


# --- pods: pieces ----------------------------------------------------------------------


def container(
    name: str = "c",
    *,
    requests: Mapping[str, str] | None = None,
    limits: Mapping[str, str] | None = None,
    image: str | None = None,
    ports: Iterable[PortSpec] = (),
    restart_policy: str | None = None,
) -> Raw:
    """A raw container (or init container with ``restart_policy="Always"``: a sidecar)."""
    out: Raw = {"name": name, "image": image if image is not None else "registry.k8s.io/pause"}
    resources: Raw = {}
    if requests is not None:
        resources["requests"] = dict(requests)
    if limits is not None:
        resources["limits"] = dict(limits)
    if resources:
        out["resources"] = resources
    port_list = [_port(spec) for spec in ports]
    if port_list:
        out["ports"] = port_list
    if restart_policy is not None:
        out["restartPolicy"] = restart_policy
    return out


def _port(spec: PortSpec) -> Raw:
    parts: tuple[Any, ...] = (spec,) if isinstance(spec, int) else spec
    port, protocol, host_ip = (*parts, "", "")[:3]
    raw: Raw = {"containerPort": port, "hostPort": port}
    if protocol:
        raw["protocol"] = protocol
    if host_ip:
        raw["hostIP"] = host_ip
    return raw


def toleration(key: str = "", operator: str = "", value: str = "", effect: str = "") -> Raw:
    """A raw toleration; empty fields are left out."""
    raw = {"key": key, "operator": operator, "value": value, "effect": effect}
    return {k: v for k, v in raw.items() if v}


def expr(key: str, operator: str, *values: str) -> Raw:
    """A node selector requirement (``matchExpressions`` / ``matchFields`` entry)."""
    raw: Raw = {"key": key, "operator": operator}
    if values:
        raw["values"] = list(values)
    return raw


def term(*expressions: Raw, fields: Iterable[Raw] = ()) -> Raw:
    """A node selector term: expressions ANDed with ``metadata.name`` fields."""
    raw: Raw = {}
    if expressions:
        raw["matchExpressions"] = list(expressions)
    field_list = list(fields)
    if field_list:
        raw["matchFields"] = field_list
    return raw


def name_in(name: str) -> Raw:
    """The field requirement ``metadata.name In [name]`` (the API allows one value)."""
    return expr("metadata.name", "In", name)


def node_affinity(
    required: Sequence[Raw] | None = None, preferred: Iterable[tuple[int, Raw]] = ()
) -> Raw:
    """A raw NodeAffinity: required terms (ORed) and ``(weight, term)`` preferences."""
    raw: Raw = {}
    if required is not None:
        raw["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": list(required)
        }
    pref = [{"weight": w, "preference": t} for w, t in preferred]
    if pref:
        raw["preferredDuringSchedulingIgnoredDuringExecution"] = pref
    return raw


def pvc_volume(claim: str, name: str = "data") -> Raw:
    """A volume backed by a PersistentVolumeClaim."""
    return {"name": name, "persistentVolumeClaim": {"claimName": claim}}


# --- pods ------------------------------------------------------------------------------


def make_pod(
    name: str = "pod",
    namespace: str = "default",
    *,
    cpu: str | None = None,
    memory: str | None = None,
    requests: Sequence[Mapping[str, str]] | None = None,
    containers: Sequence[Raw] | None = None,
    init: Sequence[Mapping[str, str]] = (),
    sidecars: Sequence[Mapping[str, str]] = (),
    init_containers: Sequence[Raw] | None = None,
    overhead: Mapping[str, str] | None = None,
    node_name: str = "",
    host_ports: Iterable[PortSpec] = (),
    tolerations: Iterable[Raw] = (),
    node_selector: Mapping[str, str] | None = None,
    affinity: Raw | None = None,
    pod_affinity: Raw | None = None,
    pod_anti_affinity: Raw | None = None,
    topology_spread: Sequence[Raw] = (),
    images: Sequence[str] = (),
    priority: int | None = None,
    labels: Mapping[str, str] | None = None,
    volumes: Sequence[Raw] = (),
) -> Raw:
    """A raw Pod.

    Containers come from ``containers`` (raw, see :func:`container`) if given, else one
    per ``requests`` entry, else one from ``cpu``/``memory`` if either is set, else
    none; ``images`` and ``host_ports`` then add containers as needed (image i goes to
    container i, host ports to container 0). Init containers: ``init`` (classic) then
    ``sidecars`` (restartable) request maps, or raw ``init_containers``. ``affinity``
    is the raw ``nodeAffinity``.
    """
    if containers is not None:
        spec_containers = [dict(c) for c in containers]
    else:
        reqs: list[Mapping[str, str]] = list(requests) if requests is not None else []
        if requests is None and (cpu is not None or memory is not None):
            one = {"cpu": cpu, "memory": memory}
            reqs = [{k: v for k, v in one.items() if v is not None}]
        ports = list(host_ports)
        count = max(len(reqs), len(images), 1 if ports else 0)
        spec_containers = [
            container(
                f"c{i}",
                requests=reqs[i] if i < len(reqs) else None,
                image=images[i] if i < len(images) else None,
                ports=ports if i == 0 else (),
            )
            for i in range(count)
        ]
    if init_containers is not None:
        spec_init = [dict(c) for c in init_containers]
    else:
        spec_init = [container(f"init{i}", requests=r) for i, r in enumerate(init)]
        spec_init += [
            container(f"sidecar{i}", requests=r, restart_policy="Always")
            for i, r in enumerate(sidecars)
        ]
    spec: Raw = {"containers": spec_containers}
    if spec_init:
        spec["initContainers"] = spec_init
    if overhead is not None:
        spec["overhead"] = dict(overhead)
    if node_name:
        spec["nodeName"] = node_name
    toleration_list = list(tolerations)
    if toleration_list:
        spec["tolerations"] = toleration_list
    if node_selector is not None:
        spec["nodeSelector"] = dict(node_selector)
    spec_affinity: Raw = {}
    if affinity is not None:
        spec_affinity["nodeAffinity"] = affinity
    if pod_affinity is not None:
        spec_affinity["podAffinity"] = pod_affinity
    if pod_anti_affinity is not None:
        spec_affinity["podAntiAffinity"] = pod_anti_affinity
    if spec_affinity:
        spec["affinity"] = spec_affinity
    if topology_spread:
        spec["topologySpreadConstraints"] = list(topology_spread)
    if priority is not None:
        spec["priority"] = priority
    if volumes:
        spec["volumes"] = list(volumes)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": spec,
    }


_bound_serial = itertools.count()


def bound_pod(node_name: str, **pod_fields: Any) -> Raw:
    """A uniquely named pod already running on ``node_name`` (fields as :func:`make_pod`)."""
    return make_pod(f"bound-{next(_bound_serial)}", node_name=node_name, **pod_fields)


def pod_info(raw: Raw) -> PodInfo:
    """Decode a raw pod (the incoming pod of a test)."""
    return decode_pod(raw)


def snapshot_of(nodes: Iterable[Raw], pods: Iterable[Raw] = ()) -> Snapshot:
    """Decode nodes (in order) and bound pods into a Snapshot."""
    return build_snapshot([*nodes, *pods])


# --- profiles --------------------------------------------------------------------------


def _with(point: str, names: Iterable[str]) -> tuple[str, ...]:
    return tuple(n for n in names if point in CAPABILITIES.get(n, frozenset()))


def profile_with(
    *,
    filter: Sequence[str] = (),
    score: Sequence[tuple[str, int]] = (),
    pre_filter: Sequence[str] | None = None,
    pre_score: Sequence[str] | None = None,
    args: Mapping[str, PluginArgs] | None = None,
    scheduler_name: str = "default-scheduler",
) -> Profile:
    """A Profile with its resolved plugins set directly (no config loader involved).

    ``pre_filter`` defaults to the ``filter`` plugins that have a PreFilter and
    ``pre_score`` to the ``score`` plugins that have a PreScore, as multi-point
    registration would give.
    """
    score_names = [name for name, _ in score]
    resolved = ResolvedPlugins(
        pre_filter=tuple(pre_filter) if pre_filter is not None else _with("preFilter", filter),
        filter=tuple(filter),
        pre_score=tuple(pre_score) if pre_score is not None else _with("preScore", score_names),
        score=tuple(score),
    )
    return Profile(scheduler_name=scheduler_name, resolved=resolved, plugin_args=dict(args or {}))


def default_profile(args: Mapping[str, PluginArgs] | None = None) -> Profile:
    """The default plugin set and weights (section 3.1), resolved by hand."""
    names = [name for name, _ in DEFAULT_MULTIPOINT]
    weights = dict(DEFAULT_MULTIPOINT)
    return profile_with(
        filter=_with("filter", names),
        score=tuple((n, weights[n] or 1) for n in _with("score", names)),
        args=args,
    )


# --- reading results -------------------------------------------------------------------


def scores_of(evaluation: Evaluation, plugin: str) -> dict[str, int | None]:
    """Each node's normalized score from ``plugin`` (None: infeasible or plugin absent)."""
    return {name: v.scores.get(plugin) for name, v in evaluation.nodes.items()}


def reasons_of(evaluation: Evaluation) -> dict[str, tuple[str, ...]]:
    """Each node's rejection reasons (empty for feasible nodes)."""
    return {name: v.reasons for name, v in evaluation.nodes.items()}


def feasible_nodes(evaluation: Evaluation) -> list[str]:
    """Names of the feasible nodes, in snapshot order."""
    return [name for name, v in evaluation.nodes.items() if v.feasible]


#: What :func:`outcome` returns for a feasible node.
FITS = None


def outcome(
    evaluation: Evaluation, node: str
) -> tuple[str | None, Code | None, tuple[str, ...]] | None:
    """None for a feasible node, else ``(plugin, code, reasons)`` of its rejection."""
    verdict = evaluation.nodes[node]
    if verdict.feasible:
        return FITS
    return (verdict.plugin, verdict.code, verdict.reasons)


def added_affinity(raw: Raw) -> NodeAffinity:
    """Decode a raw NodeAffinity for ``NodeAffinityArgs.added_affinity``."""
    decoded = decode_node_affinity(object_context("NodeAffinityArgs", {}), raw, "addedAffinity")
    assert decoded is not None
    return decoded
