"""Decode raw Kubernetes JSON (dicts as the API serves them) into records.

This is the validation boundary of the cluster model: every quantity, selector and
enum is checked here, and a problem raises :class:`~asched.errors.DecodeError` naming
the object (``Pod default/web-1``), the field path and the value. Code past this point
trusts the records.

Two pieces of API-server defaulting are reproduced, because snapshots and simulated
objects may not have been through a real server: a container's request defaults to its
limit for each resource with a limit and no request, and a Node's allocatable defaults
to its capacity when unset. Host-network pods get ``hostPort = containerPort``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from asched.api.objects import NodeJSON, PodJSON
from asched.cluster import bounds, quantity
from asched.cluster.affinity import decode_pod_affinity
from asched.cluster.gangs import gang_key_of
from asched.cluster.labelsyntax import valid_label_key, valid_label_value
from asched.cluster.pod_volumes import decode_pod_volumes
from asched.cluster.records import (
    TAINT_EFFECTS,
    HostPort,
    ImageState,
    NodeAffinity,
    NodeInfo,
    NodeSelectorTerm,
    OwnerReference,
    PodInfo,
    PreferredTerm,
    Requirement,
    Taint,
    Toleration,
    parse_int64,
)
from asched.cluster.requests import ContainerRequests, nonzero_requests, pod_requests
from asched.errors import DecodeError

NODE_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")

#: JSON of any shape (the decoders' parameters name the shape they expect, and accept any
#: mapping: every field is checked here, whatever its declared type)
Raw = Mapping[str, Any]


#: owner uid -> the one-reference tuple last decoded with it: the pods of a workload share
#: their owner, so the next ones compare four fields instead of building a record (past
#: the limit the cache starts over)
_OWNERS: dict[str, tuple[OwnerReference]] = {}
_OWNERS_LIMIT: Final = 4096


def _described(value: Any) -> str:
    """A wrong value for a message: a scalar as written, a container by its kind (an
    annotation may hold kilobytes)."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return repr(value)


