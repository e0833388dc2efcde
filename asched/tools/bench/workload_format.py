"""The home-grown workload format ``asched.bench/v1`` of ``docs/workloads.md``, validated.

It is the bridge for what upstream's scheduler_perf format cannot express (gangs,
StatefulSet claims over local PVs, two measured pod shapes in one phase); a workload file
holding a mapping is read as one::

    format: asched.bench/v1
    name: SchedulingBasic/5000Nodes_10000Pods
    nodes:        [{count: 5000, template: node-default}]
    initPods:     [{count: 1000, template: pod-default}]
    measuredPods: [{count: 10000, template: pod-default}]
    churn:        {mode: create, intervalMilliseconds: 200, objects: [{kind: Pod, ...}]}

Gangs are ``measuredGangs``, each entry ``count`` gangs of its ``members``. Storage:
``csiNode`` and ``localVolumes`` of node groups, ``boundVolumes`` or
``volumeClaimTemplates`` of pod groups, the workload's ``storageClasses``;
:mod:`asched.tools.bench._volume_fields` reads them.

This module is the validation boundary: :func:`load_workload` reads the whole document,
collects every problem with its field path (``measuredPods[0].count: must be an integer
>= 1, got 0``) and raises one :class:`WorkloadError`; everything past it trusts the
:class:`~asched.tools.bench.workload.Workload`. Quantities are checked with the cluster
model's parser, templates and kinds against the built-in lists in
:mod:`asched.tools.bench.objects`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from asched.config.schema import Problems, Section, describe, is_qualified_name
from asched.errors import DocumentError, FieldError
from asched.tools.bench import _volume_fields, _workload_fields as fields, objects
from asched.tools.bench.workload import (
    Churn,
    ChurnMode,
    ChurnObject,
    GangGroup,
    NodeGroup,
    PodGroup,
    Workload,
)

FORMAT: Final = "asched.bench/v1"
TOP_FIELDS: Final = (
    "format",
    "name",
    "description",
    "upstream",
    "timeoutSeconds",
    "nodes",
    "initPods",
    "measuredPods",
    "measuredGangs",
    "schedulerProfile",
    "settleSeconds",
    "churn",
    "storageClasses",
)
NODE_FIELDS: Final = (
    "count",
    "template",
    "namePrefix",
    "cpu",
    "memory",
    "pods",
    "labels",
    "spreadLabels",
    "taints",
    "unschedulable",
    "patch",
    "csiNode",
    "localVolumes",
)
POD_FIELDS: Final = (
    "count",
    "template",
    "namespace",
    "cpu",
    "memory",
    "labels",
    "priority",
    "nodeSelector",
    "tolerations",
    "affinity",
    "topologySpreadConstraints",
    "patch",
    "boundVolumes",
    "volumeClaimTemplates",
)
MEMBER_FIELDS: Final = tuple(f for f in POD_FIELDS if f != "namespace")
GANG_FIELDS: Final = (
    "count",
    "namePrefix",
    "namespace",
    "minMember",
    "minResources",
    "scheduleTimeoutSeconds",
    "interleave",
    "members",
)
#: ``schedulerProfile`` values: asched's default plugins, or the Coscheduling profile
#: (kube-scheduler v1.37 then runs its own gang scheduling: GenericWorkload on, the gangs
#: as scheduling.k8s.io/v1beta1 PodGroups).
SCHEDULER_PROFILES: Final = ("default", "coscheduling")
CHURN_FIELDS: Final = ("mode", "intervalMilliseconds", "number", "objects")
CHURN_KINDS: Final = ("Node", "Pod", "Service")
DEFAULT_NAMESPACES: Final = {
    "initPods": "bench-init",
    "measuredPods": "bench-measured",
    "churn": "bench-churn",
}


class WorkloadError(DocumentError):
    """A workload document with one or more field errors, all reported at once."""

    WHAT = "workload"

    def __init__(self, errors: list[FieldError], source: str = "") -> None:
        self.errors = list(errors)
        super().__init__(self.errors, source)


def read_node_group(problems: Problems, raw: Any, path: str, *, counted: bool = True) -> NodeGroup:
    """Read one node group (``counted=False`` for a churn object, which has no count)."""
    known = NODE_FIELDS if counted else tuple(f for f in NODE_FIELDS if f != "count")
    section = fields.strict_section(problems, raw, path, known)
    count = fields.count(section) if counted else 1
    prefix = section.string("namePrefix", "node" if counted else "churn-node")
    if not objects.is_dns_label(prefix):
        problems.add(section.at("namePrefix"), f"must be a DNS label prefix, got {prefix!r}")
    pods = section.optional_integer("pods")
    if pods is not None and pods < 1:
        problems.add(section.at("pods"), f"must be an integer >= 1, got {pods}")
    if not counted:
        for key in ("csiNode", "localVolumes"):
            if section.has(key):
                section.report(key, "not supported for churned nodes (only nodes[] get storage)")
    return NodeGroup(
        count=count,
        template=fields.template(section, objects.NODE_TEMPLATES, "node-default"),
        name_prefix=prefix,
        cpu=fields.quantity_text(section, "cpu", "cpu"),
        memory=fields.quantity_text(section, "memory", "memory"),
        pods=pods,
        labels=fields.labels(section, "labels"),
        spread_labels=fields.spread_labels(section),
        taints=fields.taints(section),
        unschedulable=section.boolean("unschedulable", default=False),
        patch=fields.raw_object(section, "patch"),
        csi_node=_volume_fields.csi_node(section),
        local_volumes=_volume_fields.local_volumes(section),
    )


def read_pod_group(
    problems: Problems,
    raw: Any,
    path: str,
    *,
    namespace: str,
    counted: bool = True,
    member: bool = False,
) -> PodGroup:
    """Read one pod group; ``namespace`` is the default for its list.

    ``member``: a gang's member entry, whose namespace is the gang's (no such field).
    """
    known = MEMBER_FIELDS if member else POD_FIELDS
    if not counted:
        known = tuple(f for f in known if f != "count")
    section = fields.strict_section(problems, raw, path, known)
    count = fields.count(section) if counted else 1
    ns = section.string("namespace", namespace)
    if not objects.is_dns_label(ns):
        problems.add(section.at("namespace"), f"must be a DNS label, got {ns!r}")
    template = fields.template(section, objects.POD_TEMPLATES, "pod-default")
    priority = section.optional_integer("priority")
    if priority is not None and not -(2**31) <= priority <= 1_000_000_000:
        problems.add(section.at("priority"), f"must be in -2147483648..1000000000, got {priority}")
    if priority is None:
        priority = objects.POD_TEMPLATES[template].priority
    if member or not counted:
        for key in ("boundVolumes", "volumeClaimTemplates"):
            if section.has(key):
                where = "a gang's member pods" if member else "churned pods"
                section.report(
                    key, f"not supported for {where} (only initPods and measuredPods get claims)"
                )
    return PodGroup(
        count=count,
        template=template,
        namespace=ns,
        cpu=fields.quantity_text(section, "cpu", "cpu"),
        memory=fields.quantity_text(section, "memory", "memory"),
        labels=fields.labels(section, "labels"),
        priority=priority,
        node_selector=fields.labels(section, "nodeSelector"),
        tolerations=fields.raw_objects(section, "tolerations"),
        affinity=fields.raw_object(section, "affinity"),
        topology_spread_constraints=fields.raw_objects(section, "topologySpreadConstraints"),
        patch=fields.raw_object(section, "patch"),
        bound_volumes=_volume_fields.bound_volumes(section),
        claim_templates=_volume_fields.claim_templates(section),
    )


def read_gang_group(problems: Problems, raw: Any, path: str, index: int) -> GangGroup:
    """Read one gang group (``measuredGangs[index]``)."""
    section = fields.strict_section(problems, raw, path, GANG_FIELDS)
    count = fields.count(section)
    prefix = section.string("namePrefix", f"gang-{index}")
    if not objects.is_dns_label(prefix):
        problems.add(section.at("namePrefix"), f"must be a DNS label prefix, got {prefix!r}")
    ns = section.string("namespace", DEFAULT_NAMESPACES["measuredPods"])
    if not objects.is_dns_label(ns):
        problems.add(section.at("namespace"), f"must be a DNS label, got {ns!r}")
    members = tuple(
        read_pod_group(problems, member, member_path, namespace=ns, member=True)
        for member_path, member in section.items("members")
    )
    members_path = section.at("members")
    if not members and not any(e.path.startswith(members_path) for e in problems.errors):
        problems.add(members_path, "required: at least one kind of member pod")
    size = sum(m.count for m in members)
    min_member = section.optional_integer("minMember")
    if min_member is None:
        min_member = size
    elif not 1 <= min_member <= max(size, 1):
        problems.add(
            section.at("minMember"),
            f"must be an integer in 1..{size} (the gang's member pods), got {min_member}",
        )
    timeout = section.optional_integer("scheduleTimeoutSeconds")
    if timeout is not None and timeout < 1:
        problems.add(section.at("scheduleTimeoutSeconds"), f"must be >= 1, got {timeout}")
    return GangGroup(
        count=count,
        name_prefix=prefix,
        namespace=ns,
        min_member=max(min_member, 1),
        min_resources=_min_resources(section),
        schedule_timeout_seconds=timeout,
        interleave=section.boolean("interleave", default=False),
        members=members,
    )


def _min_resources(section: Section) -> dict[str, str]:
    """``minResources``: resource name -> quantity, each checked with that resource's units."""
    value = section.get("minResources")
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        section.problems.add(
            section.at("minResources"), f"must be an object, got {describe(value)}"
        )
        return {}
    inner = Section(section.problems, value, section.at("minResources"), [str(k) for k in value])
    out: dict[str, str] = {}
    for resource in value:
        if not isinstance(resource, str) or not is_qualified_name(resource):
            section.problems.add(inner.at(str(resource)), "not a valid resource name")
            continue
        text = fields.quantity_text(inner, resource, resource)
        if text is not None:
            out[resource] = text
    return out


