"""The pvc-protection and pv-protection controllers' rule: when a finalizer may go.

The simulator does not add ``kubernetes.io/pvc-protection`` / ``kubernetes.io/pv-protection``
at creation (the StorageObjectInUseProtection admission plugin is not simulated), but objects
loaded from a real cluster's snapshot carry them. Without a controller to remove them, such a
claim or volume would stay Terminating for ever; :mod:`asched.tools.sim.controllers.volume_controller` removes the
finalizer as upstream does:

* a claim's, once no scheduled pod that has not finished uses it (``persistentVolumeClaim``
  or a generic ephemeral volume ``<pod>-<volume>``);
* a volume's, once it is not ``Bound``.

Pure functions over stored objects; the pod spec's ``volumes`` are opaque to the simulator's
decoder, so they are read defensively.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

JSON = dict[str, Any]

CLAIM_FINALIZER: Final = "kubernetes.io/pvc-protection"
VOLUME_FINALIZER: Final = "kubernetes.io/pv-protection"


def claims_of(pod: JSON) -> set[str]:
    """Names of the claims ``pod`` uses while it may run (scheduled, not finished)."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName") or (pod.get("status") or {}).get("phase") in (
        "Succeeded",
        "Failed",
    ):
        return set()
    volumes = spec.get("volumes")
    names: set[str] = set()
    for volume in volumes if isinstance(volumes, list) else []:
        if not isinstance(volume, dict):
            continue
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and isinstance(source.get("claimName"), str):
            names.add(source["claimName"])
        elif isinstance(volume.get("ephemeral"), dict):
            names.add(f"{pod['metadata']['name']}-{volume.get('name', '')}")
    return names


def in_use(claim: str, pods: Iterable[JSON]) -> bool:
    """Whether any of ``pods`` (of the claim's namespace) uses the claim ``claim``."""
    return any(claim in claims_of(pod) for pod in pods)


def without(obj: JSON, finalizer: str) -> JSON | None:
    """``obj`` without ``finalizer`` (a new dict), or None if it does not carry it."""
    finalizers = obj["metadata"].get("finalizers") or []
    if finalizer not in finalizers:
        return None
    meta = {**obj["metadata"], "finalizers": [item for item in finalizers if item != finalizer]}
    if not meta["finalizers"]:
        del meta["finalizers"]
    return {**obj, "metadata": meta}
