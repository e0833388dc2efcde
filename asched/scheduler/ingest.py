"""The single writer: applies watch events to the table, the ledger and the queue.

Called only by the scheduling loop between cycles (never concurrently with one), so a
cycle never sees a half-applied event. Decoding happens here; an object that does not
decode is logged with its field path, counted (``asched_undecodable_objects_total``) and
skipped, and the scheduler keeps running. A pending pod of ours that does not decode is
also handed to ``on_bad_pod`` once per distinct error, so it can be reported on the pod
(it would otherwise wait forever with nothing said), and leaves the queue. An
unexpected exception while applying one event is logged with the object and counted,
and the event is skipped: one odd object never stops the loop.

Pods: a bound, non-terminal pod counts on its node (confirming an assumption when it is
ours); a pending pod whose schedulerName names one of our profiles is queued; a deleted
pod leaves everything, and its node's freed capacity moves parked pods. Nodes: added,
updated (only the parked pods a change can help are moved) or removed. A relist
reconciles: whatever the full set no longer holds is treated as deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, TypeVar, cast

from asched import metrics
from asched.api.objects import ChangeType, KubeObject, NodeJSON, PodJSON
from asched.api.watch import Relisted, WatchEvent
from asched.cluster import storage
from asched.cluster.budgets import decode_budget
from asched.cluster.decode import decode_node
from asched.cluster.decode_context import object_context
from asched.cluster.gangs import GangIndex, Source
from asched.cluster.names import PodKey
from asched.cluster.pod_shapes import PodShapes
from asched.cluster.records import TERMINAL_PHASES, NodeInfo, PodInfo
from asched.cluster.table import NodeTable
from asched.cluster.workloads import KIND_OF_RESOURCE
from asched.errors import DecodeError
from asched.framework.events import ClusterEvent
from asched.gcpause import gc_paused
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.ledger import Ledger
from asched.scheduler.raw import RawObjects

logger = logging.getLogger(__name__)


_Object = TypeVar("_Object", bound=KubeObject)

#: Per storage resource, the cluster events of an added and of an updated object.
STORAGE_EVENTS: Final[Mapping[str, tuple[ClusterEvent, ClusterEvent]]] = {
    "persistentvolumes": (ClusterEvent.PV_ADD, ClusterEvent.PV_UPDATE),
    "persistentvolumeclaims": (ClusterEvent.PVC_ADD, ClusterEvent.PVC_UPDATE),
    "storageclasses": (ClusterEvent.STORAGE_CLASS_ADD, ClusterEvent.STORAGE_CLASS_UPDATE),
    "csinodes": (ClusterEvent.CSI_NODE_ADD, ClusterEvent.CSI_NODE_UPDATE),
    "csidrivers": (ClusterEvent.CSI_DRIVER_ADD, ClusterEvent.CSI_DRIVER_UPDATE),
    "csistoragecapacities": (ClusterEvent.CSI_CAPACITY_ADD, ClusterEvent.CSI_CAPACITY_UPDATE),
}

#: The watched resources that declare gangs, and the kind of each.
GANG_SOURCES: Final[Mapping[str, Source]] = {"podgroups": "PodGroup", "workloads": "Workload"}


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))


def _pod_key(obj: Mapping[str, Any]) -> PodKey:
    return PodKey(_key(obj))


class Ingest:
    """Applies events; see the module docstring."""

    def __init__(
        self,
        table: NodeTable,
        ledger: Ledger,
        queue: SchedulingQueue,
        scheduler_names: Collection[str],
        *,
        on_bad_pod: Callable[[Mapping[str, Any], DecodeError], None] | None = None,
        on_pod_gone: Callable[[PodKey], None] | None = None,
        raw: RawObjects | None = None,
        gangs: GangIndex | None = None,
        on_gang_gone: Callable[[str], None] | None = None,
        keep_annotations: bool = False,
    ) -> None:
        self.table = table
        self.ledger = ledger
        self.queue = queue
        self.scheduler_names = frozenset(scheduler_names)
        self.on_bad_pod = on_bad_pod
        #: called with the key of a pod that is deleted, or that someone else bound while
        #: it was pending here (what was remembered of it for reports can go)
        self.on_pod_gone = on_pod_gone
        #: the JSON scheduler extenders are sent (None: no extender is configured)
        self.raw = raw
        #: PodGroups, Workloads and the pods naming them (None: no profile has gangs)
        self.gangs = gangs
        #: called with the key of a gang whose PodGroup or Workload was deleted
        self.on_gang_gone = on_gang_gone
        #: pending pods of ours that did not decode: key -> the error last reported
        self.undecodable: dict[PodKey, str] = {}
        self.objects: dict[str, dict[str, Mapping[str, Any]]] = {}
        #: kind -> the keys the pages of its relist under way held so far
        self._listed: dict[str, set[str]] = {}
        self.pending: dict[PodKey, PodInfo] = {}
        #: decode pods' and nodes' annotations (a profile's plugin declares that it
        #: reads them; otherwise they are never read)
        self.keep_annotations = keep_annotations
        #: pods of one shape decode their spec once (equal to a full decode)
        self.shapes = PodShapes(keep_annotations=keep_annotations)
        self.events_applied = 0
        self.decode_errors = 0

    def apply(self, event: WatchEvent | Relisted) -> None:
        """Apply one event; never raises (see the module docstring)."""
        self.events_applied += 1
        try:
            self._apply(event)
        except Exception:
            metrics.count_internal_error("ingest")
            what = (
                f"relist of {event.kind}"
                if isinstance(event, Relisted)
                else f"{event.type} {event.kind} {_key(event.obj)}"
            )
            logger.exception("internal error applying %s: skipped", what)

    def _apply(self, event: WatchEvent | Relisted) -> None:
        if event.kind not in ("nodes", "pods"):
            # namespaces' labels, workloads, storage...: what a pod's PreFilter and
            # PreScore may read beside the nodes and pods, which the table notes itself
            self.table.shared_changed()
        if isinstance(event, Relisted):
            self._relist(event)
        elif event.kind == "nodes":  # the resource names the shape (unchecked: decoding checks)
            self._node(event.type, cast("NodeJSON", event.obj))
        elif event.kind == "pods":
            self._pod(event.type, cast("PodJSON", event.obj))
        elif event.kind in STORAGE_EVENTS:
            self._storage(event.kind, event.type, event.obj)
        else:
            store = self.objects.setdefault(event.kind, {})
            if event.type == "DELETED":
                store.pop(_key(event.obj), None)
            else:
                store[_key(event.obj)] = event.obj
            if event.kind == "namespaces":
                self._namespace(event.type, event.obj)
            self._workload(event.kind, event.type, event.obj)
            if event.kind == "poddisruptionbudgets":
                self._budget(event.type, event.obj)
            if event.kind in GANG_SOURCES:
                self._gang(event.kind, event.type, event.obj)

    def _contained(
        self,
        kind: str,
        obj: _Object,
        apply: Callable[[ChangeType, _Object], None],
    ) -> None:
        """One object of a relist, applied on its own: a bug on it skips it, not the rest."""
        try:
            apply("ADDED", obj)
        except Exception:
            metrics.count_internal_error("ingest")
            logger.exception(
                "internal error applying %s %s from a relist: skipped", kind, _key(obj)
            )

    def _relist(self, event: Relisted) -> None:
        with gc_paused():  # a big relist builds records by the million: no garbage to find
            self._relisted(event)

    def _relisted(self, event: Relisted) -> None:
        if event.kind in ("nodes", "pods"):
            self._relisted_page(event)
            return
        if event.kind in STORAGE_EVENTS:
            self._storage_relist(event.kind, event.objects)
        else:
            self.objects[event.kind] = {_key(obj): obj for obj in event.objects}
            if event.kind == "namespaces":
                self.table.namespace_labels.clear()
                for obj in event.objects:
                    self._namespace("ADDED", obj)
            if event.kind == "poddisruptionbudgets":
                self.table.budgets.clear()
                for obj in event.objects:
                    self._budget("ADDED", obj)
            kind = KIND_OF_RESOURCE.get(event.kind)
            if kind is not None:
                self.table.workloads.replace(kind, event.objects)
            if event.kind in GANG_SOURCES and self.gangs is not None:
                before = set(self.gangs.gangs)
                self.gangs.clear_kind(GANG_SOURCES[event.kind])
                for obj in event.objects:
                    self._gang(event.kind, "ADDED", obj, move=False)
                for key in before - set(self.gangs.gangs):
                    if self.on_gang_gone is not None:
                        self.on_gang_gone(key)
                self.queue.move(ClusterEvent.GANG_CHANGE)

    def _relisted_page(self, event: Relisted) -> None:
        """Nodes or pods of a relist, whole or one page: each object is applied as it
        comes; with the last page, what no page held is removed (a whole set removes
        first, then applies, as a page of it cannot)."""
        if event.first:
            self._listed[event.kind] = set()
        present = self._listed.setdefault(event.kind, set())
        present.update(_key(obj) for obj in event.objects)
        whole = event.first and event.last
        if whole:
            self._remove_unlisted(event.kind, present)
        apply = self._node if event.kind == "nodes" else self._pod
        for obj in event.objects:
            self._contained(event.kind, obj, apply)  # type: ignore[arg-type]
        if event.last:
            if not whole:
                self._remove_unlisted(event.kind, present)
            del self._listed[event.kind]

    def _remove_unlisted(self, kind: str, present: set[str]) -> None:
        if kind == "nodes":
            for name in [n for n in self.table.index if n not in present]:
                self._node_deleted(name)
            return
        known = set(self.table.pods) | set(self.pending) | set(self.undecodable)
        for key in known - present:
            self._pod_deleted(PodKey(key))

    def _gang(
        self, resource: str, kind: ChangeType, obj: Mapping[str, Any], *, move: bool = True
    ) -> None:
        """A PodGroup or a Workload: the gangs it declares. Parked members of a gang whose
        declaration changed may now fit (the gang key is the event's object, for
        Coscheduling's hint); a status-only update, such as the leader's own status
        writes, moves nobody."""
        gangs = self.gangs
        if gangs is None:
            return
        workload = GANG_SOURCES[resource] == "Workload"
        if kind == "DELETED":
            changed = gangs.delete_workload(obj) if workload else [gangs.delete_pod_group(obj)]
            for key in changed:
                if self.on_gang_gone is not None:
                    self.on_gang_gone(key)
        elif workload:
            changed = gangs.set_workload(obj)
        else:
            changed = gangs.set_pod_group(obj)
        if move:
            for key in changed:
                self.queue.move(ClusterEvent.GANG_CHANGE, key)

    def _storage(
        self, resource: str, kind: ChangeType, obj: Mapping[str, Any], *, move: bool = True
    ) -> None:
        """A storage object into the volume catalog (table.volumes). An added or updated
        one moves the parked pods the volume plugins' hints say it may help; a deleted
        one helps no rejected pod (upstream registers no delete for them). One that does
        not decode is logged with its field path and counted, and leaves the catalog."""
        which = storage.BY_RESOURCE[resource]
        if kind == "DELETED":
            storage.delete(self.table.volumes, which, obj)
            return
        existed = storage.key_of(which, obj) in which.store(self.table.volumes)
        try:
            record = storage.apply(self.table.volumes, which, obj)
        except Exception as exc:
            self.decode_errors += 1
            metrics.count_undecodable(resource)
            logger.warning("ignoring %s: %s", which.kind, _as_decode_error(which.kind, obj, exc))
            return
        if move:
            added, updated = STORAGE_EVENTS[resource]
            self.queue.move(updated if existed else added, record)

    def _storage_relist(self, resource: str, objects: Collection[Mapping[str, Any]]) -> None:
        """Replace one storage kind whole: what the list no longer holds is deleted."""
        which = storage.BY_RESOURCE[resource]
        present = {storage.key_of(which, obj) for obj in objects}
        for key in [k for k in which.store(self.table.volumes) if k not in present]:
            which.remove(self.table.volumes, key)
        for obj in objects:
            self._contained_storage(resource, obj)
        added, _ = STORAGE_EVENTS[resource]
        self.queue.move(added)

    def _contained_storage(self, resource: str, obj: Mapping[str, Any]) -> None:
        try:
            self._storage(resource, "ADDED", obj, move=False)
        except Exception:
            metrics.count_internal_error("ingest")
            logger.exception(
                "internal error applying %s %s from a relist: skipped", resource, _key(obj)
            )

    def _namespace(self, kind: ChangeType, obj: Mapping[str, Any]) -> None:
        """Namespace labels, for the namespace selectors of pod affinity terms."""
        name = _key(obj)
        if kind == "DELETED":
            self.table.namespace_labels.pop(name, None)
            return
        labels = (obj.get("metadata") or {}).get("labels") or {}
        self.table.namespace_labels[name] = {k: v for k, v in labels.items() if isinstance(v, str)}

    def _budget(self, kind: ChangeType, obj: Mapping[str, Any]) -> None:
        """PodDisruptionBudgets, for preemption's choice of victims."""
        if kind == "DELETED":
            self.table.budgets.pop(_key(obj), None)
        else:
            self.table.budgets[_key(obj)] = decode_budget(obj)

    def _workload(self, resource: str, kind: ChangeType, obj: Mapping[str, Any]) -> None:
        """Services, controllers and sets, for PodTopologySpread's default constraints."""
        workload = KIND_OF_RESOURCE.get(resource)
        if workload is None:
            return
        if kind == "DELETED":
            self.table.workloads.delete(workload, obj)
        else:
            self.table.workloads.upsert(workload, obj)

    def _node(self, kind: ChangeType, obj: NodeJSON) -> None:
        if kind == "DELETED":
            self._node_deleted(_key(obj))
            return
        try:
            node = decode_node(obj, keep_annotations=self.keep_annotations)
        except Exception as exc:
            self.decode_errors += 1
            metrics.count_undecodable("nodes")
            logger.warning("ignoring node: %s", _as_decode_error("Node", obj, exc))
            return
        row = self.table.row_of(node.name)
        old = self.table.node_at(row) if row is not None else None
        self.table.upsert_node(node)
        if self.raw is not None and self.raw.keep_nodes:
            self.raw.nodes[node.name] = obj
        for event in _node_events(old, node):
            self.queue.move(event, node)

    def _node_deleted(self, name: str) -> None:
        self.table.remove_node(name)
        if self.raw is not None:
            self.raw.nodes.pop(name, None)

    def _pod(self, kind: ChangeType, obj: PodJSON) -> None:
        if kind == "DELETED":
            self._pod_deleted(_pod_key(obj))
            return
        if self._confirms_assumption(obj):
            return
        try:
            pod = self.shapes.decode(obj)
        except Exception as exc:
            self._bad_pod(obj, _as_decode_error("Pod", obj, exc))
            return
        self.undecodable.pop(pod.key, None)
        if self.gangs is not None:
            if pod.phase in TERMINAL_PHASES:
                self.gangs.finish_member(pod.key, pod.gang, pod.phase)
            else:
                self.gangs.set_member(pod.key, pod.gang, pod)
        if pod.node_name or pod.deleting:
            self.table.nominations.forget(pod.key)
        elif pod.scheduler_name in self.scheduler_names and pod.key not in self.table.pods:
            # (a pod already assumed may still send a late pending event: ignored)
            self.table.nominations.observed(pod)  # e.g. after a restart
        if pod.node_name:
            if self._unpend(pod.key) is not None and self.on_pod_gone is not None:
                self.on_pod_gone(pod.key)
            self.queue.delete(pod.key)
            if pod.phase in TERMINAL_PHASES:
                self._release(pod.key)
            else:
                placed = self.table.pods.get(pod.key)
                newly = placed is None or placed.row != self.table.row_of(pod.node_name)
                self.ledger.observe_bound(pod)
                if newly:  # a pod newly counted on a node, not a status update of one
                    self.queue.move(ClusterEvent.ASSIGNED_POD_ADD, pod)
        elif pod.scheduler_name in self.scheduler_names:
            if pod.deleting:
                self._unpend(pod.key)
                self.queue.delete(pod.key)
            else:
                known = pod.key in self.pending
                self.pending[pod.key] = pod
                if self.raw is not None:
                    self.raw.pods[pod.key] = obj
                if known:
                    self.queue.update(pod)
                else:
                    self.queue.add(pod)
                    if pod.gang:  # a sibling arrived: parked members may now have enough
                        self.queue.move(ClusterEvent.UNSCHEDULED_POD_ADD, pod)

    def _unpend(self, key: PodKey) -> PodInfo | None:
        """``key`` is no longer a pending pod of ours: forget it (and its JSON)."""
        if self.raw is not None:
            self.raw.pods.pop(key, None)
        return self.pending.pop(key, None)

    def _bad_pod(self, obj: PodJSON, error: DecodeError) -> None:
        """A pod that does not decode: counted and logged; if it is a pending pod of ours
        it leaves the queue and is reported once per distinct error."""
        self.decode_errors += 1
        metrics.count_undecodable("pods")
        key = _pod_key(obj)
        spec = obj.get("spec")
        spec = spec if isinstance(spec, Mapping) else {}
        ours = spec.get("schedulerName") in self.scheduler_names and not spec.get("nodeName")
        if not ours:
            logger.warning("ignoring pod: %s", error)
            return
        self._unpend(key)
        self.queue.delete(key)
        message = str(error)
        if self.undecodable.get(key) == message:
            return  # said already (e.g. the echo of our own report)
        self.undecodable[key] = message
        logger.warning("cannot schedule pod: %s", error, extra={"pod": key})
        if self.on_bad_pod is not None:
            self.on_bad_pod(obj, error)

    def _confirms_assumption(self, obj: PodJSON) -> bool:
        """The watch echoing our own binding: confirm it without decoding the pod.

        The assumed copy already counts the pod on that node, and a bound pod's requests
        cannot have changed since it was decoded pending; this is the most frequent pod event
        when scheduling fast.
        """
        key = _pod_key(obj)
        node = self.ledger.node_of(key)
        if node is None:
            return False
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        meta = obj.get("metadata") or {}
        if spec.get("nodeName") != node or status.get("phase") in TERMINAL_PHASES:
            return False
        if meta.get("deletionTimestamp") is not None:
            return False
        self.ledger.confirm(key)
        self.queue.move(ClusterEvent.ASSIGNED_POD_ADD)  # e.g. what a required affinity waits for
        self._unpend(key)
        self.queue.delete(key)
        return True

    def _pod_deleted(self, key: PodKey) -> None:
        self.undecodable.pop(key, None)
        if self.gangs is not None:
            self.gangs.remove_member(key)
        if self.on_pod_gone is not None:
            self.on_pod_gone(key)
        self.table.nominations.forget(key)
        self._unpend(key)
        self.queue.delete(key)
        self._release(key)

    def _release(self, key: PodKey) -> None:
        self.ledger.forget(key)
        removed = self.table.remove_pod(key)
        if removed is not None:
            self.queue.move(ClusterEvent.ASSIGNED_POD_DELETE, removed)


def _as_decode_error(kind: str, obj: Mapping[str, Any], exc: Exception) -> DecodeError:
    """``exc`` as a DecodeError naming the object (a bug in a decoder becomes one too)."""
    if isinstance(exc, DecodeError):
        return exc
    logger.error("decoding %s %s raised", kind, _key(obj), exc_info=exc)
    return object_context(kind, obj).fail("", f"cannot be decoded ({type(exc).__name__}: {exc})")


def _node_events(old: NodeInfo | None, new: NodeInfo) -> list[ClusterEvent]:
    """The queue events a node change may trigger (only what actually changed)."""
    if old is None:
        return [ClusterEvent.NODE_ADD]
    events = []
    if old.allocatable != new.allocatable:
        events.append(ClusterEvent.NODE_ALLOCATABLE)
    if old.labels != new.labels:
        events.append(ClusterEvent.NODE_LABEL)
    if old.taints != new.taints:
        events.append(ClusterEvent.NODE_TAINT)
    if old.unschedulable != new.unschedulable:
        events.append(ClusterEvent.NODE_SCHEDULABLE)
    if old.annotations != new.annotations:  # (empty both unless a plugin reads them)
        events.append(ClusterEvent.NODE_ANNOTATION)
    return events
