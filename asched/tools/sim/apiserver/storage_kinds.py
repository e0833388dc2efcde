"""Hooks of the ``storage.k8s.io`` kinds: StorageClasses, CSIDrivers, CSINodes and
CSIStorageCapacities, as kube-apiserver v1.37.2 checks and defaults them (each 422 cause
measured against it, quirks included). See :mod:`asched.tools.sim.apiserver.volume_kinds` for
PersistentVolumes and claims.

v1.37 runs declarative validation beside the handwritten one: a handwritten error that a
declarative one covers (a StorageClass's required provisioner, its immutable fields) is
replaced by the declarative error, appended after the others; the declarative
``field is immutable`` prints no value (``Invalid value: null``). The causes of every
built-in kind are then folded (identical ones listed once, see
:func:`asched.tools.sim.apiserver.apierrors.invalid`), which is why v1.20's doubled CSINode and CSIDriver
causes are gone.
"""

from __future__ import annotations

from typing import Any, Final

from asched.tools.sim.apiserver import affinity, apierrors, quantity, selectors, validation
from asched.tools.sim.apiserver.apierrors import FieldCause
from asched.tools.sim.apiserver.hooks import Hooks, items, section
from asched.tools.sim.apiserver.volume_kinds import enum

JSON = dict[str, Any]

CLASS_RECLAIM_POLICIES: Final = ["Delete", "Retain"]
BINDING_MODES: Final = ["Immediate", "WaitForFirstConsumer"]
FS_GROUP_POLICIES: Final = ["File", "None", "ReadWriteOnceWithFSType"]
LIFECYCLE_MODES: Final = ["Persistent", "Ephemeral"]  # Go's order, not sorted
#: a StorageClass's declaratively immutable fields, in the struct's order.
_CLASS_IMMUTABLE: Final = ("provisioner", "parameters", "reclaimPolicy", "volumeBindingMode")
#: ``csiNodeIDMaxLength``
_NODE_ID_MAX: Final = 256


class StorageClassHooks(Hooks):
    """StorageClasses: provisioner required, enums, immutable parameters and provisioner."""

    def default(self, obj: JSON) -> None:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        causes: list[FieldCause] = []
        provisioner = obj.get("provisioner") or ""
        if provisioner:
            causes += [
                apierrors.invalid_value("provisioner", provisioner.lower(), why)
                for why in selectors.qualified_name_errors(provisioner.lower())
            ]
        causes += [
            apierrors.invalid_value("parameters", key, "field can not be empty.")
            for key in obj.get("parameters") or {}
            if not key
        ]
        causes += enum(obj, "reclaimPolicy", "reclaimPolicy", CLASS_RECLAIM_POLICIES)
        causes += enum(obj, "volumeBindingMode", "volumeBindingMode", BINDING_MODES)
        causes += _allowed_topologies(obj.get("allowedTopologies") or [])
        # the declarative errors, after the handwritten ones
        if not provisioner:
            causes.append(apierrors.required("provisioner"))
        if old is not None:
            causes += [
                apierrors.invalid_value(field, None, "field is immutable")
                for field in _CLASS_IMMUTABLE
                if (obj.get(field) or None) != (old.get(field) or None)
            ]
        return causes


def _allowed_topologies(terms: list[JSON]) -> list[FieldCause]:
    """``validateAllowedTopologies``, its quirk included: each term is compared with
    ``len(terms)`` nil maps before the earlier terms, and Go's semantic equality takes a nil
    map for an empty one, so a term without expressions is a duplicate (the duplicates of
    one term fold into one cause)."""
    causes: list[FieldCause] = []
    seen: list[dict[str, frozenset[str]]] = [{} for _ in terms]
    for index, term in enumerate(terms):
        where = f"allowedTopologies[{index}].matchLabelExpressions"
        expressions: dict[str, frozenset[str]] = {}
        for position, requirement in enumerate(term.get("matchLabelExpressions") or []):
            item = f"{where}[{position}]"
            values: list[str] = requirement.get("values") or []
            if not values:
                causes.append(apierrors.required(f"{item}.values"))
            for number, value in enumerate(values):
                if value in values[:number]:
                    causes.append(apierrors.duplicate(f"{item}.values[{number}]", value))
            key = requirement.get("key") or ""
            causes += [
                apierrors.invalid_value(f"{item}.key", key, why)
                for why in selectors.qualified_name_errors(key)
            ]
            if key in expressions:
                causes.append(apierrors.duplicate(f"{item}.key", key))
            expressions[key] = frozenset(values)
        causes += [apierrors.duplicate(where, "") for earlier in seen if earlier == expressions]
        seen.append(expressions)
    return causes


