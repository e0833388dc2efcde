"""Temporary PreFilter guards for features asched does not implement yet.

Volume binding is not modelled yet. Rather than silently placing a pod that
kube-scheduler would treat differently, the PreFilter of the plugin that owns the
feature rejects such a pod as UnschedulableAndUnresolvable with the fixed reason
below; a pod that does not use the feature makes the PreFilter return Skip.

Both implementations (the vectorised plugins and :mod:`asched.reference`) call
:func:`guard_reason`, so the reasons, and which pods they hit, cannot drift apart.
This module may import only :mod:`asched.cluster.records`.
"""

from __future__ import annotations

from typing import Final

from asched.cluster.records import PodInfo

PVC_UNSUPPORTED: Final = (
    "pod has PersistentVolumeClaims: volume scheduling is not supported by asched yet"
)

VOLUME_BINDING: Final = "VolumeBinding"

#: The plugins whose PreFilter is a guard (rejects or skips, never succeeds).
GUARDED_PLUGINS: Final = (VOLUME_BINDING,)


def guard_reason(plugin_name: str, pod: PodInfo) -> str | None:
    """Return the rejection reason of ``plugin_name``'s guard for ``pod``, or None.

    None means the guard lets the pod through; for a guarded plugin the PreFilter then
    returns Skip (its Filter and Score do not run). For any other plugin the answer is
    always None.
    """
    if plugin_name == VOLUME_BINDING:
        return PVC_UNSUPPORTED if pod.pvc_names else None
    return None
