"""Evaluate one pod against every node, one node at a time: the differential-test oracle.

The steps follow kube-scheduler's scheduling cycle (upstream:
pkg/scheduler/schedule_one.go, schedulePod, and
pkg/scheduler/framework/runtime/framework.go), without sampling (every node is examined)
and without the one-feasible-node shortcut (every feasible node is scored, so
``asched explain`` can show the scores):

1. PreFilter, in ``resolved.pre_filter`` order. Skip: that plugin's Filter is not run
   for this pod. UnschedulableAndUnresolvable or Error: stop; every node gets that
   status (an Error's message is the error itself, not a FitError).
   Unschedulable: remembered while the remaining PreFilters run, then the last one is
   given to every node. A plugin may restrict the nodes worth filtering (NodeAffinity's
   ``metadata.name`` terms); the others get UnschedulableAndUnresolvable
   ``node(s) didn't satisfy plugin <name>``.
2. Filter, per node, in ``resolved.filter`` order; the first rejecting plugin decides.
3. PreScore/Score/NormalizeScore over the feasible nodes, per ``resolved.score`` entry.
   A plugin listed in ``resolved.pre_score`` whose PreScore skips this pod is absent
   from every node's ``scores`` (so is a plugin whose score asched does not implement).
   A plugin not listed in ``resolved.pre_score`` is scored without its PreScore, as
   upstream's Score falls back to computing the state itself. A PreScore Error ends the
   evaluation: the feasible nodes get it, nothing is selected, the message is the error.
4. ``total`` = sum of weight x normalized score; ``top`` = the feasible nodes with the
   highest total, in snapshot order; ``selected`` is drawn uniformly from ``top`` with
   ``numpy.random.default_rng(seed)``.

Clarity beats speed here: this module is the specification the vectorised engine is
tested against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from asched.cluster.bounds import OUT_OF_RANGE_PLUGIN
from asched.cluster.records import PodInfo
from asched.cluster.snapshot import Snapshot
from asched.config.types import DefaultPreemptionArgs, Profile
from asched.engine.result import Evaluation, NodeVerdict, Preemption, Victim
from asched.framework.status import Code, Status
from asched.tools.reference import crosspod, interpod, preemption
from asched.tools.reference.cycle import Cycle, NodeState, build_cycle
from asched.tools.reference.fits import filter_chain
from asched.tools.reference.message import NO_NODES_MESSAGE, fit_error_message
from asched.tools.reference.nodetree import node_tree_order
from asched.tools.reference.normalize import default_normalize
from asched.tools.reference.plugins import REGISTRY, Plugin


@dataclass(frozen=True, slots=True)
class _PreFilterPass:
    """What PreFilter decided for the pod."""

    rejection: Status | None
    skipped: frozenset[str]
    allowed: frozenset[str] | None
    restricting: tuple[str, ...]


def _plugin(name: str) -> Plugin:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"the reference implementation has no plugin {name!r}") from None


def _run_pre_filter(cycle: Cycle) -> _PreFilterPass:
    if cycle.pod.out_of_range:  # the range gate (asched.cluster.bounds) precedes PreFilter
        status = Status.unresolvable(cycle.pod.out_of_range, plugin=OUT_OF_RANGE_PLUGIN)
        return _PreFilterPass(status, frozenset(), None, ())
    skipped: set[str] = set()
    allowed: frozenset[str] | None = None
    restricting: list[str] = []
    unschedulable: Status | None = None
    for name in cycle.profile.resolved.pre_filter:
        outcome = _plugin(name).pre_filter(cycle)
        code = outcome.status.code
        if code == Code.SKIP:
            skipped.add(name)
        elif code in (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR):
            return _PreFilterPass(outcome.status.with_plugin(name), frozenset(), None, ())
        elif code == Code.UNSCHEDULABLE:
            unschedulable = outcome.status.with_plugin(name)
        if outcome.node_names is not None:
            allowed = outcome.node_names if allowed is None else allowed & outcome.node_names
            restricting.append(name)
    return _PreFilterPass(unschedulable, frozenset(skipped), allowed, tuple(restricting))


def _outside_result(restricting: Sequence[str]) -> NodeVerdict:
    """The verdict of a node left out by PreFilter node-name restrictions."""
    if len(restricting) == 1:
        plugin, reason = restricting[0], f"node(s) didn't satisfy plugin {restricting[0]}"
    else:
        names = " ".join(sorted(restricting))
        plugin, reason = restricting[-1], f"node(s) didn't satisfy plugin(s) [{names}]"
    return NodeVerdict(
        feasible=False, plugin=plugin, code=Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons=(reason,)
    )


def _filter(cycle: Cycle, node: NodeState, skipped: frozenset[str]) -> NodeVerdict | None:
    """The first rejecting Filter's verdict, or None when every Filter passes."""
    for name in cycle.profile.resolved.filter:
        if name in skipped:
            continue
        status = _plugin(name).filter(cycle, node)
        if not status.ok:
            return NodeVerdict(
                feasible=False, plugin=name, code=status.code, reasons=status.reasons
            )
    return None


