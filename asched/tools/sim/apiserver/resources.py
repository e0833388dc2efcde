"""The resources the simulated server serves: one declarative row per group/version/resource.

Everything resource-specific that is *data* lives here: kind, scope, short names, verbs,
subresources, the selectable field labels, the strategic-merge schema and a few
behaviour flags (does DELETE answer with the object, may PUT create, does the object
carry ``metadata.generation``). Behaviour that is *code* lives in :mod:`asched.tools.sim.apiserver.kinds`
and friends, keyed by the storage name.

Two views may share one storage (``events`` and ``events.k8s.io/v1 events``; ``policy/v1``
and ``policy/v1beta1`` PodDisruptionBudgets), as on a real server. Stored objects carry
no ``kind``/``apiVersion``: the view adds them when encoding (:attr:`ResourceSpec.prefix`),
so list items come out without them, exactly as the real server's lists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from asched.tools.sim.apiserver.hooks import Hooks
from asched.tools.sim.apiserver.patch import EMPTY, MergeList, Struct

JSON = dict[str, Any]
FieldGetter = Callable[[JSON], str]

ALL_VERBS: Final = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)


def _path(*keys: str) -> FieldGetter:
    def get(obj: JSON) -> str:
        node: Any = obj
        for key in keys:
            if not isinstance(node, dict):
                return ""
            node = node.get(key)
        if node is None:
            return ""
        if isinstance(node, bool):
            return "true" if node else "false"
        return str(node)

    return get


def _fields(*names: str, **aliases: tuple[str, ...]) -> Mapping[str, FieldGetter]:
    getters: dict[str, FieldGetter] = {
        "metadata.name": _path("metadata", "name"),
        "metadata.namespace": _path("metadata", "namespace"),
    }
    for name in names:
        getters[name] = _path(*name.split("."))
    for alias, keys in aliases.items():
        getters[alias.replace("__", ".")] = _path(*keys)
    return getters


@dataclass(frozen=True, slots=True)
class Subresource:
    """A subresource as discovery lists it (``pods/status``, ``pods/binding``)."""

    name: str
    kind: str
    verbs: tuple[str, ...]


@dataclass(frozen=True, slots=True, eq=False)
class ResourceSpec:
    """One served group/version/resource and the data that drives its generic code path.

    Compared and hashed by identity: there is exactly one spec object per view, and
    encoded watch lines are cached per view.
    """

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    storage: str
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[Subresource, ...] = ()
    fields: Mapping[str, FieldGetter] = field(default_factory=_fields)
    schema: Struct = EMPTY
    return_deleted: bool = False
    create_on_update: bool = False
    generation: bool = False
    #: whether PUT may omit metadata.resourceVersion (AllowUnconditionalUpdate).
    unconditional_update: bool = True
    prefix: bytes = b""
    #: a custom resource (served from a CustomResourceDefinition, see :mod:`asched.tools.sim.apiserver.crds`):
    #: list items carry kind/apiVersion, strategic merge patches are refused.
    custom: bool = False
    #: the hooks of this view when they are not the storage's (a custom resource's version).
    hooks: Hooks | None = None
    #: a custom resource's ``additionalPrinterColumns``, as the CRD gives them.
    printer_columns: tuple[JSON, ...] = ()

    @property
    def api_version(self) -> str:
        """``v1`` for the core group, ``group/version`` otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def has_status(self) -> bool:
        """Whether the resource has a ``/status`` subresource."""
        return any(sub.name == "status" for sub in self.subresources)

    @property
    def singular(self) -> str:
        """The lower-case kind, as ``singularName`` in discovery."""
        return self.kind.lower()


def _status(kind: str) -> Subresource:
    return Subresource("status", kind, ("get", "patch", "update"))


