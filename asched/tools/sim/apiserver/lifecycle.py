"""Deletion, binding, namespace termination and the hollow kubelet's timers.

These are the verbs whose behaviour is a small state machine rather than a write::

    pod DELETE (bound, grace g > 0)     namespace DELETE
      live --MODIFIED--> terminating      Active --MODIFIED--> Terminating
        (deletionTimestamp = now+g)         (contents deleted, as the namespace
      terminating --after g--> DELETED       controller would) --> DELETED

    object with finalizers: DELETE marks it (deletionTimestamp, grace 0, MODIFIED);
    the update that removes the last finalizer deletes it (MODIFIED, DELETED).

Timers run on the registry's :class:`~asched.tools.sim.apiserver.registry.Clock` (scaled simulated
time) and re-check the object's uid when they fire, so a pod deleted and re-created
under the same name is never touched by a stale timer.
"""

from __future__ import annotations

import calendar
import contextlib
import time
from typing import Any, Final

from asched.tools.sim.apiserver import apierrors, crds, kinds, pods
from asched.tools.sim.apiserver.binding import Binding
from asched.tools.sim.apiserver.listing import ListOptions
from asched.tools.sim.apiserver.options import DeleteOptions
from asched.tools.sim.apiserver.registry import Registry
from asched.tools.sim.apiserver.resources import ResourceSpec
from asched.tools.sim.apiserver.store import Entry, object_key

JSON = dict[str, Any]

PROTECTED_NAMESPACES: Final = frozenset({"default", "kube-system", "kube-public"})
#: how long the simulated namespace controller takes to empty and remove a namespace.
NAMESPACE_PURGE_SECONDS: Final = 1.0


def _check_preconditions(spec: ResourceSpec, entry: Entry, options: DeleteOptions) -> None:
    meta = entry.obj["metadata"]
    uid = options.precondition_uid
    if uid and uid != meta.get("uid"):
        raise apierrors.conflict(
            spec.resource,
            spec.group,
            entry.name,
            f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.get('uid')}",
        )
    rv = options.precondition_resource_version
    if rv and rv != meta.get("resourceVersion"):
        raise apierrors.conflict(
            spec.resource,
            spec.group,
            entry.name,
            f"Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {meta.get('resourceVersion')}",
        )


def _marked(entry: Entry, timestamp: str, grace: int, **extra: Any) -> JSON:
    obj = dict(entry.obj)
    obj["metadata"] = {
        **obj["metadata"],
        "deletionTimestamp": timestamp,
        "deletionGracePeriodSeconds": grace,
    }
    obj.update(extra)
    return obj


def delete(
    registry: Registry,
    spec: ResourceSpec,
    namespace: str,
    name: str,
    options: DeleteOptions,
) -> tuple[Entry, bool]:
    """DELETE: ``(entry, gone)``; ``gone`` is False while the object is terminating."""
    dry_run = options.dry_run
    entry = registry.get(spec, namespace, name)
    _check_preconditions(spec, entry, options)
    if spec.storage == "namespaces":
        return _delete_namespace(registry, entry, dry_run=dry_run), False
    if spec.storage == crds.STORAGE and not entry.obj["metadata"].get("deletionTimestamp"):
        return crds.mark_deleted(registry, entry, dry_run=dry_run), False
    table = registry.table(spec)
    meta = entry.obj["metadata"]
    hooks = kinds.hooks_of(spec)
    grace = hooks.grace_seconds(entry.obj, options.grace_period_seconds)
    finalizers = meta.get("finalizers") or []
    if meta.get("deletionTimestamp"):
        current = meta.get("deletionGracePeriodSeconds") or 0
        if not current and not finalizers:
            deadline = None  # a mark left behind: remove now
        elif grace >= current or not current:
            return entry, False  # already terminating; only a shorter grace changes it
        else:  # Go's BeforeDelete: the deadline moves to (request time + new grace)
            deadline = _shifted(meta["deletionTimestamp"], grace - current)
    elif hooks.graceful:
        deadline = registry.clock.now(grace)
    elif finalizers:
        deadline, grace = registry.clock.now(), 0
    else:
        deadline = None
    if dry_run:
        return entry, grace == 0 and not finalizers
    if deadline is not None:
        # Graceful kinds are first marked (a MODIFIED event), even with grace 0.
        entry = registry.write(spec.storage, _marked(entry, deadline, grace))
        if grace > 0:
            _finish_later(registry, spec.storage, entry, grace)
    if grace > 0 or finalizers:
        return entry, False
    return registry.store.remove(table, entry.key), True  # at the removal's version (v1.37)


def _shifted(timestamp: str, seconds: int) -> str:
    try:
        then = calendar.timegm(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return timestamp
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(then + seconds))


def _finish_later(registry: Registry, storage: str, entry: Entry, grace: float) -> None:
    uid = entry.obj["metadata"].get("uid")
    registry.clock.later(grace, lambda: finish(registry, storage, entry.key, uid))


