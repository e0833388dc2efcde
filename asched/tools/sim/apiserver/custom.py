"""Custom resources: the views a CustomResourceDefinition serves, and their behaviour.

:func:`specs_for` turns an established CRD into one :class:`~asched.tools.sim.apiserver.resources.ResourceSpec`
per served version, all sharing one storage named after the CRD (versions convert with
strategy ``None``: only ``apiVersion`` changes). Each carries its own
:class:`CustomResourceHooks`, which is where a custom object differs from a built-in one on a
v1.37 server (measured):

* the version's schema prunes, defaults and validates (:mod:`asched.tools.sim.apiserver.schema`); the
  object is validated with its ``apiVersion`` and ``kind``, as the real server sees it, an
  update against the object it replaces (ratcheting), a ``/status`` write's status alone
  against the status schema;
* with a ``status`` subresource, a create drops the status, a plain update keeps the stored
  one, and a ``/status`` write changes the status only (metadata included: labels sent to
  ``/status`` are ignored);
* ``metadata.generation`` counts every change outside ``metadata`` (and ``status``, when it
  is a subresource);
* PUT needs ``metadata.resourceVersion`` (no unconditional update) and never creates;
* DELETE answers a ``Status``, list items carry ``kind``/``apiVersion``, and strategic merge
  patches are refused (415), see :mod:`asched.tools.sim.apiserver.handlers`.
"""

from __future__ import annotations

from typing import Any, Final

from asched.tools.sim.apiserver import schema
from asched.tools.sim.apiserver.apierrors import FieldCause
from asched.tools.sim.apiserver.hooks import Context, Hooks
from asched.tools.sim.apiserver.patch import EMPTY
from asched.tools.sim.apiserver.resources import ResourceSpec, Subresource, make_spec

JSON = dict[str, Any]

#: the verbs discovery lists for a custom resource, in the real server's order.
VERBS: Final = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
STATUS_VERBS: Final = ("get", "patch", "update")


class CustomResourceHooks(Hooks):
    """One served version of a custom resource (see the module docstring)."""

    status_keeps_metadata = True

    def __init__(self, api_version: str, kind: str, root: JSON | None, *, status: bool) -> None:
        self._api_version = api_version
        self._kind = kind
        self._root = root
        self._status = status
        self.kept_on_update = ("status",) if status else ()

    def unknown_fields(self, obj: JSON) -> list[str]:
        if self._root is None:
            return []
        return schema.unknown_fields(obj, self._root)

    def decode(self, obj: JSON) -> None:
        if self._root is None:
            return
        pruned = schema.prune(obj, self._root)
        obj.clear()
        obj.update(pruned)

    def default(self, obj: JSON) -> None:
        if self._root is not None:
            schema.default(obj, self._root)

    def admit(self, ctx: Context, obj: JSON) -> None:
        if self._status:
            obj.pop("status", None)

    def spec_changed(self, obj: JSON, old: JSON) -> bool:
        ignored = ("metadata", "status") if self._status else ("metadata",)
        return {k: v for k, v in obj.items() if k not in ignored} != {
            k: v for k, v in old.items() if k not in ignored
        }

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        if self._root is None:
            return []
        full = {"apiVersion": self._api_version, "kind": self._kind, **obj}
        if old is None:
            return schema.validate(full, self._root)
        before = {"apiVersion": self._api_version, "kind": self._kind, **old}
        return schema.validate(full, self._root, old=before)

    def validate_status(self, obj: JSON, old: JSON, group: str) -> list[FieldCause]:
        if self._root is None or "status" not in obj:
            return []
        status_schema = (self._root.get("properties") or {}).get("status")
        if not isinstance(status_schema, dict):
            return []
        return schema.validate_at(
            obj["status"], status_schema, "status", old=old.get("status", schema.MISSING)
        )


def storage_of(crd: JSON) -> str:
    """The storage (table) name of a CRD's objects: the CRD's own name."""
    return str(crd["metadata"]["name"])


def specs_for(crd: JSON) -> tuple[ResourceSpec, ...]:
    """The views of a CRD's served versions (the CRD is valid: it was stored)."""
    spec = crd["spec"]
    names = spec["names"]
    group, kind = str(spec["group"]), str(names["kind"])
    served: list[ResourceSpec] = []
    for version in spec.get("versions") or []:
        if not version.get("served"):
            continue
        name = str(version["name"])
        has_status = "status" in (version.get("subresources") or {})
        root = (version.get("schema") or {}).get("openAPIV3Schema")
        served.append(
            make_spec(
                group=group,
                version=name,
                resource=str(names["plural"]),
                kind=kind,
                namespaced=spec.get("scope") == "Namespaced",
                storage=storage_of(crd),
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                verbs=VERBS,
                subresources=(Subresource("status", kind, STATUS_VERBS),) if has_status else (),
                schema=EMPTY,
                generation=True,
                unconditional_update=False,
                custom=True,
                hooks=CustomResourceHooks(f"{group}/{name}", kind, root, status=has_status),
                printer_columns=tuple(version.get("additionalPrinterColumns") or ()),
            )
        )
    return tuple(served)