_META: Final = Struct({"ownerReferences": MergeList("uid"), "finalizers": MergeList(None)})
_CONTAINER: Final = Struct(
    {
        "ports": MergeList("containerPort"),
        "env": MergeList("name"),
        "volumeMounts": MergeList("mountPath"),
        "volumeDevices": MergeList("devicePath"),
    }
)
_POD_SPEC: Final = Struct(
    {
        "containers": MergeList("name", _CONTAINER),
        "initContainers": MergeList("name", _CONTAINER),
        "ephemeralContainers": MergeList("name", _CONTAINER),
        "volumes": MergeList("name"),
        "imagePullSecrets": MergeList("name"),
        "hostAliases": MergeList("ip"),
    }
)
_CONDITIONS: Final = Struct({"conditions": MergeList("type")})
_PLAIN: Final = Struct({"metadata": _META})
_TEMPLATED: Final = Struct(
    {
        "metadata": _META,
        "spec": Struct({"template": Struct({"metadata": _META, "spec": _POD_SPEC})}),
        "status": _CONDITIONS,
    }
)

_POD_FIELDS: Final = _fields(
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)
_EVENT_FIELDS: Final = _fields(
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "type",
    source=("source", "component"),
)
_NEW_EVENT_FIELDS: Final = {
    **_EVENT_FIELDS,
    **{
        f"regarding.{part}": _path("involvedObject", part)
        for part in (
            "kind",
            "namespace",
            "name",
            "uid",
            "apiVersion",
            "resourceVersion",
            "fieldPath",
        )
    },
    "reportingController": _path("reportingComponent"),
}


def make_spec(**kwargs: Any) -> ResourceSpec:
    spec = ResourceSpec(**kwargs)
    api_version = spec.api_version
    prefix = f'{{"kind":"{spec.kind}","apiVersion":"{api_version}",'.encode()
    return ResourceSpec(**{**kwargs, "prefix": prefix})


