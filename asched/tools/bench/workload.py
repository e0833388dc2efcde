"""Workload files (shipped in ``asched/tools/bench/workloads/``): loading either format, and the
home-grown ``asched.bench/v1`` format of ``docs/workloads.md``, validated.

Upstream's scheduler_perf format is the native one: a file holding a YAML list of test
cases (``performance-config.yaml``) is read by :mod:`asched.tools.bench.perf_config` and
its one workload (or the one ``--workload TestCase/Workload`` names) translated by
:mod:`asched.tools.bench.perf_translate` (:func:`load_workload_file`). Most shipped
workloads are such files. The home-grown format below is the bridge for what upstream's
format cannot express (gangs, StatefulSet claims over local PVs, two measured pod shapes
in one phase); a file holding a mapping is read as one::

    format: asched.bench/v1
    name: SchedulingBasic/5000Nodes_10000Pods
    nodes:        [{count: 5000, template: node-default}]
    initPods:     [{count: 1000, template: pod-default}]
    measuredPods: [{count: 10000, template: pod-default}]
    churn:        {mode: create, intervalMilliseconds: 200, objects: [{kind: Pod, ...}]}

Gangs (``measuredGangs``) are groups of measured pods placed all together or not at all:
each gang is a PodGroup (scheduler-plugins' ``scheduling.x-k8s.io/v1alpha1``) plus its
member pods, labelled ``scheduling.x-k8s.io/pod-group: <name>``. Note the two meanings of
"group": :class:`PodGroup` here is a workload's group of identically shaped pods, whereas
a Kubernetes PodGroup is one gang (:class:`GangGroup` describes ``count`` of them).

Storage (:mod:`asched.tools.bench.volume_spec`): node groups may have a CSINode
(``csiNode``) and local PVs (``localVolumes``) per node, pod groups a pre-bound claim and
PV per pod (``boundVolumes``) or unbound claims per pod (``volumeClaimTemplates``), the
workload ``storageClasses``; :mod:`asched.tools.bench._volume_fields` reads them.

This module is the validation boundary: :func:`load_workload` reads the whole document,
collects every problem with its field path (``measuredPods[0].count: must be an integer
>= 1, got 0``) and raises one :class:`WorkloadError`; everything past it trusts the
:class:`Workload`. Quantities are checked with the cluster model's parser, templates and
kinds against the built-in lists in :mod:`asched.tools.bench.objects`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal

from asched import textfile
from asched.config.schema import Problems, Section, describe, is_qualified_name
from asched.errors import FieldError, InputError
from asched.tools.bench import _volume_fields, _workload_fields as fields, objects
from asched.tools.bench.volume_spec import (
    BoundVolumes,
    ClaimTemplate,
    CSINodeSpec,
    LocalVolumes,
    StorageClassSpec,
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

ChurnMode = Literal["create", "recreate"]
SchedulerProfile = Literal["default", "coscheduling"]


class WorkloadError(InputError):
    """A workload document with one or more field errors, all reported at once."""

    def __init__(self, errors: list[FieldError], source: str = "") -> None:
        self.errors = list(errors)
        self.source = source
        where = f"{source}: " if source else ""
        lines = "\n".join(f"  {err}" for err in self.errors)
        super().__init__(f"{where}invalid workload:\n{lines}")


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeGroup:
    """``count`` nodes of one shape; quantities as written (validated), labels merged.

    ``spread_labels`` gives node ``i`` of the group the value ``values[i % len(values)]``
    of each key (zones, racks). ``patch`` is a JSON merge patch (RFC 7386) applied last.
    """

    count: int
    template: str = "node-default"
    name_prefix: str = "node"
    cpu: str | None = None
    memory: str | None = None
    pods: int | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    spread_labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    taints: tuple[Mapping[str, str], ...] = ()
    unschedulable: bool = False
    patch: Mapping[str, Any] | None = None
    #: a Node object read from a scheduler_perf template file: when set, it replaces
    #: ``template`` and the shorthand fields (:func:`asched.tools.bench.objects.node`)
    base: Mapping[str, Any] | None = None
    #: a label key whose value is the node's own name (scheduler_perf's
    #: ``uniqueNodeLabelStrategy``)
    unique_label: str | None = None
    #: label each node ``kubernetes.io/hostname: <its name>``, as scheduler_perf's node
    #: preparer does for createNodes (its churn creates nodes without it)
    hostname_label: bool = False
    #: a CSINode per node (drivers' attachable counts, migrated plugins)
    csi_node: CSINodeSpec | None = None
    #: local PVs per node, pinned to it by node affinity
    local_volumes: LocalVolumes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PodGroup:
    """``count`` pods of one shape in ``namespace``.

    ``priority`` becomes a PriorityClass ``bench-priority-<value>`` that the runner
    creates (the Priority admission plugin rejects a bare ``spec.priority``).
    ``affinity`` and ``topology_spread_constraints`` are raw Kubernetes JSON, copied into
    the pod spec; ``patch`` is a JSON merge patch applied to the whole pod last.
    """

    count: int
    template: str = "pod-default"
    namespace: str = "bench-measured"
    cpu: str | None = None
    memory: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    priority: int | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    affinity: Mapping[str, Any] | None = None
    topology_spread_constraints: tuple[Mapping[str, Any], ...] = ()
    patch: Mapping[str, Any] | None = None
    #: a Pod object read from a scheduler_perf template file: when set, it replaces
    #: ``template`` (:func:`asched.tools.bench.objects.pod`)
    base: Mapping[str, Any] | None = None
    #: a PV and a claim per pod, bound to each other before the pod is created
    bound_volumes: BoundVolumes | None = None
    #: unbound claims per pod, ``<name>-<pod>`` (a StatefulSet's volumeClaimTemplates)
    claim_templates: tuple[ClaimTemplate, ...] = ()

    @property
    def has_claims(self) -> bool:
        """The pods use claims the load generator creates with them."""
        return self.bound_volumes is not None or bool(self.claim_templates)


@dataclass(frozen=True, slots=True, kw_only=True)
class GangGroup:
    """``count`` gangs of one shape, each a Kubernetes PodGroup and its member pods.

    Gang ``i`` is the PodGroup ``<name_prefix>-<i>`` in ``namespace`` with ``min_member``
    and, when given, ``min_resources`` (quantities as written) and
    ``schedule_timeout_seconds``. Its members are ``members`` (each a :class:`PodGroup`
    whose ``count`` is the number of such members per gang: a launcher and workers are two
    entries), created in ``namespace`` with the pod-group label. ``interleave`` creates the
    members round-robin across this group's gangs (member 0 of every gang, then member 1,
    ...) instead of gang after gang.
    """

    count: int
    name_prefix: str
    namespace: str = "bench-measured"
    min_member: int
    min_resources: Mapping[str, str] = field(default_factory=dict)
    schedule_timeout_seconds: int | None = None
    interleave: bool = False
    members: tuple[PodGroup, ...] = ()

    @property
    def size(self) -> int:
        """Member pods per gang."""
        return sum(member.count for member in self.members)

    @property
    def n_pods(self) -> int:
        """Member pods of every gang of the group."""
        return self.count * self.size

    def gang_name(self, index: int) -> str:
        """The PodGroup name of gang ``index``."""
        return f"{self.name_prefix}-{index}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChurnObject:
    """One kind of object churned: a Node (``node``), a Pod (``pod``) or a Service."""

    kind: str
    node: NodeGroup | None = None
    pod: PodGroup | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Churn:
    """Objects created (``create``) or deleted and recreated (``recreate``) while measuring.

    Every ``interval`` seconds, each object kind: ``create`` makes one more;
    ``recreate`` deletes the one made ``number`` ticks ago (once there are that many)
    and makes a new one, so ``number`` of each exist at any time (scheduler_perf's
    ``churn`` op).
    """

    mode: ChurnMode
    interval: float
    number: int = 1
    objects: tuple[ChurnObject, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """A validated workload. ``source`` is the file it came from ("" when built in code)."""

    name: str
    description: str = ""
    upstream: str = ""
    timeout: float | None = None
    nodes: tuple[NodeGroup, ...] = ()
    init_pods: tuple[PodGroup, ...] = ()
    measured_pods: tuple[PodGroup, ...] = ()
    measured_gangs: tuple[GangGroup, ...] = ()
    scheduler_profile: SchedulerProfile = "default"
    #: seconds without a measured bind, once every measured pod exists, that end the
    #: measured phase without failing it (None: the phase waits for every measured pod)
    settle: float | None = None
    churn: Churn | None = None
    #: StorageClasses created before the nodes
    storage_classes: tuple[StorageClassSpec, ...] = ()
    source: str = ""

    @property
    def n_nodes(self) -> int:
        """Nodes created before measuring."""
        return sum(group.count for group in self.nodes)

    @property
    def n_init(self) -> int:
        """Pods scheduled before measuring."""
        return sum(group.count for group in self.init_pods)

    @property
    def n_measured(self) -> int:
        """Pods whose scheduling is measured (gang members included)."""
        return sum(group.count for group in self.measured_pods) + self.n_gang_pods

    @property
    def n_gangs(self) -> int:
        """Measured gangs (PodGroups)."""
        return sum(group.count for group in self.measured_gangs)

    @property
    def n_gang_pods(self) -> int:
        """Member pods of the measured gangs."""
        return sum(group.n_pods for group in self.measured_gangs)

    def measured_shape(self) -> PodGroup:
        """The first measured pod shape (the bind ceiling's pods have it)."""
        if self.measured_pods:
            return self.measured_pods[0]
        return self.measured_gangs[0].members[0]

    @property
    def needs_pv_controller(self) -> bool:
        """Some pods have unbound claims: a PV controller must complete their bindings."""
        return any(group.claim_templates for group in self._pod_groups())

    def _pod_groups(self) -> list[PodGroup]:
        groups = [*self.init_pods, *self.measured_pods]
        groups += [member for gang in self.measured_gangs for member in gang.members]
        if self.churn is not None:
            groups += [o.pod for o in self.churn.objects if o.pod is not None]
        return groups

    def priorities(self) -> set[int]:
        """Every pod priority used (each needs its PriorityClass)."""
        return {g.priority for g in self._pod_groups() if g.priority is not None}

    def namespaces(self) -> list[str]:
        """Every namespace the pods go to, in first-use order."""
        return list(dict.fromkeys(g.namespace for g in self._pod_groups()))

    def to_json(self) -> dict[str, Any]:
        """The workload as recorded in ``--json`` output (sizes and where it came from)."""
        return {
            "name": self.name,
            "description": self.description,
            "upstream": self.upstream,
            "source": self.source,
            "nodes": self.n_nodes,
            "init_pods": self.n_init,
            "measured_pods": self.n_measured,
            "measured_gangs": self.n_gangs,
            "scheduler_profile": self.scheduler_profile,
            "settle_seconds": self.settle,
            "churn": None
            if self.churn is None
            else {
                "mode": self.churn.mode,
                "interval_seconds": self.churn.interval,
                "number": self.churn.number,
                "kinds": [o.kind for o in self.churn.objects],
            },
            "volumes": self.volumes_json(),
        }

    def volumes_json(self) -> dict[str, Any] | None:
        """The storage objects the workload creates, counted (None: none)."""
        groups = self._pod_groups()
        csi_nodes = sum(g.count for g in self.nodes if g.csi_node is not None)
        local = sum(g.count * g.local_volumes.count for g in self.nodes if g.local_volumes)
        bound = sum(g.count for g in groups if g.bound_volumes is not None)
        unbound = sum(g.count * len(g.claim_templates) for g in groups)
        if not (self.storage_classes or csi_nodes or local or bound or unbound):
            return None
        return {
            "storage_classes": [c.name for c in self.storage_classes],
            "csi_nodes": csi_nodes,
            "local_pvs": local,
            "prebound_pairs": bound,
            "unbound_claims": unbound,
        }


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
    timeout = top.get("timeoutSeconds")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        problems.add("timeoutSeconds", f"must be a positive number, got {describe(timeout)}")
        timeout = None
    nodes = tuple(read_node_group(problems, raw, path) for path, raw in top.items("nodes"))
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
    profile = top.string("schedulerProfile", "default")
    if profile not in SCHEDULER_PROFILES:
        problems.add(
            "schedulerProfile",
            f"must be one of {', '.join(SCHEDULER_PROFILES)}; got {profile!r}",
        )
    settle = top.get("settleSeconds")
    if settle is not None and (
        isinstance(settle, bool) or not isinstance(settle, int | float) or settle <= 0
    ):
        problems.add("settleSeconds", f"must be a positive number, got {describe(settle)}")
        settle = None
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
        timeout=float(timeout) if timeout is not None else None,
        nodes=nodes,
        init_pods=groups["initPods"],
        measured_pods=groups["measuredPods"],
        measured_gangs=gangs,
        scheduler_profile="coscheduling" if profile == "coscheduling" else "default",
        settle=float(settle) if settle is not None else None,
        churn=churn,
        storage_classes=classes,
        source=source,
    )


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


