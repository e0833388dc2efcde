"""A Node's taints and a Pod's tolerations, decoded (``spec.taints``, ``spec.tolerations``).

The two sides of one check (TaintToleration), validated against the same effects
(:data:`~asched.cluster.records.TAINT_EFFECTS`); apart from :mod:`asched.cluster.decode`
so that a change to what a taint may hold is made to both in one place.
"""

from __future__ import annotations

from asched.cluster.decode_context import DecodeContext, Raw
from asched.cluster.records import TAINT_EFFECTS, Taint, Toleration


def decode_taints(ctx: DecodeContext, spec: Raw) -> list[Taint]:
    """A Node's ``spec.taints``: each with a known effect and a key."""
    taints = []
    for index, item in enumerate(ctx.items(spec.get("taints"), "spec.taints")):
        path = f"spec.taints[{index}]"
        item = ctx.mapping(item, path)
        effect = ctx.string(item.get("effect"), f"{path}.effect")
        if effect not in TAINT_EFFECTS:
            raise ctx.fail(f"{path}.effect", f"Unsupported value: {effect!r}")
        key = ctx.string(item.get("key"), f"{path}.key")
        if not key:
            raise ctx.fail(f"{path}.key", "Required value")
        taints.append(Taint(key, ctx.string(item.get("value"), f"{path}.value"), effect))
    return taints


def decode_tolerations(ctx: DecodeContext, spec: Raw) -> list[Toleration]:
    """A Pod's ``spec.tolerations``: operator ``Equal`` (the default) or ``Exists``, and
    the effect empty (any) or a known one."""
    tolerations = []
    for index, item in enumerate(ctx.items(spec.get("tolerations"), "spec.tolerations")):
        path = f"spec.tolerations[{index}]"
        item = ctx.mapping(item, path)
        operator = ctx.string(item.get("operator"), f"{path}.operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            raise ctx.fail(
                f"{path}.operator",
                f'Unsupported value: {operator!r}: supported values: "Equal", "Exists"',
            )
        effect = ctx.string(item.get("effect"), f"{path}.effect")
        if effect and effect not in TAINT_EFFECTS:
            raise ctx.fail(f"{path}.effect", f"Unsupported value: {effect!r}")
        tolerations.append(
            Toleration(
                ctx.string(item.get("key"), f"{path}.key"),
                operator,
                ctx.string(item.get("value"), f"{path}.value"),
                effect,
            )
        )
    return tolerations
