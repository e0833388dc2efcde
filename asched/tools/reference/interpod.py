"""InterPodAffinity, scalar reference: PreFilter, Filter, PreScore, Score.

Upstream: pkg/scheduler/framework/plugins/interpodaffinity/{filtering.go,scoring.go}.

Not wired into :func:`asched.tools.reference.evaluate` yet (the live engine still guards
these pods); the functions are called directly by their table tests and, later, by the
differential tests against the vectorised twin, which must keep these signatures.

Terms (upstream: pkg/scheduler/framework/types.go, AffinityTerm). A term is (namespaces,
namespaceSelector, labelSelector, topologyKey). With no ``namespaces`` and a nil
``namespaceSelector`` it selects the owning pod's namespace; ``namespaceSelector: {}``
selects every namespace. For the incoming pod's terms the namespaceSelector is resolved
once into the names of the Namespace objects it selects (upstream's
``mergeAffinityTermNamespacesIfNotEmpty``), so a namespace without a Namespace object is
only reachable by name or by ``{}``. An existing pod's terms are matched against the
incoming pod with the labels of the incoming pod's namespace (empty when it has no
Namespace object).

``matchLabelKeys`` / ``mismatchLabelKeys`` are ignored: the API server folds them into
``labelSelector`` when a pod is created (v1.31+), so a pod read back from it already
carries their effect.

Terms that do not parse (bad operator, bad label value, wrong types): the incoming pod
is rejected at PreFilter (UnschedulableAndUnresolvable ``parsing pod: ...``) and gets an
Error at PreScore (``failed to parse pod: ...``); an existing pod loses every term of
the kind that failed, as upstream's ``NewPodInfo`` leaves it.

Filter checks, in order (upstream: filtering.go, Filter):

1. required affinity, UnschedulableAndUnresolvable :data:`REASON_AFFINITY`;
2. required anti-affinity, Unschedulable :data:`REASON_ANTI_AFFINITY`;
3. existing pods' required anti-affinity, Unschedulable :data:`REASON_EXISTING_ANTI_AFFINITY`.

Score (upstream: scoring.go): PreScore skips when there are no feasible nodes, when
``ignorePreferredTermsOfExistingPods`` is set and the incoming pod has no preferred
terms (nothing at all is computed then, not even the hard-affinity symmetry, as
upstream), and when no term contributed to any domain. NormalizeScore rescales by the
min and max over the feasible nodes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from asched.cluster.records import NodeInfo, PodInfo
from asched.config.types import InterPodAffinityArgs
from asched.errors import DecodeError
from asched.framework.status import Code, Status
from asched.tools.reference.crosspod import (
    FilterResult,
    NamespaceLabels,
    PodsByNode,
    ScoreResult,
    TopologyPair,
)
from asched.tools.reference.labelselector import NOTHING, LabelSelector, decode_label_selector
from asched.tools.reference.normalize import MAX_NODE_SCORE

NAME: Final = "InterPodAffinity"
REASON_AFFINITY: Final = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY: Final = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY: Final = "node(s) didn't satisfy existing pods anti-affinity rules"

_REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"


# Terms.


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A decoded pod (anti-)affinity term."""

    namespaces: frozenset[str]
    namespace_selector: LabelSelector
    selector: LabelSelector
    topology_key: str

    def matches(self, pod: PodInfo, ns_labels: Mapping[str, str]) -> bool:
        """Upstream's ``AffinityTerm.Matches``: namespace (by name or selector), then labels.

        ``ns_labels`` are the labels of ``pod``'s namespace as the caller knows them.
        """
        in_namespace = pod.namespace in self.namespaces or self.namespace_selector.matches(
            ns_labels
        )
        return in_namespace and self.selector.matches(pod.labels)


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    """A preferred term and its weight (1..100)."""

    weight: int
    term: AffinityTerm


@dataclass(frozen=True, slots=True)
class PodTerms:
    """The four kinds of terms of one pod, and the parse errors of the kinds that failed."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedTerm, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def error_message(self) -> str:
        """The errors the way Go's aggregate error prints them (one, or ``[a, b]``)."""
        if len(self.errors) == 1:
            return self.errors[0]
        return "[" + ", ".join(self.errors) + "]"


