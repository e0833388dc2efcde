"""VolumeBinding's PreBind: write the assumed bindings, then wait for the PV controller.

Upstream's ``BindPodVolumes`` (``bindAPIUpdate`` then ``checkBindings``), run in the
binding task, never in the scheduling cycle:

1. PUT each matched PV with ``spec.claimRef`` naming the claim (and
   ``pv.kubernetes.io/bound-by-controller: "yes"`` unless the PV was pre-bound to it),
   keeping the ``resourceVersion`` the scheduler read, so a PV changed meanwhile gets
   409 Conflict; then PUT each claim to provision with the selected-node annotation.
   The first refusal ends PreBind with an Error, which goes down the one rollback path
   (Unreserve restores the assumptions; what was written stays written, as upstream
   leaves it: "there is no API rollback if the actual binding fails").
2. Wait until every claim is bound as ``checkBindings`` decides, re-checking whenever
   the catalog hears a change (its listeners: the watch's PV and claim updates), never
   by polling, for at most ``bindTimeoutSeconds`` of loop time. A condition upstream
   treats as final (the PV's claimRef reset, the selected-node annotation removed or
   changed, node affinity no longer met, the pod deleted) fails at once.

Messages are upstream's, prefixed ``binding volumes:`` as its wrapping error is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final

from asched.cluster.pv_index import node_affinity_matches
from asched.cluster.records import PodInfo
from asched.cluster.volumes import (
    BIND_COMPLETED_ANNOTATION,
    SELECTED_NODE_ANNOTATION,
    PersistentVolume,
    PersistentVolumeClaim,
)
from asched.framework.hosts import VolumeHost
from asched.framework.status import Status

NAME: Final = "VolumeBinding"
BOUND_BY_CONTROLLER_ANNOTATION: Final = "pv.kubernetes.io/bound-by-controller"
TIMED_OUT: Final = "timed out waiting for the condition"


class VolumeWriteError(Exception):
    """A PV or claim update the API server refused or did not answer (the message says
    which object and why)."""


class _Failed(Exception):
    """checkBindings decided the binding cannot complete (the message is upstream's)."""


def _older(written: str, seen: str) -> bool:
    """Whether the watched object (``seen``) is older than what PreBind wrote."""
    try:
        return int(written) > int(seen)
    except ValueError:
        return False


def _metadata(body: dict[str, Any]) -> dict[str, Any]:
    meta = body.get("metadata")
    if not isinstance(meta, dict):
        meta = body["metadata"] = {}
    return meta


def _annotated(body: dict[str, Any], key: str, value: str) -> None:
    meta = _metadata(body)
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    annotations[key] = value


def _writable(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``raw`` whose ``spec``, ``metadata`` and annotations are its own: the
    parts PreBind changes (the rest is shared with the watched object, never mutated;
    a deep copy of a whole PV cost more than the rest of PreBind's cycle)."""
    body = dict(raw)
    for part in ("spec", "metadata"):
        if isinstance(body.get(part), Mapping):
            body[part] = dict(body[part])
    meta = body.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("annotations"), Mapping):
        meta["annotations"] = dict(meta["annotations"])
    return body


def pv_with_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> dict[str, Any]:
    """The PV's raw object bound to ``claim`` (upstream's GetBindVolumeToClaim)."""
    body = _writable(pv.raw)
    spec = body.get("spec")
    if not isinstance(spec, dict):
        spec = body["spec"] = {}
    before = spec.get("claimRef")
    prebound = (
        isinstance(before, Mapping)
        and before.get("namespace") == claim.namespace
        and before.get("name") == claim.name
        and before.get("uid", "") in ("", claim.uid)
    )
    spec["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "namespace": claim.namespace,
        "name": claim.name,
        "uid": claim.uid,
        "apiVersion": "v1",
        "resourceVersion": claim.resource_version,
    }
    annotations = _metadata(body).get("annotations")
    if not prebound and not (
        isinstance(annotations, Mapping) and BOUND_BY_CONTROLLER_ANNOTATION in annotations
    ):
        _annotated(body, BOUND_BY_CONTROLLER_ANNOTATION, "yes")
    return body


def claim_on_node(claim: PersistentVolumeClaim, node: str) -> dict[str, Any]:
    """The claim's raw object with the selected-node annotation."""
    body = _writable(claim.raw)
    _annotated(body, SELECTED_NODE_ANNOTATION, node)
    return body


def _fully_bound(claim: PersistentVolumeClaim) -> bool:
    return bool(claim.volume_name) and BIND_COMPLETED_ANNOTATION in claim.annotations


def _version(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    version = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
    return version if isinstance(version, str) else ""


def check_bindings(
    host: VolumeHost,
    pod: PodInfo,
    node: str,
    bindings: list[tuple[str, str, str]],
    provisions: list[tuple[str, str]],
) -> bool:
    """Upstream's checkBindings on the watched objects: True when all are bound, False
    to wait; raises :class:`_Failed` when the binding cannot complete.

    ``bindings``: (PV name, claim key, the PV's written resourceVersion);
    ``provisions``: (claim key, its written resourceVersion)."""
    catalog = host.catalog
    labels = host.node_labels(node)
    if labels is None:
        raise _Failed(f'failed to get node "{node}": node "{node}" not found')
    if not host.pod_exists(pod):
        raise _Failed(f'pod does not exist any more: pod "{pod.name}" not found')
    for pv_name, claim_key, written in bindings:
        pv = catalog.api_pv(pv_name)
        if pv is None:
            raise _Failed(f'failed to check binding: PersistentVolume "{pv_name}" not found')
        claim = catalog.api_claim(claim_key)
        if claim is None:
            raise _Failed(f'failed to check binding: PersistentVolumeClaim "{claim_key}" not found')
        if _older(written, pv.resource_version):
            return False
        if not node_affinity_matches(pv.node_affinity, labels):
            raise _Failed(
                f'pv "{pv_name}" node affinity doesn\'t match node "{node}": '
                "no matching NodeSelectorTerms"
            )
        if pv.claim_ref is None or not pv.claim_ref.uid:
            raise _Failed(f'ClaimRef got reset for pv "{pv_name}"')
        if not _fully_bound(claim):
            return False
    for claim_key, written in provisions:
        claim = catalog.api_claim(claim_key)
        if claim is None:
            raise _Failed(
                f'failed to check provisioning pvc: PersistentVolumeClaim "{claim_key}" not found'
            )
        if _older(written, claim.resource_version):
            return False
        if not claim.annotations:
            raise _Failed(f'selectedNode annotation reset for PVC "{claim.name}"')
        if claim.annotations.get(SELECTED_NODE_ANNOTATION) != node:
            raise _Failed(f'provisioning failed for PVC "{claim.name}"')
        if claim.volume_name:
            pv = catalog.api_pv(claim.volume_name)
            if pv is None:
                return False
            if not node_affinity_matches(pv.node_affinity, labels):
                raise _Failed(
                    f'pv "{pv.name}" node affinity doesn\'t match node "{node}": '
                    "no matching NodeSelectorTerms"
                )
        if not _fully_bound(claim):
            return False
    return True


async def _write_bindings(
    host: VolumeHost,
    node: str,
    bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]],
    provisions: list[PersistentVolumeClaim],
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """PUT each PV bound to its claim, then each claim to provision annotated with
    ``node``, in order; raises :class:`VolumeWriteError` at the first refusal.

    Returns what :func:`check_bindings` waits on: (PV name, claim key, the PV's written
    resourceVersion) per binding, and (claim key, its written resourceVersion) per
    provisioned claim."""
    written_pvs: list[tuple[str, str, str]] = []
    written_claims: list[tuple[str, str]] = []
    for pv, claim in bindings:
        stored = await host.replace("persistentvolumes", pv_with_claim(pv, claim))
        written_pvs.append((pv.name, claim.key, _version(stored)))
    for claim in provisions:
        stored = await host.replace("persistentvolumeclaims", claim_on_node(claim, node))
        written_claims.append((claim.key, _version(stored)))
    return written_pvs, written_claims


async def bind_pod_volumes(
    host: VolumeHost,
    pod: PodInfo,
    node: str,
    bindings: list[tuple[PersistentVolume, PersistentVolumeClaim]],
    provisions: list[PersistentVolumeClaim],
    bind_timeout: float,
) -> Status:
    """Write the bindings and wait for them (see the module docstring); ``bind_timeout`` in
    seconds of loop time."""
    try:
        written_pvs, written_claims = await _write_bindings(host, node, bindings, provisions)
    except VolumeWriteError as exc:
        return Status.error(str(exc), NAME)
    heard = asyncio.Event()
    catalog = host.catalog
    pv_names = {name for name, _, _ in written_pvs}
    claim_keys = {key for _, key, _ in written_pvs} | {key for key, _ in written_claims}

    def wake(resource: str, key: str) -> None:
        """Re-check only for a change to one of this pod's claims or PVs (a provisioned
        claim's PV is known by the claim's volume name)."""
        if resource == "persistentvolumeclaims":
            relevant = key in claim_keys
        elif resource == "persistentvolumes":
            relevant = key in pv_names or any(
                (claim := catalog.api_claim(claim_key)) is not None and claim.volume_name == key
                for claim_key, _ in written_claims
            )
        else:
            relevant = False
        if relevant:
            heard.set()

    def gone(key: str) -> None:
        if key == pod.key:
            heard.set()

    listeners = catalog.listeners
    listeners.append(wake)
    host.pod_listeners.append(gone)
    try:
        async with asyncio.timeout(bind_timeout):
            while not check_bindings(host, pod, node, written_pvs, written_claims):
                heard.clear()
                await heard.wait()
    except _Failed as exc:
        return Status.error(f"binding volumes: {exc}", NAME)
    except TimeoutError:
        return Status.error(f"binding volumes: {TIMED_OUT}", NAME)
    finally:
        listeners.remove(wake)
        host.pod_listeners.remove(gone)
    return Status.success()
