"""Decode PersistentVolumes, claims, StorageClasses, CSIDrivers and CSIStorageCapacities.

The validation boundary of the storage records (:mod:`asched.cluster.volumes`), like
:mod:`asched.cluster.decode` is for pods and nodes: a wrongly typed field, an unknown
enum value, a malformed node affinity or selector, or a quantity that does not parse
raises :class:`~asched.errors.DecodeError` naming the object (``PersistentVolume pv-1``),
the field path and the value. Quantities are bytes, held to
:data:`~asched.cluster.bounds.MAX_AMOUNT` like node capacities (an amount beyond it
cannot be told apart by any claim asched schedules).

Defaults follow the API server's: a missing ``volumeMode`` is ``Filesystem``, a missing
``volumeBindingMode`` is ``Immediate``, a CSIDriver's ``attachRequired`` is true and its
``storageCapacity`` false. A legacy ``volume.beta.kubernetes.io/storage-class``
annotation wins over ``spec.storageClassName`` on claims and PVs, as upstream's
``GetPersistentVolumeClaimClass`` and ``GetPersistentVolumeClass`` read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from asched.cluster import bounds, quantity
from asched.cluster.decode_context import object_context
from asched.cluster.labelselector import LabelSelector, decode_label_selector
from asched.cluster.node_affinity_decode import decode_node_selector_term
from asched.cluster.records import NodeAffinity, NodeSelectorTerm
from asched.cluster.volumes import (
    ACCESS_MODES,
    BETA_STORAGE_CLASS_ANNOTATION,
    BLOCK,
    DEFAULT_CLASS_ANNOTATION,
    FILESYSTEM,
    IMMEDIATE,
    WAIT_FOR_FIRST_CONSUMER,
    ClaimRef,
    CSIDriver,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageCapacity,
    StorageClass,
)

Raw = Mapping[str, Any]

#: in-tree PV sources whose handle the volume plugins count: field -> (plugin, handle field)
IN_TREE_SOURCES: Final = {
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pdName"),
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "volumeID"),
    "azureDisk": ("kubernetes.io/azure-disk", "diskURI"),
    "cinder": ("kubernetes.io/cinder", "volumeID"),
}
VOLUME_MODES: Final = (FILESYSTEM, BLOCK)
BINDING_MODES: Final = (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER)


class _Fields:
    """The shared reads of the decoders below, over one object's context."""

    def __init__(self, kind: str, raw: Any) -> None:
        self.ctx = object_context(kind, raw)
        if not isinstance(raw, Mapping):
            raise self.ctx.fail("", f"a {kind} must be an object")
        self.meta = self.ctx.mapping(raw.get("metadata"), "metadata")
        self.name = self.ctx.string(self.meta.get("name"), "metadata.name")
        if not self.name:
            raise self.ctx.fail("metadata.name", "Required value: name is required")

    def bytes_of(self, value: Any, path: str) -> int | None:
        """A storage quantity in bytes (None when absent)."""
        if value is None:
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise self.ctx.fail(path, f"must be a quantity string, got {value!r}")
        try:
            amount = quantity.value(value)
        except quantity.QuantityError as exc:
            raise self.ctx.fail(path, f"{exc} (got {value!r})") from None
        if amount < 0:
            raise self.ctx.fail(path, f"must be greater than or equal to 0, got {value!r}")
        return bounds.clamp(amount)

    def access_modes(self, value: Any, path: str) -> tuple[str, ...]:
        modes = []
        for index, mode in enumerate(self.ctx.items(value, path)):
            text = self.ctx.string(mode, f"{path}[{index}]")
            if text not in ACCESS_MODES:
                raise self.ctx.fail(
                    f"{path}[{index}]",
                    f"Unsupported value: {text!r}: supported values: {', '.join(ACCESS_MODES)}",
                )
            modes.append(text)
        return tuple(modes)

    def volume_mode(self, value: Any, path: str) -> str:
        mode = self.ctx.string(value, path) or FILESYSTEM
        if mode not in VOLUME_MODES:
            raise self.ctx.fail(
                path, f"Unsupported value: {mode!r}: supported values: {', '.join(VOLUME_MODES)}"
            )
        return mode

    def selector(self, value: Any, path: str) -> LabelSelector | None:
        if value is None:
            return None
        return decode_label_selector(value, obj=self.ctx.obj, path=path)

    def annotations(self) -> dict[str, str]:
        return self.ctx.labels(self.meta.get("annotations"), "metadata.annotations")