def _churn(problems: Problems, raw: Any, path: str) -> Churn | None:
    if raw is None:
        return None
    section = fields.strict_section(problems, raw, path, CHURN_FIELDS)
    mode = section.string("mode", "create")
    if mode not in ("create", "recreate"):
        problems.add(section.at("mode"), f"must be create or recreate, got {mode!r}")
        mode = "create"
    interval_ms = section.optional_integer("intervalMilliseconds")
    if interval_ms is None:
        if not section.has("intervalMilliseconds"):
            problems.add(section.at("intervalMilliseconds"), "required")
        interval_ms = 1000
    elif interval_ms < 10:
        problems.add(section.at("intervalMilliseconds"), f"must be >= 10, got {interval_ms}")
    number = section.integer("number", 1)
    if number < 1:
        problems.add(section.at("number"), f"must be >= 1, got {number}")
    churned: list[ChurnObject] = []
    for obj_path, obj_raw in section.items("objects"):
        kind = obj_raw.get("kind") if isinstance(obj_raw, Mapping) else None
        if kind not in CHURN_KINDS:
            problems.add(
                f"{obj_path}.kind", f"must be one of {', '.join(CHURN_KINDS)}; got {kind!r}"
            )
            continue
        rest = {k: v for k, v in obj_raw.items() if k != "kind"}
        if kind == "Node":
            churned.append(
                ChurnObject(
                    kind=kind, node=read_node_group(problems, rest, obj_path, counted=False)
                )
            )
        elif kind == "Pod":
            pod = read_pod_group(
                problems, rest, obj_path, namespace=DEFAULT_NAMESPACES["churn"], counted=False
            )
            churned.append(ChurnObject(kind=kind, pod=pod))
        else:
            fields.strict_section(problems, rest, obj_path, ())
            churned.append(ChurnObject(kind=kind))
    if not churned and section.get("objects") is None:
        problems.add(section.at("objects"), "required: at least one object to churn")
    chosen: ChurnMode = "recreate" if mode == "recreate" else "create"
    return Churn(
        mode=chosen,
        interval=max(interval_ms, 10) / 1000.0,
        number=max(number, 1),
        objects=tuple(churned),
    )


