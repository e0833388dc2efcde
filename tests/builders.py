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

import dataclasses
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from asched.cluster.decode import decode_pod
from asched.cluster.decode_context import object_context
from asched.cluster.node_affinity_decode import decode_node_affinity
from asched.cluster.records import NodeAffinity, PodInfo
from asched.cluster.snapshot import Snapshot, build_snapshot
from asched.cluster.table import NodeTable
from asched.config.plugins import DEFAULT_MULTIPOINT
from asched.config.types import Profile, ResolvedPlugins
from asched.engine.result import Evaluation
from asched.framework.status import Code
from tests.configs import CATALOGUE

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
    known = CATALOGUE.plugins
    return tuple(n for n in names if n in known and point in known[n].points)


def profile_with(
    *,
    filter: Sequence[str] = (),
    score: Sequence[tuple[str, int]] = (),
    pre_filter: Sequence[str] | None = None,
    pre_score: Sequence[str] | None = None,
    post_filter: Sequence[str] = (),
    args: Mapping[str, object] | None = None,
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
        post_filter=tuple(post_filter),
    )
    return Profile(scheduler_name=scheduler_name, resolved=resolved, plugin_args=dict(args or {}))


def default_profile(args: Mapping[str, object] | None = None) -> Profile:
    """The default plugin set and weights (upstream's default_plugins.go), resolved by hand."""
    names = [name for name, _ in DEFAULT_MULTIPOINT]
    weights = dict(DEFAULT_MULTIPOINT)
    return profile_with(
        filter=_with("filter", names),
        score=tuple((n, weights[n] or 1) for n in _with("score", names)),
        post_filter=_with("postFilter", names),
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


# --- cross-pod objects (inter-pod affinity, topology spread, preemption) ----------------


def label_selector(labels: Mapping[str, str] | None = None, *expressions: Raw) -> Raw:
    """A raw metav1.LabelSelector: ``matchLabels`` and :func:`expr` ``matchExpressions``.

    ``label_selector()`` is the empty selector ``{}`` (matches everything).
    """
    raw: Raw = {}
    if labels:
        raw["matchLabels"] = dict(labels)
    if expressions:
        raw["matchExpressions"] = list(expressions)
    return raw


def exists(key: str) -> Raw:
    """The selector ``key Exists`` (upstream's ``st.MakeLabelSelector().Exists(key)``)."""
    return label_selector(None, expr(key, "Exists"))


def affinity_term(
    selector: Raw | None,
    topology_key: str,
    *,
    namespaces: Sequence[str] | None = None,
    namespace_selector: Raw | None = None,
) -> Raw:
    """A raw PodAffinityTerm; ``selector=None`` leaves labelSelector out (nil)."""
    raw: Raw = {"topologyKey": topology_key}
    if selector is not None:
        raw["labelSelector"] = selector
    if namespaces is not None:
        raw["namespaces"] = list(namespaces)
    if namespace_selector is not None:
        raw["namespaceSelector"] = namespace_selector
    return raw


def pod_affinity_rules(
    required: Sequence[Raw] = (), preferred: Iterable[tuple[int, Raw]] = ()
) -> Raw:
    """A raw PodAffinity / PodAntiAffinity: required terms and ``(weight, term)`` pairs."""
    raw: Raw = {}
    if required:
        raw["requiredDuringSchedulingIgnoredDuringExecution"] = list(required)
    weighted = [{"weight": w, "podAffinityTerm": t} for w, t in preferred]
    if weighted:
        raw["preferredDuringSchedulingIgnoredDuringExecution"] = weighted
    return raw


def spread_constraint(
    max_skew: int,
    topology_key: str,
    when: str,
    selector: Raw | None,
    *,
    min_domains: int | None = None,
    node_affinity_policy: str | None = None,
    node_taints_policy: str | None = None,
    match_label_keys: Sequence[str] | None = None,
) -> Raw:
    """A raw TopologySpreadConstraint (upstream's ``SpreadConstraint(...)``)."""
    raw: Raw = {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when}
    optional: Raw = {
        "labelSelector": selector,
        "minDomains": min_domains,
        "nodeAffinityPolicy": node_affinity_policy,
        "nodeTaintsPolicy": node_taints_policy,
        "matchLabelKeys": list(match_label_keys) if match_label_keys is not None else None,
    }
    raw.update({k: v for k, v in optional.items() if v is not None})
    return raw


def namespace_object(name: str, labels: Mapping[str, str] | None = None) -> Raw:
    """A raw Namespace."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": dict(labels or {})},
    }


def service_object(
    name: str, selector: Mapping[str, str] | None, namespace: str = "default"
) -> Raw:
    """A raw Service; ``selector=None`` leaves spec.selector out (selects nothing)."""
    spec: Raw = {} if selector is None else {"selector": dict(selector)}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def controller_object(kind: str, name: str, selector: Raw, namespace: str = "default") -> Raw:
    """A raw ReplicaSet / StatefulSet (``selector`` a LabelSelector) or
    ReplicationController (``selector`` a plain label map)."""
    api = "v1" if kind == "ReplicationController" else "apps/v1"
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": selector},
    }


def pdb_object(
    name: str,
    selector: Raw | None,
    disruptions_allowed: int,
    *,
    namespace: str = "default",
    disrupted_pods: Sequence[str] = (),
) -> Raw:
    """A raw policy/v1 PodDisruptionBudget with its status."""
    spec: Raw = {} if selector is None else {"selector": selector}
    status: Raw = {"disruptionsAllowed": disruptions_allowed}
    if disrupted_pods:
        status["disruptedPods"] = dict.fromkeys(disrupted_pods, "2024-01-01T00:00:00Z")
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": status,
    }


def with_pod_fields(
    raw: Raw,
    *,
    started: int | None = None,
    terminating: bool = False,
    nominated_node: str | None = None,
    preemption_policy: str | None = None,
    preempted_by_scheduler: bool = False,
) -> Raw:
    """A copy of a raw pod with extra fields set.

    ``started``: metadata.creationTimestamp at that many seconds after the epoch (the
    reference's start time); ``terminating``: a deletionTimestamp;
    ``preempted_by_scheduler``: the DisruptionTarget=True/PreemptionByScheduler condition.
    """
    out: Raw = {**raw, "metadata": dict(raw["metadata"]), "spec": dict(raw["spec"])}
    status: Raw = dict(raw.get("status") or {})
    if started is not None:
        minutes, seconds = divmod(started, 60)
        out["metadata"]["creationTimestamp"] = f"1970-01-01T00:{minutes:02d}:{seconds:02d}Z"
    if terminating:
        out["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if nominated_node is not None:
        status["nominatedNodeName"] = nominated_node
    if preemption_policy is not None:
        out["spec"]["preemptionPolicy"] = preemption_policy
    if preempted_by_scheduler:
        status["conditions"] = [
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
        ]
    if status:
        out["status"] = status
    return out


def cluster_inputs(nodes: Iterable[Raw], objects: Iterable[Raw] = ()) -> tuple[Any, Any, Any, Any]:
    """Decode raw nodes and objects (bound pods, Namespaces, Services, controllers, PDBs).

    Returns ``(nodes, pods_by_node, namespace_labels, extras)``, the plain inputs of the
    cross-pod references (see ``asched.tools.reference.crosspod``).
    """
    from asched.tools.reference import crosspod

    snapshot = snapshot_of(nodes, objects)
    return (
        snapshot.nodes,
        crosspod.pods_by_node(snapshot),
        crosspod.namespace_labels(snapshot.extras.get("Namespace", ())),
        snapshot.extras,
    )


def engine_table(
    nodes: Sequence[Any],
    pods_by_node: Mapping[str, Sequence[PodInfo]],
    extras: Mapping[str, Sequence[Raw]] | None = None,
    *,
    namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
    nominated: Sequence[PodInfo] = (),
) -> NodeTable:
    """The engine's NodeTable for a reference-style input (as ``asched explain`` builds it).

    Nodes in order, then each node's pods in order (pod rows follow that order, which
    decides ties between equally important preemption victims); ``extras`` as in a
    snapshot (Namespaces, Services, controllers, PDBs); ``nominated`` pods keep their
    ``status.nominatedNodeName``.
    """
    from asched.explain.engine import table_of

    pods = [
        pod if pod.node_name == node.name else dataclasses.replace(pod, node_name=node.name)
        for node in nodes
        for pod in pods_by_node.get(node.name, ())
    ]
    table = table_of(Snapshot(nodes=list(nodes), pods=pods, extras=dict(extras or {})))
    table.namespace_labels.update(namespace_labels or {})
    for pod in nominated:
        table.nominations.set(pod, pod.nominated_node_name)
    return table