def load_workload_file(path: str | Path, *, perf_workload: str | None = None) -> Workload:
    """Read and validate a workload file, in either format (YAML or JSON).

    A list of test cases is upstream's scheduler_perf format: its one workload is run,
    or, when it has several, the one ``perf_workload`` (``TestCase/Workload``) names. A
    mapping is the home-grown ``asched.bench/v1`` format (:func:`load_workload`).
    ``source`` of the result is ``path`` either way.

    Raises
    ------
    InputError
        The file cannot be read or parsed; an upstream config with several workloads and
        no ``perf_workload``, or without that workload; an upstream workload asched
        cannot run (the message gives the reason); ``perf_workload`` for a home-grown
        file.
    WorkloadError
        A home-grown document with field errors.
    """
    name = str(path)
    data = textfile.parse_yaml(textfile.read_text(name, "the workload"), name)
    if isinstance(data, list):
        return _load_upstream(data, Path(path), perf_workload)
    if perf_workload is not None:
        raise InputError(
            f"{name}: --workload {perf_workload}: only an upstream scheduler_perf config "
            f"(a list of test cases) has workloads to choose from; this file is one {FORMAT} "
            "workload"
        )
    return load_workload(data, source=name)


def _load_upstream(data: list[Any], path: Path, perf_workload: str | None) -> Workload:
    """One workload of an upstream config document, translated (its folder resolves the
    template paths, as upstream's do)."""
    # perf_translate builds on this module's dataclasses: imported here, not at the top
    from asched.tools.bench import perf_config, perf_translate

    name = str(path)
    config = perf_config.load_config(data, source=name, folder=path.resolve().parent)
    if perf_workload is not None:
        case, chosen = config.find(perf_workload)
    else:
        every = config.all()
        if len(every) != 1:
            raise InputError(
                f"{name}: a scheduler_perf config with {len(every)} workloads; name one "
                "workload with --workload 'TestCase/Workload' (or run them all with "
                "`asched bench suite`)"
            )
        [(case, chosen)] = every
    try:
        translated = perf_translate.translate(case, chosen)
    except perf_translate.Unsupported as exc:
        full = perf_config.full_name(case, chosen)
        raise InputError(f"{name}: {full}: unsupported: {exc.reason}") from exc
    return replace(translated, source=name)


#: The workload files shipped inside the package (``bench/workloads`` links here).
SHIPPED: Final = Path(__file__).resolve().parent / "workloads"


def shipped_workloads(directory: Path = SHIPPED) -> list[str]:
    """The short names (file stems) of the workloads in ``directory``, sorted."""
    return sorted(p.stem for p in directory.glob("*.yaml")) if directory.is_dir() else []


def resolve(name_or_path: str, directory: Path | None = None) -> Path:
    """A workload argument as a file: a path, else a short name of a shipped workload.

    ``scheduling-basic-500n`` finds ``scheduling-basic-500n.yaml`` among the workloads
    shipped with the package, whatever the current directory. ``directory`` replaces the
    shipped ones (tests).

    Raises
    ------
    InputError
        Neither a file nor a shipped name; the message lists the shipped names.
    """
    candidate = Path(name_or_path)
    if candidate.is_file():
        return candidate
    folder = SHIPPED if directory is None else directory
    for option in (folder / name_or_path, folder / f"{name_or_path}.yaml"):
        if option.is_file():
            return option
    names = ", ".join(shipped_workloads(folder)) or f"none in {folder}"
    raise InputError(f"{name_or_path}: no such workload file or name (workloads: {names})")