def _pv_affinity(fields: _Fields, raw: Any) -> NodeAffinity | None:
    """``spec.nodeAffinity``: its required terms (None when it has none: any node)."""
    path = "spec.nodeAffinity"
    affinity = fields.ctx.mapping(raw, path)
    required = affinity.get("required")
    if required is None:
        return None
    req_path = f"{path}.required"
    selector = fields.ctx.mapping(required, req_path)
    terms = fields.ctx.items(selector.get("nodeSelectorTerms"), f"{req_path}.nodeSelectorTerms")
    if not terms:
        raise fields.ctx.fail(
            f"{req_path}.nodeSelectorTerms",
            "Required value: must have at least one node selector term",
        )
    return NodeAffinity(
        tuple(
            decode_node_selector_term(fields.ctx, term, f"{req_path}.nodeSelectorTerms[{i}]")
            for i, term in enumerate(terms)
        )
    )


def decode_persistent_volume(raw: Raw) -> PersistentVolume:
    """Decode a PersistentVolume (the raw object is kept on the record)."""
    fields = _Fields("PersistentVolume", raw)
    ctx, meta = fields.ctx, fields.meta
    spec = ctx.mapping(raw.get("spec"), "spec")
    status = ctx.mapping(raw.get("status"), "status")
    annotations = fields.annotations()
    capacity = ctx.mapping(spec.get("capacity"), "spec.capacity")
    claim_ref = None
    if spec.get("claimRef") is not None:
        ref = ctx.mapping(spec.get("claimRef"), "spec.claimRef")
        claim_ref = ClaimRef(
            ctx.string(ref.get("namespace"), "spec.claimRef.namespace"),
            ctx.string(ref.get("name"), "spec.claimRef.name"),
            ctx.string(ref.get("uid"), "spec.claimRef.uid"),
        )
    csi = ctx.mapping(spec.get("csi"), "spec.csi")
    plugin = handle = ""
    for source, (name, field) in IN_TREE_SOURCES.items():
        if spec.get(source) is not None:
            body = ctx.mapping(spec.get(source), f"spec.{source}")
            plugin, handle = name, ctx.string(body.get(field), f"spec.{source}.{field}")
    storage_class = annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if storage_class is None:
        storage_class = ctx.string(spec.get("storageClassName"), "spec.storageClassName")
    return PersistentVolume(
        name=fields.name,
        uid=ctx.string(meta.get("uid"), "metadata.uid"),
        resource_version=ctx.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        labels=ctx.labels(meta.get("labels"), "metadata.labels"),
        storage_class=storage_class,
        capacity=fields.bytes_of(capacity.get("storage"), "spec.capacity.storage") or 0,
        access_modes=fields.access_modes(spec.get("accessModes"), "spec.accessModes"),
        volume_mode=fields.volume_mode(spec.get("volumeMode"), "spec.volumeMode"),
        node_affinity=_pv_affinity(fields, spec.get("nodeAffinity")),
        claim_ref=claim_ref,
        phase=ctx.string(status.get("phase"), "status.phase"),
        deleting=meta.get("deletionTimestamp") is not None,
        csi_driver=ctx.string(csi.get("driver"), "spec.csi.driver"),
        volume_handle=ctx.string(csi.get("volumeHandle"), "spec.csi.volumeHandle"),
        in_tree_plugin=plugin,
        in_tree_handle=handle,
        raw=raw,
    )


def decode_claim(raw: Raw) -> PersistentVolumeClaim:
    """Decode a PersistentVolumeClaim (the raw object is kept on the record)."""
    fields = _Fields("PersistentVolumeClaim", raw)
    ctx, meta = fields.ctx, fields.meta
    spec = ctx.mapping(raw.get("spec"), "spec")
    status = ctx.mapping(raw.get("status"), "status")
    annotations = fields.annotations()
    resources = ctx.mapping(spec.get("resources"), "spec.resources")
    requests = ctx.mapping(resources.get("requests"), "spec.resources.requests")
    storage_class: str | None = annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if storage_class is None and spec.get("storageClassName") is not None:
        storage_class = ctx.string(spec.get("storageClassName"), "spec.storageClassName")
    owners = []
    for index, ref in enumerate(ctx.items(meta.get("ownerReferences"), "metadata.ownerReferences")):
        ref = ctx.mapping(ref, f"metadata.ownerReferences[{index}]")
        if ref.get("controller") is True:
            owners.append(ctx.string(ref.get("uid"), f"metadata.ownerReferences[{index}].uid"))
    return PersistentVolumeClaim(
        namespace=ctx.string(meta.get("namespace"), "metadata.namespace") or "default",
        name=fields.name,
        uid=ctx.string(meta.get("uid"), "metadata.uid"),
        resource_version=ctx.string(meta.get("resourceVersion"), "metadata.resourceVersion"),
        labels=ctx.labels(meta.get("labels"), "metadata.labels"),
        annotations=annotations,
        storage_class=storage_class,
        volume_name=ctx.string(spec.get("volumeName"), "spec.volumeName"),
        phase=ctx.string(status.get("phase"), "status.phase"),
        access_modes=fields.access_modes(spec.get("accessModes"), "spec.accessModes"),
        volume_mode=fields.volume_mode(spec.get("volumeMode"), "spec.volumeMode"),
        request=fields.bytes_of(requests.get("storage"), "spec.resources.requests.storage") or 0,
        selector=fields.selector(spec.get("selector"), "spec.selector"),
        owners=tuple(owners),
        deleting=meta.get("deletionTimestamp") is not None,
        raw=raw,
    )


