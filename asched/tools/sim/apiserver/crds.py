"""Serving CustomResourceDefinitions: what kube-apiserver's apiextensions controllers do.

:class:`Controller` subscribes to the ``customresourcedefinitions`` table, as the real
controllers watch CRDs through an informer, and drives each CRD through the states a client
of a v1.37 server observes (measured: one MODIFIED event per step)::

    created (status: no conditions, acceptedNames empty)
      --MODIFIED--> NamesAccepted=True NoConflicts, Established=False Installing
      --MODIFIED--> Established=True InitialNamesAccepted     (now served, in discovery)

    DELETE (:func:`mark_deleted`): deletionTimestamp, the cleanup finalizer,
      Terminating=True InstanceDeletionPending                (200 with the CRD)
      --MODIFIED--> Terminating=True InstanceDeletionInProgress
      every object DELETED (watchers see each), then
      --MODIFIED, DELETED--> the finalizer removed: the CRD goes, its routes and discovery
      entries go, and open watches of its objects end.

Steps run on the registry's clock, one event-loop step apart, never inside the store's
notification (a write there would reach other watchers before the event being delivered).
Not simulated: name conflicts between CRDs (NamesAccepted is always True), webhook
conversion, and the 405 a create gets while a CRD terminates (the window is one loop step).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

from asched.tools.sim.apiserver import custom
from asched.tools.sim.apiserver.registry import Registry
from asched.tools.sim.apiserver.store import Entry, Event

logger = logging.getLogger(__name__)

JSON = dict[str, Any]

STORAGE: Final = "customresourcedefinitions"
FINALIZER: Final = "customresourcecleanup.apiextensions.k8s.io"
_NAME_FIELDS: Final = ("plural", "singular", "shortNames", "kind", "listKind", "categories")


def condition(crd: JSON, type_: str) -> JSON | None:
    """The status condition of ``type_``, if any."""
    for item in (crd.get("status") or {}).get("conditions") or []:
        if item.get("type") == type_:
            return dict(item)
    return None


def is_true(crd: JSON, type_: str) -> bool:
    """Whether the condition ``type_`` is True."""
    found = condition(crd, type_)
    return found is not None and found.get("status") == "True"


def with_condition(crd: JSON, now: str, type_: str, status: str, reason: str, message: str) -> JSON:
    """A copy of ``crd`` with one condition set (transition time kept if the status stays)."""
    old = condition(crd, type_)
    since = old["lastTransitionTime"] if old and old.get("status") == status else now
    new = {
        "type": type_,
        "status": status,
        "lastTransitionTime": since,
        "reason": reason,
        "message": message,
    }
    conditions = [
        new if item.get("type") == type_ else item
        for item in (crd.get("status") or {}).get("conditions") or []
    ]
    if old is None:
        conditions.append(new)
    return {**crd, "status": {**(crd.get("status") or {}), "conditions": conditions}}


def accepted_names(crd: JSON) -> JSON:
    """``status.acceptedNames`` as the naming controller writes it (the spec's names)."""
    names = crd["spec"]["names"]
    return {field: names[field] for field in _NAME_FIELDS if names.get(field)}


def mark_deleted(registry: Registry, entry: Entry, *, dry_run: bool) -> Entry:
    """The first DELETE of a CRD: mark it and add the cleanup finalizer (the controller
    then deletes its objects and the CRD)."""
    crd = entry.obj
    meta = dict(crd["metadata"])
    meta["deletionTimestamp"] = registry.clock.now()
    finalizers = list(meta.get("finalizers") or [])
    if FINALIZER not in finalizers:
        finalizers.append(FINALIZER)
    meta["finalizers"] = finalizers
    marked = with_condition(
        {**crd, "metadata": meta},
        registry.clock.now(),
        "Terminating",
        "True",
        "InstanceDeletionPending",
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
    )
    if dry_run:
        return Entry(entry.key, entry.namespace, entry.name, marked, entry.rv)
    return registry.write(STORAGE, marked)


class Controller:
    """The naming, establishing and finalizing controllers of one server (see the module)."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._store = registry.store
        self._scheduled: set[str] = set()
        self._store.tables[STORAGE].subscribers.add(self)

    def offer(self, event: Event) -> None:
        """React to a change of a CRD (called inside the store's notification)."""
        crd = event.entry.obj
        name = event.entry.name
        if event.type == "DELETED":
            self._forget(name)
            return
        meta = crd["metadata"]
        if meta.get("deletionTimestamp"):
            if FINALIZER in (meta.get("finalizers") or []):
                self._later(name, meta.get("uid"), self._finalize)
            return
        if is_true(crd, "Established"):
            self._store.add_table(custom.storage_of(crd))
            self._registry.catalog.install(custom.storage_of(crd), custom.specs_for(crd))
        if not is_true(crd, "Established") or crd["status"].get("acceptedNames") != accepted_names(
            crd
        ):
            self._later(name, meta.get("uid"), self._establish)

    def close(self) -> None:
        """Watches end on a server stop; the controller lives as long as the server."""

    def _later(self, name: str, uid: str | None, step: Callable[[Entry], None]) -> None:
        """Run ``step`` on the CRD one loop step from now, if it is still the same object."""
        if name in self._scheduled:
            return
        self._scheduled.add(name)

        def run() -> None:
            self._scheduled.discard(name)
            entry = self._store.tables[STORAGE].objects.get(name)
            if entry is not None and entry.obj["metadata"].get("uid") == uid:
                step(entry)

        self._registry.clock.later(0.0, run)

    def _establish(self, entry: Entry) -> None:
        crd = entry.obj
        if crd["metadata"].get("deletionTimestamp"):
            return
        now = self._registry.clock.now()
        status = dict(crd.get("status") or {})
        status["acceptedNames"] = accepted_names(crd)
        stored = list(status.get("storedVersions") or [])
        for version in crd["spec"].get("versions") or []:
            if version.get("storage") and version.get("name") not in stored:
                stored.append(version["name"])
        status["storedVersions"] = stored
        updated = {**crd, "status": status}
        if not is_true(crd, "NamesAccepted"):
            updated = with_condition(
                updated, now, "NamesAccepted", "True", "NoConflicts", "no conflicts found"
            )
            updated = with_condition(
                updated,
                now,
                "Established",
                "False",
                "Installing",
                "the initial names have been accepted",
            )
        elif not is_true(crd, "Established"):
            updated = with_condition(
                updated,
                now,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
            )
        if updated != crd:
            self._registry.write(STORAGE, updated)

    def _finalize(self, entry: Entry) -> None:
        store = self._store
        now = self._registry.clock.now()
        progress = with_condition(
            entry.obj,
            now,
            "Terminating",
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        )
        entry = self._registry.write(STORAGE, progress)
        storage = custom.storage_of(entry.obj)
        table = store.tables.get(storage)
        if table is not None:
            for key in list(table.sorted_keys()):
                store.remove(table, key)
        done = with_condition(
            entry.obj,
            now,
            "Terminating",
            "False",
            "InstanceDeletionCompleted",
            "removed all instances",
        )
        meta = dict(done["metadata"])
        meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
        if not meta["finalizers"]:
            del meta["finalizers"]
        done["metadata"] = meta
        crds = store.tables[STORAGE]
        store.commit(crds, done)
        if "finalizers" not in meta:
            store.remove(crds, entry.key)

    def _forget(self, name: str) -> None:
        logger.debug("no longer serving the custom resource %s", name)
        self._registry.catalog.uninstall(name)
        self._store.drop_table(name)
