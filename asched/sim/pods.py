"""Pods: defaults, validation, priority admission, binding and the hollow kubelet.

What a genuine 1.20 server does to a pod, reproduced where a scheduler can see it:

* defaults (``SetDefaults_Pod``): ``schedulerName: default-scheduler``,
  ``terminationGracePeriodSeconds: 30``, requests copied from limits, ``restartPolicy``,
  ``dnsPolicy``, per-container ``imagePullPolicy``...; the status starts as
  ``{phase: Pending, qosClass: ...}`` whatever the client sent;
* admission: ``spec.priority`` from the PriorityClass (403 if it does not exist), the
  two ``NoExecute`` tolerations of DefaultTolerationSeconds;
* validation of what a scheduler reads: containers, resources, tolerations and
  ``affinity`` (:mod:`asched.sim.affinity`);
* an update may change only images, ``activeDeadlineSeconds`` and tolerations (422
  otherwise), so a scheduler cannot bind by PATCHing ``spec.nodeName``;
* binding sets ``spec.nodeName`` and the ``PodScheduled=True`` condition
  (``UpdatePodCondition`` semantics: reason and message cleared);
* deletion is graceful only for a pod bound to a node and not finished.

:func:`bound` and :func:`running` build new dicts and never touch the stored pod.
"""

from __future__ import annotations

from typing import Any, Final

from asched.sim import affinity, apierrors, quantity, validation
from asched.sim.apierrors import FieldCause
from asched.sim.hooks import Context, Hooks, items, section

JSON = dict[str, Any]

DEFAULT_GRACE: Final = 30
_CONTAINER_LISTS: Final = ("initContainers", "containers")
_RESTART: Final = ["Always", "OnFailure", "Never"]
_DNS: Final = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_EFFECTS: Final = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
_UNTOLERATED: Final = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
_IMMUTABLE: Final = (
    "pod updates may not change fields other than `spec.containers[*].image`, "
    "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds` or `spec.tolerations` "
    "(only additions to existing tolerations)"
)


def decode_spec(spec: JSON, path: str) -> None:
    """Canonicalise every container's requests and limits and the pod overhead."""
    for list_name in _CONTAINER_LISTS:
        for index, container in enumerate(items(spec, list_name, f"{path}.{list_name}")):
            where = f"{path}.{list_name}[{index}].resources"
            resources = section(container, "resources", where)
            validation.resource_list(resources, "requests", f"{where}.requests")
            validation.resource_list(resources, "limits", f"{where}.limits")
    validation.resource_list(spec, "overhead", f"{path}.overhead")