class CSIDriverHooks(Hooks):
    """CSIDrivers: the v1.37 spec defaults and enums; ``attachRequired`` and
    ``volumeLifecycleModes`` are immutable, the rest of the spec may change."""

    def default(self, obj: JSON) -> None:
        spec = section(obj, "spec", "spec")
        spec.setdefault("attachRequired", True)
        spec.setdefault("podInfoOnMount", False)
        spec.setdefault("storageCapacity", False)
        spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")
        if not spec.get("volumeLifecycleModes"):
            spec["volumeLifecycleModes"] = ["Persistent"]
        spec.setdefault("requiresRepublish", False)
        spec.setdefault("seLinuxMount", False)

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        spec = obj.get("spec") or {}
        causes = enum(spec, "fsGroupPolicy", "spec.fsGroupPolicy", FS_GROUP_POLICIES)
        audiences: list[str] = []
        for index, request in enumerate(spec.get("tokenRequests") or []):
            audience = request.get("audience") or ""
            if audience in audiences:
                causes.append(
                    apierrors.duplicate(f"spec.tokenRequests[{index}].audience", audience)
                )
            audiences.append(audience)
        modes = spec.get("volumeLifecycleModes")
        causes += [
            apierrors.not_supported("spec.volumeLifecycleModes", mode, LIFECYCLE_MODES)
            for mode in (modes if isinstance(modes, list) else [])
            if mode not in LIFECYCLE_MODES
        ]
        if old is not None:
            before = old.get("spec") or {}
            if spec.get("attachRequired") != before.get("attachRequired"):
                causes.append(
                    apierrors.invalid_value(
                        "spec.attachedRequired", spec.get("attachRequired"), "field is immutable"
                    )
                )  # sic: upstream's path
            if spec.get("volumeLifecycleModes") != before.get("volumeLifecycleModes"):
                causes.append(
                    apierrors.invalid_value(
                        "spec.volumeLifecycleModes",
                        spec.get("volumeLifecycleModes"),
                        "field is immutable",
                    )
                )
        return causes


def _driver_json(driver: JSON) -> apierrors.GoLiteral:
    """JSON of an internal ``storage.CSINodeDriver`` (no JSON tags: Go's field names), its
    allocatable left out as the comparison leaves it out (nil)."""
    return apierrors.go_json(
        {
            "Name": driver.get("name", ""),
            "NodeID": driver.get("nodeID", ""),
            "TopologyKeys": driver.get("topologyKeys") or None,
            "Allocatable": None,
        },
        sort_keys=False,
    )


class CSINodeHooks(Hooks):
    """CSINodes: every driver needs a valid name and a node ID; counts >= 0; names unique;
    a driver, once listed, may change only its allocatable count."""

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        spec = obj.get("spec") or {}
        drivers = items(spec, "drivers", "spec.drivers")
        causes: list[FieldCause] = []
        seen: set[str] = set()
        for index, driver in enumerate(drivers):
            causes += _csi_node_driver(driver, f"spec.drivers[{index}]", seen)
        if old is not None:
            for before in (old.get("spec") or {}).get("drivers") or []:
                for driver in drivers:
                    if driver.get("name") != before.get("name"):
                        continue
                    if _driver_json(driver) != _driver_json(before):
                        causes.append(
                            apierrors.invalid_value(
                                "spec.drivers", _driver_json(driver), "field is immutable"
                            )
                        )
        return causes


def _csi_node_driver(driver: JSON, where: str, seen: set[str]) -> list[FieldCause]:
    causes: list[FieldCause] = []
    name = driver.get("name") or ""
    if not name:
        causes.append(apierrors.required(f"{where}.name"))
    else:
        if len(name) > 63:
            causes.append(apierrors.too_long(f"{where}.name", 63))
        causes += [
            apierrors.invalid_value(f"{where}.name", name, why)
            for why in selectors.subdomain_errors(name.lower())
        ]
    node_id = driver.get("nodeID") or ""
    if not node_id:
        causes.append(apierrors.required(f"{where}.nodeID"))
    if len(node_id) > _NODE_ID_MAX:
        causes.append(
            apierrors.invalid_value(
                f"{where}.nodeID", node_id, f"must be {_NODE_ID_MAX} characters or less"
            )
        )
    count = (driver.get("allocatable") or {}).get("count")
    if count is not None and count < 0:
        causes.append(
            apierrors.invalid_value(
                f"{where}.allocatable.count", count, "must be greater than or equal to 0"
            )
        )
    if name in seen:
        causes.append(apierrors.duplicate(f"{where}.name", name))
    seen.add(name)
    keys: set[str] = set()
    for key in driver.get("topologyKeys") or []:  # Go's path: the driver, not the key
        if not key:
            causes.append(apierrors.required(where))
        if key in keys:
            causes.append(apierrors.duplicate(where, key))
        keys.add(key)
        causes += [
            apierrors.invalid_value(where, key, why) for why in selectors.qualified_name_errors(key)
        ]
    return causes


class CSIStorageCapacityHooks(Hooks):
    """CSIStorageCapacities (``storage.k8s.io/v1``): ``ValidateCSIStorageCapacity``
    (the capacity >= 0; ``maximumVolumeSize`` is not checked); ``nodeTopology`` and
    ``storageClassName`` immutable."""

    def decode(self, obj: JSON) -> None:
        for field in ("capacity", "maximumVolumeSize"):
            if field in obj:
                try:
                    obj[field] = quantity.canonical(obj[field])
                except quantity.QuantityError as exc:
                    raise validation.DecodeFailure("", str(exc)) from None  # no field, as Go

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        causes = affinity.label_selector(obj.get("nodeTopology"), "nodeTopology")
        name = obj.get("storageClassName") or ""
        causes += [
            apierrors.invalid_value("storageClassName", name, why)
            for why in selectors.subdomain_errors(name)
        ]
        value = obj.get("capacity")
        if value is not None and quantity.is_negative(value):
            causes.append(
                apierrors.invalid_value("capacity", value, "must be greater than or equal to 0")
            )
        if old is not None:
            if obj.get("nodeTopology") != old.get("nodeTopology"):
                causes.append(
                    apierrors.invalid_value(
                        "nodeTopology", obj.get("nodeTopology"), "field is immutable"
                    )
                )
            if obj.get("storageClassName") != old.get("storageClassName"):
                causes.append(
                    apierrors.invalid_value("storageClassName", name, "field is immutable")
                )
        return causes
