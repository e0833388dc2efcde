"""What a benchmark workload is: its node groups, init and measured pods, measured gangs,
churn and storage, as validated values.

Two formats give one. The home-grown ``asched.bench/v1`` documents of ``docs/workloads.md``
are validated by :mod:`asched.tools.bench.workload_format`; upstream's scheduler_perf
workloads are translated by :mod:`asched.tools.bench.perf_translate`;
:mod:`asched.tools.bench.workload_files` loads a file of either. Everything past them
trusts the :class:`Workload`. This module imports none of them, so all of them can build
on its types.

Gangs are groups of measured pods placed all together or not at all: each gang is a
PodGroup (scheduler-plugins' ``scheduling.x-k8s.io/v1alpha1``) plus its member pods,
labelled ``scheduling.x-k8s.io/pod-group: <name>``. Note the two meanings of "group":
:class:`PodGroup` here is a workload's group of identically shaped pods, whereas a
Kubernetes PodGroup is one gang (:class:`GangGroup` describes ``count`` of them).

Storage (:mod:`asched.tools.bench.volume_spec`): node groups may have a CSINode and local
PVs per node, pod groups a pre-bound claim and PV per pod or unbound claims per pod, the
workload StorageClasses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from asched.tools.bench.volume_spec import (
    BoundVolumes,
    ClaimTemplate,
    CSINodeSpec,
    LocalVolumes,
    StorageClassSpec,
)

ChurnMode = Literal["create", "recreate"]
SchedulerProfile = Literal["default", "coscheduling"]


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
