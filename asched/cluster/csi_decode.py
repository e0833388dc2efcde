"""Decode a CSINode (``storage.k8s.io/v1``) into a :class:`~asched.cluster.volumes.CSINode`.

Validated like the other decoders (:mod:`asched.cluster.decode`): a problem raises
:class:`~asched.errors.DecodeError` naming the object and the field, e.g.
``CSINode node-1: spec.drivers[0].allocatable.count: must be a non-negative integer,
got -1``. A driver without ``allocatable`` or without ``count`` is valid: that driver
has no attach limit on the node (None).

The annotation ``storage.alpha.kubernetes.io/migrated-plugins`` (comma-separated
in-tree plugin names) becomes ``migrated_plugins``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asched.cluster.decode_context import object_context
from asched.cluster.volumes import MIGRATED_PLUGINS_ANNOTATION, CSINode


def decode_csi_node(raw: Mapping[str, Any]) -> CSINode:
    """Decode a CSINode; its name is the name of its node."""
    ctx = object_context("CSINode", raw)
    meta = ctx.mapping(raw.get("metadata"), "metadata")
    name = ctx.string(meta.get("name"), "metadata.name")
    if not name:
        raise ctx.fail("metadata.name", "Required value: name is required")
    annotations = ctx.mapping(meta.get("annotations"), "metadata.annotations")
    migrated = ctx.string(
        annotations.get(MIGRATED_PLUGINS_ANNOTATION),
        f"metadata.annotations.{MIGRATED_PLUGINS_ANNOTATION}",
    )
    spec = ctx.mapping(raw.get("spec"), "spec")
    limits: dict[str, int | None] = {}
    for index, item in enumerate(ctx.items(spec.get("drivers"), "spec.drivers")):
        path = f"spec.drivers[{index}]"
        driver = ctx.mapping(item, path)
        driver_name = ctx.string(driver.get("name"), f"{path}.name")
        if not driver_name:
            raise ctx.fail(f"{path}.name", "Required value")
        if driver_name in limits:
            raise ctx.fail(f"{path}.name", f"Duplicate value: {driver_name!r}")
        allocatable = ctx.mapping(driver.get("allocatable"), f"{path}.allocatable")
        count = allocatable.get("count")
        if count is not None and (
            isinstance(count, bool) or not isinstance(count, int) or count < 0
        ):
            raise ctx.fail(
                f"{path}.allocatable.count", f"must be a non-negative integer, got {count!r}"
            )
        limits[driver_name] = count
    return CSINode(
        name=name,
        limits=limits,
        migrated_plugins=frozenset(p.strip() for p in migrated.split(",") if p.strip()),
    )
