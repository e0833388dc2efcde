"""``spec.affinity`` validation (``validateAffinity`` of kube-apiserver v1.37.2).

The body has been decoded already (:mod:`asched.tools.sim.apiserver.shapes` declares the affinity types, so
a list where an object belongs is a 400 before this runs); this module collects the 422
field errors, in Go's order and with Go's field paths, quirks included (each checked
against the genuine server):

* a pod affinity term validates its ``labelSelector`` and ``namespaceSelector`` under their
  own paths (v1.20 put the label selector's errors under ``<term>.matchExpressions``), the
  values of their expressions included (label values);
* a bad entry of ``namespaces`` is reported on ``<term>.namespace`` (singular, no index);
* an empty ``topologyKey`` is both ``Required`` and twice ``Invalid`` (the qualified-name
  checks run anyway);
* ``nodeSelectorTerms: []`` is ``Required``; ``matchFields`` allow only ``metadata.name``
  with ``In``/``NotIn`` and exactly one value.
"""

from __future__ import annotations

from typing import Any, Final

from asched.tools.sim.apiserver import apierrors, selectors, validation
from asched.tools.sim.apiserver.apierrors import FieldCause

JSON = dict[str, Any]

_REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"
_BAD_OPERATOR: Final = "not a valid selector operator"
_NEEDS_VALUES: Final = "must be specified when `operator` is 'In' or 'NotIn'"
_NO_VALUES: Final = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"


def _label_name(value: str, path: str) -> list[FieldCause]:
    """``ValidateLabelName``: one Invalid per qualified-name message."""
    return [
        apierrors.invalid_value(path, value, why) for why in selectors.qualified_name_errors(value)
    ]


def _weight(weight: Any, path: str) -> list[FieldCause]:
    value = weight or 0
    if 0 < value <= 100:
        return []
    return [apierrors.invalid_value(path, value, "must be in the range 1-100")]


def _node_requirement(requirement: JSON, path: str) -> list[FieldCause]:
    """``ValidateNodeSelectorRequirement``."""
    operator = requirement.get("operator") or ""
    values = requirement.get("values") or []
    causes: list[FieldCause] = []
    if operator in ("In", "NotIn"):
        if not values:
            causes.append(apierrors.required(f"{path}.values", _NEEDS_VALUES))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            causes.append(apierrors.forbidden(f"{path}.values", _NO_VALUES))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            causes.append(
                apierrors.required(
                    f"{path}.values",
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )
            )
    else:
        causes.append(apierrors.invalid_value(f"{path}.operator", operator, _BAD_OPERATOR))
    return causes + _label_name(requirement.get("key") or "", f"{path}.key")


def _node_field_requirement(requirement: JSON, path: str) -> list[FieldCause]:
    """``ValidateNodeFieldSelectorRequirement``: only ``metadata.name``, one value."""
    operator = requirement.get("operator") or ""
    values: list[str] = requirement.get("values") or []
    causes: list[FieldCause] = []
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            causes.append(
                apierrors.required(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                    "selector",
                )
            )
    else:
        causes.append(apierrors.invalid_value(f"{path}.operator", operator, _BAD_OPERATOR))
    key = requirement.get("key") or ""
    if key != "metadata.name":
        causes.append(apierrors.invalid_value(f"{path}.key", key, "not a valid field selector key"))
    else:
        for index, value in enumerate(values):
            causes += [
                apierrors.invalid_value(f"{path}.values[{index}]", value, why)
                for why in selectors.subdomain_errors(value)
            ]
    return causes


def _node_term(term: JSON, path: str) -> list[FieldCause]:
    """``ValidateNodeSelectorTerm``."""
    causes: list[FieldCause] = []
    for index, requirement in enumerate(term.get("matchExpressions") or []):
        causes += _node_requirement(requirement, f"{path}.matchExpressions[{index}]")
    for index, requirement in enumerate(term.get("matchFields") or []):
        causes += _node_field_requirement(requirement, f"{path}.matchFields[{index}]")
    return causes


def _node_affinity(node: JSON, path: str) -> list[FieldCause]:
    causes: list[FieldCause] = []
    required = node.get(_REQUIRED)
    if required is not None:
        where = f"{path}.{_REQUIRED}.nodeSelectorTerms"
        terms = required.get("nodeSelectorTerms") or []
        if not terms:
            causes.append(apierrors.required(where, "must have at least one node selector term"))
        for index, term in enumerate(terms):
            causes += _node_term(term, f"{where}[{index}]")
    for index, preferred in enumerate(node.get(_PREFERRED) or []):
        where = f"{path}.{_PREFERRED}[{index}]"
        causes += _weight(preferred.get("weight"), f"{where}.weight")
        causes += _node_term(preferred.get("preference") or {}, f"{where}.preference")
    return causes


