"""What a workload says about storage: CSINodes and local PVs per node, claims per pod, classes.

Validated values (:mod:`asched.tools.bench._volume_fields` reads them from a workload file,
:mod:`asched.tools.bench.perf_translate` from a scheduler_perf config); the raw Kubernetes
objects are built by :mod:`asched.tools.bench.volume_objects`. Quantities are kept as
written (already checked), raw templates as read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

BindingMode = Literal["WaitForFirstConsumer", "Immediate"]
BINDING_MODES: Final = ("WaitForFirstConsumer", "Immediate")
ACCESS_MODES: Final = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
#: the provisioner of a class whose PVs are made by hand (local PVs): nothing provisions
NO_PROVISIONER: Final = "kubernetes.io/no-provisioner"


@dataclass(frozen=True, slots=True, kw_only=True)
class CSINodeSpec:
    """A CSINode per node of the group (scheduler_perf's ``nodeAllocatableStrategy``).

    ``drivers`` maps a CSI driver name to its ``allocatable.count`` (attachable volumes of
    that driver on the node; None: the driver lists no allocatable). ``migrated_plugins``
    are the in-tree plugins counted under their CSI driver (the annotation
    ``storage.alpha.kubernetes.io/migrated-plugins``, comma-joined, set even when empty,
    as upstream's node preparer sets it).
    """

    drivers: Mapping[str, int | None] = field(default_factory=dict)
    migrated_plugins: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalVolumes:
    """``count`` local PVs per node, each of ``storage`` bytes (a quantity as written) in
    class ``storage_class``, with node affinity ``kubernetes.io/hostname In [<node>]``.

    PV ``j`` of node ``n`` is named ``<n>-<name_prefix>-<j>``, available (no claimRef).
    """

    count: int
    storage_class: str
    storage: str = "10Gi"
    access_modes: tuple[str, ...] = ("ReadWriteOnce",)
    name_prefix: str = "local"


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundVolumes:
    """One PV and one claim per pod, bound to each other before the pod is created
    (scheduler_perf's ``persistentVolumeTemplatePath`` + ``persistentVolumeClaimTemplatePath``).

    ``persistent_volume`` and ``claim`` are the template objects, as read; the names,
    the PV's ``claimRef`` and volume ID, the claim's ``volumeName`` and both ``Bound``
    phases are set per pod (:func:`asched.tools.bench.volume_objects.bound_pair`).
    """

    persistent_volume: Mapping[str, Any]
    claim: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimTemplate:
    """An unbound claim per pod, like a StatefulSet's ``volumeClaimTemplates`` entry.

    The claim of pod ``p`` is ``<name>-<p>`` in the pod's namespace, class
    ``storage_class``, requesting ``storage`` bytes (a quantity as written); the pod's
    volume ``name`` refers to it. The PV controller (or the scheduler's PreBind, for
    WaitForFirstConsumer classes) binds it.
    """

    name: str
    storage_class: str
    storage: str = "1Gi"
    access_modes: tuple[str, ...] = ("ReadWriteOnce",)


@dataclass(frozen=True, slots=True, kw_only=True)
class StorageClassSpec:
    """A StorageClass the runner creates before the nodes (cluster-scoped)."""

    name: str
    provisioner: str = NO_PROVISIONER
    binding_mode: BindingMode = "WaitForFirstConsumer"
