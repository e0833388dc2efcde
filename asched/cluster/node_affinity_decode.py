"""Node selector terms and node affinity, decoded (``spec.affinity.nodeAffinity``).

Shared by the pod decoder, the storage decoders (a PersistentVolume's
``spec.nodeAffinity``, a StorageClass's ``allowedTopologies``) and
NodeAffinityArgs.addedAffinity, which is why it is its own module: each checks the same
operators and value counts and names the field in the same words.
"""

from __future__ import annotations

from typing import Any, Final

from asched.cluster.decode_context import DecodeContext
from asched.cluster.labelsyntax import valid_label_key, valid_label_value
from asched.cluster.records import (
    NodeAffinity,
    NodeSelectorTerm,
    PreferredTerm,
    Requirement,
    parse_int64,
)

NODE_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _requirements(
    ctx: DecodeContext, raw: Any, path: str, *, fields: bool
) -> tuple[Requirement, ...]:
    out = []
    for index, item in enumerate(ctx.items(raw, path)):
        here = f"{path}[{index}]"
        item = ctx.mapping(item, here)
        key = ctx.string(item.get("key"), f"{here}.key")
        op = ctx.string(item.get("operator"), f"{here}.operator")
        values = tuple(
            ctx.string(v, f"{here}.values[{i}]")
            for i, v in enumerate(ctx.items(item.get("values"), f"{here}.values"))
        )
        if not key:
            raise ctx.fail(f"{here}.key", "Required value")
        if fields:
            if key != "metadata.name":
                raise ctx.fail(
                    f"{here}.key", f"Invalid value: {key!r}: not a valid field selector key"
                )
            if op not in ("In", "NotIn") or len(values) != 1:
                raise ctx.fail(
                    here, "matchFields on metadata.name must use In or NotIn with exactly one value"
                )
        elif op not in NODE_OPERATORS:
            raise ctx.fail(
                f"{here}.operator",
                f"Unsupported value: {op!r}: supported values: {', '.join(NODE_OPERATORS)}",
            )
        elif op in ("In", "NotIn") and not values:
            raise ctx.fail(
                f"{here}.values",
                "Required value: must be specified when `operator` is 'In' or 'NotIn'",
            )
        elif op in ("Exists", "DoesNotExist") and values:
            raise ctx.fail(
                f"{here}.values",
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        elif op in ("Gt", "Lt") and (len(values) != 1 or parse_int64(values[0]) is None):
            raise ctx.fail(
                f"{here}.values",
                "must be specified single value when `operator` is 'Lt' or 'Gt' and be an integer",
            )
        out.append(Requirement(key, op, values))
    return tuple(out)


def decode_node_selector_term(ctx: DecodeContext, raw: Any, path: str) -> NodeSelectorTerm:
    """Decode one ``nodeSelectorTerm`` (expressions and fields).

    The API server accepts label values its selector parser later rejects; upstream's
    scheduler then treats the whole term as matching nothing. Such a term decodes with
    ``invalid=True`` and both implementations honour it.
    """
    raw = ctx.mapping(raw, path)
    expressions = _requirements(
        ctx, raw.get("matchExpressions"), f"{path}.matchExpressions", fields=False
    )
    fields = _requirements(ctx, raw.get("matchFields"), f"{path}.matchFields", fields=True)
    invalid = any(
        not valid_label_key(r.key)
        or (r.operator in ("In", "NotIn") and not all(valid_label_value(v) for v in r.values))
        for r in expressions
    )
    return NodeSelectorTerm(expressions, fields, invalid)


def decode_node_affinity(ctx: DecodeContext, raw: Any, path: str) -> NodeAffinity | None:
    """Decode a ``NodeAffinity`` (also used for NodeAffinityArgs.addedAffinity)."""
    if raw is None:
        return None
    raw = ctx.mapping(raw, path)
    required = None
    req_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    if raw.get("requiredDuringSchedulingIgnoredDuringExecution") is not None:
        selector = ctx.mapping(raw["requiredDuringSchedulingIgnoredDuringExecution"], req_path)
        terms = ctx.items(selector.get("nodeSelectorTerms"), f"{req_path}.nodeSelectorTerms")
        required = tuple(
            decode_node_selector_term(ctx, term, f"{req_path}.nodeSelectorTerms[{i}]")
            for i, term in enumerate(terms)
        )
    preferred = []
    pref_path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for index, item in enumerate(
        ctx.items(raw.get("preferredDuringSchedulingIgnoredDuringExecution"), pref_path)
    ):
        here = f"{pref_path}[{index}]"
        item = ctx.mapping(item, here)
        weight = ctx.integer(item.get("weight"), f"{here}.weight")
        if not 0 <= weight <= 100:
            raise ctx.fail(f"{here}.weight", f"Invalid value: {weight}: must be in the range 1-100")
        term = decode_node_selector_term(ctx, item.get("preference"), f"{here}.preference")
        preferred.append(PreferredTerm(weight, term))
    return NodeAffinity(required, tuple(preferred))
