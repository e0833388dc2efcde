"""Which PersistentVolume the simulated PV controller binds a claim to: pure functions.

Follows upstream's ``FindMatchingVolume`` as the PV controller calls it (no node: node affinity
is not looked at, as upstream ignores it for Immediate binding):

1. a volume whose ``claimRef`` names the claim (``namespace``/``name``, and ``uid`` unless the
   ref has none) wins outright, capacity and phase unchecked;
2. otherwise, for a claim whose binding is not delayed (WaitForFirstConsumer without a selected
   node), the smallest volume that is ``Available``, unclaimed, not being deleted, of the same
   class (``""`` when unset), whose access modes include all of the claim's, of the same volume
   mode, whose labels the claim's ``selector`` selects, and whose ``capacity.storage`` is at
   least the request. Ties keep the first in name order (upstream's index order is a map's).

Quantities compare exactly (:func:`asched.tools.sim.apiserver.quantity.compare`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from asched.tools.sim.apiserver import quantity, selectors

JSON = dict[str, Any]


def volume_class(volume: JSON) -> str:
    """A PV's class: ``spec.storageClassName``, else the beta annotation, else ``""``."""
    name = volume["spec"].get("storageClassName")
    if name is not None:
        return str(name)
    annotations = volume["metadata"].get("annotations") or {}
    return str(annotations.get("volume.beta.kubernetes.io/storage-class", ""))


def claim_class(claim: JSON) -> str:
    """A claim's requested class, as :func:`volume_class` reads a PV's."""
    annotations = claim["metadata"].get("annotations") or {}
    beta = annotations.get("volume.beta.kubernetes.io/storage-class")
    if beta is not None:
        return str(beta)
    return str(claim["spec"].get("storageClassName") or "")


def is_bound_to(volume: JSON, claim: JSON) -> bool:
    """Upstream's ``IsVolumeBoundToClaim``: the ref names the claim (and its uid, if it has one)."""
    ref = volume["spec"].get("claimRef")
    if not ref:
        return False
    meta = claim["metadata"]
    if ref.get("name") != meta["name"] or ref.get("namespace") != meta.get("namespace"):
        return False
    return not ref.get("uid") or ref["uid"] == meta.get("uid")


def requested_storage(claim: JSON) -> str:
    """The claim's ``resources.requests.storage`` (validated: always present)."""
    return str(claim["spec"]["resources"]["requests"]["storage"])


def _satisfies(volume: JSON, claim: JSON) -> bool:
    spec, wanted = volume["spec"], claim["spec"]
    if not set(wanted.get("accessModes") or []) <= set(spec.get("accessModes") or []):
        return False
    selector = wanted.get("selector")
    if selector is not None and not selectors.structured_matches(
        selector, volume["metadata"].get("labels")
    ):
        return False
    capacity = (spec.get("capacity") or {}).get("storage")
    return capacity is not None and quantity.compare(capacity, requested_storage(claim)) >= 0


def mismatch(volume: JSON, claim: JSON) -> str | None:
    """Why ``volume`` cannot take the claim that names it (upstream's
    ``checkVolumeSatisfyClaim``, its words and order), or None."""
    if volume["metadata"].get("deletionTimestamp"):
        return f'the volume is marked for deletion "{volume["metadata"]["name"]}"'
    capacity = (volume["spec"].get("capacity") or {}).get("storage", "0")
    if quantity.compare(capacity, requested_storage(claim)) < 0:
        return "requested PV is too small"
    if volume_class(volume) != claim_class(claim):
        return "storageClassName does not match"
    if (volume["spec"].get("volumeAttributesClassName") or "") != (
        claim["spec"].get("volumeAttributesClassName") or ""
    ):  # VolumeAttributesClass: GA in 1.34
        return "volumeAttributesClassName does not match"
    if volume["spec"].get("volumeMode", "Filesystem") != claim["spec"].get(
        "volumeMode", "Filesystem"
    ):
        return "incompatible volumeMode"
    if not set(claim["spec"].get("accessModes") or []) <= set(
        volume["spec"].get("accessModes") or []
    ):
        return "incompatible accessMode"
    return None


def best_match(volumes: Iterable[JSON], claim: JSON, *, delayed: bool) -> JSON | None:
    """The volume to bind ``claim`` to, or None (see the module docstring)."""
    smallest: JSON | None = None
    wanted_class = claim_class(claim)
    wanted_mode = claim["spec"].get("volumeMode", "Filesystem")
    for volume in volumes:
        spec = volume["spec"]
        if spec.get("volumeMode", "Filesystem") != wanted_mode:
            continue
        if volume["metadata"].get("deletionTimestamp"):
            continue
        if is_bound_to(volume, claim):
            return volume
        if delayed:
            continue
        if (volume.get("status") or {}).get("phase") != "Available" or spec.get("claimRef"):
            continue
        if volume_class(volume) != wanted_class or not _satisfies(volume, claim):
            continue
        if smallest is None or (
            quantity.compare(spec["capacity"]["storage"], smallest["spec"]["capacity"]["storage"])
            < 0
        ):
            smallest = volume
    return smallest


def claim_ref(claim: JSON) -> JSON:
    """The ``claimRef`` a binder writes into a PV (``ref.GetReference`` of the claim)."""
    meta = claim["metadata"]
    return {
        "kind": "PersistentVolumeClaim",
        "namespace": meta.get("namespace", ""),
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "apiVersion": "v1",
        "resourceVersion": meta.get("resourceVersion", ""),
    }
