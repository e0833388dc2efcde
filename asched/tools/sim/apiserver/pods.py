"""Pods: defaults, validation, priority admission, binding and the hollow kubelet.

What a genuine v1.37 server does to a pod, reproduced where a scheduler can see it:

* defaults (``SetDefaults_Pod``): ``schedulerName: default-scheduler``,
  ``terminationGracePeriodSeconds: 30`` (a negative one becomes 1), requests copied from
  limits, ``restartPolicy``, ``dnsPolicy``, per-container ``imagePullPolicy``...; the status
  starts as ``{phase: Pending, qosClass: ...}`` whatever the client sent, plus
  ``PodScheduled=False/SchedulingGated`` for a pod created with scheduling gates;
  ``metadata.generation`` starts at 1 and counts spec changes;
* admission: ``spec.priority`` from the PriorityClass (403 if it does not exist), the
  two ``NoExecute`` tolerations of DefaultTolerationSeconds;
* validation of what a scheduler reads: containers, resources, node selector, affinity
  (:mod:`asched.tools.sim.apiserver.affinity`), scheduling gates, tolerations; a pod may not be created
  both gated and with a ``nodeName``;
* an update may change only images, ``activeDeadlineSeconds`` and tolerations (422
  otherwise), so a scheduler cannot bind by PATCHing ``spec.nodeName``; scheduling gates
  may be removed, never added, and a gated pod's node selector may gain entries;
* binding (:func:`asched.tools.sim.apiserver.lifecycle.bind`) refuses a gated pod (409), sets
  ``spec.nodeName`` and the ``PodScheduled=True`` condition (``UpdatePodCondition``
  semantics: reason and message cleared) and clears ``status.nominatedNodeName``;
* deletion is graceful only for a pod bound to a node and not finished.

Deliberate difference: the 422 of a forbidden spec change leaves out the diff of the two
specs Go appends to its message (on a line of its own).

:func:`bound` and :func:`running` build new dicts and never touch the stored pod.
"""

from __future__ import annotations

from typing import Any, Final

from asched.tools.sim.apiserver import affinity, apierrors, quantity, selectors, validation
from asched.tools.sim.apiserver.apierrors import FieldCause
from asched.tools.sim.apiserver.hooks import Context, Hooks, items, section

JSON = dict[str, Any]

DEFAULT_GRACE: Final = 30
_CONTAINER_LISTS: Final = ("initContainers", "containers")
_RESTART: Final = ["Always", "OnFailure", "Never"]
_DNS: Final = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_EFFECTS: Final = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
_UNTOLERATED: Final = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
#: v1.37's message, without the diff of the two specs Go appends to it on a new line.
_IMMUTABLE: Final = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
    "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it "
    "to be set to 1 if it was previously negative)"
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
    return causes + requirement_causes(
        resources.get("requests") or {}, resources.get("limits") or {}, f"{path}.resources"
    )


_CONTAINER_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})


def _container_resource_name(name: str, where: str) -> list[FieldCause]:
    """``ValidateContainerResourceName``: qualified, then standard (for containers) when bare."""
    causes = [
        apierrors.invalid_value(where, name, why) for why in selectors.qualified_name_errors(name)
    ]
    if "/" in name:
        return causes
    if (
        not causes
        and name not in validation.STANDARD_RESOURCES
        and not name.startswith(("hugepages-", "requests.", "limits."))
    ):
        causes.append(
            apierrors.invalid_value(
                where, name, "must be a standard resource type or fully qualified"
            )
        )
    if name not in _CONTAINER_RESOURCES and not name.startswith("hugepages-"):
        causes.append(
            apierrors.invalid_value(where, name, "must be a standard resource for containers")
        )
    return causes