def _decode_term(pod: PodInfo, raw: Any, path: str) -> AffinityTerm:
    obj = f"Pod {pod.key}"
    if not isinstance(raw, Mapping):
        raise DecodeError(obj, path, f"must be an object, got {type(raw).__name__}")
    selector = decode_label_selector(
        raw.get("labelSelector"), obj=obj, path=f"{path}.labelSelector"
    )
    raw_ns_selector = raw.get("namespaceSelector")
    ns_selector = decode_label_selector(raw_ns_selector, obj=obj, path=f"{path}.namespaceSelector")
    raw_namespaces = raw.get("namespaces") or []
    if not isinstance(raw_namespaces, list) or not all(isinstance(n, str) for n in raw_namespaces):
        raise DecodeError(obj, f"{path}.namespaces", "must be a list of strings")
    if not raw_namespaces and raw_ns_selector is None:
        namespaces = frozenset({pod.namespace})
    else:
        namespaces = frozenset(raw_namespaces)
    key = raw.get("topologyKey", "")
    if not isinstance(key, str):
        raise DecodeError(obj, f"{path}.topologyKey", f"must be a string, got {key!r}")
    return AffinityTerm(namespaces, ns_selector, selector, key)


def _items(pod: PodInfo, raw: Any, path: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise DecodeError(f"Pod {pod.key}", path, f"must be a list, got {type(raw).__name__}")
    return raw


def _required(pod: PodInfo, section: Mapping[str, Any] | None, path: str) -> list[AffinityTerm]:
    if section is None:
        return []
    here = f"{path}.{_REQUIRED}"
    return [
        _decode_term(pod, item, f"{here}[{i}]")
        for i, item in enumerate(_items(pod, section.get(_REQUIRED), here))
    ]


def _preferred(pod: PodInfo, section: Mapping[str, Any] | None, path: str) -> list[WeightedTerm]:
    if section is None:
        return []
    here = f"{path}.{_PREFERRED}"
    out = []
    for i, item in enumerate(_items(pod, section.get(_PREFERRED), here)):
        where = f"{here}[{i}]"
        if not isinstance(item, Mapping):
            raise DecodeError(f"Pod {pod.key}", where, "must be an object")
        weight = item.get("weight", 0)
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise DecodeError(
                f"Pod {pod.key}", f"{where}.weight", f"must be an integer, got {weight!r}"
            )
        term = _decode_term(pod, item.get("podAffinityTerm"), f"{where}.podAffinityTerm")
        out.append(WeightedTerm(weight, term))
    return out


def pod_terms(pod: PodInfo) -> PodTerms:
    """Decode the pod's affinity and anti-affinity terms (never raises).

    A kind of terms with any invalid term is left empty and its error recorded as
    ``<kind>: <field path>: <problem>`` (kinds: requiredAffinityTerms,
    requiredAntiAffinityTerms, preferredAffinityTerms, preferredAntiAffinityTerms).
    """
    affinity, anti = pod.pod_affinity, pod.pod_anti_affinity
    a_path, n_path = "spec.affinity.podAffinity", "spec.affinity.podAntiAffinity"
    errors: list[str] = []
    found: dict[str, Any] = {}
    readers = (
        ("requiredAffinityTerms", lambda: _required(pod, affinity, a_path)),
        ("requiredAntiAffinityTerms", lambda: _required(pod, anti, n_path)),
        ("preferredAffinityTerms", lambda: _preferred(pod, affinity, a_path)),
        ("preferredAntiAffinityTerms", lambda: _preferred(pod, anti, n_path)),
    )
    for kind, read in readers:
        try:
            found[kind] = tuple(read())
        except DecodeError as exc:
            found[kind] = ()
            errors.append(f"{kind}: {exc.path}: {exc.message}")
    return PodTerms(
        found["requiredAffinityTerms"],
        found["requiredAntiAffinityTerms"],
        found["preferredAffinityTerms"],
        found["preferredAntiAffinityTerms"],
        tuple(errors),
    )


def resolve_namespaces(term: AffinityTerm, namespace_labels: NamespaceLabels) -> AffinityTerm:
    """Fold a non-empty namespaceSelector into concrete namespace names (incoming pod).

    ``{}`` (every namespace) is kept as it is; any other selector becomes the names of
    the known namespaces it matches, and the selector itself then matches nothing.
    """
    if term.namespace_selector.empty:
        return term
    selected = {
        name for name, labels in namespace_labels.items() if term.namespace_selector.matches(labels)
    }
    return replace(term, namespaces=term.namespaces | selected, namespace_selector=NOTHING)


def _resolved(terms: PodTerms, namespace_labels: NamespaceLabels) -> PodTerms:
    def fix(term: AffinityTerm) -> AffinityTerm:
        return resolve_namespaces(term, namespace_labels)

    return PodTerms(
        tuple(fix(t) for t in terms.required_affinity),
        tuple(fix(t) for t in terms.required_anti_affinity),
        tuple(WeightedTerm(w.weight, fix(w.term)) for w in terms.preferred_affinity),
        tuple(WeightedTerm(w.weight, fix(w.term)) for w in terms.preferred_anti_affinity),
        terms.errors,
    )


# PreFilter / Filter.


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """What PreFilter counted over the whole snapshot (upstream: filtering.go,
    getExistingAntiAffinityCounts and getIncomingAffinityAntiAffinityCounts).

    ``existing_anti``: per domain, the existing pods' required anti-affinity terms that
    match the incoming pod. ``affinity``: per domain of each incoming required affinity
    term, the existing pods matching *all* of those terms. ``anti``: per domain of each
    incoming required anti-affinity term, the existing pods matching it. Only positive
    counts are present.
    """

    terms: PodTerms
    existing_anti: Mapping[TopologyPair, int]
    affinity: Mapping[TopologyPair, int]
    anti: Mapping[TopologyPair, int]


_NO_COUNTS: Final[Mapping[TopologyPair, int]] = {}


def _bump(counts: dict[TopologyPair, int], node: NodeInfo, key: str) -> None:
    if key in node.labels:
        pair = (key, node.labels[key])
        counts[pair] = counts.get(pair, 0) + 1


def pre_filter(
    nodes: Sequence[NodeInfo],
    pods_by_node: PodsByNode,
    namespace_labels: NamespaceLabels,
    pod: PodInfo,
) -> tuple[Status, PreFilterState | None]:
    """Run PreFilter: ``(status, state)``; the state is None unless the status is Success.

    Status is UnschedulableAndUnresolvable ``parsing pod: ...`` when the incoming pod's
    terms do not parse, Skip when nothing can reject a node (no existing anti-affinity
    term matches the pod and the pod has no required terms), else Success.
    """
    parsed = pod_terms(pod)
    if parsed.errors:
        return Status.unresolvable(f"parsing pod: {parsed.error_message}"), None
    terms = _resolved(parsed, namespace_labels)
    own_ns = namespace_labels.get(pod.namespace, {})

    existing_anti: dict[TopologyPair, int] = {}
    affinity: dict[TopologyPair, int] = {}
    anti: dict[TopologyPair, int] = {}
    for node in nodes:
        for existing in pods_by_node.get(node.name, ()):
            for term in pod_terms(existing).required_anti_affinity:
                if term.matches(pod, own_ns):
                    _bump(existing_anti, node, term.topology_key)
            if terms.required_affinity and all(
                t.matches(existing, {}) for t in terms.required_affinity
            ):
                for term in terms.required_affinity:
                    _bump(affinity, node, term.topology_key)
            for term in terms.required_anti_affinity:
                if term.matches(existing, {}):
                    _bump(anti, node, term.topology_key)

    if not existing_anti and not terms.required_affinity and not terms.required_anti_affinity:
        return Status.skip(), None
    return Status.success(), PreFilterState(terms, existing_anti, affinity, anti)


def _satisfies_affinity(state: PreFilterState, pod: PodInfo, node: NodeInfo) -> bool:
    pods_exist = True
    for term in state.terms.required_affinity:
        if term.topology_key not in node.labels:
            return False  # every topology key must be on the node
        if state.affinity.get((term.topology_key, node.labels[term.topology_key]), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # The first pod of a group with affinity to itself: no pod anywhere matches all the
    # terms, and the pod matches them itself.
    return not state.affinity and all(t.matches(pod, {}) for t in state.terms.required_affinity)


def _satisfies_anti_affinity(state: PreFilterState, node: NodeInfo) -> bool:
    for term in state.terms.required_anti_affinity:
        value = node.labels.get(term.topology_key)
        if value is not None and state.anti.get((term.topology_key, value), 0) > 0:
            return False
    return True


def _satisfies_existing_anti_affinity(state: PreFilterState, node: NodeInfo) -> bool:
    return all(state.existing_anti.get(pair, 0) <= 0 for pair in node.labels.items())


def filter_node(state: PreFilterState, pod: PodInfo, node: NodeInfo) -> Status:
    """Filter one node with a Success PreFilter state (the three checks in order)."""
    if not _satisfies_affinity(state, pod, node):
        return Status.unresolvable(REASON_AFFINITY)
    if not _satisfies_anti_affinity(state, node):
        return Status.unschedulable(REASON_ANTI_AFFINITY)
    if not _satisfies_existing_anti_affinity(state, node):
        return Status.unschedulable(REASON_EXISTING_ANTI_AFFINITY)
    return Status.success()


def filter_nodes(
    nodes: Sequence[NodeInfo],
    pods_by_node: PodsByNode,
    namespace_labels: NamespaceLabels,
    pod: PodInfo,
) -> FilterResult:
    """PreFilter once, then Filter every node (Skip: all Success; rejection: everywhere)."""
    status, state = pre_filter(nodes, pods_by_node, namespace_labels, pod)
    if state is None:
        everywhere = Status.success() if status.code == Code.SKIP else status
        return FilterResult(status, {node.name: everywhere for node in nodes})
    return FilterResult(status, {node.name: filter_node(state, pod, node) for node in nodes})


# PreScore / Score / NormalizeScore.

#: topology key -> value -> summed weight.
TopologyScore = dict[str, dict[str, int]]


def _add(scores: TopologyScore, node: NodeInfo, key: str, amount: int) -> None:
    if key in node.labels:
        per_value = scores.setdefault(key, {})
        value = node.labels[key]
        per_value[value] = per_value.get(value, 0) + amount


def _has_preferred(section: Mapping[str, Any] | None) -> bool:
    return section is not None and bool(section.get(_PREFERRED))


def pre_score(
    nodes: Sequence[NodeInfo],
    pods_by_node: PodsByNode,
    namespace_labels: NamespaceLabels,
    pod: PodInfo,
    args: InterPodAffinityArgs,
    feasible: Sequence[str],
) -> tuple[Status, TopologyScore]:
    """Build ``topologyScore`` (upstream: scoring.go, PreScore): ``(status, scores)``.

    Status: Skip when ``feasible`` is empty, when preferred terms of existing pods are
    ignored and the pod has none of its own, or when the result is empty; Error
    ``failed to parse pod: ...`` when the pod's terms do not parse; else Success.
    """
    if not feasible:
        return Status.skip(), {}
    if args.ignore_preferred_terms_of_existing_pods and not (
        _has_preferred(pod.pod_affinity) or _has_preferred(pod.pod_anti_affinity)
    ):
        return Status.skip(), {}
    parsed = pod_terms(pod)
    if parsed.errors:
        return Status.error(f"failed to parse pod: {parsed.error_message}"), {}
    mine = _resolved(parsed, namespace_labels)
    own_ns = namespace_labels.get(pod.namespace, {})
    hard_weight = args.hard_pod_affinity_weight

    scores: TopologyScore = {}
    for node in nodes:
        if not node.labels:
            continue
        for existing in pods_by_node.get(node.name, ()):
            for w in mine.preferred_affinity:
                if w.term.matches(existing, {}):
                    _add(scores, node, w.term.topology_key, w.weight)
            for w in mine.preferred_anti_affinity:
                if w.term.matches(existing, {}):
                    _add(scores, node, w.term.topology_key, -w.weight)
            theirs = pod_terms(existing)
            if hard_weight > 0:
                for term in theirs.required_affinity:
                    if term.matches(pod, own_ns):
                        _add(scores, node, term.topology_key, hard_weight)
            for w in theirs.preferred_affinity:
                if w.term.matches(pod, own_ns):
                    _add(scores, node, w.term.topology_key, w.weight)
            for w in theirs.preferred_anti_affinity:
                if w.term.matches(pod, own_ns):
                    _add(scores, node, w.term.topology_key, -w.weight)
    if not scores:
        return Status.skip(), {}
    return Status.success(), scores


def score_node(scores: TopologyScore, node: NodeInfo) -> int:
    """Sum, over the topology keys the node carries, of its domain's score."""
    return sum(
        per_value.get(node.labels[key], 0)
        for key, per_value in scores.items()
        if key in node.labels
    )


def normalize(raw: Sequence[int]) -> list[int]:
    """Min-max rescale to 0..100, truncated like Go's ``int64(float64)``; all 0 if flat."""
    if not raw:
        return []
    lowest, highest = min(raw), max(raw)
    spread = highest - lowest
    if spread <= 0:
        return [0 for _ in raw]
    return [int(float(MAX_NODE_SCORE) * ((s - lowest) / spread)) for s in raw]


def score_nodes(
    nodes: Sequence[NodeInfo],
    pods_by_node: PodsByNode,
    namespace_labels: NamespaceLabels,
    pod: PodInfo,
    args: InterPodAffinityArgs,
    feasible: Sequence[str] | None = None,
) -> ScoreResult:
    """PreScore, Score and NormalizeScore over the feasible nodes (default: all nodes).

    ``feasible`` names the nodes that passed filtering, in the order scores are wanted.
    """
    names = [node.name for node in nodes] if feasible is None else list(feasible)
    status, scores = pre_score(nodes, pods_by_node, namespace_labels, pod, args, names)
    if not status.ok:
        return ScoreResult(status)
    by_name = {node.name: node for node in nodes}
    raw = [score_node(scores, by_name[name]) for name in names]
    normalized = normalize(raw)
    return ScoreResult(
        status, dict(zip(names, raw, strict=True)), dict(zip(names, normalized, strict=True))
    )