class _Ctx:
    """The object being decoded, for error messages."""

    def __init__(self, kind: str, raw: Any) -> None:
        meta = raw.get("metadata") if isinstance(raw, Mapping) else None
        meta = meta if isinstance(meta, Mapping) else {}
        name = meta.get("name") or meta.get("generateName") or "<unnamed>"
        namespace = meta.get("namespace")
        self.obj = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
        #: the first amount beyond asched's range, as a message naming its field
        self.out_of_range = ""

    def fail(self, path: str, message: str) -> DecodeError:
        return DecodeError(self.obj, path, message)

    # The checks below test the exact JSON types first: objects parsed from JSON are
    # dicts, lists and strs, and the ABC's isinstance costs several times more.
    def mapping(self, value: Any, path: str) -> Raw:
        if type(value) is dict:
            return value
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.fail(path, f"must be an object, got {type(value).__name__}")
        return value

    def items(self, value: Any, path: str) -> list[Any]:
        if type(value) is list:
            return value
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, f"must be a list, got {type(value).__name__}")
        return value

    def string(self, value: Any, path: str, default: str = "") -> str:
        if type(value) is str:
            return value
        if value is None:
            return default
        if not isinstance(value, str):
            raise self.fail(path, f"must be a string, got {value!r}")
        return value

    def integer(self, value: Any, path: str, default: int = 0) -> int:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, f"must be an integer, got {value!r}")
        return value

    def labels(self, value: Any, path: str) -> dict[str, str]:
        labels = self.mapping(value, path)
        for key, val in labels.items():
            if not isinstance(val, str):
                raise self.fail(f"{path}.{key}", f"label values must be strings, got {val!r}")
        return dict(labels)

    def annotations(self, value: Any, path: str) -> dict[str, str]:
        """A map of string to string, as :meth:`labels`, an entry's path written
        ``metadata.annotations[KEY]`` (keys hold dots and slashes)."""
        annotations = self.mapping(value, path)
        for key, val in annotations.items():
            if type(key) is not str:
                raise self.fail(path, f"annotation keys must be strings, got {key!r}")
            if type(val) is not str:
                raise self.fail(
                    f"{path}[{key}]", f"annotation values must be strings, got {_described(val)}"
                )
        return dict(annotations)

    def owner_references(self, value: Any) -> tuple[OwnerReference, ...]:
        """``metadata.ownerReferences``: each an object whose ``apiVersion``, ``kind``,
        ``name`` and ``uid`` are strings and ``controller`` a boolean (absent: "" and
        False). The usual entry (a dict of such values) takes the fast path."""
        if value is None:
            return ()
        if type(value) is list and len(value) == 1 and type(value[0]) is dict:
            # the usual pod: one owner its siblings share, decoded already
            get = value[0].get
            uid = get("uid")
            known = _OWNERS.get(uid) if type(uid) is str else None
            if known is not None:
                ref = known[0]
                controller = get("controller")
                if (
                    get("name") == ref.name
                    and get("kind") == ref.kind
                    and get("apiVersion") == ref.api_version
                    and (
                        controller is True
                        if ref.controller
                        else (controller is None or controller is False)
                    )
                ):
                    return known
        out = []
        for index, item in enumerate(self.items(value, "metadata.ownerReferences")):
            if type(item) is dict:
                get = item.get
                version, kind, name, uid = get("apiVersion"), get("kind"), get("name"), get("uid")
                controller = get("controller")
                if (
                    type(version) is str
                    and type(kind) is str
                    and type(name) is str
                    and type(uid) is str
                    and (controller is None or type(controller) is bool)
                ):
                    out.append(OwnerReference(version, kind, name, uid, controller is True))
                    continue
            out.append(self._owner_reference(item, f"metadata.ownerReferences[{index}]"))
        refs = tuple(out)
        if len(refs) == 1:
            if len(_OWNERS) >= _OWNERS_LIMIT:
                _OWNERS.clear()
            _OWNERS[refs[0].uid] = refs
        return refs

    def _owner_reference(self, value: Any, path: str) -> OwnerReference:
        item = self.mapping(value, path)
        strings = [
            self.string(item.get(key), f"{path}.{key}") for key in ("apiVersion", "kind", "name")
        ]
        uid = self.string(item.get("uid"), f"{path}.uid")
        controller = item.get("controller")
        if controller is not None and not isinstance(controller, bool):
            raise self.fail(f"{path}.controller", f"must be a boolean, got {controller!r}")
        return OwnerReference(strings[0], strings[1], strings[2], uid, controller is True)

    def int32(self, value: Any, path: str, default: int = 0) -> int:
        number = self.integer(value, path, default)
        if not -(2**31) <= number < 2**31:
            raise self.fail(path, f"must be a 32-bit integer, got {number}")
        return number

    def quantities(self, value: Any, path: str) -> dict[str, int]:
        """Quantities in canonical units, as the API server parses them (capped at
        int64). Amounts beyond :data:`~asched.cluster.bounds.MAX_AMOUNT` are clamped to
        it and recorded in :attr:`out_of_range` (the first one, naming its field)."""
        out: dict[str, int] = {}
        for name, text in self.mapping(value, path).items():
            if type(text) is not str:
                if isinstance(text, int | float) and not isinstance(text, bool):
                    text = str(text)
                if not isinstance(text, str):
                    raise self.fail(f"{path}.{name}", f"must be a quantity string, got {text!r}")
            try:
                amount = quantity.canonical(name, text)
            except quantity.QuantityError as exc:
                raise self.fail(f"{path}.{name}", str(exc)) from None
            if amount < 0:
                raise self.fail(
                    f"{path}.{name}", f"must be greater than or equal to 0, got {text!r}"
                )
            if amount > bounds.MAX_AMOUNT and not self.out_of_range:
                self.out_of_range = bounds.too_large(f"{path}.{name}", text, amount, name)
            out[name] = bounds.clamp(amount)
        return out


