"""Hooks of the ``storage.k8s.io`` kinds: StorageClasses, CSIDrivers, CSINodes and
CSIStorageCapacities, as kube-apiserver v1.20.2 checks and defaults them (each 422 cause
measured against it, quirks included; CSIStorageCapacity, which 1.20 does not serve, from
upstream's ``ValidateCSIStorageCapacity``). See :mod:`asched.sim.volume_kinds` for
PersistentVolumes and claims.
"""

from __future__ import annotations

from typing import Any, Final

from asched.sim import affinity, apierrors, quantity, selectors, validation
from asched.sim.apierrors import FieldCause, GoLiteral
from asched.sim.hooks import Hooks, items, section
from asched.sim.volume_kinds import enum

JSON = dict[str, Any]

CLASS_RECLAIM_POLICIES: Final = ["Delete", "Retain"]
BINDING_MODES: Final = ["Immediate", "WaitForFirstConsumer"]
FS_GROUP_POLICIES: Final = ["File", "None", "ReadWriteOnceWithFSType"]
LIFECYCLE_MODES: Final = ["Persistent", "Ephemeral"]  # Go's order, not sorted


class StorageClassHooks(Hooks):
    """StorageClasses: provisioner required, enums, immutable parameters and provisioner."""

    def default(self, obj: JSON) -> None:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        causes: list[FieldCause] = []
        provisioner = obj.get("provisioner") or ""
        if not provisioner:
            causes.append(apierrors.required("provisioner"))
        else:
            causes += [
                apierrors.invalid_value("provisioner", provisioner, why)
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
        if old is not None:
            causes += [
                apierrors.forbidden(field, f"updates to {field} are forbidden.")
                for field in ("parameters", "provisioner", "reclaimPolicy")
                if obj.get(field) != old.get(field)
            ]
            if obj.get("volumeBindingMode") != old.get("volumeBindingMode"):
                causes.append(
                    apierrors.invalid_value(
                        "volumeBindingMode", obj.get("volumeBindingMode"), "field is immutable"
                    )
                )
        return causes


def _allowed_topologies(terms: list[JSON]) -> list[FieldCause]:
    """``ValidateAllowedTopologies`` of 1.20, its quirk included: each term is compared with
    ``len(terms)`` nil maps before the earlier terms, and Go's semantic equality takes a nil
    map for an empty one, so every term without expressions is that many duplicates."""
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
    """CSIDrivers: the 1.20 spec defaults and enums; the name and every cause listed twice in
    ``details.causes``, as the genuine server does (its message lists each once).

    Deliberate differences: ``spec.storageCapacity`` is kept (a 1.20 server drops it, its
    feature gate being off; absent means false), and the spec may change after creation (1.20
    makes it all immutable; later versions let ``storageCapacity`` change, and the scheduler
    reacts to CSIDriver updates).
    """

    def name_error(self, name: str) -> str | None:
        return None  # reported by validate, with the rest, twice

    def default(self, obj: JSON) -> None:
        spec = section(obj, "spec", "spec")
        spec.setdefault("attachRequired", True)
        spec.setdefault("podInfoOnMount", False)
        spec.setdefault("volumeLifecycleModes", ["Persistent"])
        spec.setdefault("fsGroupPolicy", "ReadWriteOnceWithFSType")

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        name = obj["metadata"].get("name", "")
        causes: list[FieldCause] = []
        if name:
            causes += [
                apierrors.invalid_value("metadata.name", name, why)
                for why in selectors.subdomain_errors(name)
            ]
        spec = obj.get("spec") or {}
        causes += enum(spec, "fsGroupPolicy", "spec.fsGroupPolicy", FS_GROUP_POLICIES)
        modes = spec.get("volumeLifecycleModes")
        causes += [
            apierrors.not_supported("spec.volumeLifecycleModes", mode, LIFECYCLE_MODES)
            for mode in (modes if isinstance(modes, list) else [])
            if mode not in LIFECYCLE_MODES
        ]
        return causes + causes


def _driver_literal(driver: JSON) -> GoLiteral:
    """``%#v`` of a ``storage.CSINodeDriver``, with ``(nil)`` where Go prints a pointer."""
    keys: list[str] = driver.get("topologyKeys") or []
    shown = "[]string{" + ", ".join(f'"{key}"' for key in keys) + "}" if keys else "[]string(nil)"
    return GoLiteral(
        f'storage.CSINodeDriver{{Name:"{driver.get("name", "")}", '
        f'NodeID:"{driver.get("nodeID", "")}", TopologyKeys:{shown}, '
        "Allocatable:(*storage.VolumeNodeResources)(nil)}"
    )


class CSINodeHooks(Hooks):
    """CSINodes: every driver needs a valid name and a node ID; counts >= 0; names unique;
    a driver, once listed, is immutable.

    Quirk of the genuine server, reproduced: every ``spec.drivers`` cause is listed twice in
    ``details.causes`` (the message lists it once). A changed driver is reported on the field
    ``CSINodeDriver`` with Go's ``%#v`` of it, whose ``Allocatable`` pointer the simulator prints
    as ``(nil)``.
    """

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        spec = obj.get("spec") or {}
        if "drivers" not in spec:
            return [apierrors.required("spec.drivers")]
        drivers = items(spec, "drivers", "spec.drivers")
        causes: list[FieldCause] = []
        seen: set[str] = set()
        for index, driver in enumerate(drivers):
            causes += _csi_node_driver(driver, f"spec.drivers[{index}]", seen)
        causes += causes  # listed twice by the genuine server (see the class docstring)
        if old is not None:
            before = {
                driver.get("name"): driver
                for driver in (old.get("spec") or {}).get("drivers") or []
            }
            causes += [
                apierrors.invalid_value(
                    "CSINodeDriver", _driver_literal(driver), "field is immutable"
                )
                for driver in drivers
                if driver.get("name") in before and before[driver.get("name")] != driver
            ]
        return causes


def _csi_node_driver(driver: JSON, where: str, seen: set[str]) -> list[FieldCause]:
    causes: list[FieldCause] = []
    name = driver.get("name") or ""
    if not name:
        causes.append(apierrors.required(f"{where}.name"))
    elif len(name) > 63:
        causes.append(apierrors.too_long(f"{where}.name", 63))
    causes += [
        apierrors.invalid_value(f"{where}.name", name, why)
        for why in selectors.subdomain_errors(name.lower())
    ]
    if not driver.get("nodeID"):
        causes.append(apierrors.required(f"{where}.nodeID"))
    count = (driver.get("allocatable") or {}).get("count")
    if count is not None and count < 0:
        causes.append(
            apierrors.invalid_value(
                f"{where}.allocatable.count", count, "must be greater than or equal to 0"
            )
        )
    if name and name in seen:
        causes.append(apierrors.duplicate(f"{where}.name", name))
    seen.add(name)
    keys: list[str] = driver.get("topologyKeys") or []
    shown = GoLiteral("[]string{" + ", ".join(f'"{key}"' for key in keys) + "}")
    causes += [
        apierrors.invalid_value(where, shown, why)  # Go's path: the driver, not the key
        for key in keys
        for why in selectors.qualified_name_errors(key)
    ]
    return causes


class CSIStorageCapacityHooks(Hooks):
    """CSIStorageCapacities (``storage.k8s.io`` v1 and v1beta1): ``ValidateCSIStorageCapacity``;
    ``nodeTopology`` and ``storageClassName`` immutable."""

    def decode(self, obj: JSON) -> None:
        for field in ("capacity", "maximumVolumeSize"):
            if field in obj:
                try:
                    obj[field] = quantity.canonical(obj[field])
                except quantity.QuantityError as exc:
                    raise validation.DecodeFailure(field, str(exc)) from None

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        causes = affinity.label_selector(obj.get("nodeTopology"), "nodeTopology")
        name = obj.get("storageClassName") or ""
        causes += [
            apierrors.invalid_value("storageClassName", name, why)
            for why in selectors.subdomain_errors(name)
        ]
        for field in ("capacity", "maximumVolumeSize"):
            value = obj.get(field)
            if value is not None and quantity.is_negative(value):
                causes.append(
                    apierrors.invalid_value(field, value, "must be greater than or equal to 0")
                )
        if old is not None:
            if obj.get("nodeTopology") != old.get("nodeTopology"):
                shown = _selector_literal(obj.get("nodeTopology"))
                causes.append(apierrors.invalid_value("nodeTopology", shown, "field is immutable"))
            if obj.get("storageClassName") != old.get("storageClassName"):
                causes.append(
                    apierrors.invalid_value("storageClassName", name, "field is immutable")
                )
        return causes


def _selector_literal(selector: JSON | None) -> GoLiteral:
    """``%#v`` of a ``*metav1.LabelSelector``."""
    if selector is None:
        return GoLiteral("(*v1.LabelSelector)(nil)")
    labels = selector.get("matchLabels")
    shown_labels = str(apierrors.go_map(labels)) if labels else "map[string]string(nil)"
    requirements = [
        f'v1.LabelSelectorRequirement{{Key:"{item.get("key", "")}", '
        f'Operator:"{item.get("operator", "")}", Values:'
        + (
            "[]string{" + ", ".join(f'"{value}"' for value in item["values"]) + "}"
            if item.get("values")
            else "[]string(nil)"
        )
        + "}"
        for item in selector.get("matchExpressions") or []
    ]
    shown_requirements = (
        "[]v1.LabelSelectorRequirement{" + ", ".join(requirements) + "}"
        if requirements
        else "[]v1.LabelSelectorRequirement(nil)"
    )
    return GoLiteral(
        f"&v1.LabelSelector{{MatchLabels:{shown_labels}, MatchExpressions:{shown_requirements}}}"
    )