def _label_selector(selector: JSON | None, path: str) -> list[FieldCause]:
    """``metav1validation.ValidateLabelSelector``."""
    if selector is None:
        return []
    causes: list[FieldCause] = []
    where = f"{path}.matchLabels"
    for key, value in (selector.get("matchLabels") or {}).items():
        causes += _label_name(key, where)
        causes += [
            apierrors.invalid_value(where, value, why)
            for why in selectors.label_value_errors(value)
        ]
    for index, requirement in enumerate(selector.get("matchExpressions") or []):
        item = f"{path}.matchExpressions[{index}]"
        operator = requirement.get("operator") or ""
        values = requirement.get("values") or []
        if operator in ("In", "NotIn"):
            if not values:
                causes.append(apierrors.required(f"{item}.values", _NEEDS_VALUES))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                causes.append(apierrors.forbidden(f"{item}.values", _NO_VALUES))
        else:
            causes.append(apierrors.invalid_value(f"{item}.operator", operator, _BAD_OPERATOR))
        causes += _label_name(requirement.get("key") or "", f"{item}.key")
        for number, value in enumerate(values):
            causes += [
                apierrors.invalid_value(f"{item}.values[{number}]", value, why)
                for why in selectors.label_value_errors(value)
            ]
    return causes


def _pod_term(term: JSON, path: str) -> list[FieldCause]:
    """``validatePodAffinityTerm`` (with upstream's field paths, see the module docstring)."""
    causes = _label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    causes += _label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for namespace in term.get("namespaces") or []:
        causes += [
            apierrors.invalid_value(f"{path}.namespace", namespace, why)
            for why in validation.dns_label_errors(namespace)
        ]
    key = term.get("topologyKey") or ""
    if not key:
        causes.append(apierrors.required(f"{path}.topologyKey", "can not be empty"))
    return causes + _label_name(key, f"{path}.topologyKey")


def _pod_affinity(affinity: JSON, path: str) -> list[FieldCause]:
    """``validatePodAffinity`` and ``validatePodAntiAffinity`` (the same rules)."""
    causes: list[FieldCause] = []
    for index, term in enumerate(affinity.get(_REQUIRED) or []):
        causes += _pod_term(term, f"{path}.{_REQUIRED}[{index}]")
    for index, weighted in enumerate(affinity.get(_PREFERRED) or []):
        where = f"{path}.{_PREFERRED}[{index}]"
        causes += _weight(weighted.get("weight"), f"{where}.weight")
        causes += _pod_term(weighted.get("podAffinityTerm") or {}, f"{where}.podAffinityTerm")
    return causes


def causes(affinity: JSON | None, path: str) -> list[FieldCause]:
    """Every field error of a decoded ``affinity`` at ``path`` (e.g. ``spec.affinity``)."""
    if affinity is None:
        return []
    found: list[FieldCause] = []
    if affinity.get("nodeAffinity") is not None:
        found += _node_affinity(affinity["nodeAffinity"], f"{path}.nodeAffinity")
    if affinity.get("podAffinity") is not None:
        found += _pod_affinity(affinity["podAffinity"], f"{path}.podAffinity")
    if affinity.get("podAntiAffinity") is not None:
        found += _pod_affinity(affinity["podAntiAffinity"], f"{path}.podAntiAffinity")
    return found


def node_selector(selector: JSON, path: str) -> list[FieldCause]:
    """``ValidateNodeSelector`` at ``path`` (a PV's ``spec.nodeAffinity.required``)."""
    where = f"{path}.nodeSelectorTerms"
    terms = selector.get("nodeSelectorTerms") or []
    if not terms:
        return [apierrors.required(where, "must have at least one node selector term")]
    found: list[FieldCause] = []
    for index, term in enumerate(terms):
        found += _node_term(term, f"{where}[{index}]")
    return found


def label_selector(selector: JSON | None, path: str) -> list[FieldCause]:
    """``metav1validation.ValidateLabelSelector`` at ``path`` (a claim's ``spec.selector``)."""
    return _label_selector(selector, path)
