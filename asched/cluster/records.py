"""Compact, immutable records of what the scheduler reads from Pods and Nodes.

They are decoded once from raw Kubernetes JSON (:mod:`asched.cluster.decode`) and hold
quantities already in canonical integer units. No kubernetes-asyncio model appears here.
The scalar matching helpers (``tolerates``, ``Requirement.matches``) are the reference
semantics (upstream's ``ToleratesTaint`` and ``Requirement.Matches``); the vectorised
plugins reproduce them over whole columns.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from asched.cluster.affinity import PodAffinity
    from asched.cluster.names import PodKey
    from asched.cluster.volumes import PodVolume

NO_SCHEDULE: Final = "NoSchedule"
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
NO_EXECUTE: Final = "NoExecute"
TAINT_EFFECTS: Final = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)
#: Pod phases of a pod that has finished: it holds nothing on its node (kube-scheduler's
#: informer leaves such pods out: ``status.phase!=Succeeded,status.phase!=Failed``).
TERMINAL_PHASES: Final = frozenset({"Succeeded", "Failed"})


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint."""

    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration; ``operator`` is ``Equal`` or ``Exists`` (empty means Equal)."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """Effect, key and operator all match (upstream:
        staging/src/k8s.io/api/core/v1/toleration.go, ToleratesTaint)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


def tolerates(tolerations: tuple[Toleration, ...], taint: Taint) -> bool:
    """True when any toleration tolerates ``taint``."""
    return any(t.tolerates(taint) for t in tolerations)


@dataclass(frozen=True, slots=True)
class Requirement:
    """A node selector requirement (``key operator values``)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Node-selector operator semantics against one node's labels (upstream:
        staging/src/k8s.io/apimachinery/pkg/labels/selector.go, Requirement.Matches)."""
        present = self.key in labels
        op = self.operator
        if op == "In":
            return present and labels[self.key] in self.values
        if op == "NotIn":
            return not present or labels[self.key] not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if op in ("Gt", "Lt"):
            if not present or len(self.values) != 1:
                return False
            mine, theirs = parse_int64(labels[self.key]), parse_int64(self.values[0])
            if mine is None or theirs is None:
                return False
            return mine > theirs if op == "Gt" else mine < theirs
        return False


