"""Request options: query parameters and ``DeleteOptions`` bodies, decoded as v1.37 decodes them.

Two stages, as in the genuine server (each measured against kube-apiserver v1.37.2):

* **Decoding.** Query parameters go through the parameter codec: an integer that does not
  parse is 400 BadRequest ``strconv.ParseInt: parsing "abc": invalid syntax`` (``value out
  of range`` past int64; an empty value is invalid too); a boolean is false only for ``0``
  and ``false`` (any case), anything else, the empty string included, is true. A
  ``DeleteOptions`` *body* is decoded by ``sigs.k8s.io/json`` into the Go struct: a body
  that is not JSON, not an object, of another kind, or with a field of the wrong type is a
  400 BadRequest with encoding/json's message (:mod:`asched.tools.sim.apiserver.gojson`: ``json: cannot
  unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64``;
  v1.20 answered a plain 500 with json-iterator's). When a body is present, the query's
  delete parameters are ignored, ``dryRun`` included.
* **Validation** (``ValidateListOptions``, ``ValidateDeleteOptions``, ``ValidateDryRun``):
  422 Invalid on the options kind of group ``meta.k8s.io``, e.g.
  ``ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: ...``.
  A watch's ``sendInitialEvents`` (the WatchList feature, on in v1.37) needs
  ``resourceVersionMatch=NotOlderThan``, and that match on a watch needs it; a watch from
  ``""`` or ``"0"`` without either is defaulted to one (``SetListOptionsDefaults``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import orjson
from multidict import MultiMapping

from asched.tools.sim.apiserver import apierrors, files, gojson, selectors
from asched.tools.sim.apiserver.apierrors import FieldCause
from asched.tools.sim.apiserver.listing import ListOptions
from asched.tools.sim.apiserver.resources import ResourceSpec

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
#: the name v1.37's schemes give themselves in "no kind is registered" (``NewScheme``'s
#: caller, which the Go-modules build cannot trim to the calling package).
SCHEME: Final = "pkg/runtime/scheme.go:111"
_YAML: Final = ("application/yaml", "application/x-yaml")


#: the query of a request (aiohttp's ``request.query``).
Query = MultiMapping[str]


def go_quote(text: str) -> str:
    """``strconv.Quote`` for the printable text query values hold."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


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
    return [apierrors.not_supported("dryRun", list(values), ["All"])]


#: ``fieldValidation``'s values; "" (absent) means Warn, as Warn does.
FIELD_VALIDATIONS: Final = ["", "Ignore", "Strict", "Warn"]


@dataclass(frozen=True, slots=True)
class WriteOptions:
    """A create's, update's or patch's options: ``dryRun`` and ``fieldValidation``."""

    dry_run: bool = False
    field_validation: str = "Warn"


def write_options(query: Query, kind: str) -> WriteOptions:
    """``dryRun`` and ``fieldValidation`` of a write, checked together as
    ``ValidateCreateOptions`` and its siblings check them: 422 on ``<kind>.meta.k8s.io``.

    ``kind`` is the options kind of the verb: ``CreateOptions``, ``UpdateOptions``...
    """
    values = query.getall("dryRun", [])
    causes = _dry_run_causes(values)
    validation = query.get("fieldValidation", "")
    if validation not in FIELD_VALIDATIONS:
        causes.append(apierrors.not_supported("fieldValidation", validation, FIELD_VALIDATIONS))
    if causes:
        raise apierrors.invalid(kind, META_GROUP, "", causes)
    return WriteOptions(bool(values), validation or "Warn")


def dry_run(query: Query, kind: str) -> bool:
    """The ``dryRun`` query parameter of a write (:func:`write_options`'s checks)."""
    return write_options(query, kind).dry_run


def _match_causes(options: ListOptions, *, watch: bool) -> list[FieldCause]:
    """``ValidateListOptions`` (v1.37): a list's resourceVersionMatch needs a version and no
    continue, and a list takes no sendInitialEvents; a watch's needs sendInitialEvents."""
    if watch:
        return _watch_match_causes(options)
    match = options.resource_version_match
    field = "resourceVersionMatch"
    causes: list[FieldCause] = []
    if match:
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
    if options.send_initial_events is not None:
        causes.append(
            apierrors.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")
        )
    return causes


