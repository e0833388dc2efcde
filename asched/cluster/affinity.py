"""Pod (anti-)affinity terms, decoded.

Upstream: pkg/scheduler/framework/types.go, AffinityTerm.

A term selects pods by label in some namespaces, within a topology domain given by a
node label key. ``namespaces`` empty and ``namespace_selector`` None means "the owning
pod's namespace" (resolved at decode time into ``namespaces``); a namespace selector
``{}`` selects every namespace. Label and namespace selectors are
:class:`asched.cluster.labelselector.LabelSelector` (``{}`` matches everything, a nil
selector nothing).

Policy for invalid selectors (upstream's): the API server rejects malformed ones, so a
wrongly typed field, an unsupported operator or a wrong number of values here (from a
snapshot file) makes the pod undecodable, naming the field; a key or value upstream's
selector parser rejects leaves that kind of terms empty and is recorded in
:attr:`PodAffinity.errors`, which PreFilter turns into a status, as upstream's
``NewPodInfo`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from asched.cluster.labelselector import LabelSelector, decode_deferring_syntax
from asched.errors import DecodeError


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


class TermError(ValueError):
    """A malformed term; ``path`` is relative to the term."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


def _selector(raw: Any, field: str, path: str) -> tuple[LabelSelector, DecodeError | None]:
    """Decode the term's selector ``field``; ``path`` is the term's path for syntax errors."""
    try:
        return decode_deferring_syntax(raw, obj="", path=f"{path}.{field}")
    except DecodeError as exc:
        relative = exc.path.removeprefix(f"{path}.")
        raise TermError(relative, exc.message) from None


def decode_term(
    raw: Any, owner_namespace: str, path: str = ""
) -> tuple[AffinityTerm, DecodeError | None]:
    """Decode a PodAffinityTerm owned by a pod in ``owner_namespace`` at ``path``.

    Returns the term and the first key or value its selectors' parser rejects (None when
    there is none; the path in it starts with ``path``).

    Raises
    ------
    TermError
        On a malformed term (the path relative to the term).
    """
    if not isinstance(raw, Mapping):
        raise TermError("", "must be an object")
    topology_key = raw.get("topologyKey", "")
    if not isinstance(topology_key, str):
        raise TermError("topologyKey", f"must be a string, got {topology_key!r}")
    # The API server refuses an empty key; the scheduler treats it as a key no node has,
    # and so do we (upstream's own tables construct such pods).
    selector, problem = _selector(raw.get("labelSelector"), "labelSelector", path)
    names = raw.get("namespaces") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TermError("namespaces", "must be a list of strings")
    raw_ns_selector = raw.get("namespaceSelector")
    ns_selector: LabelSelector | None = None
    if raw_ns_selector is not None:
        ns_selector, ns_problem = _selector(raw_ns_selector, "namespaceSelector", path)
        problem = problem or ns_problem
    if not names and ns_selector is None:
        return AffinityTerm(selector, topology_key, frozenset({owner_namespace})), problem
    return AffinityTerm(selector, topology_key, frozenset(names), ns_selector), problem


_KINDS = {
    "required": "requiredAffinityTerms",
    "required_anti": "requiredAntiAffinityTerms",
    "preferred": "preferredAffinityTerms",
    "preferred_anti": "preferredAntiAffinityTerms",
}


def decode_pod_affinity(
    affinity: Mapping[str, Any] | None, anti: Mapping[str, Any] | None, owner_namespace: str
) -> tuple[PodAffinity | None, tuple[str, str] | None]:
    """Decode ``podAffinity`` and ``podAntiAffinity``; return (affinity, (path, error))."""
    parts: dict[str, list[Any]] = {part: [] for part in _KINDS}
    problems: dict[str, DecodeError] = {}
    for section, prefix, raw in (("", "podAffinity", affinity), ("_anti", "podAntiAffinity", anti)):
        if not raw:
            continue
        for index, item in enumerate(
            raw.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        ):
            path = f"{prefix}.requiredDuringSchedulingIgnoredDuringExecution[{index}]"
            try:
                term, problem = decode_term(item, owner_namespace, f"spec.affinity.{path}")
            except TermError as exc:
                return None, (f"{path}.{exc.path}".rstrip("."), str(exc))
            parts[f"required{section}"].append(term)
            if problem is not None:
                problems.setdefault(f"required{section}", problem)
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
            inner = f"{path}.podAffinityTerm"
            try:
                term, problem = decode_term(
                    item.get("podAffinityTerm"), owner_namespace, f"spec.affinity.{inner}"
                )
            except TermError as exc:
                return None, (f"{inner}.{exc.path}".rstrip("."), str(exc))
            parts[f"preferred{section}"].append(WeightedTerm(weight, term))
            if problem is not None:
                problems.setdefault(f"preferred{section}", problem)
    errors = []
    for part, kind in _KINDS.items():
        problem = problems.get(part)
        if problem is not None:
            errors.append(f"{kind}: {problem.path}: {problem.message}")
            parts[part] = []
    decoded = PodAffinity(
        tuple(parts["required"]),
        tuple(parts["required_anti"]),
        tuple(parts["preferred"]),
        tuple(parts["preferred_anti"]),
        tuple(errors),
    )
    return (None if decoded.empty else decoded), None