def parse_int64(text: str) -> int | None:
    """Parse a base-10 int64 the way Go's ``strconv.ParseInt(s, 10, 64)`` does, else None."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    number = int(text)
    return number if -(2**63) <= number < 2**63 else None


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """ANDed expressions (on labels) and fields (``metadata.name`` only)."""

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()
    invalid: bool = False  # a key or value upstream's selector parser rejects: matches nothing

    @property
    def empty(self) -> bool:
        """A term with neither expressions nor fields matches nothing."""
        return not self.match_expressions and not self.match_fields

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        """True when every expression and every field requirement holds."""
        if self.empty or self.invalid:
            return False
        fields = {"metadata.name": name}
        return all(r.matches(labels) for r in self.match_expressions) and all(
            r.matches(fields) for r in self.match_fields
        )


@dataclass(frozen=True, slots=True)
class PreferredTerm:
    """A weighted preferred node selector term."""

    weight: int
    term: NodeSelectorTerm


@dataclass(frozen=True, slots=True)
class NodeAffinity:
    """``required`` is None when unset; an empty tuple means "no usable term"."""

    required: tuple[NodeSelectorTerm, ...] | None = None
    preferred: tuple[PreferredTerm, ...] = ()

    def required_matches(self, name: str, labels: Mapping[str, str]) -> bool:
        """OR over terms; no usable term matches nothing."""
        if self.required is None:
            return True
        return any(term.matches(name, labels) for term in self.required)


@dataclass(frozen=True, slots=True)
class HostPort:
    """A host port a container asks for; empty ip is 0.0.0.0, empty protocol is TCP."""

    ip: str
    protocol: str
    port: int


@dataclass(frozen=True, slots=True)
class ImageState:
    """An image a node reports, under all of its names, with its size in bytes."""

    names: tuple[str, ...]
    size: int


@dataclass(frozen=True, slots=True)
class OwnerReference:
    """One of a pod's ``metadata.ownerReferences``: the object that owns it (a
    ReplicaSet, a StatefulSet, a Job...); ``controller`` is True for its managing
    controller (at most one reference has it)."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = False


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """What the scheduler reads of a Node. Quantities in canonical units.

    ``annotations`` holds ``metadata.annotations`` only when an enabled plugin declares
    that it reads them (``declare(..., reads_annotations=True)``); it is empty otherwise.
    """

    name: str
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: Mapping[str, int] = field(default_factory=dict)
    images: tuple[ImageState, ...] = ()
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PodInfo:
    """What the scheduler reads of a Pod. Quantities in canonical units.

    ``requests`` is the pod's effective request per resource
    (:mod:`asched.cluster.requests`, overhead included, zero entries omitted);
    ``nonzero_cpu``/``nonzero_memory`` are the scoring requests with the 100m / 200Mi
    defaults. ``annotations`` holds ``metadata.annotations`` only when an enabled plugin
    declares that it reads them (``declare(..., reads_annotations=True)``; they may be
    large, such as kubectl's last-applied-configuration); it is empty otherwise.
    ``owner_references`` are always decoded.
    """

    namespace: str
    name: str
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    scheduler_name: str = "default-scheduler"
    node_name: str = ""
    priority: int = 0
    preemption_policy: str = "PreemptLowerPriority"
    deleting: bool = False
    nominated_node_name: str = ""
    phase: str = ""
    requests: Mapping[str, int] = field(default_factory=dict)
    nonzero_cpu: int = 0
    nonzero_memory: int = 0
    host_ports: tuple[HostPort, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    node_affinity: NodeAffinity | None = None
    images: tuple[str, ...] = ()
    pvc_names: tuple[str, ...] = ()
    has_restartable_init: bool = False
    pod_affinity: Mapping[str, Any] | None = None
    pod_anti_affinity: Mapping[str, Any] | None = None
    topology_spread_constraints: tuple[Mapping[str, Any], ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    affinity: PodAffinity | None = None
    creation_timestamp: str = ""
    #: being deleted because a scheduler preempted it (condition DisruptionTarget=True,
    #: reason PreemptionByScheduler)
    preempted: bool = False
    #: why the pod's requests are beyond what asched schedules, naming the field ("" when
    #: they are in range; the amounts above are then clamped; see asched.cluster.bounds)
    out_of_range: str = ""
    #: ``(status, reason, message)`` of the PodScheduled condition; None when it has none
    scheduled_condition: tuple[str, str, str] | None = None
    #: the key of the gang the pod belongs to: ``namespace/podgroup`` (its
    #: ``scheduling.x-k8s.io/pod-group`` label) or ``namespace/workload/podGroup`` (its
    #: ``spec.workloadRef``); "" when none (:mod:`asched.cluster.gangs`)
    gang: str = ""
    #: ``spec.volumes`` as the volume plugins read them (:mod:`asched.cluster.volumes`)
    volumes: tuple[PodVolume, ...] = ()
    #: ``metadata.annotations`` when a plugin reads them, else empty (see above)
    annotations: Mapping[str, str] = field(default_factory=dict)
    #: ``metadata.ownerReferences``, in order
    owner_references: tuple[OwnerReference, ...] = ()

    if TYPE_CHECKING:

        @property
        def key(self) -> PodKey:
            """``namespace/name``, the pod's identity in messages and maps."""

    else:

        @property
        def key(self) -> str:
            """``namespace/name``, the pod's identity in messages and maps.

            A :data:`~asched.cluster.names.PodKey` to the type checker (the declaration
            above), a bare f-string at run time: it is read dozens of times per scheduled
            pod, and ``PodKey(...)`` would add a call to every read.
            """
            return f"{self.namespace}/{self.name}"


_POD_FIELDS: Final = tuple(f.name for f in fields(PodInfo))
_pod_values: Final = operator.attrgetter(*_POD_FIELDS)


def bound_to(pod: PodInfo, node: str) -> PodInfo:
    """``pod`` with ``node_name`` set: ``dataclasses.replace``'s answer in half its time (it
    runs once per assumed pod: every field copied as it is, no ``__init__``). Not a method:
    PodInfo's methods are part of the plugin API (``asched.plugin``)."""
    clone = object.__new__(PodInfo)
    # (PodInfo's __init__ only stores its fields: frozen, no __post_init__; not strict:
    # both sides come from _POD_FIELDS, and strict=True costs 40 % more here)
    for name, value in zip(_POD_FIELDS, _pod_values(pod), strict=False):
        object.__setattr__(clone, name, value)
    object.__setattr__(clone, "node_name", node)
    return clone