def _overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native (no domain, or a kubernetes.io one), not hugepages."""
    domain = name.split("/")[0] if "/" in name else ""
    native = not domain or domain == "kubernetes.io" or domain.endswith(".kubernetes.io")
    return native and not name.startswith("hugepages-")


def requirement_causes(
    requests: dict[str, str], limits: dict[str, str], path: str
) -> list[FieldCause]:
    """``validateResourceRequirements`` of a container: names, values, request <= limit
    (= for resources that cannot be overcommitted, which need a limit)."""
    causes: list[FieldCause] = []
    for name, value in limits.items():
        where = f"{path}.limits[{name}]"
        causes += _container_resource_name(name, where)
        causes += validation.resource_values({name: value}, f"{path}.limits", names=False)
    for name, value in requests.items():
        where = f"{path}.requests[{name}]"
        causes += _container_resource_name(name, where)
        causes += validation.resource_values({name: value}, f"{path}.requests", names=False)
        limit = limits.get(name)
        if limit is not None:
            if not _overcommit_allowed(name) and quantity.compare(value, limit) != 0:
                why = f"must be equal to {name} limit of {limit}"
                causes.append(apierrors.invalid_value(f"{path}.requests", value, why))
            elif quantity.compare(value, limit) > 0:
                why = f"must be less than or equal to {name} limit of {limit}"
                causes.append(apierrors.invalid_value(f"{path}.requests", value, why))
        elif not _overcommit_allowed(name):
            causes.append(
                apierrors.required(
                    f"{path}.limits", "Limit must be set for non overcommitable resources"
                )
            )
    return causes


def spec_causes(spec: JSON, path: str) -> list[FieldCause]:
    """``ValidatePodSpec`` (the parts a scheduler relies on), in Go's order."""
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
    causes += validation.labels(spec.get("nodeSelector") or {}, f"{path}.nodeSelector")
    causes += affinity.causes(spec.get("affinity"), f"{path}.affinity")
    causes += _gate_causes(spec.get("schedulingGates") or [], f"{path}.schedulingGates")
    node_name = spec.get("nodeName")
    if node_name and (why := validation.dns_subdomain(str(node_name))) is not None:
        causes.append(apierrors.invalid_value(f"{path}.nodeName", node_name, why))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not 1 <= deadline <= 2**31 - 1:
        causes.append(
            apierrors.invalid_value(
                f"{path}.activeDeadlineSeconds",
                deadline,
                "must be between 1 and 2147483647, inclusive",
            )
        )
    for index, toleration in enumerate(items(spec, "tolerations", f"{path}.tolerations")):
        causes += _toleration_causes(toleration, f"{path}.tolerations[{index}]")
    return causes


def _toleration_causes(toleration: JSON, where: str) -> list[FieldCause]:
    """``ValidateTolerations`` for one toleration, in Go's order."""
    causes: list[FieldCause] = []
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or ""
    value = toleration.get("value") or ""
    effect = toleration.get("effect") or ""
    if key:
        causes += [
            apierrors.invalid_value(f"{where}.key", key, why)
            for why in selectors.qualified_name_errors(key)
        ]
    if not key and operator != "Exists":
        causes.append(
            apierrors.invalid_value(
                f"{where}.operator",
                operator,
                'operator must be Exists when `key` is empty, which means "match all values '
                'and all keys"',
            )
        )
    if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
        causes.append(
            apierrors.invalid_value(
                f"{where}.effect",
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            )
        )
    if operator in ("Equal", ""):
        errors = selectors.label_value_errors(value)
        if errors:
            causes.append(apierrors.invalid_value(f"{where}.operator", value, ";".join(errors)))
    elif operator == "Exists":
        if value:
            causes.append(
                apierrors.invalid_value(
                    f"{where}.operator", value, "value must be empty when `operator` is 'Exists'"
                )
            )
    elif operator in ("Lt", "Gt"):  # TaintTolerationComparisonOperators is off in v1.37
        causes.append(
            apierrors.not_supported(f"{where}.operator", operator, ["Equal", "Exists", "Lt", "Gt"])
        )
    else:
        causes.append(apierrors.not_supported(f"{where}.operator", operator, ["Equal", "Exists"]))
    if effect and effect not in _EFFECTS:
        causes.append(apierrors.not_supported(f"{where}.effect", effect, _EFFECTS))
    return causes


def _gate_causes(gates: list[JSON], path: str) -> list[FieldCause]:
    """``validateSchedulingGates``: qualified names, no duplicates."""
    causes: list[FieldCause] = []
    seen: set[str] = set()
    for index, gate in enumerate(gates):
        name = gate.get("name") or ""
        causes += [
            apierrors.invalid_value(f"{path}[{index}]", name, why)
            for why in selectors.qualified_name_errors(name)
        ]
        if name in seen:
            causes.append(apierrors.duplicate(f"{path}[{index}]", name))
        seen.add(name)
    return causes