def decode_node(raw: NodeJSON | Raw, *, keep_annotations: bool = False) -> NodeInfo:
    """Decode a Node. Allocatable falls back to capacity, as the API server defaults it.

    ``keep_annotations``: decode ``metadata.annotations`` (checked: a map of string to
    string) into ``NodeInfo.annotations``; otherwise they are not read at all (no plugin
    reads them, see ``PluginSpec.reads_annotations``)."""
    ctx = _Ctx("Node", raw)
    meta = ctx.mapping(raw.get("metadata"), "metadata")
    name = ctx.string(meta.get("name"), "metadata.name")
    if not name:
        raise ctx.fail("metadata.name", "Required value: name is required")
    spec = ctx.mapping(raw.get("spec"), "spec")
    status = ctx.mapping(raw.get("status"), "status")
    taints = []
    for index, item in enumerate(ctx.items(spec.get("taints"), "spec.taints")):
        path = f"spec.taints[{index}]"
        item = ctx.mapping(item, path)
        effect = ctx.string(item.get("effect"), f"{path}.effect")
        if effect not in TAINT_EFFECTS:
            raise ctx.fail(f"{path}.effect", f"Unsupported value: {effect!r}")
        key = ctx.string(item.get("key"), f"{path}.key")
        if not key:
            raise ctx.fail(f"{path}.key", "Required value")
        taints.append(Taint(key, ctx.string(item.get("value"), f"{path}.value"), effect))
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


