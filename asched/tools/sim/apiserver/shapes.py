"""JSON types of the fields the simulator reads, checked when a body is decoded.

A genuine server decodes JSON into Go structs: a string where an object belongs, or a
list where a map belongs, fails decoding with 400 BadRequest. The simulator keeps raw
dicts, so this module is its decoder's type discipline: every field the simulator's own
code reads is declared here with its JSON type and checked once, at the boundary
(``Registry._decode``); code further in may then trust ``spec["containers"]`` to be a
list of objects. Fields not declared are kept untouched, as opaque JSON.

``null`` is accepted anywhere, as Go's decoder accepts it (the field keeps its zero value):
the key is dropped, except for timestamps, which Go prints back as ``null``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from asched.tools.sim.apiserver.validation import DecodeFailure

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Scalar:
    """A JSON scalar of one of ``types``; ``keep_null`` keeps an explicit null (timestamps)."""

    name: str
    types: tuple[type, ...]
    keep_null: bool = False
    #: the range of an integer (Go's int64 fields): a JSON number past it does not decode.
    bounds: tuple[float, float] = (-math.inf, math.inf)


@dataclass(frozen=True, slots=True)
class Obj:
    """An object with declared fields (others allowed and kept)."""

    fields: Mapping[str, Shape] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ListOf:
    """A list of items of one shape."""

    item: Shape


@dataclass(frozen=True, slots=True)
class MapOf:
    """An object with arbitrary keys and values of one shape."""

    value: Shape


Shape = Scalar | Obj | ListOf | MapOf

STR: Final = Scalar("string", (str,))
INT: Final = Scalar("integer", (int,), bounds=(-(2**63), 2**63 - 1))
BOOL: Final = Scalar("boolean", (bool,))
TIME: Final = Scalar("string", (str,), keep_null=True)
QUANTITY: Final = Scalar("quantity", (str, int, float))
INT_OR_STRING: Final = Scalar("integer or string", (int, str))
ANY_OBJ: Final = Obj()
STRINGS: Final = ListOf(STR)
LABELS: Final = MapOf(STR)
RESOURCES: Final = MapOf(QUANTITY)

META: Final = Obj(
    {
        "name": STR,
        "generateName": STR,
        "namespace": STR,
        "uid": STR,
        "resourceVersion": STR,
        "generation": INT,
        "creationTimestamp": TIME,
        "deletionTimestamp": TIME,
        "deletionGracePeriodSeconds": INT,
        "labels": LABELS,
        "annotations": LABELS,
        "finalizers": STRINGS,
        "ownerReferences": ListOf(ANY_OBJ),
    }
)
_CONTAINER: Final = Obj(
    {
        "name": STR,
        "image": STR,
        "imagePullPolicy": STR,
        "ports": ListOf(Obj({"containerPort": INT, "protocol": STR})),
        "resources": Obj({"requests": RESOURCES, "limits": RESOURCES}),
        "terminationMessagePath": STR,
        "terminationMessagePolicy": STR,
    }
)
_CONDITION: Final = Obj(
    {
        "type": STR,
        "status": STR,
        "reason": STR,
        "message": STR,
        "lastProbeTime": TIME,
        "lastTransitionTime": TIME,
        "lastHeartbeatTime": TIME,
    }
)
_LABEL_SELECTOR: Final = Obj(
    {
        "matchLabels": LABELS,
        "matchExpressions": ListOf(Obj({"key": STR, "operator": STR, "values": STRINGS})),
    }
)
_POD_AFFINITY_TERM: Final = Obj(
    {
        "labelSelector": _LABEL_SELECTOR,
        "namespaceSelector": _LABEL_SELECTOR,
        "namespaces": STRINGS,
        "topologyKey": STR,
    }
)
_POD_AFFINITY: Final = Obj(
    {
        "requiredDuringSchedulingIgnoredDuringExecution": ListOf(_POD_AFFINITY_TERM),
        "preferredDuringSchedulingIgnoredDuringExecution": ListOf(
            Obj({"weight": INT, "podAffinityTerm": _POD_AFFINITY_TERM})
        ),
    }
)
_NODE_SELECTOR_TERM: Final = Obj(
    {
        key: ListOf(Obj({"key": STR, "operator": STR, "values": STRINGS}))
        for key in ("matchExpressions", "matchFields")
    }
)
AFFINITY: Final = Obj(
    {
        "nodeAffinity": Obj(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": Obj(
                    {"nodeSelectorTerms": ListOf(_NODE_SELECTOR_TERM)}
                ),
                "preferredDuringSchedulingIgnoredDuringExecution": ListOf(
                    Obj({"weight": INT, "preference": _NODE_SELECTOR_TERM})
                ),
            }
        ),
        "podAffinity": _POD_AFFINITY,
        "podAntiAffinity": _POD_AFFINITY,
    }
)
POD_SPEC: Final = Obj(
    {
        "containers": ListOf(_CONTAINER),
        "initContainers": ListOf(_CONTAINER),
        "nodeName": STR,
        "schedulerName": STR,
        "priority": INT,
        "priorityClassName": STR,
        "preemptionPolicy": STR,
        "terminationGracePeriodSeconds": INT,
        "activeDeadlineSeconds": INT,
        "restartPolicy": STR,
        "dnsPolicy": STR,
        "overhead": RESOURCES,
        "securityContext": ANY_OBJ,
        "tolerations": ListOf(
            Obj(
                {"key": STR, "operator": STR, "value": STR, "effect": STR, "tolerationSeconds": INT}
            )
        ),
        "readinessGates": ListOf(ANY_OBJ),
        "nodeSelector": LABELS,
        "affinity": AFFINITY,
    }
)
_TEMPLATE: Final = Obj({"metadata": META, "spec": POD_SPEC})
_WORKLOAD: Final = Obj(
    {
        "metadata": META,
        "spec": Obj(
            {"replicas": INT, "selector": ANY_OBJ, "template": _TEMPLATE, "serviceName": STR}
        ),
        "status": Obj({"replicas": INT, "readyReplicas": INT, "conditions": ListOf(_CONDITION)}),
    }
)

_OBJECT_REFERENCE: Final = Obj(
    dict.fromkeys(
        ("apiVersion", "kind", "namespace", "name", "uid", "resourceVersion", "fieldPath"), STR
    )
)

KINDS: Final[Mapping[str, Obj]] = {
    "bindings": Obj({"metadata": META, "target": _OBJECT_REFERENCE}),
    "pods": Obj(
        {
            "metadata": META,
            "spec": POD_SPEC,
            "status": Obj(
                {
                    "phase": STR,
                    "reason": STR,
                    "nominatedNodeName": STR,
                    "podIP": STR,
                    "hostIP": STR,
                    "conditions": ListOf(_CONDITION),
                    "containerStatuses": ListOf(
                        Obj({"ready": BOOL, "restartCount": INT, "state": ANY_OBJ})
                    ),
                    "startTime": TIME,
                }
            ),
        }
    ),
    "nodes": Obj(
        {
            "metadata": META,
            "spec": Obj(
                {
                    "unschedulable": BOOL,
                    "podCIDRs": STRINGS,
                    "taints": ListOf(
                        Obj({"key": STR, "value": STR, "effect": STR, "timeAdded": TIME})
                    ),
                }
            ),
            "status": Obj(
                {
                    "capacity": RESOURCES,
                    "allocatable": RESOURCES,
                    "conditions": ListOf(_CONDITION),
                    "addresses": ListOf(Obj({"type": STR, "address": STR})),
                    "nodeInfo": MapOf(STR),
                    "daemonEndpoints": ANY_OBJ,
                }
            ),
        }
    ),
    "namespaces": Obj(
        {"metadata": META, "spec": Obj({"finalizers": STRINGS}), "status": Obj({"phase": STR})}
    ),
    "services": Obj(
        {
            "metadata": META,
            "spec": Obj(
                {
                    "type": STR,
                    "clusterIP": STR,
                    "selector": LABELS,
                    "ports": ListOf(
                        Obj(
                            {"name": STR, "port": INT, "protocol": STR, "targetPort": INT_OR_STRING}
                        )
                    ),
                }
            ),
            "status": ANY_OBJ,
        }
    ),
    "events": Obj(
        {
            "metadata": META,
            "involvedObject": MapOf(Scalar("string", (str,))),
            "reason": STR,
            "message": STR,
            "source": Obj({"component": STR, "host": STR}),
            "count": INT,
            "type": STR,
            "eventTime": TIME,
            "firstTimestamp": TIME,
            "lastTimestamp": TIME,
            "series": Obj({"count": INT, "lastObservedTime": TIME}),
            "reportingComponent": STR,
            "reportingInstance": STR,
            "action": STR,
            "related": ANY_OBJ,
        }
    ),
    "leases": Obj(
        {
            "metadata": META,
            "spec": Obj(
                {
                    "holderIdentity": STR,
                    "leaseDurationSeconds": INT,
                    "acquireTime": TIME,
                    "renewTime": TIME,
                    "leaseTransitions": INT,
                }
            ),
        }
    ),
    "priorityclasses": Obj(
        {
            "metadata": META,
            "value": INT,
            "globalDefault": BOOL,
            "description": STR,
            "preemptionPolicy": STR,
        }
    ),
    "storageclasses": Obj(
        {
            "metadata": META,
            "provisioner": STR,
            "parameters": LABELS,
            "reclaimPolicy": STR,
            "volumeBindingMode": STR,
            "allowVolumeExpansion": BOOL,
            "mountOptions": STRINGS,
            "allowedTopologies": ListOf(
                Obj({"matchLabelExpressions": ListOf(Obj({"key": STR, "values": STRINGS}))})
            ),
        }
    ),
    "csinodes": Obj(
        {
            "metadata": META,
            "spec": Obj(
                {
                    "drivers": ListOf(
                        Obj(
                            {
                                "name": STR,
                                "nodeID": STR,
                                "topologyKeys": STRINGS,
                                "allocatable": Obj({"count": INT}),
                            }
                        )
                    )
                }
            ),
        }
    ),
    "csidrivers": Obj(
        {
            "metadata": META,
            "spec": Obj({"attachRequired": BOOL, "podInfoOnMount": BOOL, "storageCapacity": BOOL}),
        }
    ),
    "csistoragecapacities": Obj(
        {
            "metadata": META,
            "nodeTopology": _LABEL_SELECTOR,
            "storageClassName": STR,
            "capacity": QUANTITY,
            "maximumVolumeSize": QUANTITY,
        }
    ),
    "persistentvolumes": Obj(
        {
            "metadata": META,
            "spec": Obj(
                {
                    "capacity": RESOURCES,
                    "accessModes": STRINGS,
                    "claimRef": _OBJECT_REFERENCE,
                    "storageClassName": STR,
                    "volumeMode": STR,
                    "persistentVolumeReclaimPolicy": STR,
                    "nodeAffinity": Obj(
                        {"required": Obj({"nodeSelectorTerms": ListOf(_NODE_SELECTOR_TERM)})}
                    ),
                    "csi": Obj({"driver": STR, "volumeHandle": STR, "fsType": STR}),
                    "local": Obj({"path": STR}),
                    "hostPath": Obj({"path": STR, "type": STR}),
                }
            ),
            "status": Obj({"phase": STR, "reason": STR, "message": STR}),
        }
    ),
    "persistentvolumeclaims": Obj(
        {
            "metadata": META,
            "spec": Obj(
                {
                    "accessModes": STRINGS,
                    "selector": _LABEL_SELECTOR,
                    "resources": Obj({"requests": RESOURCES, "limits": RESOURCES}),
                    "volumeName": STR,
                    "storageClassName": STR,
                    "volumeMode": STR,
                }
            ),
            "status": Obj({"phase": STR, "accessModes": STRINGS, "capacity": RESOURCES}),
        }
    ),
    "replicasets": _WORKLOAD,
    "statefulsets": _WORKLOAD,
    "replicationcontrollers": Obj(
        {
            "metadata": META,
            "spec": Obj({"replicas": INT, "selector": LABELS, "template": _TEMPLATE}),
            "status": Obj({"replicas": INT, "readyReplicas": INT}),
        }
    ),
    "poddisruptionbudgets": Obj(
        {
            "metadata": META,
            "spec": Obj(
                {
                    "selector": ANY_OBJ,
                    "minAvailable": INT_OR_STRING,
                    "maxUnavailable": INT_OR_STRING,
                }
            ),
            "status": Obj({"disruptionsAllowed": INT, "conditions": ListOf(_CONDITION)}),
        }
    ),
    "customresourcedefinitions": Obj(
        {
            "metadata": META,
            "spec": Obj(
                {
                    "group": STR,
                    "scope": STR,
                    "names": Obj(
                        {
                            "plural": STR,
                            "singular": STR,
                            "kind": STR,
                            "listKind": STR,
                            "shortNames": STRINGS,
                            "categories": STRINGS,
                        }
                    ),
                    "versions": ListOf(
                        Obj(
                            {
                                "name": STR,
                                "served": BOOL,
                                "storage": BOOL,
                                "schema": Obj({"openAPIV3Schema": ANY_OBJ}),
                                "subresources": Obj({"status": ANY_OBJ, "scale": ANY_OBJ}),
                                "additionalPrinterColumns": ListOf(
                                    Obj(
                                        {
                                            "name": STR,
                                            "type": STR,
                                            "format": STR,
                                            "description": STR,
                                            "jsonPath": STR,
                                            "priority": INT,
                                        }
                                    )
                                ),
                            }
                        )
                    ),
                    "conversion": Obj({"strategy": STR}),
                }
            ),
            "status": Obj({"conditions": ListOf(_CONDITION), "storedVersions": STRINGS}),
        }
    ),
}


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _check(value: Any, shape: Shape, path: str) -> None:
    if isinstance(shape, Scalar):
        if isinstance(value, bool) and bool not in shape.types:
            raise DecodeFailure(path, f"expected {shape.name}, got {_kind_of(value)}")
        if not isinstance(value, shape.types):
            raise DecodeFailure(path, f"expected {shape.name}, got {_kind_of(value)}")
        low, high = shape.bounds
        if isinstance(value, int) and not low <= value <= high:
            raise DecodeFailure(path, f"{value} overflows int64")
        return
    if isinstance(shape, ListOf):
        if not isinstance(value, list):
            raise DecodeFailure(path, f"expected array, got {_kind_of(value)}")
        for index, item in enumerate(value):
            if item is None:
                raise DecodeFailure(f"{path}[{index}]", "expected a value, got null")
            _check(item, shape.item, f"{path}[{index}]")
        return
    if not isinstance(value, dict):
        raise DecodeFailure(path, f"expected object, got {_kind_of(value)}")
    if isinstance(shape, MapOf):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for key, item in value.items():
            _check(item, shape.value, f"{path}[{key}]")
        return
    for key, child in shape.fields.items():
        if key not in value:
            continue
        item = value[key]
        if item is None:
            if not (isinstance(child, Scalar) and child.keep_null):
                del value[key]
            continue
        _check(item, child, f"{path}.{key}" if path else key)


def _conforms(value: Any, shape: Shape) -> bool:
    """True when :func:`_check` would neither raise nor change ``value`` (no null to drop).

    The quick pass for the common case, a well-formed body: it builds no paths and visits
    only the keys present (in any order, since it reports nothing); anything else is left
    to :func:`_check`, which reports the first failure in declared order.
    """
    kind = type(shape)
    if kind is Scalar:
        assert isinstance(shape, Scalar)
        value_type = type(value)
        if value_type is str:
            return str in shape.types
        if value_type is bool:
            return bool in shape.types
        if not isinstance(value, shape.types):
            return False
        low, high = shape.bounds
        return not isinstance(value, int) or low <= value <= high
    if kind is ListOf:
        assert isinstance(shape, ListOf)
        if type(value) is not list:
            return False
        item_shape = shape.item
        return all(item is not None and _conforms(item, item_shape) for item in value)
    if type(value) is not dict:
        return False
    if kind is MapOf:
        assert isinstance(shape, MapOf)
        value_shape = shape.value
        return all(item is not None and _conforms(item, value_shape) for item in value.values())
    assert isinstance(shape, Obj)
    fields = shape.fields
    for key, item in value.items():
        child = fields.get(key)
        if child is None:
            continue
        if item is None:
            if not (type(child) is Scalar and child.keep_null):
                return False
        elif not _conforms(item, child):
            return False
    return True


def check(storage: str, obj: JSON) -> None:
    """Check (and drop the nulls of) every declared field of ``obj``; raise DecodeFailure."""
    shape = KINDS.get(storage, Obj({"metadata": META}))
    if not _conforms(obj, shape):
        _check(obj, shape, "")
