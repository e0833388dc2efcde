"""Request options: query parameters and ``DeleteOptions`` bodies, decoded as 1.20 decodes them.

Two stages, as in the genuine server (each measured against kube-apiserver v1.20.2):

* **Decoding.** Query parameters go through the parameter codec: an integer that does not
  parse is 400 BadRequest ``strconv.ParseInt: parsing "abc": invalid syntax`` (``value out
  of range`` past int64; an empty value is invalid too); a boolean is false only for ``0``
  and ``false`` (any case), anything else, the empty string included, is true. A
  ``DeleteOptions`` *body* is decoded by json-iterator into the Go struct, and the server
  surfaces a failure there as a plain 500 without a reason (``v1.DeleteOptions.GracePeriodSeconds:
  readUint64: ...``): the simulator gives the same status, no reason, and the message up to
  json-iterator's byte context, which it leaves out. When a body is present, the query's
  delete parameters are ignored, ``dryRun`` included.
* **Validation** (``ValidateListOptions``, ``ValidateDeleteOptions``, ``ValidateDryRun``):
  422 Invalid on the options kind of group ``meta.k8s.io``, e.g.
  ``ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: ...``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson
from multidict import MultiMapping

from asched.sim import apierrors, files, selectors
from asched.sim.apierrors import FieldCause, GoLiteral
from asched.sim.listing import ListOptions
from asched.sim.resources import ResourceSpec

JSON = dict[str, Any]

META_GROUP: Final = "meta.k8s.io"
_INT: Final = re.compile(r"([+-]?)0*([0-9]+)")
_INT64: Final = 2**63
_MATCHES: Final = ["Exact", "NotOlderThan", ""]
_PROPAGATION: Final = ["Foreground", "Background", "Orphan", "nil"]
#: the struct encoding/json reads first to find a body's apiVersion and kind.
TYPE_META: Final = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)
_META_SCHEME: Final = "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme/register.go:27"
_YAML: Final = ("application/yaml", "application/x-yaml")


#: the query of a request (aiohttp's ``request.query``).
Query = MultiMapping[str]


def go_quote(text: str) -> str:
    """``strconv.Quote`` for the printable text query values hold."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _string_slice(values: Sequence[str]) -> GoLiteral:
    """``%#v`` of a ``[]string``."""
    return GoLiteral("[]string{" + ", ".join(go_quote(value) for value in values) + "}")


def parse_int(text: str) -> int:
    """``strconv.ParseInt(text, 10, 64)``; 400 BadRequest with Go's message otherwise."""
    match = _INT.fullmatch(text)
    if match is None:
        raise apierrors.bad_request(f"strconv.ParseInt: parsing {go_quote(text)}: invalid syntax")
    sign, digits = match.groups()
    value = int(sign + digits) if len(digits) <= 19 else _INT64  # 19 digits hold int64
    if not -_INT64 <= value < _INT64:
        raise apierrors.bad_request(
            f"strconv.ParseInt: parsing {go_quote(text)}: value out of range"
        )
    return value


def query_int(query: Query, name: str) -> int | None:
    """An integer query parameter, or None when absent."""
    value = query.get(name)
    return None if value is None else parse_int(str(value))


def query_bool(query: Query, name: str) -> bool:
    """A boolean query parameter as Go converts it (see the module docstring)."""
    value = query.get(name)
    if value is None:
        return False
    return not (value == "0" or str(value).lower() == "false")


def _dry_run_causes(values: Sequence[str]) -> list[FieldCause]:
    if all(value == "All" for value in values):
        return []
    return [apierrors.not_supported("dryRun", _string_slice(values), ["All"])]


def dry_run(query: Query, kind: str) -> bool:
    """The ``dryRun`` query parameter of a write; 422 on ``<kind>.meta.k8s.io`` if not ``All``.

    ``kind`` is the options kind of the verb: ``CreateOptions``, ``UpdateOptions``...
    """
    values = query.getall("dryRun", [])
    causes = _dry_run_causes(values)
    if causes:
        raise apierrors.invalid(kind, META_GROUP, "", causes)
    return bool(values)


