"""metav1.LabelSelector: decoding from raw JSON and matching.

Upstream: staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go,
LabelSelectorAsSelector.

The one selector type of asched: topology spread constraints and the workload objects
that give pods their default spread constraints (:mod:`asched.cluster.spread`), pod
affinity terms and their namespace selectors (:mod:`asched.cluster.affinity`),
PodDisruptionBudgets (:mod:`asched.cluster.budgets`), and the scalar references, which
import it through :mod:`asched.tools.reference.labelselector`. The vectorised plugins read a
selector through :attr:`LabelSelector.column_requirements`, the same requirements in the
form the pod label columns evaluate. Semantics are upstream's
``metav1.LabelSelectorAsSelector`` followed by ``labels.Selector.Matches``:

* a nil selector (JSON ``null`` or an absent field) matches nothing (:data:`NOTHING`);
* an empty selector ``{}`` matches everything (:data:`EVERYTHING`);
* ``matchLabels`` entries are equality requirements; ``matchExpressions`` use ``In``,
  ``NotIn`` (an absent key counts as not in), ``Exists`` and ``DoesNotExist``;
  everything is ANDed.

Decoding validates what upstream's parser validates (operator, value counts, key and
value syntax) and raises :class:`asched.errors.DecodeError` naming the object, the field
path and the offending value. What an invalid selector means is the caller's policy:
a pod's affinity terms turn a key or value upstream's parser rejects into a status at
PreFilter (``syntax="defer"``: decoding returns the problem instead of raising it);
callers for which upstream treats an unparsable selector as matching nothing (PDBs,
ReplicaSets) use :func:`decode_or_nothing`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from asched.cluster import records
from asched.cluster.labelsyntax import valid_label_key, valid_label_value
from asched.errors import DecodeError

Operator = Literal["In", "NotIn", "Exists", "DoesNotExist"]
OPERATORS: Final[tuple[Operator, ...]] = ("In", "NotIn", "Exists", "DoesNotExist")

_INVALID_VALUE: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
_INVALID_KEY: Final = (
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character, with an optional DNS subdomain prefix "
    "and '/'"
)


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ANDed requirement: ``key operator values``."""

    key: str
    operator: Operator
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement."""
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A decoded selector. ``nothing`` marks the nil selector, which matches no labels."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False
    #: the requirements as the pod label columns evaluate them
    #: (:meth:`asched.cluster.labels.LabelColumns.requirement`), values sorted
    column_requirements: tuple[records.Requirement, ...] = field(
        init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        columns = tuple(
            records.Requirement(r.key, r.operator, tuple(sorted(r.values)))
            for r in self.requirements
        )
        object.__setattr__(self, "column_requirements", columns)

    @property
    def empty(self) -> bool:
        """True for the match-everything selector (upstream's ``Selector.Empty()``)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every requirement (never for the nil selector)."""
        if self.nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)

    def and_labels(self, labels: Mapping[str, str]) -> LabelSelector:
        """This selector ANDed with ``key = value`` for each of ``labels``.

        The nil selector stays nil (upstream's ``mergeLabelSetWithSelector`` returns a
        selector without requirements unchanged when it cannot list them).
        """
        if self.nothing or not labels:
            return self
        extra = tuple(Requirement(k, "In", frozenset({v})) for k, v in sorted(labels.items()))
        return LabelSelector(extra + self.requirements)

    def and_selector(self, other: LabelSelector) -> LabelSelector:
        """Both selectors' requirements ANDed (nil stays nil on either side)."""
        if self.nothing or other.nothing:
            return NOTHING
        return LabelSelector(self.requirements + other.requirements)


EVERYTHING: Final = LabelSelector()
NOTHING: Final = LabelSelector(nothing=True)


def selector_from_set(labels: Mapping[str, str]) -> LabelSelector:
    """Equality requirements for ``labels`` (an empty mapping matches everything)."""
    return EVERYTHING.and_labels(labels)


