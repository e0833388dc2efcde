"""Storage objects into the volume catalog: the one home of "which kind, which decoder".

The live scheduler (its ingest of watch events) and the snapshot loader (``explain``) both
apply PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities through :func:`apply`, so a kind is decoded and keyed the same way
wherever it comes from. Decoding is the validation boundary: a malformed object raises
:class:`~asched.errors.DecodeError` naming the object and the field; :func:`apply` records
it in ``catalog.invalid`` (what ``explain`` and the plugins' messages can show) and the
caller logs it and keeps going.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final, Literal, TypeVar

from asched.cluster.csi_decode import decode_csi_node
from asched.cluster.volume_decode import (
    decode_claim,
    decode_csi_driver,
    decode_persistent_volume,
    decode_storage_capacity,
    decode_storage_class,
)
from asched.cluster.volumes import PersistentVolume, PersistentVolumeClaim, VolumeCatalog
from asched.errors import DecodeError

Resource = Literal[
    "persistentvolumes",
    "persistentvolumeclaims",
    "storageclasses",
    "csinodes",
    "csidrivers",
    "csistoragecapacities",
]


@dataclass(frozen=True, slots=True)
class StorageKind:
    """How one storage resource is decoded into, and removed from, the catalog."""

    kind: str
    resource: Resource
    namespaced: bool
    #: decode and store; returns the stored record
    put: Callable[[VolumeCatalog, Mapping[str, Any]], object]
    remove: Callable[[VolumeCatalog, str], None]
    #: the catalog's dict of this kind (keys as :func:`key_of` computes them)
    store: Callable[[VolumeCatalog], Mapping[str, object]]


_NOT_COMPARED: Final = frozenset({"resourceVersion", "managedFields"})

_Record = TypeVar("_Record", PersistentVolume, PersistentVolumeClaim)


def _status_update(old: _Record | None, raw: Mapping[str, Any]) -> _Record | None:
    """``old`` with the new phase and resourceVersion when ``raw`` differs from the object
    ``old`` was decoded from only there (a PV controller's status write), else None.

    A PV or a claim record reads nothing of ``status`` but the phase, so such an update
    needs no decoding: the common case of a binding's second and third watch events."""
    if old is None:
        return None
    before = old.raw
    if before.get("spec") != raw.get("spec"):
        return None
    meta, old_meta = raw.get("metadata"), before.get("metadata")
    if not isinstance(meta, Mapping) or not isinstance(old_meta, Mapping):
        return None
    if any(meta.get(k) != old_meta.get(k) for k in (meta.keys() | old_meta.keys()) - _NOT_COMPARED):
        return None
    status = raw.get("status")
    phase = status.get("phase", "") if isinstance(status, Mapping) else None
    version = meta.get("resourceVersion", "")
    if not isinstance(phase, str) or not isinstance(version, str):
        return None  # the decoder names the field
    return replace(old, phase=phase, resource_version=version, raw=raw)


def _put_pv(catalog: VolumeCatalog, raw: Mapping[str, Any]) -> object:
    key = key_of(BY_RESOURCE["persistentvolumes"], raw)
    old = None if key in catalog.pv_api else catalog.pvs.get(key)  # not an assumed one
    record = _status_update(old, raw) or decode_persistent_volume(raw)
    catalog.put_pv(record)
    return record


def _put_claim(catalog: VolumeCatalog, raw: Mapping[str, Any]) -> object:
    key = key_of(BY_RESOURCE["persistentvolumeclaims"], raw)
    old = None if key in catalog.claim_api else catalog.claims.get(key)
    record = _status_update(old, raw) or decode_claim(raw)
    catalog.put_claim(record)
    return record


_R = TypeVar("_R")


def _putter(
    decode: Callable[[Mapping[str, Any]], _R], put: Callable[[VolumeCatalog, _R], None]
) -> Callable[[VolumeCatalog, Mapping[str, Any]], object]:
    """Decode, then store with ``put``; the stored record is returned."""

    def apply(catalog: VolumeCatalog, raw: Mapping[str, Any]) -> object:
        record = decode(raw)
        put(catalog, record)
        return record

    return apply


KINDS: Final[tuple[StorageKind, ...]] = (
    StorageKind(
        "PersistentVolume",
        "persistentvolumes",
        namespaced=False,
        put=_put_pv,
        remove=VolumeCatalog.remove_pv,
        store=lambda c: c.pvs,
    ),
    StorageKind(
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        namespaced=True,
        put=_put_claim,
        remove=VolumeCatalog.remove_claim,
        store=lambda c: c.claims,
    ),
    StorageKind(
        "StorageClass",
        "storageclasses",
        namespaced=False,
        put=_putter(decode_storage_class, VolumeCatalog.put_class),
        remove=VolumeCatalog.remove_class,
        store=lambda c: c.classes,
    ),
    StorageKind(
        "CSINode",
        "csinodes",
        namespaced=False,
        put=_putter(decode_csi_node, VolumeCatalog.put_csi_node),
        remove=VolumeCatalog.remove_csi_node,
        store=lambda c: c.csi_nodes,
    ),
    StorageKind(
        "CSIDriver",
        "csidrivers",
        namespaced=False,
        put=_putter(decode_csi_driver, VolumeCatalog.put_csi_driver),
        remove=VolumeCatalog.remove_csi_driver,
        store=lambda c: c.csi_drivers,
    ),
    StorageKind(
        "CSIStorageCapacity",
        "csistoragecapacities",
        namespaced=True,
        put=_putter(decode_storage_capacity, VolumeCatalog.put_capacity),
        remove=VolumeCatalog.remove_capacity,
        store=lambda c: c.capacities,
    ),
)
BY_RESOURCE: Final[Mapping[str, StorageKind]] = {k.resource: k for k in KINDS}
BY_KIND: Final[Mapping[str, StorageKind]] = {k.kind: k for k in KINDS}


def key_of(storage: StorageKind, raw: Mapping[str, Any]) -> str:
    """The catalog key of a raw object (``namespace/name`` or ``name``); "" when unnamed."""
    meta = raw.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name")
    if not isinstance(name, str):
        return ""
    if not storage.namespaced:
        return name
    namespace = meta.get("namespace")
    return f"{namespace if isinstance(namespace, str) and namespace else 'default'}/{name}"


def apply(catalog: VolumeCatalog, storage: StorageKind, raw: Mapping[str, Any]) -> object:
    """Decode ``raw`` and store it; an object that does not decode is removed from the
    catalog, recorded in ``catalog.invalid`` with the error, and the error re-raised."""
    key = key_of(storage, raw)
    try:
        record = storage.put(catalog, raw)
    except Exception as exc:
        if key:
            storage.remove(catalog, key)
            if isinstance(exc, DecodeError):
                catalog.invalid[storage.resource, key] = str(exc)
        raise
    catalog.invalid.pop((storage.resource, key), None)
    return record


def delete(catalog: VolumeCatalog, storage: StorageKind, raw: Mapping[str, Any]) -> None:
    """Forget the object (and any decoding error recorded for it)."""
    key = key_of(storage, raw)
    storage.remove(catalog, key)
    catalog.invalid.pop((storage.resource, key), None)
