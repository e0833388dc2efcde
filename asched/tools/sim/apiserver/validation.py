"""Validation shared by every kind: object names, metadata, labels, quantities.

Two failure classes, because the real server has two:

* :class:`DecodeFailure` is raised while *reading* the body (a quantity that is not a
  quantity, a field of the wrong JSON type); the server answers 400 BadRequest
  ``<Kind> in version "v1" cannot be handled as a <Kind>: ...``.
* Field errors (:class:`asched.tools.sim.apiserver.apierrors.FieldCause`) are *collected*, all of them,
  and answered at once with 422 Invalid, ``details.causes[].field`` naming each field.

Messages are copied from apimachinery's validation package (``IsDNS1123Subdomain``...).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from asched.tools.sim.apiserver import apierrors, quantity, selectors
from asched.tools.sim.apiserver.apierrors import FieldCause

JSON = dict[str, Any]
NameCheck = Callable[[str], str | None]

_SUBDOMAIN: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035: Final = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_C_IDENTIFIER: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
TOTAL_ANNOTATION_BYTES: Final = 256 * 1024
_MICRO_TIME: Final = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$")
_MICRO_LAYOUT: Final = "2006-01-02T15:04:05.000000Z07:00"
STANDARD_RESOURCES: Final = frozenset({"cpu", "memory", "storage", "ephemeral-storage", "pods"})


class DecodeFailure(ValueError):
    """The body cannot be decoded into the kind (the server's 400)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def dns_subdomain(name: str) -> str | None:
    """``IsDNS1123Subdomain``: why ``name`` is not a valid subdomain, or None."""
    if len(name) > 253:
        return "must be no more than 253 characters"
    if not _SUBDOMAIN.match(name):
        return selectors.SUBDOMAIN_MESSAGE
    return None


_LABEL_MESSAGE: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
    "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
    "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def dns_label(name: str) -> str | None:
    """``IsDNS1123Label``: the first reason (a valid subdomain "must not contain dots")."""
    errors = dns_label_errors(name)
    return errors[0] if errors else None


def dns1035_label(name: str) -> str | None:
    """``IsDNS1035Label`` (Service names)."""
    if len(name) > 63:
        return "must be no more than 63 characters"
    if not _DNS1035.match(name):
        return (
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
            "with an alphabetic character, and end with an alphanumeric character (e.g. "
            "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        )
    return None


def dns_label_errors(name: str) -> list[str]:
    """``IsDNS1123Label``: every reason ``name`` is not a label."""
    errors = ["must be no more than 63 characters"] if len(name) > 63 else []
    if not _LABEL.fullmatch(name):
        errors.append("must not contain dots" if _SUBDOMAIN.match(name) else _LABEL_MESSAGE)
    return errors


def c_identifier(name: str) -> bool:
    """``IsCIdentifier``."""
    return bool(_C_IDENTIFIER.match(name))


def string_map(obj: JSON, field: str, path: str) -> dict[str, str]:
    """A ``map[string]string`` field, decoded (wrong JSON types are decode failures)."""
    value = obj.get(field)
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise DecodeFailure(path, f"expected map[string]string, got {type(value).__name__}")
    return value


#: the finalizers ``validateKubeFinalizerName`` takes without a domain prefix.
STANDARD_FINALIZERS: Final = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def meta(
    obj: JSON, *, namespaced: bool, check_name: NameCheck, built_in: bool = True
) -> list[FieldCause]:
    """``ValidateObjectMeta``: names, namespace, labels, annotations and finalizers (a
    built-in kind's also by ``validateKubeFinalizerName``, a custom resource's not)."""
    metadata = obj.get("metadata") or {}
    causes = object_names(metadata, check_name)
    if namespaced:
        namespace = metadata.get("namespace") or ""
        if not namespace:
            causes.append(apierrors.required("metadata.namespace"))
        elif (why := dns_label(namespace)) is not None:
            causes.append(apierrors.invalid_value("metadata.namespace", namespace, why))
    elif metadata.get("namespace"):
        causes.append(apierrors.forbidden("metadata.namespace", "not allowed on this type"))
    causes.extend(labels(string_map(metadata, "labels", "metadata.labels"), "metadata.labels"))
    annotations = string_map(metadata, "annotations", "metadata.annotations")
    size = 0
    for key, value in annotations.items():
        causes += [
            apierrors.invalid_value("metadata.annotations", key, why)
            for why in selectors.qualified_name_errors(key.lower())
        ]
        size += len(key) + len(value)
    if size > TOTAL_ANNOTATION_BYTES:
        causes.append(apierrors.too_long("metadata.annotations", TOTAL_ANNOTATION_BYTES))
    finalizers = metadata.get("finalizers") or []
    if not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers):
        raise DecodeFailure("metadata.finalizers", "expected []string")
    for finalizer in finalizers:  # ValidateFinalizers: on the list's path, no index
        causes += [
            apierrors.invalid_value("metadata.finalizers", finalizer, why)
            for why in selectors.qualified_name_errors(finalizer)
        ]
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        causes.append(
            apierrors.invalid_value(
                "metadata.finalizers",
                list(finalizers),
                "finalizer orphan and foregroundDeletion cannot be both set",
            )
        )
    if built_in:
        causes += [
            apierrors.invalid_value(
                f"metadata.finalizers[{index}]",
                finalizer,
                "name is neither a standard finalizer name nor is it fully qualified",
            )
            for index, finalizer in enumerate(finalizers)
            if "/" not in finalizer and finalizer not in STANDARD_FINALIZERS
        ]
    return causes


def object_names(metadata: JSON, check_name: NameCheck) -> list[FieldCause]:
    """``generateName`` (valid as a prefix), then ``metadata.name`` (required, valid)."""
    causes: list[FieldCause] = []
    prefix = metadata.get("generateName") or ""
    if prefix:
        masked = prefix[:-1] + "a" if prefix.endswith("-") else prefix  # maskTrailingDash
        if (why := check_name(masked)) is not None:
            causes.append(apierrors.invalid_value("metadata.generateName", prefix, why))
    name = metadata.get("name") or ""
    if not name:
        causes.append(apierrors.required("metadata.name", "name or generateName is required"))
    elif (why := check_name(name)) is not None:
        causes.append(apierrors.invalid_value("metadata.name", name, why))
    return causes


def labels(values: dict[str, str], path: str) -> list[FieldCause]:
    """``ValidateLabels``: every key qualified, every value a label value (every reason)."""
    causes: list[FieldCause] = []
    for key, value in values.items():
        causes += [
            apierrors.invalid_value(path, key, why) for why in selectors.qualified_name_errors(key)
        ]
        causes += [
            apierrors.invalid_value(path, value, why) for why in selectors.label_value_errors(value)
        ]
    return causes


def resource_list(owner: JSON, field: str, path: str) -> dict[str, str]:
    """Decode a ``ResourceList`` in place: every quantity canonicalised, or DecodeFailure."""
    values = owner.get(field)
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise DecodeFailure(path, "expected a map of quantities")
    out: dict[str, str] = {}
    for name, raw in values.items():
        try:
            out[name] = quantity.canonical(raw)
        except quantity.QuantityError as exc:  # Quantity.UnmarshalJSON's error names no field
            raise DecodeFailure("", str(exc)) from None
    owner[field] = out
    return out


def resource_values(
    values: dict[str, str], path: str, *, keyed: bool = True, names: bool = True
) -> list[FieldCause]:
    """``ValidateResourceQuantityValue`` + resource names: non-negative, known or qualified.

    ``keyed`` chooses Go's ``path[cpu]`` (pods) over ``path.cpu`` (node status) field paths;
    ``names=False`` checks the quantities only, as kube-apiserver v1.37 does for a node's
    status (it accepts ``attachable-volumes-csi-<driver>`` and any other name there).
    """
    causes: list[FieldCause] = []
    for name, text in values.items():
        where = f"{path}[{name}]" if keyed else f"{path}.{name}"
        if (
            names
            and name not in STANDARD_RESOURCES
            and not name.startswith(("hugepages-", "requests.", "limits."))
            and "/" not in name
        ):
            causes.append(
                apierrors.invalid_value(
                    where, name, "must be a standard resource type or fully qualified"
                )
            )
        if quantity.is_negative(text):
            causes.append(
                apierrors.invalid_value(where, text, "must be greater than or equal to 0")
            )
    return causes


def non_negative(obj: JSON, field: str, path: str) -> list[FieldCause]:
    """An optional integer field that must be >= 0."""
    value = obj.get(field)
    if value is None:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        raise DecodeFailure(path, f"expected an integer, got {value!r}")
    if value < 0:
        return [apierrors.invalid_value(path, value, "must be greater than or equal to 0")]
    return []


def micro_time(owner: JSON, field: str, path: str) -> None:
    """A ``metav1.MicroTime`` field: RFC 3339 with exactly six fractional digits, or null.

    Anything else fails decoding as in Go's ``time.Parse(RFC3339Micro, ...)``.
    """
    value = owner.get(field)
    if value is None:
        return
    if not isinstance(value, str) or not _MICRO_TIME.match(value):
        text = str(value)
        head = text[:19]
        rest = text[19:] if len(text) > 19 else ""
        detail = f'cannot parse "{rest}" as ".000000"' if len(head) == 19 else "invalid time"
        raise DecodeFailure(path, f'parsing time "{text}" as "{_MICRO_LAYOUT}": {detail}')