def _quote(text: str) -> str:
    """Go's ``%q`` for the plain strings found in labels: double quotes, escapes."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _fail(obj: str, path: str, message: str) -> DecodeError:
    return DecodeError(obj, path, message)


def _string(obj: str, value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(obj, path, f"must be a string, got {value!r}")
    return value


class _Syntax:
    """Where key and value syntax problems go: raised at once, or the first one kept."""

    def __init__(self, obj: str, *, defer: bool) -> None:
        self.obj = obj
        self.defer = defer
        self.problem: DecodeError | None = None

    def _report(self, path: str, message: str) -> None:
        error = _fail(self.obj, path, message)
        if not self.defer:
            raise error
        if self.problem is None:
            self.problem = error

    def key(self, key: str, path: str) -> None:
        if not valid_label_key(key):
            self._report(path, f"Invalid value: {_quote(key)}: {_INVALID_KEY}")

    def value(self, value: str, path: str) -> None:
        if not valid_label_value(value):
            self._report(path, f"Invalid value: {_quote(value)}: {_INVALID_VALUE}")


def _expression(obj: str, raw: Any, path: str, syntax: _Syntax) -> Requirement:
    if not isinstance(raw, Mapping):
        raise _fail(obj, path, f"must be an object, got {type(raw).__name__}")
    key = _string(obj, raw.get("key", ""), f"{path}.key")
    syntax.key(key, f"{path}.key")
    operator = _string(obj, raw.get("operator", ""), f"{path}.operator")
    if operator not in OPERATORS:
        supported = ", ".join(f'"{op}"' for op in OPERATORS)
        raise _fail(
            obj,
            f"{path}.operator",
            f"Unsupported value: {_quote(operator)}: supported values: {supported}",
        )
    raw_values = raw.get("values")
    if raw_values is None:
        raw_values = []
    if not isinstance(raw_values, list):
        raise _fail(obj, f"{path}.values", f"must be a list, got {type(raw_values).__name__}")
    values = [_string(obj, v, f"{path}.values[{i}]") for i, v in enumerate(raw_values)]
    if operator in ("In", "NotIn") and not values:
        raise _fail(
            obj,
            f"{path}.values",
            "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        )
    if operator in ("Exists", "DoesNotExist") and values:
        raise _fail(
            obj,
            f"{path}.values",
            "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )
    for i, value in enumerate(values):
        syntax.value(value, f"{path}.values[{i}]")
    return Requirement(key, operator, frozenset(values))


def decode_label_selector(raw: Any, *, obj: str, path: str) -> LabelSelector:
    """Decode a raw ``metav1.LabelSelector``; None (nil) gives :data:`NOTHING`.

    Parameters
    ----------
    raw : mapping or None
        The selector as the API serves it.
    obj : str
        The object holding it, for errors (``Pod default/web-1``).
    path : str
        The field path of the selector in that object, for errors.

    Raises
    ------
    DecodeError
        On a wrongly typed field, an unsupported operator, a wrong number of values or a
        key or value upstream's selector parser rejects.
    """
    selector, _ = _decode(raw, _Syntax(obj, defer=False), path)
    return selector


def decode_deferring_syntax(
    raw: Any, *, obj: str, path: str
) -> tuple[LabelSelector, DecodeError | None]:
    """Like :func:`decode_label_selector`, but a key or value upstream's parser rejects
    is returned (the first one), not raised; the selector is then the one it would be.

    Raises
    ------
    DecodeError
        On a wrongly typed field, an unsupported operator or a wrong number of values.
    """
    return _decode(raw, _Syntax(obj, defer=True), path)


def _decode(raw: Any, syntax: _Syntax, path: str) -> tuple[LabelSelector, DecodeError | None]:
    obj = syntax.obj
    if raw is None:
        return NOTHING, None
    if not isinstance(raw, Mapping):
        raise _fail(obj, path, f"must be an object, got {type(raw).__name__}")
    requirements: list[Requirement] = []
    match_labels = raw.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        raise _fail(obj, f"{path}.matchLabels", "must be an object")
    for key, value in match_labels.items():
        here = f"{path}.matchLabels.{key}"
        key = _string(obj, key, here)
        value = _string(obj, value, here)
        syntax.key(key, here)
        syntax.value(value, here)
        requirements.append(Requirement(key, "In", frozenset({value})))
    # matchLabels is a map: its requirements in key order, whatever the document's order
    requirements.sort(key=lambda r: r.key)
    expressions = raw.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise _fail(obj, f"{path}.matchExpressions", "must be a list")
    for i, item in enumerate(expressions):
        requirements.append(_expression(obj, item, f"{path}.matchExpressions[{i}]", syntax))
    return LabelSelector(tuple(requirements)), syntax.problem


def decode_or_nothing(raw: Any, *, obj: str, path: str) -> LabelSelector:
    """Like :func:`decode_label_selector`, but an invalid selector matches nothing."""
    try:
        return decode_label_selector(raw, obj=obj, path=path)
    except DecodeError:
        return NOTHING
