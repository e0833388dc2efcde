"""The Kubernetes JSON asched reads and writes, as TypedDicts (types only, no runtime cost).

These describe the raw objects as the API server serves them: every field is optional
(``total=False``), as Kubernetes JSON omits empty fields, and only the fields asched reads
or writes are listed (a TypedDict names the keys it knows; the JSON may hold more). They
promise nothing about the values: an object is checked where it is decoded
(:mod:`asched.cluster.decode`), which still treats every field as untrusted, and a
decoder's parameter typed :class:`PodJSON` says which shape it expects, not that it was
validated. Deep parts that only a decoder walks (affinity terms, spread constraints,
label selectors) stay ``Mapping[str, Any]``.

Each type is named after its Kubernetes type with ``JSON`` appended (``PodJSON``,
``TolerationJSON``), so that a wire shape never reads as one of the decoded records of
:mod:`asched.cluster.records` (``PodInfo``, ``Toleration``).

Nothing here is instantiated or checked at run time: a TypedDict is a plain ``dict``, so
annotating the watch's objects costs nothing.

This module sits in :mod:`asched.api`, the lowest layer that holds JSON (below
``asched.cluster``, which decodes it), and imports nothing from asched, so every layer
and the simulator may use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

#: The ``type`` of a watch event, as the API server sends it.
EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]

#: The watch event types that change an object, the only ones the reflector delivers
#: (a BOOKMARK only advances the resourceVersion; an ERROR is raised by the client).
ChangeType = Literal["ADDED", "MODIFIED", "DELETED"]


class OwnerReferenceJSON(TypedDict, total=False):
    """``metadata.ownerReferences[]``."""

    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool


class ObjectMetaJSON(TypedDict, total=False):
    """``metadata`` of any object (timestamps are RFC 3339 strings)."""

    name: str
    generateName: str
    namespace: str
    uid: str
    resourceVersion: str
    labels: dict[str, str]
    annotations: dict[str, str]
    creationTimestamp: str
    deletionTimestamp: str | None
    ownerReferences: list[OwnerReferenceJSON]


#: ``metadata`` of a List: the version to watch from, and the next page's token
#: (functional syntax: ``continue`` is a Python keyword).
ListMetaJSON = TypedDict(
    "ListMetaJSON",
    {"resourceVersion": str, "continue": str, "remainingItemCount": int},
    total=False,
)


class KubeObject(TypedDict, total=False):
    """Any object: what the watch and the lists deliver before its kind is known."""

    apiVersion: str
    kind: str
    metadata: ObjectMetaJSON


class ResourceRequirementsJSON(TypedDict, total=False):
    """``resources`` of a container: quantity strings by resource name."""

    requests: dict[str, str]
    limits: dict[str, str]


class ContainerPortJSON(TypedDict, total=False):
    """``ports[]`` of a container."""

    containerPort: int
    hostPort: int
    hostIP: str
    protocol: str


class ContainerJSON(TypedDict, total=False):
    """``spec.containers[]`` and ``spec.initContainers[]``."""

    name: str
    image: str
    resources: ResourceRequirementsJSON
    ports: list[ContainerPortJSON]
    #: ``Always`` on an init container makes it a sidecar (restartable)
    restartPolicy: str


class TolerationJSON(TypedDict, total=False):
    """``spec.tolerations[]``."""

    key: str
    operator: str
    value: str
    effect: str
    tolerationSeconds: int


class AffinityJSON(TypedDict, total=False):
    """``spec.affinity``; the terms are walked by their decoders."""

    nodeAffinity: Mapping[str, Any]
    podAffinity: Mapping[str, Any]
    podAntiAffinity: Mapping[str, Any]


class PodSchedulingGateJSON(TypedDict, total=False):
    """``spec.schedulingGates[]``."""

    name: str


class VolumeJSON(TypedDict, total=False):
    """``spec.volumes[]``: only what makes a volume a claim."""

    name: str
    persistentVolumeClaim: Mapping[str, Any]
    ephemeral: Mapping[str, Any]


class PodSpecJSON(TypedDict, total=False):
    """``spec`` of a Pod."""

    nodeName: str
    schedulerName: str
    priority: int
    preemptionPolicy: str
    hostNetwork: bool
    containers: list[ContainerJSON]
    initContainers: list[ContainerJSON]
    overhead: dict[str, str]
    tolerations: list[TolerationJSON]
    nodeSelector: dict[str, str]
    affinity: AffinityJSON
    topologySpreadConstraints: list[Mapping[str, Any]]
    schedulingGates: list[PodSchedulingGateJSON]
    volumes: list[VolumeJSON]


class PodConditionJSON(TypedDict, total=False):
    """``status.conditions[]`` (PodScheduled, DisruptionTarget); times are RFC 3339."""

    type: str
    status: str
    reason: str
    message: str
    lastProbeTime: str | None
    lastTransitionTime: str


class PodStatusJSON(TypedDict, total=False):
    """``status`` of a Pod (and the body of a status patch: None removes a field)."""

    phase: str
    nominatedNodeName: str | None
    conditions: list[PodConditionJSON]


class PodStatusPatchJSON(TypedDict):
    """The body of a strategic-merge patch of ``.../pods/{name}/status``."""

    status: PodStatusJSON


class PodJSON(TypedDict, total=False):
    """A Pod."""

    apiVersion: str
    kind: str
    metadata: ObjectMetaJSON
    spec: PodSpecJSON
    status: PodStatusJSON


class TaintJSON(TypedDict, total=False):
    """``spec.taints[]`` of a Node."""

    key: str
    value: str
    effect: str


class NodeSpecJSON(TypedDict, total=False):
    """``spec`` of a Node."""

    unschedulable: bool
    taints: list[TaintJSON]


class ContainerImageJSON(TypedDict, total=False):
    """``status.images[]`` of a Node."""

    names: list[str]
    sizeBytes: int


class NodeStatusJSON(TypedDict, total=False):
    """``status`` of a Node: quantity strings by resource name (allocatable defaults to
    capacity)."""

    capacity: dict[str, str]
    allocatable: dict[str, str]
    images: list[ContainerImageJSON]


class NodeJSON(TypedDict, total=False):
    """A Node."""

    apiVersion: str
    kind: str
    metadata: ObjectMetaJSON
    spec: NodeSpecJSON
    status: NodeStatusJSON


class ObjectReferenceJSON(TypedDict, total=False):
    """A reference to an object (a Binding's target, an Event's ``regarding``)."""

    apiVersion: str
    kind: str
    name: str
    namespace: str
    uid: str


class BindingJSON(TypedDict):
    """The body of ``POST .../pods/{name}/binding``."""

    apiVersion: str
    kind: str
    metadata: ObjectMetaJSON
    target: ObjectReferenceJSON


class EventSeriesJSON(TypedDict, total=False):
    """``series`` of an events.k8s.io/v1 Event (``lastObservedTime`` is a MicroTime)."""

    count: int
    lastObservedTime: str


class EventJSON(TypedDict, total=False):
    """An events.k8s.io/v1 Event (``eventTime`` is a MicroTime)."""

    apiVersion: str
    kind: str
    metadata: ObjectMetaJSON
    eventTime: str
    series: EventSeriesJSON
    reportingController: str
    reportingInstance: str
    action: str
    reason: str
    regarding: ObjectReferenceJSON
    note: str
    type: str


class ObjectListJSON(TypedDict, total=False):
    """A List (one page of a paginated LIST)."""

    apiVersion: str
    kind: str
    metadata: ListMetaJSON
    items: list[KubeObject]


class WatchEventJSON(TypedDict):
    """One line of a watch stream (``object`` is a Status for ERROR, the object
    carrying only its resourceVersion for BOOKMARK)."""

    type: EventType
    object: KubeObject
