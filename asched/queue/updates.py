"""Which updates of a pending pod give it another chance (upstream's ``isPodUpdated``).

kube-scheduler compares the old and new Pod with ``resourceVersion``, ``generation``,
``managedFields``, ``finalizers`` and the whole ``status`` stripped: an update of the
status alone (the scheduler's own PodScheduled write first of all) does not move a parked
pod, since nothing a plugin reads changed. Here the comparison is over what the scheduler
decodes (:class:`~asched.cluster.records.PodInfo`) without the fields read from the
status, so a change to anything the scheduler does not read (an annotation, unless an
enabled plugin declares ``reads_annotations``: then they are decoded and compared) is no
reason either.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Final

from asched.cluster.records import PodInfo

#: PodInfo fields decoded from ``status`` (``preempted`` also needs a deletionTimestamp,
#: and a pod being deleted leaves the queue anyway).
STATUS_FIELDS: Final = frozenset(
    {"nominated_node_name", "phase", "preempted", "scheduled_condition"}
)

_COMPARED: Final = tuple(f.name for f in fields(PodInfo) if f.name not in STATUS_FIELDS)


def pod_updated(old: PodInfo, new: PodInfo) -> bool:
    """True when ``new`` differs from ``old`` in something other than its status."""
    return old is not new and any(getattr(old, name) != getattr(new, name) for name in _COMPARED)
