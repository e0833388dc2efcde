"""The generic REST verbs over the store: one code path for every resource.

``get``, ``create``, ``update`` and ``patch`` are written once (``list`` is in
:mod:`asched.tools.sim.apiserver.listing`); per-kind
differences come from :mod:`asched.tools.sim.apiserver.kinds` hooks and from the data in
:mod:`asched.tools.sim.apiserver.resources`. Deletion, binding and the namespace lifecycle live in
:mod:`asched.tools.sim.apiserver.lifecycle`.

Everything here is synchronous: a verb runs start to finish in one event-loop step, so
no other request can observe a half-applied write, and the store notifies watchers
before the HTTP answer is even built. Failures are raised as
:class:`asched.tools.sim.apiserver.apierrors.StatusError` and encoded by the handler.

Invariant: dicts passed in (request bodies) become owned by the registry; stored dicts
are never mutated (see :mod:`asched.tools.sim.apiserver.store`).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import orjson

from asched.tools.sim.apiserver import (
    apierrors,
    catalog,
    kinds,
    listing,
    patch,
    shapes,
    validation,
    views,
)
from asched.tools.sim.apiserver.apierrors import StatusError
from asched.tools.sim.apiserver.hooks import Hooks
from asched.tools.sim.apiserver.listing import ListOptions
from asched.tools.sim.apiserver.resources import STORAGE, ResourceSpec
from asched.tools.sim.apiserver.store import Entry, Store, Table, object_key


@dataclass(slots=True)
class FieldCheck:
    """A write's ``fieldValidation`` (v1.37, default ``Warn``): the unknown fields a kind
    knows of (a custom resource's schema; a built-in kind's unknown fields are kept, not
    reported) and the duplicate fields of the body are a 400 under ``Strict`` (a 422 of the
    patched object for a PATCH), else warnings the handler sends as ``Warning`` headers."""

    mode: str = "Ignore"
    duplicates: tuple[str, ...] = ()
    patch: bool = False
    warnings: list[str] = field(default_factory=list)

    def check(self, spec: ResourceSpec, unknown: list[str], obj: JSON) -> None:
        """Raise (Strict) or keep the warnings of ``unknown`` fields and the duplicates."""
        if self.mode == "Ignore":
            return
        problems = [f'duplicate field "{path}"' for path in self.duplicates]
        problems += [f'unknown field "{path}"' for path in unknown]
        if not problems:
            return
        if self.mode != "Strict":
            self.warnings += problems
            return
        text = "strict decoding error: " + ", ".join(problems)
        if self.patch:  # the patched object, as JSON: what Go failed to decode strictly
            whole = {"apiVersion": spec.api_version, "kind": spec.kind, **obj}
            cause = apierrors.invalid_value("patch", str(apierrors.go_json(whole)), text)
            raise apierrors.StatusError(
                422,
                "Invalid",
                f' "" is invalid: {cause}',
                {
                    "causes": [
                        {"reason": "FieldValueInvalid", "message": cause.body, "field": "patch"}
                    ]
                },
            )
        raise apierrors.bad_request(
            f'{spec.kind} in version "{spec.version}" cannot be handled as a {spec.kind}: {text}'
        )


#: CRDs: built in, but their registry has no declarative validation (no folded causes).
_CRDS: Final = "customresourcedefinitions"

JSON = dict[str, Any]

#: the alphabet of ``utilrand.String`` (no vowels, no look-alikes), as generateName uses.
_ALPHANUMS: Final = "bcdfghjklmnpqrstvwxz2456789"
_SYSTEM_META: Final = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


def _encodable(obj: JSON) -> None:
    """DecodeFailure unless the store can encode ``obj`` (it must, to keep it as bytes).

    A JSON body parses up to 1,024 levels deep, orjson encodes 254: deeper nesting in an
    opaque field would otherwise fail only when the object is stored (a 500).
    """
    try:
        orjson.dumps(obj)
    except orjson.JSONEncodeError as exc:
        raise validation.DecodeFailure("", f"cannot be stored: {exc}") from None


class Clock(Protocol):
    """Wall-clock timestamps and (scaled) timers; the server supplies a loop-based one."""

    def now(self, offset_seconds: float = 0.0) -> str:
        """RFC 3339 UTC time, seconds precision, ``offset_seconds`` from now."""

    def later(self, seconds: float, callback: Callable[[], None]) -> None:
        """Run ``callback`` after ``seconds`` of simulated time."""


class Registry:
    """The generic verbs; also the :class:`asched.tools.sim.apiserver.hooks.Context` of admission hooks."""

    def __init__(self, store: Store, clock: Clock, *, seed: int | None = None) -> None:
        self.store = store
        self.clock = clock
        self._random = random.Random(seed)
        #: seconds after binding at which pods turn Running (None: never); see lifecycle.
        self.run_pods_after: float | None = None
        #: what is served (built-in and custom resources); see :mod:`asched.tools.sim.apiserver.crds`.
        self.catalog = catalog.Catalog()

    # Context ---------------------------------------------------------------------------

    def find(self, storage: str, key: str) -> Entry | None:
        """The entry of ``storage`` under ``key``."""
        return self.store.tables[storage].objects.get(key)

    def entries(self, storage: str) -> list[Entry]:
        """All entries of ``storage``."""
        return list(self.store.tables[storage].objects.values())

    # Reads -----------------------------------------------------------------------------

    def table(self, spec: ResourceSpec) -> Table:
        """The table behind ``spec``."""
        return self.store.tables[spec.storage]

    def get(self, spec: ResourceSpec, namespace: str, name: str) -> Entry:
        """The current object, or 404."""
        entry = self.table(spec).objects.get(object_key(namespace, name))
        if entry is None:
            raise apierrors.not_found(spec.resource, spec.group, name)
        return entry

    def list(
        self, spec: ResourceSpec, namespace: str | None, options: ListOptions
    ) -> tuple[list[Entry], JSON]:
        """Matching entries in key order and the list metadata (see :mod:`asched.tools.sim.apiserver.listing`)."""
        return listing.select(self.table(spec), self.store.rv, spec, namespace, options)

    # Writes ----------------------------------------------------------------------------

    def _incoming(self, spec: ResourceSpec, namespace: str, body: Any) -> JSON:
        """Check the envelope of a request body and turn it into the storage shape."""
        if not isinstance(body, dict):
            raise apierrors.bad_request(
                f"the object provided is unrecognized (must be of type {spec.kind})"
            )
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if api_version and api_version != spec.api_version:
            raise apierrors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version ({spec.api_version})"
            )
        if kind and kind != spec.kind:
            raise apierrors.bad_request(
                f'{kind} in version "{spec.version}" cannot be handled as a {spec.kind}: '
                f"the kind in the data ({kind}) does not match the expected kind ({spec.kind})"
            )
        obj = views.from_view(spec, body)
        obj.pop("apiVersion", None)
        obj.pop("kind", None)
        metadata = obj.get("metadata")
        if metadata is None:
            metadata = {}
        if not isinstance(metadata, dict):
            raise self._decode_error(
                spec, validation.DecodeFailure("metadata", "expected an object")
            )
        metadata = dict(metadata)
        obj["metadata"] = metadata
        if spec.namespaced:
            if metadata.get("namespace") and metadata["namespace"] != namespace:
                raise apierrors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            metadata["namespace"] = namespace
        else:
            metadata.pop("namespace", None)
        metadata.pop("selfLink", None)
        metadata.pop("managedFields", None)
        return obj

    @staticmethod
    def _decode_error(spec: ResourceSpec, failure: validation.DecodeFailure) -> StatusError:
        where = f"{failure.field}: " if failure.field else ""
        return apierrors.bad_request(
            f'{spec.kind} in version "{spec.version}" cannot be handled as a {spec.kind}: '
            f"{where}{failure.message}"
        )

    def _decode(
        self, spec: ResourceSpec, hooks: Hooks, obj: JSON, fields: FieldCheck | None = None
    ) -> None:
        if fields is not None and fields.mode != "Ignore":
            fields.check(spec, hooks.unknown_fields(obj), obj)
        try:
            shapes.check(spec.storage, obj)
            hooks.decode(obj)
            hooks.default(obj)
            _encodable(obj)
        except validation.DecodeFailure as failure:
            raise self._decode_error(spec, failure) from None

    def _validate(
        self,
        spec: ResourceSpec,
        hooks: Hooks,
        obj: JSON,
        old: JSON | None,
        *,
        subresource: str = "",
    ) -> None:
        try:
            causes = validation.meta(
                obj,
                namespaced=spec.namespaced,
                check_name=hooks.name_error,
                built_in=not spec.custom,
            )
            if subresource == "status" and old is not None:
                causes += hooks.validate_status(obj, old, spec.group)
            else:
                causes += hooks.validate(obj, old, spec.group)
        except validation.DecodeFailure as failure:
            raise self._decode_error(spec, failure) from None
        if causes:
            if not spec.custom and spec.storage != _CRDS:  # declarative validation's
                causes = apierrors.fold(causes)
            raise apierrors.invalid(spec.kind, spec.group, obj["metadata"].get("name", ""), causes)

    def _admit_namespace(self, spec: ResourceSpec, namespace: str, name: str) -> None:
        found = self.find("namespaces", namespace)
        if found is None:
            raise apierrors.not_found("namespaces", "", namespace)
        if found.obj["metadata"].get("deletionTimestamp"):
            error = apierrors.forbidden_error(
                spec.resource,
                spec.group,
                name,
                f"unable to create new content in namespace {namespace} because it is being terminated",
            )
            assert error.details is not None
            error.details["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise error

    def create(
        self,
        spec: ResourceSpec,
        namespace: str,
        body: Any,
        *,
        dry_run: bool = False,
        restore: bool = False,
        fields: FieldCheck | None = None,
    ) -> Entry:
        """POST: 201 with the stored object (``restore`` keeps status/uid, for snapshots)."""
        obj = self._incoming(spec, namespace, body)
        hooks = kinds.hooks_of(spec)
        metadata = obj["metadata"]
        if metadata.get("resourceVersion") and not restore:
            raise apierrors.unknown(
                500, "resourceVersion should not be set on objects to be created"
            )
        self._decode(spec, hooks, obj, fields)
        if not metadata.get("name") and metadata.get("generateName"):
            base = str(metadata["generateName"])[:58]
            metadata["name"] = base + "".join(self._random.choice(_ALPHANUMS) for _ in range(5))
        name = metadata.get("name") or ""
        if spec.namespaced and not restore:
            self._admit_namespace(spec, namespace, name)
        if not restore:
            status = hooks.initial_status(obj)
            if status is not None:
                obj["status"] = status
            for key in _SYSTEM_META:
                metadata.pop(key, None)
            metadata["uid"] = str(uuid.uuid4())
            metadata["creationTimestamp"] = self.clock.now()
            hooks.admit(self, obj)
        else:
            metadata.setdefault("uid", str(uuid.uuid4()))
            metadata.setdefault("creationTimestamp", self.clock.now())
        if spec.generation:
            metadata["generation"] = metadata.get("generation", 1) if restore else 1
        self._validate(spec, hooks, obj, None)
        table = self.table(spec)
        if object_key(namespace if spec.namespaced else "", name) in table.objects:
            raise apierrors.already_exists(spec.resource, spec.group, name)
        metadata.pop("resourceVersion", None)
        if dry_run:
            return Entry(
                object_key(metadata.get("namespace", ""), name), namespace, name, obj, self.store.rv
            )
        return self.store.commit(table, _ordered(obj))

    def update(
        self,
        spec: ResourceSpec,
        namespace: str,
        name: str,
        body: Any,
        *,
        subresource: str = "",
        dry_run: bool = False,
        fields: FieldCheck | None = None,
    ) -> tuple[Entry, bool]:
        """PUT: ``(entry, created)``; 404 unless the kind may be created by PUT."""
        obj = self._incoming(spec, namespace, body)
        if obj["metadata"].get("name", "") != name:
            raise apierrors.bad_request(
                f"the name of the object ({obj['metadata'].get('name', '')}) does not match the name on the URL ({name})"
            )
        old = self.table(spec).objects.get(object_key(namespace if spec.namespaced else "", name))
        if old is None:
            if spec.create_on_update and not subresource:
                obj["metadata"].pop("resourceVersion", None)
                return self.create(spec, namespace, obj, dry_run=dry_run, fields=fields), True
            raise apierrors.not_found(spec.resource, spec.group, name)
        entry = self.replace(
            spec, old, obj, subresource=subresource, dry_run=dry_run, fields=fields
        )
        return entry, False

    def patch(
        self,
        spec: ResourceSpec,
        namespace: str,
        name: str,
        content_type: str,
        raw: bytes,
        *,
        subresource: str = "",
        dry_run: bool = False,
        fields: FieldCheck | None = None,
    ) -> Entry:
        """PATCH in one of the three formats; the result goes through :meth:`replace`."""
        old = self.get(spec, namespace if spec.namespaced else "", name)
        try:
            document = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if content_type == patch.JSON_PATCH:
                raise apierrors.bad_request(str(exc)) from None
            raise apierrors.unknown(500, "Invalid JSON Patch") from None
        current = views.full_object(spec, old)
        try:
            if content_type == patch.MERGE_PATCH:
                result = patch.merge_patch(current, document)
            elif content_type == patch.JSON_PATCH:
                result = patch.json_patch(current, document)
            else:
                result = patch.strategic_merge(current, document, spec.schema)
        except patch.PatchError as exc:
            if exc.malformed:
                raise apierrors.bad_request(str(exc)) from None
            raise apierrors.StatusError(
                422, "Invalid", "the server rejected our request due to an error in our request", {}
            ) from None
        except RecursionError:  # JSON decodes 1,024 levels deep; the patch code recurses
            raise apierrors.bad_request("the patch is nested too deeply to apply") from None
        if not isinstance(result, dict):
            raise apierrors.bad_request("the patch did not produce an object")
        metadata = result.get("metadata")
        if isinstance(metadata, dict) and metadata.get("name", name) != name:
            raise apierrors.bad_request(
                f"the name of the object ({metadata.get('name')}) does not match the name on the URL ({name})"
            )
        obj = self._incoming(spec, namespace, result)
        obj["metadata"].setdefault("name", name)
        if fields is not None:
            fields.patch = True
        return self.replace(spec, old, obj, subresource=subresource, dry_run=dry_run, fields=fields)

    def replace(
        self,
        spec: ResourceSpec,
        old: Entry,
        obj: JSON,
        *,
        subresource: str = "",
        dry_run: bool = False,
        fields: FieldCheck | None = None,
    ) -> Entry:
        """The common tail of PUT and PATCH: preconditions, carry-over, validation, store."""
        hooks = kinds.hooks_of(spec)
        metadata = obj["metadata"]
        old_meta = old.obj["metadata"]
        wanted_rv = metadata.get("resourceVersion")
        if not wanted_rv and not spec.unconditional_update:
            cause = apierrors.invalid_value(
                "metadata.resourceVersion", 0, "must be specified for an update"
            )
            raise apierrors.invalid(spec.resource, spec.group, old.name, [cause])
        if wanted_rv and wanted_rv != old_meta["resourceVersion"]:
            raise apierrors.conflict(spec.resource, spec.group, old.name, apierrors.STALE_OBJECT)
        self._decode(spec, hooks, obj, fields)
        if subresource == "finalize":
            finalizers = (obj.get("spec") or {}).get("finalizers") or []
            obj = {
                **old.obj,
                "metadata": metadata,
                "spec": {**(old.obj.get("spec") or {}), "finalizers": finalizers},
            }
        elif subresource == "status":
            if hooks.status_keeps_metadata:
                metadata = {**old_meta, "resourceVersion": metadata.get("resourceVersion")}
                obj["metadata"] = metadata
            for key, value in old.obj.items():
                if key not in ("metadata", "status"):
                    obj[key] = value
            for key in list(obj):
                if key not in old.obj and key not in ("metadata", "status"):
                    del obj[key]
        elif spec.has_status:
            for key in hooks.kept_on_update:
                if key in old.obj:
                    obj[key] = old.obj[key]
                else:
                    obj.pop(key, None)
        if metadata.get("uid") and metadata["uid"] != old_meta.get("uid"):
            raise apierrors.invalid(
                spec.kind,
                spec.group,
                old.name,
                [apierrors.invalid_value("metadata.uid", metadata["uid"], "field is immutable")],
            )
        for key in _SYSTEM_META:
            if key in old_meta:
                metadata[key] = old_meta[key]
            else:
                metadata.pop(key, None)
        if old_meta.get("deletionTimestamp"):
            added = set(metadata.get("finalizers") or []) - set(old_meta.get("finalizers") or [])
            if added:
                raise apierrors.invalid(
                    spec.kind,
                    spec.group,
                    old.name,
                    [
                        apierrors.forbidden(
                            "metadata.finalizers",
                            "no new finalizers can be added if the object is being deleted",
                        )
                    ],
                )
        if spec.generation:
            generation = old_meta.get("generation", 1)
            metadata["generation"] = (
                generation + 1 if hooks.spec_changed(obj, old.obj) else generation
            )
        metadata["resourceVersion"] = old_meta["resourceVersion"]
        self._validate(spec, hooks, obj, old.obj, subresource=subresource)
        if obj == old.obj:
            return old  # a no-op write keeps the resourceVersion, as etcd3's GuaranteedUpdate
        if dry_run:
            return Entry(old.key, old.namespace, old.name, obj, old.rv)
        table = self.table(spec)
        if (
            metadata.get("deletionTimestamp")
            and not metadata.get("finalizers")
            and not metadata.get("deletionGracePeriodSeconds")
        ):
            self.store.commit(table, obj)
            return self.store.remove(table, old.key)
        return self.store.commit(table, obj)

    def write(self, storage: str, obj: JSON) -> Entry:
        """Store an internally built object (binding, kubelet status, deletion marks)."""
        return self.store.commit(self.store.tables[storage], obj)


def _ordered(obj: JSON) -> JSON:
    """``metadata`` first, ``status`` last: the field order of the real server's JSON."""
    if next(iter(obj), None) == "metadata" and (
        "status" not in obj or next(reversed(obj)) == "status"
    ):
        return obj
    out: JSON = {"metadata": obj["metadata"]}
    for key, value in obj.items():
        if key not in ("metadata", "status"):
            out[key] = value
    if "status" in obj:
        out["status"] = obj["status"]
    return out


def storage_spec(storage: str) -> ResourceSpec:
    """The spec whose shape ``storage`` keeps its objects in."""
    return STORAGE[storage]
