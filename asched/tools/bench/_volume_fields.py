"""Field readers for a workload's storage: ``csiNode`` and ``localVolumes`` of a node group,
``boundVolumes`` and ``volumeClaimTemplates`` of a pod group, top-level ``storageClasses``.

Same shape as :mod:`asched.tools.bench._workload_fields`: each reader records every problem
with its field path and returns a usable value (None or empty) after an error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from asched.config.schema import Problems, Section
from asched.tools.bench import _workload_fields as fields, volume_objects
from asched.tools.bench.volume_spec import (
    ACCESS_MODES,
    BINDING_MODES,
    NO_PROVISIONER,
    BoundVolumes,
    ClaimTemplate,
    CSINodeSpec,
    LocalVolumes,
    StorageClassSpec,
)

if TYPE_CHECKING:
    from asched.tools.bench.workload import NodeGroup, PodGroup

CSI_NODE_FIELDS: Final = ("drivers", "migratedPlugins")
DRIVER_FIELDS: Final = ("name", "count")
LOCAL_FIELDS: Final = ("count", "storage", "storageClassName", "accessModes", "namePrefix")
BOUND_FIELDS: Final = ("persistentVolumeTemplate", "claimTemplate")
CLAIM_FIELDS: Final = ("name", "storageClassName", "storage", "accessModes")
CLASS_FIELDS: Final = ("name", "provisioner", "volumeBindingMode")
#: a DNS-1123 subdomain (object names: classes, CSI drivers, in-tree plugin names' parts)
_SUBDOMAIN: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
#: an in-tree plugin name (``kubernetes.io/aws-ebs``)
_PLUGIN: Final = re.compile(r"^[a-z0-9.-]+/[a-z0-9.-]+$")


def _subdomain(text: str) -> bool:
    return 0 < len(text) <= 253 and _SUBDOMAIN.match(text) is not None


def _name(section: Section, key: str, *, required: bool = True) -> str:
    """A DNS-subdomain name at ``key`` ("" after an error)."""
    text = section.string(key)
    if not text:
        if required and not any(e.path == section.at(key) for e in section.problems.errors):
            section.report(key, "required")
        return ""
    if not _subdomain(text):
        section.report(key, f"must be a DNS subdomain name (lower case), got {text!r}")
        return ""
    return text


def _access_modes(section: Section, default: tuple[str, ...]) -> tuple[str, ...]:
    if not section.has("accessModes"):
        return default
    modes: list[str] = []
    for path, mode in section.strings("accessModes"):
        if mode not in ACCESS_MODES:
            section.problems.add(path, f"must be one of {', '.join(ACCESS_MODES)}; got {mode!r}")
        else:
            modes.append(mode)
    if not modes and not any(
        e.path.startswith(section.at("accessModes")) for e in section.problems.errors
    ):
        section.report("accessModes", "must list at least one access mode")
    return tuple(modes) or default


def _storage(section: Section, default: str) -> str:
    text = fields.quantity_text(section, "storage", "storage")
    return default if text is None else text


def csi_node(group: Section) -> CSINodeSpec | None:
    """``csiNode``: ``{drivers: [{name, count}], migratedPlugins: [name]}``."""
    if not group.has("csiNode"):
        return None
    section = fields.strict_section(
        group.problems, group.get("csiNode"), group.at("csiNode"), CSI_NODE_FIELDS
    )
    drivers: dict[str, int | None] = {}
    for path, raw in section.items("drivers"):
        entry = fields.strict_section(group.problems, raw, path, DRIVER_FIELDS)
        name = _name(entry, "name")
        count = entry.optional_integer("count")
        if count is not None and count < 0:
            entry.report("count", f"must be an integer >= 0, got {count}")
            count = None
        if name in drivers:
            entry.report("name", f"driver {name} is listed twice")
        elif name:
            drivers[name] = count
    plugins: list[str] = []
    for path, plugin in section.strings("migratedPlugins"):
        if not _PLUGIN.match(plugin):
            group.problems.add(
                path, f"must be an in-tree plugin name like kubernetes.io/aws-ebs, got {plugin!r}"
            )
        else:
            plugins.append(plugin)
    return CSINodeSpec(drivers=drivers, migrated_plugins=tuple(plugins))


def local_volumes(group: Section) -> LocalVolumes | None:
    """``localVolumes``: ``{count, storage, storageClassName, accessModes, namePrefix}``."""
    if not group.has("localVolumes"):
        return None
    path = group.at("localVolumes")
    section = fields.strict_section(group.problems, group.get("localVolumes"), path, LOCAL_FIELDS)
    count = fields.count(section)
    prefix = section.string("namePrefix", "local")
    if not _subdomain(prefix) or "." in prefix:
        section.report("namePrefix", f"must be a DNS label prefix, got {prefix!r}")
        prefix = "local"
    return LocalVolumes(
        count=count,
        storage=_storage(section, "10Gi"),
        storage_class=_name(section, "storageClassName"),
        access_modes=_access_modes(section, ("ReadWriteOnce",)),
        name_prefix=prefix,
    )


def bound_volumes(group: Section) -> BoundVolumes | None:
    """``boundVolumes``: ``{persistentVolumeTemplate: pv-aws | pv-csi, claimTemplate: pvc}``."""
    if not group.has("boundVolumes"):
        return None
    path = group.at("boundVolumes")
    section = fields.strict_section(group.problems, group.get("boundVolumes"), path, BOUND_FIELDS)
    pv = _named(section, "persistentVolumeTemplate", volume_objects.PV_TEMPLATES)
    claim = _named(section, "claimTemplate", volume_objects.CLAIM_TEMPLATES, default="pvc")
    if pv is None or claim is None:
        return None
    return BoundVolumes(persistent_volume=pv, claim=claim)


def _named(
    section: Section, key: str, known: Any, default: str | None = None
) -> dict[str, Any] | None:
    name = section.string(key, default or "")
    if not name:
        section.report(key, f"required: one of {', '.join(sorted(known))}")
        return None
    if name not in known:
        section.report(key, f"unknown template {name!r}; one of {', '.join(sorted(known))}")
        return None
    return dict(known[name])


def claim_templates(group: Section) -> tuple[ClaimTemplate, ...]:
    """``volumeClaimTemplates``: ``[{name, storageClassName, storage, accessModes}]``."""
    out: list[ClaimTemplate] = []
    seen: set[str] = set()
    for path, raw in group.items("volumeClaimTemplates"):
        section = fields.strict_section(group.problems, raw, path, CLAIM_FIELDS)
        name = _name(section, "name")
        if "." in name:
            section.report("name", f"must be a DNS label (a volume name), got {name!r}")
            name = ""
        if name in seen:
            section.report("name", f"{name!r} is already used by another claim template")
        seen.add(name)
        out.append(
            ClaimTemplate(
                name=name,
                storage_class=_name(section, "storageClassName"),
                storage=_storage(section, "1Gi"),
                access_modes=_access_modes(section, ("ReadWriteOnce",)),
            )
        )
    return tuple(out)


def storage_classes(top: Section) -> tuple[StorageClassSpec, ...]:
    """``storageClasses``: ``[{name, provisioner, volumeBindingMode}]``."""
    out: list[StorageClassSpec] = []
    seen: set[str] = set()
    for path, raw in top.items("storageClasses"):
        section = fields.strict_section(top.problems, raw, path, CLASS_FIELDS)
        name = _name(section, "name")
        if name in seen:
            section.report("name", f"{name!r} is already declared")
        seen.add(name)
        provisioner = section.string("provisioner", NO_PROVISIONER)
        if not _PLUGIN.match(provisioner) and not _subdomain(provisioner):
            section.report("provisioner", f"must be a provisioner name, got {provisioner!r}")
        mode = section.string("volumeBindingMode", "WaitForFirstConsumer")
        if mode not in BINDING_MODES:
            section.report(
                "volumeBindingMode", f"must be one of {', '.join(BINDING_MODES)}; got {mode!r}"
            )
            mode = "WaitForFirstConsumer"
        out.append(
            StorageClassSpec(
                name=name,
                provisioner=provisioner,
                binding_mode="Immediate" if mode == "Immediate" else "WaitForFirstConsumer",
            )
        )
    return tuple(out)


def check_classes(
    problems: Problems,
    classes: tuple[StorageClassSpec, ...],
    nodes: tuple[NodeGroup, ...],
    groups: Mapping[str, tuple[PodGroup, ...]],
) -> None:
    """Local PVs and claim templates name a class of ``storageClasses``."""
    declared = {c.name for c in classes}
    choices = ", ".join(sorted(declared)) or "none declared"

    def check(path: str, name: str) -> None:
        if name and name not in declared:
            problems.add(path, f"storage class {name!r} is not in storageClasses ({choices})")

    for index, node_group in enumerate(nodes):
        if node_group.local_volumes is not None:
            check(
                f"nodes[{index}].localVolumes.storageClassName",
                node_group.local_volumes.storage_class,
            )
    for key, pod_groups in groups.items():
        for index, group in enumerate(pod_groups):
            for number, template in enumerate(group.claim_templates):
                path = f"{key}[{index}].volumeClaimTemplates[{number}].storageClassName"
                check(path, template.storage_class)