def _normalized(plugin: Plugin, cycle: Cycle, names: list[str], raw: list[int]) -> list[int]:
    if plugin.normalization == "own":
        return plugin.normalize(cycle, names, raw)
    if plugin.normalization == "minmax":
        return interpod.normalize(raw)
    if plugin.normalization == "default":
        return default_normalize(raw, reverse=False)
    if plugin.normalization == "reverse":
        return default_normalize(raw, reverse=True)
    return raw


def _scores(cycle: Cycle, feasible: Sequence[NodeState]) -> dict[str, list[int]] | Status:
    """Normalized scores per present plugin, aligned with ``feasible``; or a PreScore Error."""
    pre_score = set(cycle.profile.resolved.pre_score)
    names = [node.name for node in feasible]
    cycle.scratch["feasible"] = names
    out: dict[str, list[int]] = {}
    for name, _weight in cycle.profile.resolved.score:
        plugin = _plugin(name)
        if not plugin.implements_score:
            continue
        if name in pre_score:
            status = plugin.pre_score_status(cycle)
            if status.code == Code.ERROR:
                return status.with_plugin(name)
            if not status.ok:
                continue
        raw = [plugin.score(cycle, node) for node in feasible]
        out[name] = _normalized(plugin, cycle, names, raw)
    return out


