"""Playing the PV controller's part in live tests, on any backend.

Every write here re-reads the object, changes only what is not done yet, and retries on
409 Conflict, so the tests pass whether or not the backend runs a PV controller of its
own (the simulator's, kube-controller-manager): whoever comes first does the work, the
other finds it done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asched.tools.backends.errors import StatusError

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"


async def settle(
    rest: Any, path: str, change: Callable[[dict[str, Any]], bool], *, subresource: str = ""
) -> dict[str, Any]:
    """Read ``path``; when ``change`` alters the object (it returns True), write it back
    (to ``path/subresource``), retrying on conflict. Returns the object as stored."""
    while True:
        obj = await rest.get(path)
        if not change(obj):
            return dict(obj)
        try:
            return dict(await rest.replace(f"{path}/{subresource}" if subresource else path, obj))
        except StatusError as exc:
            if exc.status != 409:
                raise


def _phase(phase: str, unless: tuple[str, ...] = ()) -> Callable[[dict[str, Any]], bool]:
    def change(obj: dict[str, Any]) -> bool:
        current = obj.get("status", {}).get("phase")
        if current == phase or current in unless:
            return False
        obj["status"] = {**obj.get("status", {}), "phase": phase}
        return True

    return change


async def pv_available(rest: Any, name: str) -> dict[str, Any]:
    """A new PV becomes Available (the controller's first step); the PV as stored."""
    path = f"/api/v1/persistentvolumes/{name}"
    await settle(rest, path, _phase("Available", unless=("Bound",)), subresource="status")
    return dict(await rest.get(path))


async def claim_pending(rest: Any, namespace: str, name: str) -> dict[str, Any]:
    """A new claim is Pending (the controller's first step); the claim as stored."""
    path = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}"
    await settle(rest, path, _phase("Pending", unless=("Bound",)), subresource="status")
    return dict(await rest.get(path))


async def bind(rest: Any, namespace: str, claim: str, pv: str) -> dict[str, Any]:
    """Complete a binding the scheduler started (the PV's claimRef names the claim): the
    claim gets the volume name and bind-completed, the PV phase Bound. The claim as
    stored."""

    def claim_bound(obj: dict[str, Any]) -> bool:
        annotations = obj["metadata"].setdefault("annotations", {})
        if obj["spec"].get("volumeName") == pv and BIND_COMPLETED in annotations:
            return False
        obj["spec"]["volumeName"] = pv
        annotations[BIND_COMPLETED] = "yes"
        return True

    path = f"/api/v1/namespaces/{namespace}/persistentvolumeclaims/{claim}"
    stored = await settle(rest, path, claim_bound)
    await settle(rest, f"/api/v1/persistentvolumes/{pv}", _phase("Bound"), subresource="status")
    return stored


async def delete(rest: Any, path: str) -> None:
    """Delete an object a test made (gone already is fine)."""
    try:
        await rest.delete(path)
    except StatusError as exc:
        if exc.status != 404:
            raise
