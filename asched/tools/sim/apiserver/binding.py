"""Decoding a ``Binding`` body (``pods/<name>/binding`` and the legacy ``bindings``).

What kube-apiserver v1.37.2 answers, measured, in the order it checks:

* a body that is not an object, an ``apiVersion`` other than ``v1``, a ``kind`` other than
  ``Binding``, or a field of the wrong JSON type: 400 BadRequest (decoding);
* ``metadata.name`` different from the pod named in the URL (absent counts as ``""``):
  400 ``name in URL does not match name in Binding object``; the legacy collection with no
  name at all: 400 ``Name parameter required.``;
* ``ValidatePodBinding`` (``target.kind`` empty or ``Node``, ``target.name`` required): a
  **500** without a reason, message ``target.name: Required value``. Upstream returns the
  field errors as a plain aggregate error, not as ``NewInvalid``, so every version answers
  500 here, not 422 (a binding without a target included); the simulator answers the same,
  so a client tested against it sees what it will see in a cluster.

The decoded binding keeps what the write uses (:func:`asched.tools.sim.apiserver.lifecycle.bind`): the node,
the annotations and labels merged into the pod, and ``metadata.uid`` and
``metadata.resourceVersion``, preconditions on the pod since v1.2x.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from asched.tools.sim.apiserver import apierrors, options, resources, shapes
from asched.tools.sim.apiserver.apierrors import FieldCause
from asched.tools.sim.apiserver.validation import DecodeFailure

JSON = dict[str, Any]

_UNRECOGNIZED: Final = (
    "the object provided is unrecognized (must be of type Binding): "
    "couldn't get version/kind; json parse error: json: cannot unmarshal"
)


@dataclass(frozen=True, slots=True)
class Binding:
    """A decoded, valid binding: the pod's name, the node, the annotations and labels to
    merge, and the preconditions (empty: none)."""

    name: str
    node: str
    annotations: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)
    uid: str = ""
    resource_version: str = ""


def _type_meta(body: Any) -> None:
    """Check a body's envelope (an object, ``v1``, ``Binding``) as the real decoder does."""
    if not isinstance(body, dict):
        raise apierrors.bad_request(
            f"{_UNRECOGNIZED} {options.json_type(body)} into Go value of type {options.TYPE_META}"
        )
    found: list[str] = []
    for key in ("apiVersion", "kind"):
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            raise apierrors.bad_request(
                f"{_UNRECOGNIZED} {options.json_type(value)} into Go struct field .{key} of type string"
            )
        found.append(value or "")
    version, kind = found[0] or "v1", found[1] or "Binding"
    if version != "v1" or (kind != "Binding" and resources.by_kind("v1", kind) is None):
        raise apierrors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a Binding: no kind "{kind}" '
            f'is registered for version "{version}" in scheme "{options.SCHEME}"'
        )
    if kind != "Binding":
        raise apierrors.bad_request(
            f'{kind} in version "v1" cannot be handled as a Binding: '
            f"converting (v1.{kind}) to (core.Binding): unknown conversion"
        )


_PLAIN_BODY: Final = frozenset({"apiVersion", "kind", "metadata", "target"})
_PLAIN_METADATA: Final = frozenset({"name", "namespace", "uid"})
_PLAIN_TARGET: Final = frozenset({"apiVersion", "kind", "name"})


def _plain(body: Any, url_name: str | None) -> Binding | None:
    """The binding a scheduler sends (string fields only, a Node target), checked in ~1 µs.

    None for anything else, which :func:`decode` then checks in full. The bind is the
    benchmark's hot path; the full decode costs several times more.
    """
    if type(body) is not dict or not body.keys() <= _PLAIN_BODY:
        return None
    metadata, target = body.get("metadata"), body.get("target")
    if (
        type(metadata) is not dict
        or type(target) is not dict
        or not metadata.keys() <= _PLAIN_METADATA
        or not target.keys() <= _PLAIN_TARGET
        or body.get("apiVersion", "v1") != "v1"
        or body.get("kind", "Binding") != "Binding"
        or target.get("kind", "Node") != "Node"
        or target.get("apiVersion", "") not in ("", "v1")
    ):
        return None
    name, node = metadata.get("name"), target.get("name")
    if type(name) is not str or type(node) is not str or not node or name != url_name:
        return None
    if not all(type(value) is str for value in metadata.values()):
        return None
    return Binding(name, node, {}, uid=metadata.get("uid", ""))


def decode(body: Any, url_name: str | None) -> Binding:
    """Decode and validate a Binding body; ``url_name`` is the pod in the URL (None: legacy).

    Raises
    ------
    StatusError
        400 for decoding failures and a name mismatch, 500 for ``ValidatePodBinding``
        failures (see the module docstring).
    """
    return _plain(body, url_name) or checked(body, url_name)


def checked(body: Any, url_name: str | None) -> Binding:
    """:func:`decode` without the fast path: every check, in the real server's order."""
    if body is None:  # JSON null decodes to an empty Binding
        body = {}
    _type_meta(body)
    try:
        shapes.check("bindings", body)
    except DecodeFailure as failure:
        raise apierrors.bad_request(
            f'Binding in version "v1" cannot be handled as a Binding: '
            f"{failure.field}: {failure.message}"
        ) from None
    metadata: JSON = body.get("metadata") or {}
    name: str = metadata.get("name") or ""
    if url_name is None and not name:
        raise apierrors.bad_request("Name parameter required.")
    if url_name is not None and name != url_name:
        raise apierrors.bad_request("name in URL does not match name in Binding object")
    target: JSON = body.get("target") or {}
    kind: str = target.get("kind") or ""
    node: str = target.get("name") or ""
    causes: list[FieldCause] = []
    if kind not in ("", "Node"):
        causes.append(apierrors.not_supported("target.kind", kind, ["Node", "<empty>"]))
    if not node:
        causes.append(apierrors.required("target.name"))
    if causes:
        messages = [str(cause) for cause in causes]
        text = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
        raise apierrors.unknown(500, text)  # errs.ToAggregate(): see the module docstring
    annotations: dict[str, str] = metadata.get("annotations") or {}
    labels: dict[str, str] = metadata.get("labels") or {}
    return Binding(
        name,
        node,
        annotations,
        labels,
        uid=metadata.get("uid") or "",
        resource_version=metadata.get("resourceVersion") or "",
    )
