"""Table columns and rows per kind, after kubectl's server-side printers (``internalversion``).

Each layout is ``(column definitions, row function)``; a row function turns a stored
object into the cells, in column order. Columns with ``priority: 1`` show with
``-o wide``. Only what ``kubectl get`` prints is reproduced; nothing reads these back.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

JSON = dict[str, Any]
Row = Callable[[JSON], list[Any]]
Layout = tuple[list[JSON], Row]

_ACCESS: Final = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX"}


def column(name: str, type_: str = "string", priority: int = 0, fmt: str = "") -> JSON:
    """One column definition."""
    return {"name": name, "type": type_, "format": fmt, "description": name, "priority": priority}


def age(timestamp: str | None) -> str:
    """``duration.HumanDuration`` of the time since ``timestamp`` (``5m``, ``2d3h``)."""
    if not timestamp:
        return "<unknown>"
    try:
        then = calendar.timegm(time.strptime(timestamp[:19] + "Z", "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return "<unknown>"
    seconds = max(int(time.time() - then), 0)
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 48:
        return f"{hours}h{minutes % 60}m" if hours < 8 and minutes % 60 else f"{hours}h"
    days = hours // 24
    if days < 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    return f"{days}d" if days < 365 * 2 else f"{days // 365}y"


def _name(obj: JSON) -> str:
    return str(obj["metadata"]["name"])


def _age(obj: JSON) -> str:
    return age(obj["metadata"].get("creationTimestamp"))


def _pod(pod: JSON) -> list[Any]:
    spec, status, meta = pod.get("spec") or {}, pod.get("status") or {}, pod["metadata"]
    statuses = status.get("containerStatuses") or []
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for container_status in statuses:
        waiting = (container_status.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason"):
            reason = waiting["reason"]
    if meta.get("deletionTimestamp"):
        reason = "Terminating"
    gates = spec.get("readinessGates") or []
    return [
        meta["name"],
        f"{sum(1 for s in statuses if s.get('ready'))}/{len(spec.get('containers') or [])}",
        reason,
        sum(int(s.get("restartCount", 0)) for s in statuses),
        _age(pod),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        f"{len(gates)}" if gates else "<none>",
    ]


def _node(node: JSON) -> list[Any]:
    meta, spec, status = node["metadata"], node.get("spec") or {}, node.get("status") or {}
    conditions = status.get("conditions") or []
    ready = next((c.get("status") for c in conditions if c.get("type") == "Ready"), None)
    state = {"True": "Ready", "False": "NotReady"}.get(ready or "", "Unknown")
    if spec.get("unschedulable"):
        state += ",SchedulingDisabled"
    labels = meta.get("labels") or {}
    roles = sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/"))
    addresses = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    info = status.get("nodeInfo") or {}
    return [
        meta["name"],
        state,
        ",".join(roles) or "<none>",
        _age(node),
        info.get("kubeletVersion", ""),
        addresses.get("InternalIP") or "<none>",
        addresses.get("ExternalIP") or "<none>",
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _event(event: JSON) -> list[Any]:
    involved = event.get("involvedObject") or {}
    source = event.get("source") or {}
    first = event.get("firstTimestamp") or event.get("eventTime")
    last = event.get("lastTimestamp") or first or event["metadata"].get("creationTimestamp")
    series = event.get("series") or {}
    return [
        age(last),
        event.get("type", ""),
        event.get("reason", ""),
        f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
        involved.get("fieldPath", ""),
        ", ".join(x for x in (source.get("component"), source.get("host")) if x),
        event.get("message", ""),
        age(first),
        series.get("count") or event.get("count") or 1,
        _name(event),
    ]


def _replicated(obj: JSON) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        _name(obj),
        spec.get("replicas", 0),
        status.get("replicas", 0),
        status.get("readyReplicas", 0),
        _age(obj),
    ]


def _volume(obj: JSON) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    claim = spec.get("claimRef") or {}
    return [
        _name(obj),
        (spec.get("capacity") or {}).get("storage", ""),
        ",".join(_ACCESS.get(m, m) for m in spec.get("accessModes") or []),
        spec.get("persistentVolumeReclaimPolicy", ""),
        status.get("phase", ""),
        f"{claim.get('namespace')}/{claim.get('name')}" if claim else "",
        spec.get("storageClassName", ""),
        status.get("reason", ""),
        _age(obj),
        spec.get("volumeMode", ""),
    ]


def _claim(obj: JSON) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        _name(obj),
        status.get("phase", ""),
        spec.get("volumeName", ""),
        (status.get("capacity") or {}).get("storage", ""),
        ",".join(_ACCESS.get(m, m) for m in status.get("accessModes") or []),
        spec.get("storageClassName", ""),
        _age(obj),
        spec.get("volumeMode", ""),
    ]


def _service(obj: JSON) -> list[Any]:
    spec = obj.get("spec") or {}
    ports = ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in spec.get("ports") or [])
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items()))
    return [
        _name(obj),
        spec.get("type", ""),
        spec.get("clusterIP", ""),
        "<none>",
        ports or "<none>",
        _age(obj),
        selector or "<none>",
    ]


def _budget(obj: JSON) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        _name(obj),
        str(spec["minAvailable"]) if "minAvailable" in spec else "N/A",
        str(spec["maxUnavailable"]) if "maxUnavailable" in spec else "N/A",
        status.get("disruptionsAllowed", 0),
        _age(obj),
    ]


_NAME: Final = column("Name", fmt="name")
_AGE: Final = column("Age")

LAYOUTS: Final[Mapping[tuple[str, str], Layout]] = {
    ("", "pods"): (
        [
            _NAME,
            column("Ready"),
            column("Status"),
            column("Restarts", "integer"),
            _AGE,
            column("IP", priority=1),
            column("Node", priority=1),
            column("Nominated Node", priority=1),
            column("Readiness Gates", priority=1),
        ],
        _pod,
    ),
    ("", "nodes"): (
        [
            _NAME,
            column("Status"),
            column("Roles"),
            _AGE,
            column("Version"),
            column("Internal-IP", priority=1),
            column("External-IP", priority=1),
            column("OS-Image", priority=1),
            column("Kernel-Version", priority=1),
            column("Container-Runtime", priority=1),
        ],
        _node,
    ),
    ("", "namespaces"): (
        [_NAME, column("Status"), _AGE],
        lambda ns: [_name(ns), (ns.get("status") or {}).get("phase", ""), _age(ns)],
    ),
    ("", "events"): (
        [
            column("Last Seen"),
            column("Type"),
            column("Reason"),
            column("Object"),
            column("Subobject", priority=1),
            column("Source", priority=1),
            column("Message"),
            column("First Seen", priority=1),
            column("Count", priority=1),
            column("Name", priority=1),
        ],
        _event,
    ),
    ("", "services"): (
        [
            _NAME,
            column("Type"),
            column("Cluster-IP"),
            column("External-IP"),
            column("Port(s)"),
            _AGE,
            column("Selector", priority=1),
        ],
        _service,
    ),
    ("", "replicationcontrollers"): (
        [
            _NAME,
            column("Desired", "integer"),
            column("Current", "integer"),
            column("Ready", "integer"),
            _AGE,
        ],
        _replicated,
    ),
    ("", "persistentvolumes"): (
        [
            _NAME,
            column("Capacity"),
            column("Access Modes"),
            column("Reclaim Policy"),
            column("Status"),
            column("Claim"),
            column("StorageClass"),
            column("Reason"),
            _AGE,
            column("VolumeMode", priority=1),
        ],
        _volume,
    ),
    ("", "persistentvolumeclaims"): (
        [
            _NAME,
            column("Status"),
            column("Volume"),
            column("Capacity"),
            column("Access Modes"),
            column("StorageClass"),
            _AGE,
            column("VolumeMode", priority=1),
        ],
        _claim,
    ),
    ("apps", "replicasets"): (
        [
            _NAME,
            column("Desired", "integer"),
            column("Current", "integer"),
            column("Ready", "integer"),
            _AGE,
        ],
        _replicated,
    ),
    ("apps", "statefulsets"): (
        [_NAME, column("Ready"), _AGE],
        lambda o: [
            _name(o),
            f"{(o.get('status') or {}).get('readyReplicas', 0)}/{(o.get('spec') or {}).get('replicas', 0)}",
            _age(o),
        ],
    ),
    ("coordination.k8s.io", "leases"): (
        [_NAME, column("Holder"), _AGE],
        lambda o: [_name(o), (o.get("spec") or {}).get("holderIdentity", ""), _age(o)],
    ),
    ("policy", "poddisruptionbudgets"): (
        [
            _NAME,
            column("Min Available"),
            column("Max Unavailable"),
            column("Allowed Disruptions", "integer"),
            _AGE,
        ],
        _budget,
    ),
    ("scheduling.k8s.io", "priorityclasses"): (
        [_NAME, column("Value", "integer"), column("Global-Default", "boolean"), _AGE],
        lambda o: [_name(o), o.get("value", 0), bool(o.get("globalDefault")), _age(o)],
    ),
    ("storage.k8s.io", "storageclasses"): (
        [
            _NAME,
            column("Provisioner"),
            column("ReclaimPolicy"),
            column("VolumeBindingMode"),
            column("AllowVolumeExpansion"),
            _AGE,
        ],
        lambda o: [
            _name(o),
            o.get("provisioner", ""),
            o.get("reclaimPolicy", ""),
            o.get("volumeBindingMode", ""),
            bool(o.get("allowVolumeExpansion")),
            _age(o),
        ],
    ),
    ("storage.k8s.io", "csinodes"): (
        [_NAME, column("Drivers", "integer"), _AGE],
        lambda o: [_name(o), len((o.get("spec") or {}).get("drivers") or []), _age(o)],
    ),
    ("storage.k8s.io", "csistoragecapacities"): (
        [_NAME, column("StorageClassName"), column("Capacity"), _AGE],
        lambda o: [_name(o), o.get("storageClassName", ""), o.get("capacity", ""), _age(o)],
    ),
}
DEFAULT: Final[Layout] = (
    [_NAME, column("Created At", "date")],
    lambda o: [_name(o), o["metadata"].get("creationTimestamp")],
)
