"""A pod's ``spec.volumes`` as the volume plugins read them (:class:`PodVolume` records).

Decoded with the pod (:func:`asched.cluster.decode.decode_pod` calls
:func:`decode_pod_volumes`), so a malformed volume is a
:class:`~asched.errors.DecodeError` naming the pod and the field, e.g.
``Pod default/web: spec.volumes[1].gcePersistentDisk.pdName: Required value``.

Only what the plugins compare is kept: the claim a ``persistentVolumeClaim`` or generic
``ephemeral`` volume uses (the ephemeral claim is ``<pod>-<volume>``), and for the
in-tree disks the identity their conflicts and attach counts are keyed on (GCE PD
``pdName``, AWS EBS ``volumeID``, RBD ``pool/image`` with its monitors, iSCSI ``iqn``,
Azure Disk ``diskURI``, Cinder ``volumeID``). Every other source is ``other``.

A ``persistentVolumeClaim`` with an empty ``claimName`` decodes (the API server would
refuse it, but snapshots need not have been through one): the plugins answer it with
upstream's "PersistentVolumeClaim had no name".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

from asched.cluster.volumes import PodVolume, VolumeKind
from asched.errors import DecodeError

#: ``spec.rbd.pool`` when unset (the API server's default)
DEFAULT_RBD_POOL: Final = "rbd"


class Context(Protocol):
    """What the pod decoder's context offers (:class:`asched.cluster.decode_context.DecodeContext`)."""

    def fail(self, path: str, message: str) -> DecodeError: ...

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]: ...

    def items(self, value: Any, path: str) -> list[Any]: ...

    def string(self, value: Any, path: str, default: str = "") -> str: ...


def _flag(ctx: Context, value: Any, path: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ctx.fail(path, f"must be a boolean, got {value!r}")
    return value


def _required(ctx: Context, source: Mapping[str, Any], field: str, path: str) -> str:
    value = ctx.string(source.get(field), f"{path}.{field}")
    if not value:
        raise ctx.fail(f"{path}.{field}", "Required value")
    return value


#: in-tree sources keyed on one identifying field: (field of the volume, kind, id field)
_SIMPLE: Final[tuple[tuple[str, VolumeKind, str], ...]] = (
    ("gcePersistentDisk", "gce-pd", "pdName"),
    ("awsElasticBlockStore", "aws-ebs", "volumeID"),
    ("azureDisk", "azure-disk", "diskURI"),
    ("cinder", "cinder", "volumeID"),
)


#: every source field :func:`_decode_one` reads; a volume with none of them is ``other``
_SOURCES: Final = frozenset(
    ("persistentVolumeClaim", "ephemeral", *(f for f, _, _ in _SIMPLE), "rbd", "iscsi", "csi")
)


def _decode_one(ctx: Context, raw: Mapping[str, Any], path: str, pod_name: str) -> PodVolume:
    name = ctx.string(raw.get("name"), f"{path}.name")
    if _SOURCES.isdisjoint(raw):  # e.g. the token volume every pod has: one test, not nine
        return PodVolume(name, "other")
    claim = raw.get("persistentVolumeClaim")
    if claim is not None:
        here = f"{path}.persistentVolumeClaim"
        claim = ctx.mapping(claim, here)
        return PodVolume(
            name,
            "claim",
            claim=ctx.string(claim.get("claimName"), f"{here}.claimName"),
            read_only=_flag(ctx, claim.get("readOnly"), f"{here}.readOnly"),
        )
    if raw.get("ephemeral") is not None:
        ctx.mapping(raw.get("ephemeral"), f"{path}.ephemeral")
        return PodVolume(name, "ephemeral", claim=f"{pod_name}-{name}")
    for field, kind, id_field in _SIMPLE:
        if raw.get(field) is not None:
            here = f"{path}.{field}"
            source = ctx.mapping(raw.get(field), here)
            handle = _required(ctx, source, id_field, here)
            read_only = _flag(ctx, source.get("readOnly"), f"{here}.readOnly")
            return PodVolume(name, kind, handle=handle, read_only=read_only)
    if raw.get("rbd") is not None:
        here = f"{path}.rbd"
        source = ctx.mapping(raw.get("rbd"), here)
        monitors = frozenset(
            ctx.string(m, f"{here}.monitors[{i}]")
            for i, m in enumerate(ctx.items(source.get("monitors"), f"{here}.monitors"))
        )
        if not monitors:
            raise ctx.fail(f"{here}.monitors", "Required value")
        image = _required(ctx, source, "image", here)
        pool = ctx.string(source.get("pool"), f"{here}.pool") or DEFAULT_RBD_POOL
        read_only = _flag(ctx, source.get("readOnly"), f"{here}.readOnly")
        return PodVolume(
            name, "rbd", handle=f"{pool}/{image}", read_only=read_only, monitors=monitors
        )
    if raw.get("iscsi") is not None:
        here = f"{path}.iscsi"
        source = ctx.mapping(raw.get("iscsi"), here)
        _required(ctx, source, "targetPortal", here)
        iqn = _required(ctx, source, "iqn", here)
        read_only = _flag(ctx, source.get("readOnly"), f"{here}.readOnly")
        return PodVolume(name, "iscsi", handle=iqn, read_only=read_only)
    if raw.get("csi") is not None:
        here = f"{path}.csi"
        source = ctx.mapping(raw.get("csi"), here)
        driver = _required(ctx, source, "driver", here)
        read_only = _flag(ctx, source.get("readOnly"), f"{here}.readOnly")
        return PodVolume(name, "csi", driver=driver, read_only=read_only)
    return PodVolume(name, "other")


def decode_pod_volumes(ctx: Context, raw: Any, pod_name: str) -> tuple[PodVolume, ...]:
    """``spec.volumes`` (``raw``, possibly None) of the pod ``pod_name``, in order."""
    if raw is None:
        return ()
    out = []
    for index, item in enumerate(ctx.items(raw, "spec.volumes")):
        if type(item) is dict:  # the usual volume (a token, a ConfigMap...): no path to build
            name = item.get("name")
            if type(name) is str and _SOURCES.isdisjoint(item):
                out.append(PodVolume(name, "other"))
                continue
        path = f"spec.volumes[{index}]"
        out.append(_decode_one(ctx, ctx.mapping(item, path), path, pod_name))
    return tuple(out)