def _masked(spec: JSON, old: JSON) -> JSON:
    """``spec`` with the fields an update may change copied from ``old`` (scheduling gates
    checked apart; a gated pod may also gain node selector entries)."""
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
    for field in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        if field in old:
            masked[field] = old[field]
        else:
            masked.pop(field, None)
    if old.get("schedulingGates"):
        for field in ("nodeSelector",):
            if field in old:
                masked[field] = old[field]
            else:
                masked.pop(field, None)
    return masked


def update_causes(spec: JSON, old: JSON) -> list[FieldCause]:
    """``ValidatePodUpdate``'s spec rules: gates may only go, a gated pod's node selector
    may only grow, everything else but images, the deadline and tolerations is fixed."""
    causes: list[FieldCause] = []
    old_gates = {gate.get("name") for gate in old.get("schedulingGates") or []}
    added: dict[str, int] = {}
    for index, gate in enumerate(spec.get("schedulingGates") or []):
        added[gate.get("name") or ""] = index  # the last index of a name, as Go's map
    for name, index in added.items():
        if name not in old_gates:
            causes.append(
                apierrors.forbidden(
                    f"spec.schedulingGates[{index}].name",
                    f"only deletion is allowed, but found new scheduling gate '{name}'",
                )
            )
    if old.get("schedulingGates"):
        before: dict[str, str] = old.get("nodeSelector") or {}
        after: dict[str, str] = spec.get("nodeSelector") or {}
        if any(after.get(key) != value for key, value in before.items()):
            causes.append(
                apierrors.invalid_value(
                    "spec.nodeSelector",
                    after or None,
                    "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
                )
            )
    if _masked(spec, old) != old:
        causes.append(apierrors.forbidden("spec", _IMMUTABLE))
    return causes


#: The PodScheduled condition's message on a pod created with scheduling gates (upstream's).
SCHEDULING_GATED_MESSAGE: Final = "Scheduling is blocked due to non-empty scheduling gates"


class PodHooks(Hooks):
    """Hooks of ``pods``."""

    graceful = True

    def decode(self, obj: JSON) -> None:
        decode_spec(section(obj, "spec", "spec"), "spec")

    def default(self, obj: JSON) -> None:
        spec = obj["spec"]
        grace = spec.get("terminationGracePeriodSeconds")
        if isinstance(grace, int) and grace < 0:  # SetDefaults_Pod (pods, not templates)
            spec["terminationGracePeriodSeconds"] = 1
        default_spec(spec)
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
            # `kubectl get` shows as SchedulingGated, and what scheduler_perf's barriers read;
            # the transition time is the creation's (set in admit)
            status["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "lastProbeTime": None,
                    "lastTransitionTime": None,
                    "reason": "SchedulingGated",
                    "message": SCHEDULING_GATED_MESSAGE,
                }
            ]
        return status

    def admit(self, ctx: Context, obj: JSON) -> None:
        for condition in obj["status"].get("conditions") or []:
            # UpdatePodCondition stamps the transition: the creation's time
            condition["lastTransitionTime"] = obj["metadata"].get("creationTimestamp")
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
        if old is None:  # ValidatePodCreate
            if spec.get("nodeName") and spec.get("schedulingGates"):
                causes.append(
                    apierrors.forbidden(
                        "spec.nodeName", "cannot be set until all schedulingGates have been cleared"
                    )
                )
        else:
            causes += update_causes(spec, old["spec"])
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


def bound(
    pod: JSON,
    node: str,
    annotations: dict[str, str],
    now: str,
    labels: dict[str, str] | None = None,
) -> JSON:
    """The pod after a successful binding to ``node`` (a new dict): the binding's
    annotations and labels merged in, ``status.nominatedNodeName`` cleared (v1.35+)."""
    new = dict(pod)
    new["spec"] = {**pod["spec"], "nodeName": node}
    meta = dict(pod["metadata"])
    if annotations:
        meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
    if labels:
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
    new["metadata"] = meta
    status = dict(pod.get("status") or {})
    status.pop("nominatedNodeName", None)
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
