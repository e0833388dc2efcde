"""Hooks of the core volume kinds: PersistentVolumes and PersistentVolumeClaims, as kube-apiserver
v1.37.2 checks and defaults them (each 422 cause measured against it: the field Go names, in
Go's order). See :mod:`asched.tools.sim.apiserver.hooks` for the order the registry calls hooks in, and
:mod:`asched.tools.sim.apiserver.storage_kinds` for the ``storage.k8s.io`` kinds.

The DefaultStorageClass admission plugin runs here (:meth:`PersistentVolumeClaimHooks.admit`):
a claim created without ``spec.storageClassName`` gets the one default class, or a 403 when
several are marked default (the simulator refuses; 1.26+ picks the newest).

Deliberate differences from a v1.37 server:

* Go prints a ``cmp`` diff after "spec is immutable after creation..." (on a line of its
  own); the simulator gives the same field, reason and sentence, without the diff.
* No ``kubernetes.io/pvc-protection`` / ``pv-protection`` finalizers are added at creation (the
  StorageObjectInUseProtection admission plugin is not simulated); objects that carry them
  (from a snapshot) lose them as upstream's controllers decide
  (:mod:`asched.tools.sim.controllers.volume_protection`).
"""

from __future__ import annotations

from typing import Any, Final

from asched.tools.sim.apiserver import affinity, apierrors, quantity, selectors, validation
from asched.tools.sim.apiserver.apierrors import FieldCause
from asched.tools.sim.apiserver.hooks import Context, Hooks, section

JSON = dict[str, Any]

DEFAULT_CLASS_ANNOTATIONS: Final = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
#: the claim annotation that predates ``spec.storageClassName`` (admission skips such claims).
BETA_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"
ACCESS_MODES: Final = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
VOLUME_MODES: Final = ["Block", "Filesystem"]
RECLAIM_POLICIES: Final = ["Delete", "Recycle", "Retain"]

#: a PV's volume sources, in the order Go's ``ValidatePersistentVolumeSpec`` visits them.
VOLUME_SOURCES: Final = (
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "glusterfs",
    "flocker",
    "hostPath",
    "iscsi",
    "nfs",
    "rbd",
    "quobyte",
    "cinder",
    "cephfs",
    "flexVolume",
    "fc",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "scaleIO",
    "local",
    "storageos",
    "csi",
)
_IMMUTABLE_CLAIM: Final = (
    "spec is immutable after creation except resources.requests and volumeAttributesClassName "
    "for bound claims"
)


def _access_modes(modes: list[str], path: str, required: str = "") -> list[FieldCause]:
    if not modes:
        return [apierrors.required(path, required)]
    causes = [
        apierrors.not_supported(path, mode, ACCESS_MODES)
        for mode in modes
        if mode not in ACCESS_MODES
    ]
    if "ReadWriteOncePod" in modes and any(mode != "ReadWriteOncePod" for mode in modes):
        causes.append(
            apierrors.forbidden(path, "may not use ReadWriteOncePod with other access modes")
        )
    return causes


def enum(obj: JSON, field: str, path: str, allowed: list[str]) -> list[FieldCause]:
    """``NotSupported`` unless ``obj[field]`` is absent or one of ``allowed``."""
    value = obj.get(field)
    if value is None or value in allowed:
        return []
    return [apierrors.not_supported(path, value, allowed)]


def _class_name(obj: JSON, path: str) -> list[FieldCause]:
    name = obj.get("storageClassName")
    if not name:
        return []
    return [apierrors.invalid_value(path, name, why) for why in selectors.subdomain_errors(name)]