SPECS: Final[tuple[ResourceSpec, ...]] = (
    make_spec(
        group="",
        version="v1",
        resource="pods",
        kind="Pod",
        namespaced=True,
        storage="pods",
        short_names=("po",),
        categories=("all",),
        subresources=(_status("Pod"), Subresource("binding", "Binding", ("create",))),
        fields=_POD_FIELDS,
        schema=Struct(
            {
                "metadata": _META,
                "spec": _POD_SPEC,
                "status": Struct({"conditions": MergeList("type"), "podIPs": MergeList("ip")}),
            }
        ),
        return_deleted=True,
        generation=True,  # v1.35+ (PodObservedGenerationTracking): 1, then +1 per spec change
    ),
    make_spec(
        group="",
        version="v1",
        resource="nodes",
        kind="Node",
        namespaced=False,
        storage="nodes",
        short_names=("no",),
        subresources=(_status("Node"),),
        fields=_fields("spec.unschedulable"),
        schema=Struct(
            {
                "metadata": _META,
                "spec": Struct({"podCIDRs": MergeList(None)}),
                "status": Struct({"conditions": MergeList("type"), "addresses": MergeList("type")}),
            }
        ),
    ),
    make_spec(
        group="",
        version="v1",
        resource="namespaces",
        kind="Namespace",
        namespaced=False,
        storage="namespaces",
        short_names=("ns",),
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
        subresources=(_status("Namespace"), Subresource("finalize", "Namespace", ("update",))),
        fields=_fields("status.phase"),
        schema=Struct({"metadata": _META, "status": _CONDITIONS}),
        return_deleted=True,
    ),
    make_spec(
        group="",
        version="v1",
        resource="events",
        kind="Event",
        namespaced=True,
        storage="events",
        short_names=("ev",),
        fields=_EVENT_FIELDS,
        schema=_PLAIN,
        create_on_update=True,
    ),
    make_spec(
        group="",
        version="v1",
        resource="configmaps",
        kind="ConfigMap",
        namespaced=True,
        storage="configmaps",
        short_names=("cm",),
        schema=_PLAIN,
    ),
    make_spec(
        group="",
        version="v1",
        resource="services",
        kind="Service",
        namespaced=True,
        storage="services",
        short_names=("svc",),
        categories=("all",),
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
        subresources=(_status("Service"),),
        schema=Struct(
            {"metadata": _META, "spec": Struct({"ports": MergeList("port")}), "status": _CONDITIONS}
        ),
        return_deleted=True,
    ),
    make_spec(
        group="",
        version="v1",
        resource="replicationcontrollers",
        kind="ReplicationController",
        namespaced=True,
        storage="replicationcontrollers",
        short_names=("rc",),
        categories=("all",),
        subresources=(_status("ReplicationController"),),
        fields=_fields("status.replicas"),
        schema=_TEMPLATED,
        generation=True,
    ),
    make_spec(
        group="",
        version="v1",
        resource="persistentvolumes",
        kind="PersistentVolume",
        namespaced=False,
        storage="persistentvolumes",
        short_names=("pv",),
        subresources=(_status("PersistentVolume"),),
        fields=_fields("status.phase"),
        schema=_PLAIN,
        return_deleted=True,
    ),
    make_spec(
        group="",
        version="v1",
        resource="persistentvolumeclaims",
        kind="PersistentVolumeClaim",
        namespaced=True,
        storage="persistentvolumeclaims",
        short_names=("pvc",),
        subresources=(_status("PersistentVolumeClaim"),),
        schema=_PLAIN,
        return_deleted=True,
    ),
    make_spec(
        group="apps",
        version="v1",
        resource="replicasets",
        kind="ReplicaSet",
        namespaced=True,
        storage="replicasets",
        short_names=("rs",),
        categories=("all",),
        subresources=(_status("ReplicaSet"),),
        fields=_fields("status.replicas"),
        schema=_TEMPLATED,
        generation=True,
    ),
    make_spec(
        group="apps",
        version="v1",
        resource="statefulsets",
        kind="StatefulSet",
        namespaced=True,
        storage="statefulsets",
        short_names=("sts",),
        categories=("all",),
        subresources=(_status("StatefulSet"),),
        schema=_TEMPLATED,
        generation=True,
    ),
    make_spec(
        group="events.k8s.io",
        version="v1",
        resource="events",
        kind="Event",
        namespaced=True,
        storage="events",
        short_names=("ev",),
        fields=_NEW_EVENT_FIELDS,
        schema=_PLAIN,
        create_on_update=True,
    ),
    make_spec(
        group="coordination.k8s.io",
        version="v1",
        resource="leases",
        kind="Lease",
        namespaced=True,
        storage="leases",
        schema=_PLAIN,
        create_on_update=True,
        unconditional_update=False,
    ),
    make_spec(
        group="policy",
        version="v1",
        resource="poddisruptionbudgets",
        kind="PodDisruptionBudget",
        namespaced=True,
        storage="poddisruptionbudgets",
        short_names=("pdb",),
        subresources=(_status("PodDisruptionBudget"),),
        schema=Struct({"metadata": _META, "status": _CONDITIONS}),
        generation=True,
    ),
    make_spec(
        group="scheduling.k8s.io",
        version="v1",
        resource="priorityclasses",
        kind="PriorityClass",
        namespaced=False,
        storage="priorityclasses",
        short_names=("pc",),
        schema=_PLAIN,
    ),
    # KEP-4671's Workload and PodGroup at v1beta1, as v1.37 serves them with
    # GenericWorkload on (kube-scheduler v1.37's gang scheduling reads them)
    make_spec(
        group="scheduling.k8s.io",
        version="v1beta1",
        resource="workloads",
        kind="Workload",
        namespaced=True,
        storage="workloads.v1beta1",
        schema=_PLAIN,
        generation=True,
    ),
    make_spec(
        group="scheduling.k8s.io",
        version="v1beta1",
        resource="podgroups",
        kind="PodGroup",
        namespaced=True,
        storage="podgroups.v1beta1",
        subresources=(_status("PodGroup"),),
        schema=Struct({"metadata": _META, "status": _CONDITIONS}),
        generation=True,
    ),
    # v1.35's alpha Workload (v1alpha1), still read by asched's native gang path
    make_spec(
        group="scheduling.k8s.io",
        version="v1alpha1",
        resource="workloads",
        kind="Workload",
        namespaced=True,
        storage="workloads",
        schema=_PLAIN,
    ),
    make_spec(
        group="storage.k8s.io",
        version="v1",
        resource="storageclasses",
        kind="StorageClass",
        namespaced=False,
        storage="storageclasses",
        short_names=("sc",),
        schema=_PLAIN,
        return_deleted=True,
    ),
    make_spec(
        group="storage.k8s.io",
        version="v1",
        resource="csinodes",
        kind="CSINode",
        namespaced=False,
        storage="csinodes",
        schema=Struct({"metadata": _META, "spec": Struct({"drivers": MergeList("name")})}),
    ),
    make_spec(
        group="storage.k8s.io",
        version="v1",
        resource="csidrivers",
        kind="CSIDriver",
        namespaced=False,
        storage="csidrivers",
        schema=_PLAIN,
    ),
    make_spec(
        group="storage.k8s.io",
        version="v1",
        resource="csistoragecapacities",
        kind="CSIStorageCapacity",
        namespaced=True,
        storage="csistoragecapacities",
        schema=_PLAIN,
    ),
    make_spec(
        group="storage.k8s.io",
        version="v1",
        resource="volumeattachments",
        kind="VolumeAttachment",
        namespaced=False,
        storage="volumeattachments",
        subresources=(_status("VolumeAttachment"),),
        schema=_PLAIN,
    ),
    # Dynamic Resource Allocation (resource.k8s.io/v1, GA since 1.34): stored and watched
    # as they come; the API server's validation of the kinds is not reproduced yet
    # TODO(issue 32): DRA validation, CEL compilation errors, the resourceclaim controller
    *(
        make_spec(
            group="resource.k8s.io",
            version="v1",
            resource=resource,
            kind=kind,
            namespaced=namespaced,
            storage=resource,
            subresources=(_status(kind),) if status else (),
            schema=_PLAIN,
            generation=True,
        )
        for resource, kind, namespaced, status in (
            ("deviceclasses", "DeviceClass", False, False),
            ("resourceclaims", "ResourceClaim", True, True),
            ("resourceclaimtemplates", "ResourceClaimTemplate", True, False),
            ("resourceslices", "ResourceSlice", False, False),
            ("devicetaintrules", "DeviceTaintRule", False, True),
        )
    ),
    # create-only reviews, stored nowhere (asched.tools.sim.apiserver.reviews answers them)
    make_spec(
        group="authentication.k8s.io",
        version="v1",
        resource="tokenreviews",
        kind="TokenReview",
        namespaced=False,
        storage="tokenreviews",
        verbs=("create",),
        schema=_PLAIN,
    ),
    make_spec(
        group="authorization.k8s.io",
        version="v1",
        resource="subjectaccessreviews",
        kind="SubjectAccessReview",
        namespaced=False,
        storage="subjectaccessreviews",
        verbs=("create",),
        schema=_PLAIN,
    ),
    make_spec(
        group="apiextensions.k8s.io",
        version="v1",
        resource="customresourcedefinitions",
        kind="CustomResourceDefinition",
        namespaced=False,
        storage="customresourcedefinitions",
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        subresources=(_status("CustomResourceDefinition"),),
        schema=Struct({"metadata": _META, "status": _CONDITIONS}),
        generation=True,
    ),
)

#: (group, version, resource) -> spec; the router's only lookup.
BY_GVR: Final[Mapping[tuple[str, str, str], ResourceSpec]] = {
    (spec.group, spec.version, spec.resource): spec for spec in SPECS
}

#: group -> versions served, preferred first.
GROUP_VERSIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "": ("v1",),
    "apiextensions.k8s.io": ("v1",),
    "apps": ("v1",),
    "authentication.k8s.io": ("v1",),
    "authorization.k8s.io": ("v1",),
    "events.k8s.io": ("v1",),
    "coordination.k8s.io": ("v1",),
    "policy": ("v1",),
    "resource.k8s.io": ("v1",),
    "scheduling.k8s.io": ("v1", "v1beta1", "v1alpha1"),
    "storage.k8s.io": ("v1",),
}

#: storage name -> the spec whose shape objects are stored in (the first view listed).
STORAGE: Final[Mapping[str, ResourceSpec]] = {spec.storage: spec for spec in reversed(SPECS)}


def by_kind(api_version: str, kind: str) -> ResourceSpec | None:
    """The spec serving ``kind`` at ``api_version`` (used to load snapshots)."""
    for spec in SPECS:
        if spec.kind == kind and spec.api_version == api_version:
            return spec
    return None