def load_workload(data: Any, *, source: str = "") -> Workload:
    """Validate a parsed workload document and return it.

    Raises
    ------
    WorkloadError
        Listing every problem, each with its field path.
    """
    problems = Problems()
    top = fields.strict_section(problems, data, "", TOP_FIELDS)
    fmt = top.get("format")
    if fmt != FORMAT:
        problems.add(
            "format", f"must be {FORMAT!r}, got {describe(fmt) if fmt is not None else 'nothing'}"
        )
    name = top.string("name")
    if not name:
        problems.add("name", "required")
    timeout = _positive_seconds(problems, top, "timeoutSeconds")
    nodes = tuple(read_node_group(problems, raw, path) for path, raw in top.items("nodes"))
    groups, gangs = _measured(problems, top)
    profile = top.string("schedulerProfile", "default")
    if profile not in SCHEDULER_PROFILES:
        problems.add(
            "schedulerProfile",
            f"must be one of {', '.join(SCHEDULER_PROFILES)}; got {profile!r}",
        )
    settle = _positive_seconds(problems, top, "settleSeconds")
    churn = _churn(problems, top.get("churn"), "churn")
    classes = _volume_fields.storage_classes(top)
    _check_names(problems, nodes, churn)
    _volume_fields.check_classes(problems, classes, nodes, groups)
    _check_gang_names(problems, gangs)
    if problems.errors:
        raise WorkloadError(problems.errors, source)
    return Workload(
        name=name,
        description=top.string("description"),
        upstream=top.string("upstream"),
        timeout=timeout,
        nodes=nodes,
        init_pods=groups["initPods"],
        measured_pods=groups["measuredPods"],
        measured_gangs=gangs,
        scheduler_profile="coscheduling" if profile == "coscheduling" else "default",
        settle=settle,
        churn=churn,
        storage_classes=classes,
        source=source,
    )


