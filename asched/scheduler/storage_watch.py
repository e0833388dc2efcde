"""Which storage resources the scheduler watches, and where (the volume plugins' inputs).

Watched when some profile enables a volume plugin (the default profile enables all four).
Every server asched supports (v1.34 on, docs/deploy.md) serves them all at fixed paths,
CSIStorageCapacity included (``storage.k8s.io/v1`` since 1.24).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

#: The plugins that read the storage objects.
VOLUME_PLUGINS: Final = frozenset(
    {"VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits"}
)

#: resource -> collection path.
PATHS: Final[Mapping[str, str]] = {
    "persistentvolumes": "/api/v1/persistentvolumes",
    "persistentvolumeclaims": "/api/v1/persistentvolumeclaims",
    "storageclasses": "/apis/storage.k8s.io/v1/storageclasses",
    "csinodes": "/apis/storage.k8s.io/v1/csinodes",
    "csidrivers": "/apis/storage.k8s.io/v1/csidrivers",
    "csistoragecapacities": "/apis/storage.k8s.io/v1/csistoragecapacities",
}


def needs_storage(enabled: Iterable[str]) -> bool:
    """Whether any of the ``enabled`` plugin names reads storage objects."""
    return not VOLUME_PLUGINS.isdisjoint(enabled)
