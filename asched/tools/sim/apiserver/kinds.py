"""Hooks of every kind except pods: the defaults and checks a scheduler can observe.

Each class reproduces the v1.37 strategy of its kind only as far as a client can tell the
difference (defaults it reads back, the 422s it can provoke); see :mod:`asched.tools.sim.apiserver.hooks`
for the order in which the registry calls them. :data:`HOOKS` maps storage names to
hook instances.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Final

from asched.tools.sim.apiserver import (
    apierrors,
    crd_validation,
    pods,
    selectors,
    storage_kinds,
    validation,
    volume_kinds,
)
from asched.tools.sim.apiserver.apierrors import FieldCause
from asched.tools.sim.apiserver.hooks import Context, Hooks, items, section
from asched.tools.sim.apiserver.resources import ResourceSpec

JSON = dict[str, Any]

HIGHEST_USER_PRIORITY: Final = 1_000_000_000
SYSTEM_PRIORITY_CLASSES: Final = {
    "system-cluster-critical": 2_000_000_000,
    "system-node-critical": 2_000_001_000,
}
SERVICE_NETWORK: Final = ipaddress.ip_network("10.96.0.0/12")
_EFFECTS: Final = ["NoExecute", "NoSchedule", "PreferNoSchedule"]
_NODE_INFO: Final = (
    "machineID",
    "systemUUID",
    "bootID",
    "kernelVersion",
    "osImage",
    "containerRuntimeVersion",
    "kubeletVersion",
    "kubeProxyVersion",
    "operatingSystem",
    "architecture",
)


class NodeHooks(Hooks):
    """Nodes: quantities in capacity/allocatable, taints; the status kept on create (as v1.20
    and v1.37 both do), but for ``status.config`` and ``spec.configSource`` (dropped)."""

    def decode(self, obj: JSON) -> None:
        status = section(obj, "status", "status")
        validation.resource_list(status, "capacity", "status.capacity")
        validation.resource_list(status, "allocatable", "status.allocatable")

    def admit(self, ctx: Context, obj: JSON) -> None:
        obj["status"].pop("config", None)  # dropDisabledFields on create
        obj["spec"].pop("configSource", None)

    def default(self, obj: JSON) -> None:
        obj.setdefault("spec", {})  # Go prints the empty struct
        status = obj["status"]
        if "allocatable" not in status and "capacity" in status:
            status["allocatable"] = dict(status["capacity"])
        status.setdefault("daemonEndpoints", {"kubeletEndpoint": {"Port": 0}})
        for condition in status.get("conditions") or []:
            condition.setdefault("lastHeartbeatTime", None)
            condition.setdefault("lastTransitionTime", None)
        info = status.setdefault("nodeInfo", {})
        if isinstance(info, dict):
            for key in _NODE_INFO:
                info.setdefault(key, "")

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        status = obj.get("status") or {}
        causes = validation.resource_values(
            status.get("capacity") or {}, "status.capacity", keyed=False, names=False
        )
        causes += validation.resource_values(
            status.get("allocatable") or {}, "status.allocatable", keyed=False, names=False
        )
        for index, taint in enumerate(items(obj.get("spec") or {}, "taints", "spec.taints")):
            where = f"spec.taints[{index}]"
            key = taint.get("key") or ""
            if not key:
                causes.append(apierrors.required(f"{where}.key"))
            elif (why := selectors.label_key_error(key)) is not None:
                causes.append(apierrors.invalid_value(f"{where}.key", key, why))
            if taint.get("effect") not in _EFFECTS:
                causes.append(
                    apierrors.not_supported(f"{where}.effect", taint.get("effect"), _EFFECTS)
                )
        return causes


class NamespaceHooks(Hooks):
    """Namespaces: DNS-label names, the ``kubernetes`` finalizer, phase Active."""

    kept_on_update = ("spec", "status")

    def name_error(self, name: str) -> str | None:
        return validation.dns_label(name)

    def initial_status(self, obj: JSON) -> JSON | None:
        return {"phase": "Active"}

    def admit(self, ctx: Context, obj: JSON) -> None:
        spec = section(obj, "spec", "spec")
        if not spec.get("finalizers"):
            spec["finalizers"] = ["kubernetes"]


class ServiceHooks(Hooks):
    """Services: DNS-1035 names, port defaults and a cluster IP from 10.96.0.0/12."""

    def name_error(self, name: str) -> str | None:
        return validation.dns1035_label(name)

    def default(self, obj: JSON) -> None:
        spec = section(obj, "spec", "spec")
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for port in items(spec, "ports", "spec.ports"):
            port.setdefault("protocol", "TCP")
            if "port" in port:
                port.setdefault("targetPort", port["port"])

    def initial_status(self, obj: JSON) -> JSON | None:
        return {"loadBalancer": {}}

    def admit(self, ctx: Context, obj: JSON) -> None:
        spec = obj["spec"]
        if spec.get("clusterIP") or spec.get("type") == "ExternalName":
            return
        used = {entry.obj.get("spec", {}).get("clusterIP") for entry in ctx.entries("services")}
        for address in SERVICE_NETWORK.hosts():
            if str(address) not in used:
                spec["clusterIP"] = str(address)
                spec["clusterIPs"] = [str(address)]
                return

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        spec = obj["spec"]
        causes: list[FieldCause] = []
        ports = spec.get("ports") or []
        if not ports and spec.get("type") != "ExternalName" and spec.get("clusterIP") != "None":
            causes.append(apierrors.required("spec.ports"))
        for index, port in enumerate(ports):
            number = port.get("port")
            if not isinstance(number, int) or not 0 < number < 65536:
                causes.append(
                    apierrors.invalid_value(
                        f"spec.ports[{index}].port",
                        number,
                        "must be between 1 and 65535, inclusive",
                    )
                )
        return causes


class EventHooks(Hooks):
    """Events: loose legacy checks through core/v1, strict ones through events.k8s.io."""

    def name_error(self, name: str) -> str | None:
        return None

    def decode(self, obj: JSON) -> None:
        validation.micro_time(obj, "eventTime", "eventTime")
        series = obj.get("series")
        if isinstance(series, dict):
            validation.micro_time(series, "lastObservedTime", "series.lastObservedTime")

    def default(self, obj: JSON) -> None:
        obj.setdefault("involvedObject", {})
        for key, value in (
            ("source", {}),
            ("firstTimestamp", None),
            ("lastTimestamp", None),
            ("eventTime", None),
            ("reportingComponent", ""),
            ("reportingInstance", ""),
        ):
            obj.setdefault(key, value)

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        causes: list[FieldCause] = []
        namespace = obj["metadata"].get("namespace", "")
        involved = obj.get("involvedObject") or {}
        strict = group == "events.k8s.io"
        if strict:
            causes += validation.object_names(obj["metadata"], validation.dns_subdomain)
        if not strict and not obj.get("eventTime"):
            if involved.get("namespace", "") not in ("", namespace) or (
                not involved.get("namespace") and namespace not in ("", "default")
            ):
                causes.append(
                    apierrors.invalid_value(
                        "involvedObject.namespace",
                        involved.get("namespace", ""),
                        "does not match event.namespace",
                    )
                )
            return causes
        if strict and not obj.get("eventTime"):
            causes.append(apierrors.required("eventTime"))
        if strict and obj.get("type") not in ("Normal", "Warning"):
            causes.append(
                apierrors.invalid_value("type", "", f"has invalid value: {obj.get('type', '')}")
            )
        for field, name in (
            ("reportingComponent", "reportingController"),
            ("reportingInstance", "reportingInstance"),
            ("action", "action"),
        ) + ((("reason", "reason"),) if strict else ()):
            if not obj.get(field):
                causes.append(apierrors.required(name))
        return causes


class LeaseHooks(Hooks):
    """Leases: durations must be positive, transitions non-negative, micro-second times."""

    def decode(self, obj: JSON) -> None:
        spec = section(obj, "spec", "spec")
        validation.micro_time(spec, "acquireTime", "spec.acquireTime")
        validation.micro_time(spec, "renewTime", "spec.renewTime")

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        spec = obj.get("spec") or {}
        causes: list[FieldCause] = []
        duration = spec.get("leaseDurationSeconds")
        if duration is not None and (not isinstance(duration, int) or duration <= 0):
            causes.append(
                apierrors.invalid_value(
                    "spec.leaseDurationSeconds", duration, "must be greater than 0"
                )
            )
        causes += validation.non_negative(spec, "leaseTransitions", "spec.leaseTransitions")
        return causes


class PriorityClassHooks(Hooks):
    """PriorityClasses: the system- prefix, the user maximum, one global default."""

    def default(self, obj: JSON) -> None:
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
        obj.setdefault("value", 0)

    def admit(self, ctx: Context, obj: JSON) -> None:
        if not obj.get("globalDefault"):
            return
        for entry in ctx.entries("priorityclasses"):
            if entry.obj.get("globalDefault"):
                raise apierrors.forbidden_error(
                    "priorityclasses",
                    "scheduling.k8s.io",
                    obj["metadata"]["name"],
                    f"PriorityClass {entry.name} is already marked as default. Only one default can exist",
                )

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        causes: list[FieldCause] = []
        name = obj["metadata"].get("name", "")
        value = obj.get("value")
        if not isinstance(value, int) or isinstance(value, bool):
            raise validation.DecodeFailure("value", f"expected an integer, got {value!r}")
        if name.startswith("system-"):
            if SYSTEM_PRIORITY_CLASSES.get(name) != value:
                causes.append(
                    apierrors.forbidden(
                        "metadata.name",
                        "priority class names with 'system-' prefix are reserved for system use "
                        f"only. error: {name} is not a known system priority class",
                    )
                )
        elif value > HIGHEST_USER_PRIORITY:
            causes.append(
                apierrors.forbidden(
                    "value",
                    f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}",
                )
            )
        if old is not None and old.get("value") != value:
            causes.append(apierrors.forbidden("value", "may not be changed in an update."))
        return causes


class WorkloadHooks(Hooks):
    """ReplicaSets, StatefulSets, ReplicationControllers: a pod template and a selector."""

    def __init__(self, *, statefulset: bool = False, legacy_selector: bool = False) -> None:
        self._statefulset = statefulset
        self._legacy = legacy_selector

    def decode(self, obj: JSON) -> None:
        template = section(section(obj, "spec", "spec"), "template", "spec.template")
        pods.decode_spec(section(template, "spec", "spec.template.spec"), "spec.template.spec")

    def default(self, obj: JSON) -> None:
        spec = obj["spec"]
        spec.setdefault("replicas", 1)
        template = spec["template"]
        pods.default_spec(template["spec"])
        if self._legacy and not spec.get("selector"):
            spec["selector"] = dict((template.get("metadata") or {}).get("labels") or {})
        if self._statefulset:
            spec.setdefault("serviceName", "")
            spec.setdefault("podManagementPolicy", "OrderedReady")
            spec.setdefault(
                "updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
            )
            spec.setdefault("revisionHistoryLimit", 10)

    def initial_status(self, obj: JSON) -> JSON | None:
        return {"replicas": 0}

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        spec = obj["spec"]
        causes = validation.non_negative(spec, "replicas", "spec.replicas")
        template_labels: Mapping[str, str] = (spec["template"].get("metadata") or {}).get(
            "labels"
        ) or {}
        selector = spec.get("selector")
        if not selector:
            causes.append(apierrors.required("spec.selector"))
        else:
            structured = {"matchLabels": selector} if self._legacy else selector
            if not selectors.structured_matches(structured, template_labels):
                causes.append(
                    apierrors.invalid_value(
                        "spec.template.metadata.labels",
                        dict(template_labels) or None,  # JSON, as 1.37 prints a map
                        "`selector` does not match template `labels`",
                    )
                )
        causes += pods.spec_causes(spec["template"]["spec"], "spec.template.spec")
        return causes


class DisruptionBudgetHooks(Hooks):
    """PodDisruptionBudgets: not both minAvailable and maxUnavailable; zero status."""

    def initial_status(self, obj: JSON) -> JSON | None:
        return {
            "disruptionsAllowed": 0,
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "expectedPods": 0,
        }

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        spec = obj.get("spec") or {}
        if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
            return [
                apierrors.invalid_value(
                    "spec", "", "minAvailable and maxUnavailable cannot be both set"
                )
            ]
        return []


#: storage name -> hooks; storages not listed use the generic :class:`Hooks`.
HOOKS: Final[Mapping[str, Hooks]] = {
    "pods": pods.PodHooks(),
    "nodes": NodeHooks(),
    "namespaces": NamespaceHooks(),
    "services": ServiceHooks(),
    "events": EventHooks(),
    "leases": LeaseHooks(),
    "priorityclasses": PriorityClassHooks(),
    "storageclasses": storage_kinds.StorageClassHooks(),
    "csidrivers": storage_kinds.CSIDriverHooks(),
    "csinodes": storage_kinds.CSINodeHooks(),
    "csistoragecapacities": storage_kinds.CSIStorageCapacityHooks(),
    "persistentvolumes": volume_kinds.PersistentVolumeHooks(),
    "persistentvolumeclaims": volume_kinds.PersistentVolumeClaimHooks(),
    "replicasets": WorkloadHooks(),
    "statefulsets": WorkloadHooks(statefulset=True),
    "replicationcontrollers": WorkloadHooks(legacy_selector=True),
    "poddisruptionbudgets": DisruptionBudgetHooks(),
    "customresourcedefinitions": crd_validation.CustomResourceDefinitionHooks(),
}
GENERIC: Final = Hooks()


def hooks_for(storage: str) -> Hooks:
    """The hooks of one storage."""
    return HOOKS.get(storage, GENERIC)


def hooks_of(spec: ResourceSpec) -> Hooks:
    """The hooks of one view: its own (a custom resource's version), else its storage's."""
    return spec.hooks if spec.hooks is not None else HOOKS.get(spec.storage, GENERIC)