def _match_causes(options: ListOptions, *, watch: bool) -> list[FieldCause]:
    """``ValidateListOptions``: resourceVersionMatch needs a version, no watch, no continue."""
    match = options.resource_version_match
    if not match:
        return []
    field = "resourceVersionMatch"
    causes: list[FieldCause] = []
    if watch:
        causes.append(apierrors.forbidden(field, "resourceVersionMatch is forbidden for watch"))
    if not options.resource_version:
        causes.append(
            apierrors.forbidden(
                field, "resourceVersionMatch is forbidden unless resourceVersion is provided"
            )
        )
    if options.continue_token:
        causes.append(
            apierrors.forbidden(
                field, "resourceVersionMatch is forbidden when continue is provided"
            )
        )
    if match not in _MATCHES:
        causes.append(apierrors.not_supported(field, match, _MATCHES))
    if match == "Exact" and options.resource_version == "0":
        causes.append(
            apierrors.forbidden(
                field, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
            )
        )
    return causes


def list_options(spec: ResourceSpec, query: Query) -> ListOptions:
    """The ListOptions of a list, watch or deletecollection: decoded (400), then validated (422).

    The ``/watch/`` path prefix is not the ``watch`` parameter: as upstream, only the
    parameter forbids ``resourceVersionMatch``.
    """
    options = ListOptions()
    if query.get("labelSelector"):
        options.labels = selectors.parse_labels(query["labelSelector"])
    if query.get("fieldSelector"):
        options.fields = selectors.parse_fields(query["fieldSelector"], spec.fields)
    options.timeout_seconds = query_int(query, "timeoutSeconds")
    limit = query_int(query, "limit")
    options.limit = max(limit or 0, 0)
    options.continue_token = query.get("continue", "")
    options.resource_version = query.get("resourceVersion", "")
    options.resource_version_match = query.get("resourceVersionMatch", "")
    causes = _match_causes(options, watch=query_bool(query, "watch"))
    if causes:
        raise apierrors.invalid("ListOptions", META_GROUP, "", causes)
    return options


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteOptions:
    """A decoded, validated ``DeleteOptions`` (seconds for the grace period)."""

    grace_period_seconds: int | None = None
    precondition_uid: str | None = None
    precondition_resource_version: str | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    dry_run: bool = False


def json_syntax_error(raw: bytes, exc: orjson.JSONDecodeError) -> str:
    """encoding/json's wording of a syntax error (the common two cases; orjson's differ)."""
    if exc.pos >= len(raw.rstrip()):
        return "unexpected end of JSON input"
    char = raw[exc.pos : exc.pos + 1].decode(errors="replace")
    return f"invalid character '{char}' looking for beginning of value"


def json_type(value: Any) -> str:
    """Go's name of a JSON value's type (``json: cannot unmarshal <type> ...``)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _found(value: Any) -> str:
    """The first character of ``value`` in JSON: what json-iterator says it found."""
    return orjson.dumps(value)[:1].decode()


class _DecodeError(Exception):
    """json-iterator's error for one field: ``<Go path>: <what went wrong>``."""