def _positive_seconds(problems: Problems, top: Section, key: str) -> float | None:
    """An optional number of seconds > 0 (None: not given, or invalid and reported)."""
    value = top.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        problems.add(key, f"must be a positive number, got {describe(value)}")
        return None
    return float(value)


def _measured(
    problems: Problems, top: Section
) -> tuple[dict[str, tuple[PodGroup, ...]], tuple[GangGroup, ...]]:
    """``initPods`` and ``measuredPods`` (by key), and ``measuredGangs``: some measured
    pods or gangs are required."""
    groups: dict[str, tuple[PodGroup, ...]] = {}
    for key in ("initPods", "measuredPods"):
        groups[key] = tuple(
            read_pod_group(problems, raw, path, namespace=DEFAULT_NAMESPACES[key])
            for path, raw in top.items(key)
        )
    gangs = tuple(
        read_gang_group(problems, raw, path, index)
        for index, (path, raw) in enumerate(top.items("measuredGangs"))
    )
    if (
        not groups["measuredPods"]
        and not gangs
        and not any(e.path.startswith(("measuredPods", "measuredGangs")) for e in problems.errors)
    ):
        problems.add("measuredPods", "required: at least one group of measured pods or gangs")
    return groups, gangs


def _check_names(problems: Problems, nodes: tuple[NodeGroup, ...], churn: Churn | None) -> None:
    """Node groups need distinct name prefixes, or their nodes would collide."""
    seen: dict[str, int] = {}
    for index, group in enumerate(nodes):
        if group.name_prefix in seen:
            problems.add(
                f"nodes[{index}].namePrefix",
                f"{group.name_prefix!r} is already used by nodes[{seen[group.name_prefix]}]",
            )
        seen.setdefault(group.name_prefix, index)
    if churn is not None:
        for index, obj in enumerate(churn.objects):
            if obj.node is not None and obj.node.name_prefix in seen:
                problems.add(
                    f"churn.objects[{index}].namePrefix",
                    f"{obj.node.name_prefix!r} is already used by a node group",
                )


def _check_gang_names(problems: Problems, gangs: tuple[GangGroup, ...]) -> None:
    """Gang groups in one namespace need distinct name prefixes (PodGroups and pods)."""
    seen: dict[tuple[str, str], int] = {}
    for index, group in enumerate(gangs):
        key = (group.namespace, group.name_prefix)
        if key in seen:
            problems.add(
                f"measuredGangs[{index}].namePrefix",
                f"{group.name_prefix!r} is already used by measuredGangs[{seen[key]}] "
                f"in namespace {group.namespace}",
            )
        seen.setdefault(key, index)
