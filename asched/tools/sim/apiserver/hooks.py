"""Per-kind behaviour plugged into the generic registry; the base class is the default.

The registry (:mod:`asched.tools.sim.apiserver.registry`) runs one code path for every resource and calls
these hooks where kinds differ, in this order on a write::

    decode -> default -> [create: initial_status, admit] -> validate -> store

* ``decode`` canonicalises quantities and rejects wrongly-typed fields (400);
* ``default`` must be idempotent: it runs on every incoming object (create, update and
  the result of a patch), as the server's defaulting runs on every decode;
* ``initial_status`` replaces the status on create (None keeps the client's, as nodes);
* ``admit`` is create-time admission (priority resolution, cluster IPs...);
* ``validate`` returns kind-specific field errors (metadata is validated generically).

Hooks receive a :class:`Context` so that admission can look at other objects without
importing the registry (no cycles).
"""

from __future__ import annotations

from typing import Any, Protocol

from asched.tools.sim.apiserver import validation
from asched.tools.sim.apiserver.apierrors import FieldCause
from asched.tools.sim.apiserver.store import Entry

JSON = dict[str, Any]


class Context(Protocol):
    """What admission hooks may ask of the server."""

    def find(self, storage: str, key: str) -> Entry | None:
        """The stored entry of ``storage`` under ``key``, if any."""

    def entries(self, storage: str) -> list[Entry]:
        """Every stored entry of ``storage`` (cold paths only)."""


class Hooks:
    """The generic behaviour: DNS-subdomain names, no defaults, no extra validation."""

    #: top-level fields a plain update copies from the stored object (status subresource).
    kept_on_update: tuple[str, ...] = ("status",)
    #: graceful kinds (pods) are marked (deletionTimestamp, a MODIFIED event) before
    #: removal, even with grace 0; others are removed at once.
    graceful: bool = False
    #: a ``/status`` write keeps the stored metadata (custom resources), where built-in
    #: kinds take the request's labels and annotations along with the status.
    status_keeps_metadata: bool = False

    def name_error(self, name: str) -> str | None:
        """Why ``name`` is not a valid object name of this kind, or None."""
        return validation.dns_subdomain(name)

    def unknown_fields(self, obj: JSON) -> list[str]:
        """The fields of ``obj`` the kind does not know, as strict decoding names them (a
        built-in kind: none known to the simulator, which keeps them)."""
        return []

    def decode(self, obj: JSON) -> None:
        """Canonicalise and type-check ``obj`` in place; raise DecodeFailure."""

    def default(self, obj: JSON) -> None:
        """Apply idempotent defaults in place."""

    def initial_status(self, obj: JSON) -> JSON | None:
        """The status a new object starts with; None keeps what the client sent."""
        return None

    def admit(self, ctx: Context, obj: JSON) -> None:
        """Create-time admission; raise a StatusError to refuse, or amend ``obj``."""

    def validate(self, obj: JSON, old: JSON | None, group: str) -> list[FieldCause]:
        """Kind-specific field errors of ``obj`` (``old`` is set on updates).

        ``group`` is the API group of the request: events validate differently through
        ``events.k8s.io`` than through the core group, as on a real server.
        """
        return []

    def validate_status(self, obj: JSON, old: JSON, group: str) -> list[FieldCause]:
        """Kind-specific field errors of a ``/status`` write (the same as :meth:`validate`,
        unless a kind validates its status apart, as custom resources do)."""
        return self.validate(obj, old, group)

    def spec_changed(self, obj: JSON, old: JSON) -> bool:
        """Whether an update changes what ``metadata.generation`` counts (the ``spec``)."""
        return obj.get("spec") != old.get("spec")

    def grace_seconds(self, obj: JSON, requested: int | None) -> int:
        """How long a DELETE waits before the object is really removed (0: at once)."""
        return 0


def section(obj: JSON, field: str, path: str) -> JSON:
    """``obj[field]`` as a dict, created if missing; DecodeFailure if not an object."""
    value = obj.get(field)
    if value is None:
        value = {}
        obj[field] = value
    if not isinstance(value, dict):
        raise validation.DecodeFailure(path, "expected an object")
    return value


def items(obj: JSON, field: str, path: str) -> list[JSON]:
    """``obj[field]`` as a list of objects (empty if missing); DecodeFailure otherwise."""
    value = obj.get(field)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise validation.DecodeFailure(path, "expected a list of objects")
    return value