def _string(value: Any, path: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _DecodeError(f'{path}: ReadString: expects " or n, but found {_found(value)}')


def _int64(value: Any, path: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, float):
        raise _DecodeError(f"{path}: assertInteger: can not decode float as int")
    if not isinstance(value, int) or isinstance(value, bool):
        raise _DecodeError(f"{path}: readUint64: unexpected character: \ufffd")
    if not -_INT64 <= value < _INT64:
        raise _DecodeError(f"{path}: readUint64: overflow")
    return value


def _decoded_body(raw: bytes, content_type: str) -> Any:
    if content_type in _YAML:
        try:
            return files.yaml_body(raw)
        except ValueError as exc:
            raise apierrors.unknown(500, f"couldn't get version/kind; {exc}") from None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise apierrors.unknown(
            500, f"couldn't get version/kind; json parse error: {json_syntax_error(raw, exc)}"
        ) from None


def _type_meta(body: Any) -> None:
    """encoding/json's first pass over the body: an object with string apiVersion and kind."""
    prefix = "couldn't get version/kind; json parse error: json: cannot unmarshal"
    if not isinstance(body, dict):
        raise apierrors.unknown(
            500, f"{prefix} {json_type(body)} into Go value of type {TYPE_META}"
        )
    for key in ("apiVersion", "kind"):
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            raise apierrors.unknown(
                500, f"{prefix} {json_type(value)} into Go struct field .{key} of type string"
            )
    kind = body.get("kind") or ""
    if kind not in ("", "DeleteOptions"):
        version = body.get("apiVersion") or f"{META_GROUP}/v1"
        raise apierrors.unknown(
            500,
            f'no kind "{kind}" is registered for version "{version}" in scheme "{_META_SCHEME}"',
        )


def _from_body(body: JSON) -> DeleteOptions:
    """The typed fields of a DeleteOptions body; _DecodeError names the first bad one."""
    path = "v1.DeleteOptions"
    grace = _int64(body.get("gracePeriodSeconds"), f"{path}.GracePeriodSeconds")
    uid = version = None
    preconditions = body.get("preconditions")
    if preconditions is not None:
        if not isinstance(preconditions, dict):
            raise _DecodeError(
                f"{path}.Preconditions: readObjectStart: expect {{ or n, but found "
                f"{_found(preconditions)}"
            )
        where = f"{path}.Preconditions: v1.Preconditions"
        uid = _string(preconditions.get("uid"), f"{where}.UID")
        version = _string(preconditions.get("resourceVersion"), f"{where}.ResourceVersion")
    orphan = body.get("orphanDependents")
    if orphan is not None and not isinstance(orphan, bool):
        raise _DecodeError(
            f"{path}.OrphanDependents: ReadBool: expect t or f, but found {_found(orphan)}"
        )
    policy = _string(body.get("propagationPolicy"), f"{path}.PropagationPolicy")
    dry = body.get("dryRun")
    values: list[str] = []
    if dry is not None:
        if not isinstance(dry, list):
            raise _DecodeError(
                f"{path}.DryRun: []string: decode slice: expect [ or n, but found {_found(dry)}"
            )
        values = [_string(item, f"{path}.DryRun: []string") or "" for item in dry]
    _validate(policy, orphan=orphan, dry=values)
    return DeleteOptions(
        grace_period_seconds=grace,
        precondition_uid=uid,
        precondition_resource_version=version,
        propagation_policy=policy,
        orphan_dependents=orphan,
        dry_run=bool(values),
    )


def _validate(policy: str | None, *, orphan: bool | None, dry: Sequence[str]) -> None:
    """``ValidateDeleteOptions``: 422 on ``DeleteOptions.meta.k8s.io``."""
    causes: list[FieldCause] = []
    if orphan is not None and policy is not None:
        causes.append(
            apierrors.invalid_value(
                "propagationPolicy",
                policy,
                "orphanDependents and deletionPropagation cannot be both set",
            )
        )
    if policy is not None and policy not in _PROPAGATION[:3]:
        causes.append(apierrors.not_supported("propagationPolicy", policy, _PROPAGATION))
    causes += _dry_run_causes(dry)
    if causes:
        raise apierrors.invalid("DeleteOptions", META_GROUP, "", causes)


def _from_query(query: Query) -> DeleteOptions:
    grace = query_int(query, "gracePeriodSeconds")
    orphan = query_bool(query, "orphanDependents") if "orphanDependents" in query else None
    policy = query.get("propagationPolicy")
    values = query.getall("dryRun", [])
    _validate(policy, orphan=orphan, dry=values)
    return DeleteOptions(
        grace_period_seconds=grace,
        propagation_policy=policy,
        orphan_dependents=orphan,
        dry_run=bool(values),
    )


def delete_options(raw: bytes, query: Query, content_type: str = "") -> DeleteOptions:
    """The DeleteOptions of a DELETE: from the body when there is one, else from the query."""
    if not raw:
        return _from_query(query)
    body = _decoded_body(raw, content_type)
    if body is None:  # JSON null decodes to empty options; the query still does not count
        return DeleteOptions()
    _type_meta(body)
    try:
        return _from_body(body)
    except _DecodeError as exc:
        raise apierrors.unknown(500, str(exc)) from None
