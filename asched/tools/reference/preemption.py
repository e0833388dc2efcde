"""DefaultPreemption, scalar reference: what PostFilter would do for a pod.

Upstream: pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go and
pkg/scheduler/framework/preemption/preemption.go.

Not wired into :func:`asched.tools.reference.evaluate` yet. The whole decision is a pure
function of the cluster and one callback, ``fits(node, pods_on_node) -> Status``: does
the preemptor pass every Filter on ``node`` if exactly ``pods_on_node`` ran there (the
rest of the cluster unchanged)? :func:`asched.tools.reference.fits.filter_chain` builds one
from the reference filters, InterPodAffinity and PodTopologySpread included.

Steps, in upstream order:

1. Eligibility (:func:`eligible_to_preempt`): ``preemptionPolicy: Never``; a
   lower-priority pod on the pod's nominated node terminating because the scheduler
   preempted it (unless that node is now UnschedulableAndUnresolvable).
2. Potential nodes: those whose Filter status is exactly Unschedulable.
3. Dry run from ``offset`` (given by the caller; upstream draws it at random) over the
   potential nodes, until at least one candidate without PDB violations exists and
   the candidates number at least ``num_candidates``; each of the two candidate lists
   (without / with PDB violations) holds at most ``num_candidates``.
4. Victims on a node (:func:`select_victims_on_node`): remove every lower-priority pod;
   if the pod fits, add them back most important first, PDB-violating ones before the
   others, keeping each one that still lets the pod fit.
5. The node (:func:`pick_one_node`): fewest PDB violations, lowest highest victim
   priority, smallest sum of (priority + 2^31), fewest victims, latest start among the
   highest-priority victims, then the first candidate in dry-run order (upstream: an
   arbitrary one, it iterates over a Go map).

Messages: PostFilter statuses carry ``preemption: `` + the inner message, e.g.
``preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 Preemption is not helpful
for scheduling.`` (v1.31+ format, :mod:`asched.tools.reference.message`).

``PodInfo`` has no ``status.startTime``: the start time of a pod is its
``metadata.creationTimestamp`` here (a pod without one counts as started now, i.e.
latest). Which terminating pods were preempted by the scheduler (their
``DisruptionTarget`` condition) is passed in as pod keys; :func:`is_preemption_victim`
reads it from a raw pod.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from asched.cluster.pods import start_time
from asched.cluster.records import NodeInfo, PodInfo
from asched.config.types import DefaultPreemptionArgs
from asched.framework.status import Code, Status
from asched.tools.reference.crosspod import PodsByNode
from asched.tools.reference.labelselector import LabelSelector, decode_or_nothing
from asched.tools.reference.message import fit_error_message

NAME: Final = "DefaultPreemption"
PREFIX: Final = "preemption: "
REASON_NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
REASON_NO_VICTIMS: Final = "No preemption victims found for incoming pod"
NOT_ELIGIBLE_NEVER: Final = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING: Final = "not eligible due to a terminating pod on the nominated node."
NO_NODES: Final = "no nodes available"

#: Does the preemptor pass every Filter on the node if exactly these pods ran there?
FitsFn = Callable[[NodeInfo, Sequence[PodInfo]], Status]

_PRIORITY_OFFSET: Final = 2**31  # math.MaxInt32 + 1: makes every priority non-negative
#: The status of a node absent from the Filter statuses (upstream's absentNodesStatus).
_ABSENT: Final = Status.unresolvable()


# Inputs.


@dataclass(frozen=True, slots=True)
class DisruptionBudget:
    """What preemption reads of a PodDisruptionBudget (policy/v1 and v1beta1 alike).

    A nil, empty or invalid selector matches no pod.
    """

    namespace: str
    name: str
    selector: LabelSelector
    disruptions_allowed: int
    disrupted_pods: frozenset[str]


def decode_pdbs(objects: Iterable[Mapping[str, Any]]) -> tuple[DisruptionBudget, ...]:
    """Decode raw PodDisruptionBudgets (``snapshot.extras["PodDisruptionBudget"]``).

    A missing namespace is ``default`` (as decoded pods have it); a missing or
    non-integer ``disruptionsAllowed`` is 0.
    """
    out = []
    for obj in objects:
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        spec = obj.get("spec")
        spec = spec if isinstance(spec, Mapping) else {}
        status = obj.get("status")
        status = status if isinstance(status, Mapping) else {}
        name = str(meta.get("name") or "")
        allowed = status.get("disruptionsAllowed")
        disrupted = status.get("disruptedPods")
        out.append(
            DisruptionBudget(
                namespace=str(meta.get("namespace") or "default"),
                name=name,
                selector=decode_or_nothing(
                    spec.get("selector"), obj=f"PodDisruptionBudget {name}", path="spec.selector"
                ),
                disruptions_allowed=allowed
                if isinstance(allowed, int) and not isinstance(allowed, bool)
                else 0,
                disrupted_pods=frozenset(disrupted)
                if isinstance(disrupted, Mapping)
                else frozenset(),
            )
        )
    return tuple(out)


def is_preemption_victim(raw_pod: Mapping[str, Any]) -> bool:
    """A raw pod being deleted because the scheduler preempted it.

    It has a ``deletionTimestamp`` and its first ``DisruptionTarget`` condition is
    ``True`` with reason ``PreemptionByScheduler``.
    """
    meta = raw_pod.get("metadata")
    if not isinstance(meta, Mapping) or meta.get("deletionTimestamp") is None:
        return False
    status = raw_pod.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for condition in conditions if isinstance(conditions, list) else []:
        if isinstance(condition, Mapping) and condition.get("type") == "DisruptionTarget":
            return (
                condition.get("status") == "True"
                and condition.get("reason") == "PreemptionByScheduler"
            )
    return False


def importance_key(pod: PodInfo) -> tuple[int, float]:
    """Sort key, most important first: higher priority, then earlier start."""
    return (-pod.priority, start_time(pod))


def by_importance(pods: Iterable[PodInfo]) -> list[PodInfo]:
    """Pods most important first (upstream's ``MoreImportantPod``); ties keep their order."""
    return sorted(pods, key=importance_key)


def candidate_count(num_nodes: int, args: DefaultPreemptionArgs) -> int:
    """``max(n * percentage // 100, absolute)``, capped at ``n``."""
    wanted = max(
        num_nodes * args.min_candidate_nodes_percentage // 100, args.min_candidate_nodes_absolute
    )
    return min(wanted, num_nodes)


# Eligibility and potential nodes.


def eligible_to_preempt(
    pod: PodInfo,
    pods_by_node: PodsByNode,
    nominated_node_status: Status | None,
    terminating_victims: Collection[str] = (),
) -> tuple[bool, str]:
    """Upstream's ``PodEligibleToPreemptOthers``: ``(eligible, why not)``.

    ``nominated_node_status`` is the Filter status of the pod's nominated node in the
    failed attempt (None: no status, which upstream reads as Success);
    ``terminating_victims`` are the keys of the pods the scheduler itself preempted.
    """
    if pod.preemption_policy == "Never":
        return False, NOT_ELIGIBLE_NEVER
    nominated = pod.nominated_node_name
    if nominated:
        if (
            nominated_node_status is not None
            and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        ):
            return True, ""
        for other in pods_by_node.get(nominated, ()):
            if (
                other.priority < pod.priority
                and other.deleting
                and other.key in terminating_victims
            ):
                return False, NOT_ELIGIBLE_TERMINATING
    return True, ""


def nodes_where_preemption_might_help(
    nodes: Sequence[NodeInfo], node_statuses: Mapping[str, Status]
) -> list[NodeInfo]:
    """The nodes whose status is exactly Unschedulable, in ``nodes`` order."""
    return [
        node
        for node in nodes
        if (status := node_statuses.get(node.name)) is not None
        and status.code == Code.UNSCHEDULABLE
    ]


# Victims on one node.


def split_by_pdb(
    pods: Sequence[PodInfo], pdbs: Sequence[DisruptionBudget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """``(violating, non_violating)``, each in the order of ``pods``.

    Walking ``pods`` in order, each budget of the pod's namespace that selects it and
    does not already list it in ``disruptedPods`` loses one allowed disruption; a pod
    that takes any budget below 0 is violating.
    """
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for index, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace or pdb.selector.empty:
                    continue
                if not pdb.selector.matches(pod.labels) or pod.name in pdb.disrupted_pods:
                    continue
                allowed[index] -= 1
                if allowed[index] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


@dataclass(frozen=True, slots=True)
class VictimSelection:
    """The outcome of :func:`select_victims_on_node`.

    Success: ``victims`` most important first, and how many of them violate a PDB.
    Otherwise the status that rules the node out.
    """

    status: Status
    victims: tuple[PodInfo, ...] = ()
    num_pdb_violations: int = 0


def select_victims_on_node(
    pod: PodInfo,
    node: NodeInfo,
    pods_on_node: Sequence[PodInfo],
    fits: FitsFn,
    pdbs: Sequence[DisruptionBudget] = (),
) -> VictimSelection:
    """The fewest lower-priority pods to evict from ``node`` so that ``pod`` fits (step 4).

    UnschedulableAndUnresolvable :data:`REASON_NO_VICTIMS` when no pod has a lower
    priority; the ``fits`` status when the pod does not fit even without all of them.
    """
    potential = [p for p in pods_on_node if p.priority < pod.priority]
    if not potential:
        return VictimSelection(Status.unresolvable(REASON_NO_VICTIMS))
    remaining = [p for p in pods_on_node if p.priority >= pod.priority]
    status = fits(node, tuple(remaining))
    if not status.ok:
        return VictimSelection(status)
    violating, non_violating = split_by_pdb(by_importance(potential), pdbs)
    victims: list[PodInfo] = []

    def reprieve(candidate: PodInfo) -> bool:
        remaining.append(candidate)
        if fits(node, tuple(remaining)).ok:
            return True
        remaining.pop()
        victims.append(candidate)
        return False

    num_violations = sum(1 for p in violating if not reprieve(p))
    for p in non_violating:
        reprieve(p)
    ordered = by_importance(victims) if violating and non_violating else victims
    return VictimSelection(Status.success(), tuple(ordered), num_violations)


# Candidates.


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where preemption would let the pod fit, and its victims (most important first)."""

    node: str
    victims: tuple[PodInfo, ...]
    num_pdb_violations: int


@dataclass(frozen=True, slots=True)
class DryRun:
    """Candidates (without PDB violations first, each list in visiting order) and the
    statuses of the visited nodes that are not candidates."""

    candidates: tuple[Candidate, ...]
    statuses: Mapping[str, Status]


def dry_run(
    pod: PodInfo,
    potential_nodes: Sequence[NodeInfo],
    pods_by_node: PodsByNode,
    fits: FitsFn,
    pdbs: Sequence[DisruptionBudget],
    offset: int,
    num_candidates: int,
) -> DryRun:
    """Visit ``potential_nodes[(offset + i) % n]`` for i = 0, 1, ... (step 3).

    Stops once a candidate without PDB violations exists and the two lists together
    hold ``num_candidates``; each list keeps at most ``num_candidates`` entries.
    """
    clean: list[Candidate] = []
    violating: list[Candidate] = []
    statuses: dict[str, Status] = {}
    count = len(potential_nodes)
    for step in range(count):
        node = potential_nodes[(offset + step) % count]
        chosen = select_victims_on_node(pod, node, pods_by_node.get(node.name, ()), fits, pdbs)
        if chosen.status.ok and chosen.victims:
            found = Candidate(node.name, chosen.victims, chosen.num_pdb_violations)
            target = clean if chosen.num_pdb_violations == 0 else violating
            if len(target) < num_candidates:
                target.append(found)
            if clean and len(clean) + len(violating) >= num_candidates:
                break
            continue
        status = chosen.status
        if status.ok:
            status = Status.error(f"expected at least one victim pod on node {node.name!r}")
        statuses[node.name] = status
    return DryRun(tuple(clean + violating), statuses)


def _earliest_start_of_top_priority(victims: Sequence[PodInfo]) -> float:
    top = max(p.priority for p in victims)
    return min(start_time(p) for p in victims if p.priority == top)


#: pickOneNodeForPreemption's criteria in order; each maps a candidate to a score,
#: higher is better.
CRITERIA: Final[tuple[Callable[[Candidate], float], ...]] = (
    lambda c: -c.num_pdb_violations,
    lambda c: -max(p.priority for p in c.victims),
    lambda c: -sum(p.priority + _PRIORITY_OFFSET for p in c.victims),
    lambda c: -len(c.victims),
    lambda c: _earliest_start_of_top_priority(c.victims),
)


def pick_one_node(candidates: Sequence[Candidate]) -> Candidate | None:
    """Keep the best-scoring candidates criterion by criterion; then the first left."""
    remaining = list(candidates)
    if len(remaining) <= 1:
        return remaining[0] if remaining else None
    for criterion in CRITERIA:
        scores = [criterion(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, s in zip(remaining, scores, strict=True) if s == best]
        if len(remaining) == 1:
            break
    return remaining[0]


# PostFilter.


@dataclass(frozen=True, slots=True)
class PreemptionResult:
    """What DefaultPreemption's PostFilter decides.

    ``status``: Success (a node was nominated), Unschedulable or Error, with the
    ``preemption: ...`` message as its only reason. ``nominated_node``: the node to
    nominate; ``""`` when the pod's nomination must be cleared; None when upstream
    returns no PostFilter result (the nomination is left as it is). ``victims``: the
    pods to delete, most important first. ``cleared_nominations``: keys of the
    lower-priority pods nominated to the chosen node, whose nomination is removed.
    """

    status: Status
    nominated_node: str | None
    victims: tuple[PodInfo, ...] = ()
    cleared_nominations: tuple[str, ...] = ()
    num_pdb_violations: int = 0


def _aggregate(messages: Sequence[str]) -> str:
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def preempt(
    nodes: Sequence[NodeInfo],
    pods_by_node: PodsByNode,
    pod: PodInfo,
    node_statuses: Mapping[str, Status],
    fits: FitsFn,
    *,
    pdbs: Sequence[DisruptionBudget] = (),
    args: DefaultPreemptionArgs | None = None,
    offset: int = 0,
    terminating_victims: Collection[str] = (),
    nominated_pods: Sequence[PodInfo] = (),
) -> PreemptionResult:
    """Run DefaultPreemption's PostFilter for a pod that fits no node.

    Parameters
    ----------
    nodes, pods_by_node : the cluster (see :mod:`asched.tools.reference.crosspod`).
    pod : PodInfo
        The preemptor.
    node_statuses : mapping of str to Status
        Every node's Filter status from the failed attempt; a node absent from it counts
        as UnschedulableAndUnresolvable.
    fits : FitsFn
        The Filter chain for the preemptor (see the module docstring).
    pdbs : the cluster's PodDisruptionBudgets (:func:`decode_pdbs`).
    args : DefaultPreemptionArgs, defaults when None.
    offset : int
        Where the dry run starts among the potential nodes (taken modulo their number).
    terminating_victims : keys of the pods the scheduler preempted earlier.
    nominated_pods : pods currently nominated to some node (for ``cleared_nominations``).
    """
    nominated_status = node_statuses.get(pod.nominated_node_name, _ABSENT)
    eligible, why = eligible_to_preempt(pod, pods_by_node, nominated_status, terminating_victims)
    if not eligible:
        return PreemptionResult(Status.unschedulable(PREFIX + why), None)
    if not nodes:
        return PreemptionResult(Status.error(PREFIX + NO_NODES), None)
    potential = nodes_where_preemption_might_help(nodes, node_statuses)
    found = DryRun((), {})
    if potential:
        found = dry_run(
            pod,
            potential,
            pods_by_node,
            fits,
            pdbs,
            offset % len(potential),
            candidate_count(len(potential), args or DefaultPreemptionArgs()),
        )
    if not found.candidates:
        errors = [s.message for s in found.statuses.values() if s.code == Code.ERROR]
        if errors:
            return PreemptionResult(Status.error(PREFIX + _aggregate(errors)), None)
        reasons = [
            found.statuses[n.name].reasons if n.name in found.statuses else (REASON_NOT_HELPFUL,)
            for n in nodes
        ]
        message = fit_error_message(len(nodes), reasons)
        return PreemptionResult(Status.unschedulable(PREFIX + message), "")
    best = pick_one_node(found.candidates)
    assert best is not None  # candidates is not empty
    cleared = tuple(
        p.key
        for p in nominated_pods
        if p.nominated_node_name == best.node and p.priority < pod.priority and p.key != pod.key
    )
    return PreemptionResult(
        Status.success(), best.node, best.victims, cleared, best.num_pdb_violations
    )