def _pull_policy(image: str) -> str:
    tail = image.rsplit("/", 1)[-1]
    if "@" in tail:
        return "IfNotPresent"
    tag = tail.rsplit(":", 1)[1] if ":" in tail else "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def default_spec(spec: JSON) -> None:
    """``SetDefaults_PodSpec`` + container defaults, in place and idempotent."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", DEFAULT_GRACE)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    for list_name in _CONTAINER_LISTS:
        for container in spec.get(list_name) or []:
            container.setdefault("resources", {})
            resources = container["resources"]
            limits = resources.get("limits")
            if limits:
                requests = resources.setdefault("requests", {})
                for name, value in limits.items():
                    requests.setdefault(name, value)
            container.setdefault("terminationMessagePath", "/dev/termination-log")
            container.setdefault("terminationMessagePolicy", "File")
            if isinstance(container.get("image"), str):
                container.setdefault("imagePullPolicy", _pull_policy(container["image"]))
            for port in container.get("ports") or []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")


def qos_class(spec: JSON) -> str:
    """``GetPodQOS`` over cpu and memory."""
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    guaranteed = True
    for list_name in _CONTAINER_LISTS:
        for container in spec.get(list_name) or []:
            resources = container.get("resources") or {}
            request = {
                k: v for k, v in (resources.get("requests") or {}).items() if k in ("cpu", "memory")
            }
            limit = {
                k: v for k, v in (resources.get("limits") or {}).items() if k in ("cpu", "memory")
            }
            requests.update({k: v for k, v in request.items() if v != "0"})
            limits.update(limit)
            if set(limit) != {"cpu", "memory"} or any(
                quantity.compare(request.get(k, "0"), limit[k]) != 0 for k in limit
            ):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _container_causes(container: JSON, path: str, names: set[str]) -> list[FieldCause]:
    causes: list[FieldCause] = []
    name = container.get("name") or ""
    if not name:
        causes.append(apierrors.required(f"{path}.name"))
    elif (why := validation.dns_label(name)) is not None:
        causes.append(apierrors.invalid_value(f"{path}.name", name, why))
    elif name in names:
        causes.append(apierrors.duplicate(f"{path}.name", name))
    names.add(name)
    if not container.get("image"):
        causes.append(apierrors.required(f"{path}.image"))
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    causes += validation.resource_values(requests, f"{path}.resources.requests")
    causes += validation.resource_values(limits, f"{path}.resources.limits")
    for resource, request in requests.items():
        limit = limits.get(resource)
        if limit is not None and quantity.compare(request, limit) > 0:
            causes.append(
                apierrors.invalid_value(
                    f"{path}.resources.requests",
                    request,
                    f"must be less than or equal to {resource} limit",
                )
            )
    return causes


def spec_causes(spec: JSON, path: str) -> list[FieldCause]:
    """``ValidatePodSpec`` (the parts a scheduler relies on)."""
    causes: list[FieldCause] = []
    if not spec.get("containers"):
        causes.append(apierrors.required(f"{path}.containers"))
    names: set[str] = set()
    for list_name in _CONTAINER_LISTS:
        for index, container in enumerate(spec.get(list_name) or []):
            causes += _container_causes(container, f"{path}.{list_name}[{index}]", names)
    if spec.get("restartPolicy") not in _RESTART:
        causes.append(
            apierrors.not_supported(f"{path}.restartPolicy", spec.get("restartPolicy"), _RESTART)
        )
    if spec.get("dnsPolicy") not in _DNS:
        causes.append(apierrors.not_supported(f"{path}.dnsPolicy", spec.get("dnsPolicy"), _DNS))
    causes += validation.non_negative(
        spec, "terminationGracePeriodSeconds", f"{path}.terminationGracePeriodSeconds"
    )
    node_name = spec.get("nodeName")
    if node_name and (why := validation.dns_subdomain(str(node_name))) is not None:
        causes.append(apierrors.invalid_value(f"{path}.nodeName", node_name, why))
    for index, toleration in enumerate(items(spec, "tolerations", f"{path}.tolerations")):
        where = f"{path}.tolerations[{index}]"
        operator = toleration.get("operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            causes.append(
                apierrors.not_supported(f"{where}.operator", operator, ["Equal", "Exists"])
            )
        elif operator == "Exists" and toleration.get("value"):
            causes.append(
                apierrors.invalid_value(
                    f"{where}.operator",
                    toleration.get("value"),
                    "value must be empty when `operator` is 'Exists'",
                )
            )
        effect = toleration.get("effect")
        if effect and effect not in _EFFECTS:
            causes.append(apierrors.not_supported(f"{where}.effect", effect, _EFFECTS))
    causes += affinity.causes(spec.get("affinity"), f"{path}.affinity")
    return causes


def _masked(spec: JSON, old: JSON) -> JSON:
    """``spec`` with the fields an update may change copied from ``old``."""
    masked = dict(spec)
    for list_name in _CONTAINER_LISTS:
        new_list, old_list = spec.get(list_name), old.get(list_name)
        if (
            isinstance(new_list, list)
            and isinstance(old_list, list)
            and len(new_list) == len(old_list)
        ):
            masked[list_name] = [
                {**new, "image": prev.get("image")} if "image" in prev else new
                for new, prev in zip(new_list, old_list, strict=True)
            ]
    for field in ("activeDeadlineSeconds", "tolerations"):
        if field in old:
            masked[field] = old[field]
        else:
            masked.pop(field, None)
    # v1.27+: scheduling gates may be removed, never added
    gates, old_gates = spec.get("schedulingGates") or [], old.get("schedulingGates") or []
    if all(gate in old_gates for gate in gates):
        if "schedulingGates" in old:
            masked["schedulingGates"] = old["schedulingGates"]
        else:
            masked.pop("schedulingGates", None)
    return masked


#: The PodScheduled condition's message on a pod created with scheduling gates (upstream's).
SCHEDULING_GATED_MESSAGE: Final = "Scheduling is blocked due to non-empty scheduling gates"


class PodHooks(Hooks):
    """Hooks of ``pods``."""

    graceful = True

    def decode(self, obj: JSON) -> None:
        decode_spec(section(obj, "spec", "spec"), "spec")

    def default(self, obj: JSON) -> None:
        default_spec(obj["spec"])
        status = obj.get("status")
        if isinstance(status, dict):
            for condition in status.get("conditions") or []:
                # Go prints these metav1.Time fields (no omitempty on a struct) as null.
                condition.setdefault("lastProbeTime", None)
                condition.setdefault("lastTransitionTime", None)

    def initial_status(self, obj: JSON) -> JSON | None:
        status: JSON = {"phase": "Pending", "qosClass": qos_class(obj["spec"])}
        if obj["spec"].get("schedulingGates"):
            # as a v1.26+ API server does on create (applySchedulingGatedCondition): what
            # `kubectl get` shows as SchedulingGated, and what scheduler_perf's barriers read
            status["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "SchedulingGated",
                    "message": SCHEDULING_GATED_MESSAGE,
                    "lastProbeTime": None,
                    "lastTransitionTime": None,
                }
            ]
        return status

    def admit(self, ctx: Context, obj: JSON) -> None:
        spec = obj["spec"]
        name = obj["metadata"].get("name", "")
        class_name = spec.get("priorityClassName")
        value, policy = 0, "PreemptLowerPriority"
        if class_name:
            found = ctx.find("priorityclasses", class_name)
            if found is None:
                raise apierrors.forbidden_error(
                    "pods", "", name, f"no PriorityClass with name {class_name} was found"
                )
            value = int(found.obj.get("value", 0))
            policy = found.obj.get("preemptionPolicy") or policy
        else:
            for entry in ctx.entries("priorityclasses"):
                if entry.obj.get("globalDefault"):
                    value = int(entry.obj.get("value", 0))
                    policy = entry.obj.get("preemptionPolicy") or policy
                    spec["priorityClassName"] = entry.name
                    break
        if spec.get("priority") is not None and spec["priority"] != value:
            raise apierrors.forbidden_error(
                "pods",
                "",
                name,
                f"the integer value of priority ({spec['priority']}) must not be provided in pod spec; "
                f"priority admission controller computed {value} from the given PriorityClass name",
            )
        spec["priority"] = value
        spec.setdefault("preemptionPolicy", policy)
        tolerations = list(spec.get("tolerations") or [])
        for key in _UNTOLERATED:
            if not any(
                t.get("key", "") in (key, "") and t.get("effect", "") in ("NoExecute", "")
                for t in tolerations
            ):
                tolerations.append(
                    {
                        "key": key,
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    }
                )
        spec["tolerations"] = tolerations

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        spec = obj["spec"]
        causes = spec_causes(spec, "spec")
        if old is not None and _masked(spec, old["spec"]) != old["spec"]:
            causes.append(apierrors.forbidden("spec", _IMMUTABLE))
        return causes

    def grace_seconds(self, obj: JSON, requested: int | None) -> int:
        spec = obj.get("spec") or {}
        if not spec.get("nodeName") or (obj.get("status") or {}).get("phase") in (
            "Succeeded",
            "Failed",
        ):
            return 0
        grace = (
            requested
            if requested is not None
            else spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE)
        )
        return max(int(grace), 0)


def bound(pod: JSON, node: str, annotations: dict[str, str], now: str) -> JSON:
    """The pod after a successful binding to ``node`` (a new dict)."""
    new = dict(pod)
    new["spec"] = {**pod["spec"], "nodeName": node}
    meta = dict(pod["metadata"])
    if annotations:
        meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
    new["metadata"] = meta
    status = dict(pod.get("status") or {})
    conditions = list(status.get("conditions") or [])
    scheduled = {
        "type": "PodScheduled",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": now,
    }
    for index, condition in enumerate(conditions):
        if condition.get("type") == "PodScheduled":
            if condition.get("status") == "True":
                scheduled["lastTransitionTime"] = condition.get("lastTransitionTime")
            conditions[index] = scheduled
            break
    else:
        conditions.append(scheduled)
    status["conditions"] = conditions
    new["status"] = status
    return new


def running(pod: JSON, now: str, pod_ip: str) -> JSON:
    """The pod as a kubelet reports it once its containers run (a new dict)."""
    new = dict(pod)
    status = dict(pod.get("status") or {})
    kept = [c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"]
    ready = [
        {"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
        for kind in ("Initialized", "Ready", "ContainersReady")
    ]
    status.update(
        phase="Running",
        conditions=ready[:1] + ready[1:] + kept,
        hostIP=pod_ip,
        podIP=pod_ip,
        podIPs=[{"ip": pod_ip}],
        startTime=now,
        containerStatuses=[
            {
                "name": container.get("name", ""),
                "state": {"running": {"startedAt": now}},
                "lastState": {},
                "ready": True,
                "restartCount": 0,
                "image": container.get("image", ""),
                "imageID": "",
                "started": True,
            }
            for container in pod["spec"].get("containers") or []
        ],
    )
    new["status"] = status
    return new