def finish(registry: Registry, storage: str, key: str, uid: str | None) -> None:
    """The end of a grace period: remove the object (or wait for its finalizers)."""
    table = registry.store.tables[storage]
    entry = table.objects.get(key)
    if entry is None or entry.obj["metadata"].get("uid") != uid:
        return
    meta = entry.obj["metadata"]
    if meta.get("finalizers"):
        if meta.get("deletionGracePeriodSeconds"):
            registry.write(
                storage, _marked(entry, meta.get("deletionTimestamp", registry.clock.now()), 0)
            )
        return
    registry.store.remove(table, key)


def delete_collection(
    registry: Registry,
    spec: ResourceSpec,
    namespace: str | None,
    options: ListOptions,
    delete_options: DeleteOptions,
) -> list[Entry]:
    """DELETE on a collection: delete every selected object, return them as listed."""
    found, _ = registry.list(
        spec, namespace, ListOptions(labels=options.labels, fields=options.fields)
    )
    for entry in found:
        with contextlib.suppress(apierrors.StatusError):
            delete(registry, spec, entry.namespace, entry.name, delete_options)
    return found  # as the real server: the list as it was before the deletions


def _delete_namespace(registry: Registry, entry: Entry, *, dry_run: bool) -> Entry:
    name = entry.name
    if name in PROTECTED_NAMESPACES:
        raise apierrors.forbidden_error("namespaces", "", name, "this namespace may not be deleted")
    if entry.obj["metadata"].get("deletionTimestamp") or dry_run:
        return entry  # already terminating: answered with the namespace, unchanged
    obj = dict(entry.obj)
    obj["metadata"] = {**obj["metadata"], "deletionTimestamp": registry.clock.now()}
    obj["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}
    marked = registry.write("namespaces", obj)
    uid = marked.obj["metadata"].get("uid")
    registry.clock.later(NAMESPACE_PURGE_SECONDS, lambda: purge_namespace(registry, name, uid))
    return marked


def purge_namespace(registry: Registry, name: str, uid: str | None) -> None:
    """What the namespace controller does: delete the contents, then the namespace."""
    store = registry.store
    for storage, spec in registry.catalog.storages().items():
        table = store.tables.get(storage)
        if not spec.namespaced or table is None:
            continue
        for key in list(table.keys_in(name)):
            store.remove(table, key)
    table = store.tables["namespaces"]
    entry = table.objects.get(name)
    if entry is not None and entry.obj["metadata"].get("uid") == uid:
        store.remove(table, name)


def bind(registry: Registry, namespace: str, found: Binding, *, dry_run: bool = False) -> Entry:
    """``pods/binding`` of a decoded binding (:mod:`asched.tools.sim.apiserver.binding`): set
    ``spec.nodeName`` and PodScheduled=True, merge the binding's annotations and labels and
    clear ``status.nominatedNodeName`` (v1.37's ``setPodNodeAndMetadata``), or 404/409. The
    binding's uid and resourceVersion are preconditions (409 from the storage layer), checked
    before the pod's state; a gated pod is refused. A dry run checks and writes nothing."""
    name = found.name
    table = registry.store.tables["pods"]
    key = object_key(namespace, name)
    entry = table.objects.get(key)
    if entry is None:
        raise apierrors.not_found("pods", "", name)
    pod = entry.obj
    meta = pod["metadata"]
    for what, wanted, actual in (
        ("UID", found.uid, meta.get("uid")),
        ("ResourceVersion", found.resource_version, meta.get("resourceVersion")),
    ):
        if wanted and wanted != actual:
            raise apierrors.conflict(
                "pods",
                "",
                name,
                f"StorageError: invalid object, Code: 4, Key: /registry/pods/{namespace}/{name}, "
                f"ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: {what} in "
                f"precondition: {wanted}, {what} in object meta: {actual}",
            )
    if meta.get("deletionTimestamp"):
        raise apierrors.conflict(
            "pods/binding", "", name, f"pod {name} is being deleted, cannot be assigned to a host"
        )
    current = pod["spec"].get("nodeName")
    if current:
        raise apierrors.conflict(
            "pods/binding", "", name, f'pod {name} is already assigned to node "{current}"'
        )
    if pod["spec"].get("schedulingGates"):
        raise apierrors.conflict(
            "pods/binding", "", name, f"pod {name} has non-empty .spec.schedulingGates"
        )
    if dry_run:
        return entry
    bound = pods.bound(pod, found.node, found.annotations, registry.clock.now(), found.labels)
    result = registry.write("pods", bound)
    if registry.run_pods_after is not None:
        uid = meta.get("uid")
        registry.clock.later(registry.run_pods_after, lambda: mark_running(registry, key, uid))
    return result


def mark_running(registry: Registry, key: str, uid: str | None) -> None:
    """The hollow kubelet: a bound pod reports Running with ready containers."""
    entry = registry.store.tables["pods"].objects.get(key)
    if entry is None or entry.obj["metadata"].get("uid") != uid:
        return
    if (
        entry.obj["metadata"].get("deletionTimestamp")
        or (entry.obj.get("status") or {}).get("phase") != "Pending"
    ):
        return
    rv = entry.rv
    pod_ip = f"10.{64 + (rv >> 16) % 64}.{(rv >> 8) & 255}.{rv & 255}"
    registry.write("pods", pods.running(entry.obj, registry.clock.now(), pod_ip))