def _watch_match_causes(options: ListOptions) -> list[FieldCause]:
    """``validateWatchOptions``: sendInitialEvents (the WatchList feature, on in v1.37) goes
    with resourceVersionMatch=NotOlderThan, and that match with sendInitialEvents only."""
    match = options.resource_version_match
    field = "resourceVersionMatch"
    causes: list[FieldCause] = []
    if options.send_initial_events is not None and match != "NotOlderThan":
        causes.append(
            apierrors.forbidden(
                field, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
            )
        )
    if match:
        if options.send_initial_events is None:
            causes.append(
                apierrors.forbidden(
                    field,
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                    "provided",
                )
            )
        if match != "NotOlderThan":
            causes.append(apierrors.not_supported(field, match, ["NotOlderThan"]))
        if options.continue_token:
            causes.append(
                apierrors.forbidden(
                    field, "resourceVersionMatch is forbidden when continue is provided"
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
    if "sendInitialEvents" in query:
        options.send_initial_events = query_bool(query, "sendInitialEvents")
    watch = query_bool(query, "watch")
    if (
        watch
        and options.send_initial_events is None
        and not options.resource_version_match
        and options.resource_version in ("", "0")
    ):  # SetListOptionsDefaults (WatchList on): a watch from "" or "0" is a watch-list
        options.send_initial_events = True
        options.resource_version_match = "NotOlderThan"
    causes = _match_causes(options, watch=watch)
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
    """encoding/json's wording of a syntax error (:mod:`asched.tools.sim.apiserver.gojson`'s scanner)."""
    found = gojson.syntax_error(raw)
    if found is not None:
        return found
    # orjson refuses what Go's scanner lets through (invalid UTF-8 in a string): its position
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


#: ``metav1.DeleteOptions`` as its decoder sees it (the Go types its errors name).
_DELETE_OPTIONS: Final = gojson.Struct(
    "DeleteOptions",
    {
        "gracePeriodSeconds": gojson.Field("int64", "int"),
        "preconditions": gojson.Field(
            "v1.Preconditions",
            "struct",
            struct=gojson.Struct(
                "Preconditions",
                {
                    "uid": gojson.Field("types.UID", "string"),
                    "resourceVersion": gojson.Field("string", "string"),
                },
            ),
        ),
        "orphanDependents": gojson.Field("bool", "bool"),
        "propagationPolicy": gojson.Field("v1.DeletionPropagation", "string"),
        "dryRun": gojson.Field("[]string", "slice", item=gojson.Field("string", "string")),
        "ignoreStoreReadErrorWithClusterBreakingPotential": gojson.Field("bool", "bool"),
    },
)


def _decoded_body(raw: bytes, content_type: str) -> Any:
    if content_type in _YAML:
        try:
            return files.yaml_body(raw)
        except ValueError as exc:
            raise apierrors.bad_request(f"couldn't get version/kind; {exc}") from None
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise apierrors.bad_request(
            f"couldn't get version/kind; json parse error: {json_syntax_error(raw, exc)}"
        ) from None
    return gojson.loads_literal(raw)


def _type_meta(body: Any) -> None:
    """encoding/json's first pass over the body: an object with string apiVersion and kind."""
    prefix = "couldn't get version/kind; json parse error: json: cannot unmarshal"
    if not isinstance(body, dict):
        raise apierrors.bad_request(
            f"{prefix} {gojson.json_type(body)} into Go value of type {TYPE_META}"
        )
    for key in ("apiVersion", "kind"):
        value = body.get(key)
        if value is not None and (isinstance(value, gojson.Number) or not isinstance(value, str)):
            raise apierrors.bad_request(
                f"{prefix} {gojson.json_type(value)} into Go struct field .{key} of type string"
            )
    kind = body.get("kind") or ""
    if kind not in ("", "DeleteOptions"):
        version = body.get("apiVersion") or f"{META_GROUP}/v1"
        raise apierrors.bad_request(
            f'no kind "{kind}" is registered for version "{version}" in scheme "{SCHEME}"'
        )


def _from_body(body: JSON) -> DeleteOptions:
    """The fields of a DeleteOptions body; 400 naming the first that does not decode."""
    error = gojson.type_error(body, _DELETE_OPTIONS)
    if error is not None:
        raise apierrors.bad_request(error)
    grace = body.get("gracePeriodSeconds")
    preconditions = body.get("preconditions") or {}
    dry: list[str] = [item or "" for item in body.get("dryRun") or []]
    policy = body.get("propagationPolicy")
    orphan = body.get("orphanDependents")
    _validate(policy, orphan=orphan, dry=dry)
    return DeleteOptions(
        grace_period_seconds=None if grace is None else int(grace),
        precondition_uid=preconditions.get("uid"),
        precondition_resource_version=preconditions.get("resourceVersion"),
        propagation_policy=policy,
        orphan_dependents=orphan,
        dry_run=bool(dry),
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
    return _from_body(body)