def _requirements(ctx: _Ctx, raw: Any, path: str, *, fields: bool) -> tuple[Requirement, ...]:
    out = []
    for index, item in enumerate(ctx.items(raw, path)):
        here = f"{path}[{index}]"
        item = ctx.mapping(item, here)
        key = ctx.string(item.get("key"), f"{here}.key")
        op = ctx.string(item.get("operator"), f"{here}.operator")
        values = tuple(
            ctx.string(v, f"{here}.values[{i}]")
            for i, v in enumerate(ctx.items(item.get("values"), f"{here}.values"))
        )
        if not key:
            raise ctx.fail(f"{here}.key", "Required value")
        if fields:
            if key != "metadata.name":
                raise ctx.fail(
                    f"{here}.key", f"Invalid value: {key!r}: not a valid field selector key"
                )
            if op not in ("In", "NotIn") or len(values) != 1:
                raise ctx.fail(
                    here, "matchFields on metadata.name must use In or NotIn with exactly one value"
                )
        elif op not in NODE_OPERATORS:
            raise ctx.fail(
                f"{here}.operator",
                f"Unsupported value: {op!r}: supported values: {', '.join(NODE_OPERATORS)}",
            )
        elif op in ("In", "NotIn") and not values:
            raise ctx.fail(
                f"{here}.values",
                "Required value: must be specified when `operator` is 'In' or 'NotIn'",
            )
        elif op in ("Exists", "DoesNotExist") and values:
            raise ctx.fail(
                f"{here}.values",
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        elif op in ("Gt", "Lt") and (len(values) != 1 or parse_int64(values[0]) is None):
            raise ctx.fail(
                f"{here}.values",
                "must be specified single value when `operator` is 'Lt' or 'Gt' and be an integer",
            )
        out.append(Requirement(key, op, values))
    return tuple(out)


def decode_node_selector_term(ctx: _Ctx, raw: Any, path: str) -> NodeSelectorTerm:
    """Decode one ``nodeSelectorTerm`` (expressions and fields).

    The API server accepts label values its selector parser later rejects; upstream's
    scheduler then treats the whole term as matching nothing. Such a term decodes with
    ``invalid=True`` and both implementations honour it.
    """
    raw = ctx.mapping(raw, path)
    expressions = _requirements(
        ctx, raw.get("matchExpressions"), f"{path}.matchExpressions", fields=False
    )
    fields = _requirements(ctx, raw.get("matchFields"), f"{path}.matchFields", fields=True)
    invalid = any(
        not valid_label_key(r.key)
        or (r.operator in ("In", "NotIn") and not all(valid_label_value(v) for v in r.values))
        for r in expressions
    )
    return NodeSelectorTerm(expressions, fields, invalid)


def decode_node_affinity(ctx: _Ctx, raw: Any, path: str) -> NodeAffinity | None:
    """Decode a ``NodeAffinity`` (also used for NodeAffinityArgs.addedAffinity)."""
    if raw is None:
        return None
    raw = ctx.mapping(raw, path)
    required = None
    req_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    if raw.get("requiredDuringSchedulingIgnoredDuringExecution") is not None:
        selector = ctx.mapping(raw["requiredDuringSchedulingIgnoredDuringExecution"], req_path)
        terms = ctx.items(selector.get("nodeSelectorTerms"), f"{req_path}.nodeSelectorTerms")
        required = tuple(
            decode_node_selector_term(ctx, term, f"{req_path}.nodeSelectorTerms[{i}]")
            for i, term in enumerate(terms)
        )
    preferred = []
    pref_path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for index, item in enumerate(
        ctx.items(raw.get("preferredDuringSchedulingIgnoredDuringExecution"), pref_path)
    ):
        here = f"{pref_path}[{index}]"
        item = ctx.mapping(item, here)
        weight = ctx.integer(item.get("weight"), f"{here}.weight")
        if not 0 <= weight <= 100:
            raise ctx.fail(f"{here}.weight", f"Invalid value: {weight}: must be in the range 1-100")
        term = decode_node_selector_term(ctx, item.get("preference"), f"{here}.preference")
        preferred.append(PreferredTerm(weight, term))
    return NodeAffinity(required, tuple(preferred))


def _container_requests(ctx: _Ctx, raw: Raw, path: str) -> dict[str, int]:
    resources = ctx.mapping(raw.get("resources"), f"{path}.resources")
    requests = ctx.quantities(resources.get("requests"), f"{path}.resources.requests")
    limits = ctx.quantities(resources.get("limits"), f"{path}.resources.limits")
    for name, amount in limits.items():
        requests.setdefault(name, amount)  # API defaulting: request = limit when unset
    return requests


def _host_ports(ctx: _Ctx, raw: Raw, path: str, *, host_network: bool) -> list[HostPort]:
    out = []
    for index, port in enumerate(ctx.items(raw.get("ports"), f"{path}.ports")):
        here = f"{path}.ports[{index}]"
        port = ctx.mapping(port, here)
        container_port = ctx.integer(port.get("containerPort"), f"{here}.containerPort")
        host_port = ctx.integer(port.get("hostPort"), f"{here}.hostPort")
        if host_network and host_port == 0:
            host_port = container_port
        if not 0 <= host_port <= 65535:
            raise ctx.fail(
                f"{here}.hostPort",
                f"Invalid value: {host_port}: must be between 1 and 65535, inclusive",
            )
        if host_port > 0:
            ip = ctx.string(port.get("hostIP"), f"{here}.hostIP") or "0.0.0.0"
            protocol = ctx.string(port.get("protocol"), f"{here}.protocol") or "TCP"
            out.append(HostPort(ip, protocol, host_port))
    return out


def _pod_parts(ctx: _Ctx, raw: object) -> tuple[Raw, str, Raw, Raw]:
    """A Pod's metadata, name, spec and status, checked in this order."""
    if not isinstance(raw, Mapping):
        raise ctx.fail("", "a Pod must be an object")
    meta = ctx.mapping(raw.get("metadata"), "metadata")
    name = ctx.string(meta.get("name"), "metadata.name")
    if not name:
        raise ctx.fail("metadata.name", "Required value: name or generateName is required")
    return (
        meta,
        name,
        ctx.mapping(raw.get("spec"), "spec"),
        ctx.mapping(raw.get("status"), "status"),
    )


def decode_pod(raw: PodJSON | Raw, *, keep_annotations: bool = False) -> PodInfo:
    """Decode a Pod into a :class:`PodInfo`, computing its effective requests.

    ``keep_annotations``: decode ``metadata.annotations`` (checked: a map of string to
    string) into ``PodInfo.annotations``; otherwise they are not read at all (they may
    be large, and only plugins that declare ``reads_annotations`` see them). The owner
    references are always decoded."""
    ctx = _Ctx("Pod", raw)
    meta, name, spec, status = _pod_parts(ctx, raw)
    host_network = bool(spec.get("hostNetwork", False))

    containers: list[ContainerRequests] = []
    inits: list[ContainerRequests] = []
    images: list[str] = []
    ports: list[HostPort] = []
    init_raw = ctx.items(spec.get("initContainers"), "spec.initContainers")
    for index, item in enumerate(init_raw):
        path = f"spec.initContainers[{index}]"
        item = ctx.mapping(item, path)
        restartable = ctx.string(item.get("restartPolicy"), f"{path}.restartPolicy") == "Always"
        inits.append(ContainerRequests(_container_requests(ctx, item, path), restartable))
        images.append(ctx.string(item.get("image"), f"{path}.image"))
        if restartable:
            ports.extend(_host_ports(ctx, item, path, host_network=host_network))
    for index, item in enumerate(ctx.items(spec.get("containers"), "spec.containers")):
        path = f"spec.containers[{index}]"
        item = ctx.mapping(item, path)
        containers.append(ContainerRequests(_container_requests(ctx, item, path)))
        images.append(ctx.string(item.get("image"), f"{path}.image"))
        ports.extend(_host_ports(ctx, item, path, host_network=host_network))
    overhead = ctx.quantities(spec.get("overhead"), "spec.overhead")
    requests = pod_requests(containers, inits, overhead)
    for resource, amount in requests.items():
        if amount > bounds.MAX_AMOUNT:
            ctx.out_of_range = ctx.out_of_range or bounds.total_too_large(resource, amount)
            requests[resource] = bounds.MAX_AMOUNT
    nonzero_cpu, nonzero_memory = (
        bounds.clamp(amount) for amount in nonzero_requests(containers, inits, overhead)
    )

    tolerations = []
    for index, item in enumerate(ctx.items(spec.get("tolerations"), "spec.tolerations")):
        path = f"spec.tolerations[{index}]"
        item = ctx.mapping(item, path)
        operator = ctx.string(item.get("operator"), f"{path}.operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            raise ctx.fail(
                f"{path}.operator",
                f'Unsupported value: {operator!r}: supported values: "Equal", "Exists"',
            )
        effect = ctx.string(item.get("effect"), f"{path}.effect")
        if effect and effect not in TAINT_EFFECTS:
            raise ctx.fail(f"{path}.effect", f"Unsupported value: {effect!r}")
        tolerations.append(
            Toleration(
                ctx.string(item.get("key"), f"{path}.key"),
                operator,
                ctx.string(item.get("value"), f"{path}.value"),
                effect,
            )
        )

    affinity = ctx.mapping(spec.get("affinity"), "spec.affinity")
    pvcs = _claim_names(ctx, spec, name)
    namespace = ctx.string(meta.get("namespace"), "metadata.namespace") or "default"
    inter_pod = ctx.mapping(affinity.get("podAffinity"), "spec.affinity.podAffinity") or None
    anti = ctx.mapping(affinity.get("podAntiAffinity"), "spec.affinity.podAntiAffinity") or None
    pod_affinity, error = decode_pod_affinity(inter_pod, anti, namespace)
    if error is not None:
        raise ctx.fail(f"spec.affinity.{error[0]}", error[1])
    priority = ctx.int32(spec.get("priority"), "spec.priority")
    raw_spread = spec.get("topologySpreadConstraints")
    spread = (
        ()
        if raw_spread is None
        else tuple(
            ctx.mapping(c, f"spec.topologySpreadConstraints[{i}]")
            for i, c in enumerate(ctx.items(raw_spread, "spec.topologySpreadConstraints"))
        )
    )
    raw_gates = spec.get("schedulingGates")
    gates = (
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


def _claim_names(ctx: _Ctx, spec: Raw, name: str) -> tuple[str, ...]:
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
    ctx = _Ctx("Pod", raw)
    meta, name, spec, status = _pod_parts(ctx, raw)
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


def object_context(kind: str, raw: Any) -> _Ctx:
    """A decoding context for another decoder (e.g. config args reusing node affinity)."""
    return _Ctx(kind, raw)