def _topology_term(fields: _Fields, raw: Any, path: str) -> NodeSelectorTerm:
    """A ``TopologySelectorTerm``: ``key In values`` requirements, ANDed."""
    ctx = fields.ctx
    term = ctx.mapping(raw, path)
    expressions = []
    exprs_path = f"{path}.matchLabelExpressions"
    for index, item in enumerate(ctx.items(term.get("matchLabelExpressions"), exprs_path)):
        here = f"{exprs_path}[{index}]"
        item = ctx.mapping(item, here)
        key = ctx.string(item.get("key"), f"{here}.key")
        if not key:
            raise ctx.fail(f"{here}.key", "Required value")
        values = tuple(
            ctx.string(v, f"{here}.values[{i}]")
            for i, v in enumerate(ctx.items(item.get("values"), f"{here}.values"))
        )
        if not values:
            raise ctx.fail(f"{here}.values", "Required value: must specify as least one value")
        expressions.append({"key": key, "operator": "In", "values": list(values)})
    if not expressions:
        return NodeSelectorTerm()  # an empty term selects nothing
    return decode_node_selector_term(ctx, {"matchExpressions": expressions}, path)


def decode_storage_class(raw: Raw) -> StorageClass:
    """Decode a StorageClass."""
    fields = _Fields("StorageClass", raw)
    ctx = fields.ctx
    mode = ctx.string(raw.get("volumeBindingMode"), "volumeBindingMode") or IMMEDIATE
    if mode not in BINDING_MODES:
        raise ctx.fail(
            "volumeBindingMode",
            f"Unsupported value: {mode!r}: supported values: {', '.join(BINDING_MODES)}",
        )
    topologies = tuple(
        _topology_term(fields, term, f"allowedTopologies[{i}]")
        for i, term in enumerate(ctx.items(raw.get("allowedTopologies"), "allowedTopologies"))
    )
    return StorageClass(
        name=fields.name,
        provisioner=ctx.string(raw.get("provisioner"), "provisioner"),
        binding_mode=mode,
        allowed_topologies=topologies,
        is_default=fields.annotations().get(DEFAULT_CLASS_ANNOTATION) == "true",
    )


def _boolean(fields: _Fields, value: Any, path: str, *, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise fields.ctx.fail(path, f"must be a boolean, got {value!r}")
    return value


def decode_csi_driver(raw: Raw) -> CSIDriver:
    """Decode a CSIDriver."""
    fields = _Fields("CSIDriver", raw)
    spec = fields.ctx.mapping(raw.get("spec"), "spec")
    return CSIDriver(
        name=fields.name,
        storage_capacity=_boolean(
            fields, spec.get("storageCapacity"), "spec.storageCapacity", default=False
        ),
        attach_required=_boolean(
            fields, spec.get("attachRequired"), "spec.attachRequired", default=True
        ),
    )


def decode_storage_capacity(raw: Raw) -> StorageCapacity:
    """Decode a CSIStorageCapacity (``storage.k8s.io/v1`` and ``v1beta1`` alike)."""
    fields = _Fields("CSIStorageCapacity", raw)
    ctx = fields.ctx
    storage_class = ctx.string(raw.get("storageClassName"), "storageClassName")
    if not storage_class:
        raise ctx.fail("storageClassName", "Required value")
    return StorageCapacity(
        namespace=ctx.string(fields.meta.get("namespace"), "metadata.namespace") or "default",
        name=fields.name,
        storage_class=storage_class,
        node_topology=fields.selector(raw.get("nodeTopology"), "nodeTopology"),
        capacity=fields.bytes_of(raw.get("capacity"), "capacity"),
        maximum_volume_size=fields.bytes_of(raw.get("maximumVolumeSize"), "maximumVolumeSize"),
    )


__all__ = [
    "decode_claim",
    "decode_csi_driver",
    "decode_persistent_volume",
    "decode_storage_capacity",
    "decode_storage_class",
]
