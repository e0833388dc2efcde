"""Pod (anti-)affinity terms and label selectors, decoded (section 12.1).

A term selects pods by label in some namespaces, within a topology domain given by a
node label key. ``namespaces`` empty and ``namespace_selector`` None means "the owning
pod's namespace" (resolved at decode time into ``namespaces``); a namespace selector
``{}`` selects every namespace. Label selectors follow metav1.LabelSelector: matchLabels
and In/NotIn/Exists/DoesNotExist, ANDed; ``{}`` matches everything, a nil selector
matches nothing. The API server rejects malformed selectors, so one here (from a
snapshot file) is a DecodeError naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from asched.cluster.labelsyntax import valid_label_key, valid_label_value
from asched.cluster.records import Requirement

SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A metav1.LabelSelector; ``nothing`` is the nil selector."""

    match_labels: tuple[tuple[str, str], ...] = ()
    expressions: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(labels.get(k) == v for k, v in self.match_labels) and all(
            r.matches(labels) for r in self.expressions
        )


NOTHING: Final = LabelSelector(nothing=True)


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """One pod affinity term; ``namespaces`` None with a selector means "all namespaces"."""

    selector: LabelSelector
    topology_key: str
    namespaces: frozenset[str] | None
    namespace_selector: LabelSelector | None = None

    def selects_namespace(self, namespace: str, namespace_labels: Mapping[str, str]) -> bool:
        if self.namespaces is not None and namespace in self.namespaces:
            return True
        return self.namespace_selector is not None and self.namespace_selector.matches(
            namespace_labels
        )

    def matches(
        self, labels: Mapping[str, str], namespace: str, namespace_labels: Mapping[str, str]
    ) -> bool:
        """Does a pod with ``labels`` in ``namespace`` fall under this term?"""
        return self.selects_namespace(namespace, namespace_labels) and self.selector.matches(labels)


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    weight: int
    term: AffinityTerm


@dataclass(frozen=True, slots=True)
class PodAffinity:
    """A pod's affinity and anti-affinity, required and preferred."""

    required: tuple[AffinityTerm, ...] = ()
    required_anti: tuple[AffinityTerm, ...] = ()
    preferred: tuple[WeightedTerm, ...] = ()
    preferred_anti: tuple[WeightedTerm, ...] = ()
    #: ``<kind>: <field path>: <problem>`` for each kind of terms that did not parse (its
    #: terms are dropped, as upstream's NewPodInfo leaves them)
    errors: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (
            self.required
            or self.required_anti
            or self.preferred
            or self.preferred_anti
            or self.errors
        )

    @property
    def error_message(self) -> str:
        """The errors as Go's aggregate error prints them (one, or ``[a, b]``)."""
        return self.errors[0] if len(self.errors) == 1 else "[" + ", ".join(self.errors) + "]"


_INVALID_VALUE: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_INVALID_KEY: Final = (
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character, with an optional DNS subdomain prefix "
    "and '/'"
)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _label_problems(selector: LabelSelector, path: str) -> str | None:
    """The first invalid key or value of a selector, worded as upstream's parser words it."""
    for key, value in selector.match_labels:
        if not valid_label_key(key):
            return f"{path}.matchLabels: Invalid value: {_quoted(key)}: {_INVALID_KEY}"
        if not valid_label_value(value):
            return f"{path}.matchLabels: Invalid value: {_quoted(value)}: {_INVALID_VALUE}"
    for index, req in enumerate(selector.expressions):
        here = f"{path}.matchExpressions[{index}]"
        if not valid_label_key(req.key):
            return f"{here}.key: Invalid value: {_quoted(req.key)}: {_INVALID_KEY}"
        for number, value in enumerate(req.values):
            if not valid_label_value(value):
                return f"{here}.values[{number}]: Invalid value: {_quoted(value)}: {_INVALID_VALUE}"
    return None