def _positive_storage(value: str, path: str, *, strict: bool) -> list[FieldCause]:
    """A storage quantity that must be > 0; ``strict`` (a PV's capacity) also reports a
    negative value as not a valid quantity first, with Go's integer value."""
    amount, _ = quantity.parse(value)
    causes: list[FieldCause] = []
    if strict and amount < 0:
        whole = -(-amount.numerator // amount.denominator)  # Quantity.Value() rounds up
        causes.append(apierrors.invalid_value(path, whole, "must be a valid resource quantity"))
    if amount <= 0:
        causes.append(apierrors.invalid_value(path, value, "must be greater than zero"))
    return causes


def _node_affinity(spec: JSON) -> list[FieldCause]:
    node_affinity = spec.get("nodeAffinity")
    if node_affinity is None:
        return []
    required = node_affinity.get("required")
    if required is None:
        return [
            apierrors.required(
                "spec.nodeAffinity.required", "must specify required node constraints"
            )
        ]
    return affinity.node_selector(required, "spec.nodeAffinity.required")


def _volume_sources(spec: JSON) -> list[FieldCause]:
    """The one volume source a PV must have, with the few per-source checks a client hits."""
    causes: list[FieldCause] = []
    found = 0
    for name in VOLUME_SOURCES:
        source = spec.get(name)
        if source is None:
            continue
        if found:
            causes.append(
                apierrors.forbidden(f"spec.{name}", "may not specify more than 1 volume type")
            )
            continue
        found += 1
        if name in ("hostPath", "local") and not source.get("path"):
            causes.append(apierrors.required(f"spec.{name}.path"))
        if name == "local" and spec.get("nodeAffinity") is None:
            causes.append(
                apierrors.required("spec.nodeAffinity", "Local volume requires node affinity")
            )
        if name == "csi":  # ValidateCSIDriverName: an empty name is only Required
            driver = source.get("driver") or ""
            if not driver:
                causes.append(apierrors.required("spec.csi.driver"))
            else:
                if len(driver) > 63:
                    causes.append(apierrors.too_long("spec.csi.driver", 63))
                causes += [
                    apierrors.invalid_value("spec.csi.driver", driver, why)
                    for why in selectors.subdomain_errors(driver.lower())
                ]
            if not source.get("volumeHandle"):
                causes.append(apierrors.required("spec.csi.volumeHandle"))
    if not found:
        causes.append(apierrors.required("spec", "must specify a volume type"))
    return causes


class PersistentVolumeHooks(Hooks):
    """PersistentVolumes: ``ValidatePersistentVolume`` and its update rules; phase Pending
    (the simulated PV controller makes it Available, see :mod:`asched.tools.sim.controllers.volume_controller`)."""

    def decode(self, obj: JSON) -> None:
        validation.resource_list(section(obj, "spec", "spec"), "capacity", "spec.capacity")

    def default(self, obj: JSON) -> None:
        spec = obj["spec"]
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        host_path = spec.get("hostPath")
        if isinstance(host_path, dict):
            host_path.setdefault("type", "")

    def initial_status(self, obj: JSON) -> JSON | None:
        return {"phase": "Pending"}

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        spec = obj["spec"]
        causes = _access_modes(spec.get("accessModes") or [], "spec.accessModes")
        capacity: dict[str, str] = spec.get("capacity") or {}
        if not capacity:
            causes.append(apierrors.required("spec.capacity"))
        if "storage" not in capacity or len(capacity) > 1:  # the map as JSON (null when nil)
            causes.append(apierrors.not_supported("spec.capacity", capacity or None, ["storage"]))
        for name, value in capacity.items():
            causes += _positive_storage(value, f"spec.capacity[{name}]", strict=True)
        causes += enum(
            spec,
            "persistentVolumeReclaimPolicy",
            "spec.persistentVolumeReclaimPolicy",
            RECLAIM_POLICIES,
        )
        causes += _node_affinity(spec)
        causes += _volume_sources(spec)
        causes += _class_name(spec, "spec.storageClassName")
        causes += enum(spec, "volumeMode", "spec.volumeMode", VOLUME_MODES)
        if old is not None:
            causes += _volume_update(spec, old["spec"])
        return causes


def _volume_update(spec: JSON, old: JSON) -> list[FieldCause]:
    causes: list[FieldCause] = []
    if any(spec.get(name) != old.get(name) for name in VOLUME_SOURCES):
        causes.append(
            apierrors.forbidden(
                "spec.persistentvolumesource",
                "spec.persistentvolumesource is immutable after creation",
            )
        )
    if spec.get("volumeMode") != old.get("volumeMode"):
        # Go's path really is "volumeMode" here, without "spec."
        causes.append(
            apierrors.invalid_value("volumeMode", spec.get("volumeMode"), "field is immutable")
        )
    return causes


def _default_class(ctx: Context, claim: str) -> str | None:
    """The DefaultStorageClass admission plugin's choice (None: no default class)."""
    defaults = [
        entry.name
        for entry in ctx.entries("storageclasses")
        if any(
            (entry.obj["metadata"].get("annotations") or {}).get(key) == "true"
            for key in DEFAULT_CLASS_ANNOTATIONS
        )
    ]
    if len(defaults) > 1:
        raise apierrors.forbidden_error(
            "persistentvolumeclaims",
            "",
            claim,
            f"Internal error occurred: {len(defaults)} default StorageClasses were found",
        )
    return defaults[0] if defaults else None


class PersistentVolumeClaimHooks(Hooks):
    """PersistentVolumeClaims: ``ValidatePersistentVolumeClaim`` and its update rules, the
    default class at creation, phase Pending."""

    def decode(self, obj: JSON) -> None:
        resources = section(section(obj, "spec", "spec"), "resources", "spec.resources")
        validation.resource_list(resources, "requests", "spec.resources.requests")
        validation.resource_list(resources, "limits", "spec.resources.limits")

    def default(self, obj: JSON) -> None:
        obj["spec"].setdefault("volumeMode", "Filesystem")

    def initial_status(self, obj: JSON) -> JSON | None:
        return {"phase": "Pending"}

    def admit(self, ctx: Context, obj: JSON) -> None:
        spec = obj["spec"]
        annotations = obj["metadata"].get("annotations") or {}
        if "storageClassName" in spec or BETA_CLASS_ANNOTATION in annotations:
            return
        default = _default_class(ctx, obj["metadata"].get("name", ""))
        if default is not None:
            spec["storageClassName"] = default

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        spec = obj["spec"]
        causes = affinity.label_selector(spec.get("selector"), "spec.selector")
        causes += _access_modes(
            spec.get("accessModes") or [],
            "spec.accessModes",
            "at least 1 access mode is required",
        )
        requests = (spec.get("resources") or {}).get("requests") or {}
        if "storage" not in requests:
            causes.append(apierrors.required("spec.resources[storage]"))
        else:
            causes += _positive_storage(
                requests["storage"], "spec.resources[storage]", strict=False
            )
        causes += _class_name(spec, "spec.storageClassName")
        causes += enum(spec, "volumeMode", "spec.volumeMode", VOLUME_MODES)
        attributes = spec.get("volumeAttributesClassName")
        if attributes:
            causes += [
                apierrors.invalid_value("spec.volumeAttributesClassName", attributes, why)
                for why in selectors.subdomain_errors(attributes)
            ]
        if old is not None:
            causes += _claim_update(spec, old)
        return causes


def _claim_update(spec: JSON, old: JSON) -> list[FieldCause]:
    """Only binding (``volumeName`` set once) and, on a bound claim, a larger request."""
    before = old["spec"]
    comparable = dict(spec)
    if not before.get("volumeName"):
        comparable["volumeName"] = before.get("volumeName")
    bound = (old.get("status") or {}).get("phase") == "Bound"
    resources = spec.get("resources") or {}
    if bound:
        comparable["resources"] = {
            **resources,
            "requests": (before.get("resources") or {}).get("requests"),
        }
        comparable["volumeAttributesClassName"] = before.get("volumeAttributesClassName")
    comparable = {key: value for key, value in comparable.items() if value is not None}
    if comparable != {key: value for key, value in before.items() if value is not None}:
        return [apierrors.forbidden("spec", _IMMUTABLE_CLAIM)]
    old_storage = ((before.get("resources") or {}).get("requests") or {}).get("storage")
    new_storage = (resources.get("requests") or {}).get("storage")
    if bound and old_storage and new_storage and quantity.compare(new_storage, old_storage) < 0:
        return [
            apierrors.forbidden(
                "spec.resources.requests.storage", "field can not be less than previous value"
            )
        ]
    return []