def evaluate(snapshot: Snapshot, pod: PodInfo, profile: Profile, *, seed: int = 0) -> Evaluation:
    """Evaluate ``pod`` against every node of ``snapshot`` under ``profile``.

    Parameters
    ----------
    snapshot : Snapshot
        Nodes (in order) and the pods bound to them.
    pod : PodInfo
        The pod to place; its own ``node_name`` only matters to the NodeName filter.
    profile : Profile
        A resolved profile: ``resolved`` gives the plugins per extension point and the
        score weights, ``plugin_args`` the args (defaults when a plugin has none).
    seed : int
        Seed of the tie-break among the highest totals.
    """
    if not snapshot.nodes:
        return Evaluation(
            pod=pod.key,
            profile=profile.scheduler_name,
            nodes={},
            weights=dict(profile.resolved.score),
            selected=None,
            top=(),
            message=NO_NODES_MESSAGE,
        )
    cycle = build_cycle(snapshot, pod, profile)
    weights = dict(profile.resolved.score)
    pre = _run_pre_filter(cycle)
    if pre.rejection is not None:
        rejection = pre.rejection
        everywhere = NodeVerdict(
            feasible=False,
            plugin=rejection.plugin,
            code=rejection.code,
            reasons=rejection.reasons,
        )
        return Evaluation(
            pod=pod.key,
            profile=profile.scheduler_name,
            nodes={node.name: everywhere for node in cycle.nodes},
            weights=weights,
            selected=None,
            top=(),
            message=rejection.message
            if rejection.code == Code.ERROR
            else fit_error_message(
                len(cycle.nodes),
                pre_filter_message=rejection.message,
                post_filter_message=_suffix(
                    preemption := _preemption(
                        snapshot, pod, profile, dict.fromkeys(names_of(cycle), rejection)
                    )
                ),
            ),
            preemption=None if rejection.code == Code.ERROR else preemption,
        )

    rejected: dict[str, NodeVerdict] = {}
    feasible: list[NodeState] = []
    for node in cycle.nodes:
        if pre.allowed is not None and node.name not in pre.allowed:
            rejected[node.name] = _outside_result(pre.restricting)
            continue
        failure = _filter(cycle, node, pre.skipped)
        if failure is None:
            feasible.append(node)
        else:
            rejected[node.name] = failure

    scores = _scores(cycle, feasible) if feasible else {}
    if isinstance(scores, Status):
        error = NodeVerdict(
            feasible=False, plugin=scores.plugin, code=scores.code, reasons=scores.reasons
        )
        return Evaluation(
            pod=pod.key,
            profile=profile.scheduler_name,
            nodes={node.name: rejected.get(node.name, error) for node in cycle.nodes},
            weights=weights,
            selected=None,
            top=(),
            message=scores.message,
        )
    feasible_verdicts: dict[str, NodeVerdict] = {}
    for index, node in enumerate(feasible):
        node_scores = {name: values[index] for name, values in scores.items()}
        total = sum(weights[name] * score for name, score in node_scores.items())
        feasible_verdicts[node.name] = NodeVerdict(feasible=True, scores=node_scores, total=total)

    verdicts = {
        node.name: feasible_verdicts[node.name]
        if node.name in feasible_verdicts
        else rejected[node.name]
        for node in cycle.nodes
    }
    if feasible_verdicts:
        best = max(v.total for v in feasible_verdicts.values())
        top = tuple(name for name, v in feasible_verdicts.items() if v.total == best)
        selected: str | None = top[int(np.random.default_rng(seed).integers(len(top)))]
        message = None
        preemption = None
    else:
        top, selected = (), None
        statuses = {
            name: Status(v.code or Code.UNSCHEDULABLE, v.reasons, v.plugin or "")
            for name, v in rejected.items()
        }
        preemption = _preemption(snapshot, pod, profile, statuses)
        message = fit_error_message(
            len(cycle.nodes),
            (v.reasons for v in rejected.values()),
            post_filter_message=_suffix(preemption),
        )
    return Evaluation(
        pod=pod.key,
        profile=profile.scheduler_name,
        nodes=verdicts,
        weights=weights,
        selected=selected,
        top=top,
        message=message,
        preemption=preemption,
    )


def names_of(cycle: Cycle) -> list[str]:
    return [node.name for node in cycle.nodes]


def _preemption(
    snapshot: Snapshot, pod: PodInfo, profile: Profile, statuses: Mapping[str, Status]
) -> Preemption | None:
    """What DefaultPreemption would do (offset 0), when the profile has it."""
    if preemption.NAME not in profile.resolved.post_filter:
        return None
    nodes = node_tree_order(snapshot.nodes)
    by_node = crosspod.pods_by_node(snapshot)
    extras = snapshot.extras
    fits = filter_chain(
        pod,
        snapshot.nodes,
        by_node,
        profile,
        namespace_labels=crosspod.namespace_labels(extras.get("Namespace", ())),
        extras=extras,
        volumes=snapshot.volumes,
    )
    args = profile.plugin_args.get(preemption.NAME)
    result = preemption.preempt(
        nodes,
        by_node,
        pod,
        statuses,
        fits,
        pdbs=preemption.decode_pdbs(extras.get("PodDisruptionBudget", ())),
        args=args if isinstance(args, DefaultPreemptionArgs) else None,
        offset=0,
        terminating_victims={p.key for p in snapshot.pods if p.preempted},
    )
    node = result.nominated_node or None
    victims = tuple(Victim(v.key, node or "", v.priority) for v in result.victims)
    message = "" if result.status.ok else result.status.message
    return Preemption(result.status.code, node, victims, result.num_pdb_violations, message)


def _suffix(found: Preemption | None) -> str:
    return "" if found is None else found.message
