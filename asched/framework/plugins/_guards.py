"""Temporary PreFilter guards for features asched does not implement yet.

Volume binding, required inter-pod (anti-)affinity and hard topology spread constraints
are not modelled yet (issue 6 and later). Rather than silently placing a pod that
kube-scheduler would treat differently, the PreFilter of the plugin that owns the
feature rejects such a pod as UnschedulableAndUnresolvable with one of the fixed
reasons below; a pod that does not use the feature makes the PreFilter return Skip.

Both implementations (the vectorised plugins and :mod:`asched.reference`) call
:func:`guard_reason`, so the reasons, and which pods they hit, cannot drift apart.
This module may import only :mod:`asched.cluster.records`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from asched.cluster.records import PodInfo

PVC_UNSUPPORTED: Final = (
    "pod has PersistentVolumeClaims: volume scheduling is not supported by asched yet"
)
SPREAD_UNSUPPORTED: Final = (
    "pod has topology spread constraints with whenUnsatisfiable=DoNotSchedule: "
    "not supported by asched yet"
)

VOLUME_BINDING: Final = "VolumeBinding"
POD_TOPOLOGY_SPREAD: Final = "PodTopologySpread"

#: The plugins whose PreFilter is a guard (rejects or skips, never succeeds).
GUARDED_PLUGINS: Final = (VOLUME_BINDING, POD_TOPOLOGY_SPREAD)

_REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"


def _has_required_terms(affinity: Mapping[str, Any] | None) -> bool:
    return affinity is not None and bool(affinity.get(_REQUIRED))


def guard_reason(plugin_name: str, pod: PodInfo) -> str | None:
    """Return the rejection reason of ``plugin_name``'s guard for ``pod``, or None.

    None means the guard lets the pod through; for the three guarded plugins the
    PreFilter then returns Skip (their Filter and Score do not run). For any other
    plugin the answer is always None.
    """
    if plugin_name == VOLUME_BINDING:
        return PVC_UNSUPPORTED if pod.pvc_names else None
    if plugin_name == POD_TOPOLOGY_SPREAD:
        hard = any(
            c.get("whenUnsatisfiable") == "DoNotSchedule" for c in pod.topology_spread_constraints
        )
        return SPREAD_UNSUPPORTED if hard else None
    return None