class SelectorError(ValueError):
    """A malformed selector; ``path`` is relative to the selector."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


def decode_label_selector(raw: Any) -> LabelSelector:
    """Decode a metav1.LabelSelector (None is the nil selector)."""
    if raw is None:
        return NOTHING
    if not isinstance(raw, Mapping):
        raise SelectorError("", f"must be an object, got {type(raw).__name__}")
    labels = raw.get("matchLabels") or {}
    if not isinstance(labels, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
    ):
        raise SelectorError("matchLabels", "must map label keys to string values")
    expressions = []
    for index, item in enumerate(raw.get("matchExpressions") or []):
        path = f"matchExpressions[{index}]"
        if not isinstance(item, Mapping):
            raise SelectorError(path, "must be an object")
        key, operator = item.get("key"), item.get("operator")
        values = item.get("values") or []
        if not isinstance(key, str) or not key:
            raise SelectorError(f"{path}.key", "Required value")
        if operator not in SELECTOR_OPERATORS:
            raise SelectorError(
                f"{path}.operator",
                f"Unsupported value: {operator!r}: supported values: {', '.join(SELECTOR_OPERATORS)}",
            )
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise SelectorError(f"{path}.values", "must be a list of strings")
        if operator in ("In", "NotIn") and not values:
            raise SelectorError(
                f"{path}.values",
                "Required value: must be specified when `operator` is 'In' or 'NotIn'",
            )
        if operator in ("Exists", "DoesNotExist") and values:
            raise SelectorError(
                f"{path}.values",
                "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        expressions.append(Requirement(key, operator, tuple(values)))
    return LabelSelector(tuple(sorted(labels.items())), tuple(expressions))


def decode_term(raw: Any, owner_namespace: str) -> AffinityTerm:
    """Decode a PodAffinityTerm owned by a pod in ``owner_namespace``."""
    if not isinstance(raw, Mapping):
        raise SelectorError("", "must be an object")
    topology_key = raw.get("topologyKey", "")
    if not isinstance(topology_key, str):
        raise SelectorError("topologyKey", f"must be a string, got {topology_key!r}")
    # The API server refuses an empty key; the scheduler treats it as a key no node has,
    # and so do we (upstream's own tables construct such pods).
    try:
        selector = decode_label_selector(raw.get("labelSelector"))
    except SelectorError as exc:
        raise SelectorError(f"labelSelector.{exc.path}".rstrip("."), str(exc)) from None
    names = raw.get("namespaces") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise SelectorError("namespaces", "must be a list of strings")
    raw_ns_selector = raw.get("namespaceSelector")
    try:
        ns_selector = None if raw_ns_selector is None else decode_label_selector(raw_ns_selector)
    except SelectorError as exc:
        raise SelectorError(f"namespaceSelector.{exc.path}".rstrip("."), str(exc)) from None
    if not names and ns_selector is None:
        return AffinityTerm(selector, topology_key, frozenset({owner_namespace}))
    return AffinityTerm(selector, topology_key, frozenset(names), ns_selector)


def decode_pod_affinity(
    affinity: Mapping[str, Any] | None, anti: Mapping[str, Any] | None, owner_namespace: str
) -> tuple[PodAffinity | None, tuple[str, str] | None]:
    """Decode ``podAffinity`` and ``podAntiAffinity``; return (affinity, (path, error))."""
    parts: dict[str, list[Any]] = {
        "required": [],
        "required_anti": [],
        "preferred": [],
        "preferred_anti": [],
    }
    for section, prefix, raw in (("", "podAffinity", affinity), ("_anti", "podAntiAffinity", anti)):
        if not raw:
            continue
        for index, item in enumerate(
            raw.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        ):
            path = f"{prefix}.requiredDuringSchedulingIgnoredDuringExecution[{index}]"
            try:
                parts[f"required{section}"].append(decode_term(item, owner_namespace))
            except SelectorError as exc:
                return None, (f"{path}.{exc.path}".rstrip("."), str(exc))
        for index, item in enumerate(
            raw.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ):
            path = f"{prefix}.preferredDuringSchedulingIgnoredDuringExecution[{index}]"
            if not isinstance(item, Mapping):
                return None, (path, "must be an object")
            weight = item.get("weight")
            if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= 100:
                return None, (
                    f"{path}.weight",
                    f"Invalid value: {weight!r}: must be in the range 1-100",
                )
            try:
                term = decode_term(item.get("podAffinityTerm"), owner_namespace)
            except SelectorError as exc:
                return None, (f"{path}.podAffinityTerm.{exc.path}".rstrip("."), str(exc))
            parts[f"preferred{section}"].append(WeightedTerm(weight, term))
    errors = []
    kinds = (
        (
            "required",
            "requiredAffinityTerms",
            "podAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
        ),
        (
            "required_anti",
            "requiredAntiAffinityTerms",
            "podAntiAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
        ),
        (
            "preferred",
            "preferredAffinityTerms",
            "podAffinity",
            "preferredDuringSchedulingIgnoredDuringExecution",
        ),
        (
            "preferred_anti",
            "preferredAntiAffinityTerms",
            "podAntiAffinity",
            "preferredDuringSchedulingIgnoredDuringExecution",
        ),
    )
    for part, kind, section, field in kinds:
        for index, item in enumerate(parts[part]):
            term = item.term if isinstance(item, WeightedTerm) else item
            inner = ".podAffinityTerm" if isinstance(item, WeightedTerm) else ""
            base = f"spec.affinity.{section}.{field}[{index}]{inner}"
            problem = _label_problems(term.selector, f"{base}.labelSelector")
            if problem is None and term.namespace_selector is not None:
                problem = _label_problems(term.namespace_selector, f"{base}.namespaceSelector")
            if problem is not None:
                errors.append(f"{kind}: {problem}")
                parts[part] = []
                break
    decoded = PodAffinity(
        tuple(parts["required"]),
        tuple(parts["required_anti"]),
        tuple(parts["preferred"]),
        tuple(parts["preferred_anti"]),
        tuple(errors),
    )
    return (None if decoded.empty else decoded), None
