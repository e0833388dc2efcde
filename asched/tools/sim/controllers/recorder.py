"""Events the simulated controllers record, as client-go's event recorder writes them.

A core/v1 Event in the object's namespace named ``<object>.<hex nanoseconds>``, with
``source.component`` the controller's name, count 1 and both timestamps now. Upstream's
recorder aggregates repeats into one Event with a growing count; the simulated controllers
instead record each (object, reason) once (see :class:`Once`).
"""

from __future__ import annotations

import logging
import time
from typing import Any, Final, Literal

from asched.tools.sim.apiserver import apierrors
from asched.tools.sim.apiserver.registry import Registry
from asched.tools.sim.apiserver.resources import BY_GVR

logger = logging.getLogger(__name__)

JSON = dict[str, Any]
EventType = Literal["Normal", "Warning"]

_EVENTS: Final = BY_GVR[("", "v1", "events")]


def record(
    registry: Registry,
    obj: JSON,
    kind: str,
    type_: EventType,
    reason: str,
    message: str,
    component: str,
) -> None:
    """Create one Event about ``obj`` (a stored object of ``kind``, API group core)."""
    meta = obj["metadata"]
    namespace = meta.get("namespace") or "default"
    now = registry.clock.now()
    event = {
        "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": namespace},
        "involvedObject": {
            "kind": kind,
            "namespace": meta.get("namespace", ""),
            "name": meta["name"],
            "uid": meta.get("uid", ""),
            "apiVersion": "v1",
            "resourceVersion": meta.get("resourceVersion", ""),
        },
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": type_,
    }
    try:
        registry.create(_EVENTS, namespace, event)
    except apierrors.StatusError as exc:  # e.g. the namespace is terminating
        logger.debug("event %s about %s/%s not recorded: %s", reason, namespace, meta["name"], exc)


class Once:
    """Remembers which reasons each object (by uid) already has an Event for."""

    def __init__(self) -> None:
        self._seen: dict[str, set[str]] = {}

    def first(self, obj: JSON, reason: str) -> bool:
        """True the first time ``reason`` is given for this object."""
        reasons = self._seen.setdefault(str(obj["metadata"].get("uid", "")), set())
        if reason in reasons:
            return False
        reasons.add(reason)
        return True

    def forget(self, uid: str) -> None:
        """Drop what was remembered about a deleted object."""
        self._seen.pop(uid, None)
