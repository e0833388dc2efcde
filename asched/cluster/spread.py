"""Topology spread constraints, decoded: shared by the engine and the reference.

Upstream: pkg/scheduler/framework/plugins/podtopologyspread/common.go,
filterTopologySpreadConstraints and buildDefaultConstraints.

The vectorised plugin (:mod:`asched.framework.builtin.pod_topology_spread`) and the
scalar reference (:mod:`asched.tools.reference.topologyspread`) both take their constraints
from :func:`constraints_for`, so which constraints a pod has, their defaults and the
decode errors cannot drift apart; only the counting differs.

Constraints. The pod's own ``topologySpreadConstraints`` when it has any; otherwise the
default constraints (:data:`SYSTEM_DEFAULT_CONSTRAINTS` with ``defaultingType: System``,
the args' ``defaultConstraints`` with ``List``), whose selector is built from the
Services, ReplicationControllers, ReplicaSets and StatefulSets of the pod's namespace
that select the pod (:func:`default_selector`); no such selector, no constraints.
``matchLabelKeys`` adds ``key = <pod's value>`` for each listed key the pod carries
(not to a nil labelSelector); ``minDomains`` defaults to 1, ``nodeAffinityPolicy`` to
Honor, ``nodeTaintsPolicy`` to Ignore. Filter uses the DoNotSchedule constraints, Score
the ScheduleAnyway ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from asched.cluster.labelselector import (
    EVERYTHING,
    LabelSelector,
    decode_label_selector,
    decode_or_nothing,
)
from asched.cluster.records import PodInfo
from asched.errors import DecodeError

REASON_SKEW: Final = "node(s) didn't match pod topology spread constraints"
REASON_MISSING_LABEL: Final = REASON_SKEW + " (missing required label)"

DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
HONOR: Final = "Honor"
IGNORE: Final = "Ignore"
HOSTNAME: Final = "kubernetes.io/hostname"
ZONE: Final = "topology.kubernetes.io/zone"

#: The constraints ``defaultingType: System`` applies to pods without their own.
SYSTEM_DEFAULT_CONSTRAINTS: Final[tuple[Mapping[str, Any], ...]] = (
    {"maxSkew": 3, "topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY},
    {"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY},
)

#: The kinds whose selectors make the default constraints' selector, in upstream's order.
SERVICE_LIKE: Final = ("Service", "ReplicationController")
SET_LIKE: Final = ("ReplicaSet", "StatefulSet")
SELECTOR_KINDS: Final = SERVICE_LIKE + SET_LIKE

#: kind -> raw objects (``Snapshot.extras``).
Extras = Mapping[str, Sequence[Mapping[str, Any]]]


class SpreadDefaults(Protocol):
    """What :func:`constraints_for` reads of ``PodTopologySpreadArgs``."""

    @property
    def defaulting_type(self) -> str: ...

    @property
    def default_constraints(self) -> Sequence[Mapping[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """A normalized constraint (upstream's internal ``topologySpreadConstraint``)."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


def _int(obj: str, value: Any, path: str, default: int | None = None) -> int:
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(obj, path, f"must be an integer, got {value!r}")
    return value


def _policy(obj: str, value: Any, path: str, default: str) -> str:
    if value is None:
        return default
    if value not in (HONOR, IGNORE):
        raise DecodeError(
            obj, path, f'Unsupported value: {value!r}: supported values: "Honor", "Ignore"'
        )
    return str(value)


def decode_constraints(
    raws: Sequence[Mapping[str, Any]],
    pod: PodInfo,
    action: str,
    *,
    obj: str,
    path: str,
    selector: LabelSelector | None = None,
) -> tuple[SpreadConstraint, ...]:
    """The constraints of ``raws`` whose ``whenUnsatisfiable`` is ``action``, normalized.

    ``selector`` replaces every constraint's labelSelector (default constraints).

    Raises
    ------
    DecodeError
        On a wrongly typed field, a maxSkew below 1, a bad policy or a bad labelSelector.
    """
    out = []
    for index, raw in enumerate(raws):
        here = f"{path}[{index}]"
        if not isinstance(raw, Mapping):
            raise DecodeError(obj, here, "must be an object")
        if raw.get("whenUnsatisfiable") != action:
            continue
        key = raw.get("topologyKey", "")
        if not isinstance(key, str):
            raise DecodeError(obj, f"{here}.topologyKey", f"must be a string, got {key!r}")
        if selector is None:
            mine = decode_label_selector(
                raw.get("labelSelector"), obj=obj, path=f"{here}.labelSelector"
            )
            keys = raw.get("matchLabelKeys") or []
            if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                raise DecodeError(obj, f"{here}.matchLabelKeys", "must be a list of strings")
            mine = mine.and_labels({k: pod.labels[k] for k in keys if k in pod.labels})
        else:
            mine = selector
        max_skew = _int(obj, raw.get("maxSkew"), f"{here}.maxSkew")
        if max_skew < 1:  # the API server's rule; a score could go out of 0..100 otherwise
            raise DecodeError(obj, f"{here}.maxSkew", f"must be greater than 0, got {max_skew}")
        out.append(
            SpreadConstraint(
                max_skew=max_skew,
                topology_key=key,
                selector=mine,
                min_domains=_int(obj, raw.get("minDomains"), f"{here}.minDomains", 1),
                node_affinity_policy=_policy(
                    obj, raw.get("nodeAffinityPolicy"), f"{here}.nodeAffinityPolicy", HONOR
                ),
                node_taints_policy=_policy(
                    obj, raw.get("nodeTaintsPolicy"), f"{here}.nodeTaintsPolicy", IGNORE
                ),
            )
        )
    return tuple(out)


def namespace_of(obj: Mapping[str, Any]) -> str:
    """An object's namespace (``default`` when unset)."""
    meta = obj.get("metadata")
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    return namespace if isinstance(namespace, str) and namespace else "default"


def selector_field(obj: Mapping[str, Any]) -> Any:
    """The raw ``spec.selector`` of a Service, controller or set (None when absent)."""
    spec = obj.get("spec")
    return spec.get("selector") if isinstance(spec, Mapping) else None


def _string_map(value: Any) -> dict[str, str] | None:
    if not isinstance(value, Mapping):
        return None
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def default_selector(pod: PodInfo, extras: Extras) -> LabelSelector:
    """The selector of the pod's default constraints (upstream's ``DefaultSelector``).

    The union of the ``spec.selector`` maps of the Services and ReplicationControllers,
    ANDed with the ``spec.selector`` requirements of the ReplicaSets and StatefulSets, of
    the pod's namespace, counting only the objects whose (non-nil, valid) selector
    selects the pod. An empty result means the pod gets no default constraints.
    """
    labels: dict[str, str] = {}
    for kind in SERVICE_LIKE:
        for obj in extras.get(kind, ()):
            if namespace_of(obj) != pod.namespace:
                continue
            chosen = _string_map(selector_field(obj))
            if chosen is not None and all(pod.labels.get(k) == v for k, v in chosen.items()):
                labels.update(chosen)
    selector = EVERYTHING.and_labels(labels)
    for kind in SET_LIKE:
        for obj in extras.get(kind, ()):
            if namespace_of(obj) != pod.namespace:
                continue
            theirs = decode_or_nothing(selector_field(obj), obj=kind, path="spec.selector")
            if not theirs.nothing and theirs.matches(pod.labels):
                selector = selector.and_selector(theirs)
    return selector


def constraints_for(
    pod: PodInfo,
    action: str,
    args: SpreadDefaults,
    defaults: Callable[[], LabelSelector],
) -> tuple[SpreadConstraint, ...]:
    """The pod's constraints for ``action`` (its own, else the defaults).

    ``defaults()`` gives the default constraints' selector (:func:`default_selector`,
    perhaps cached); it is called only when the pod has no constraints of its own and
    some default constraint is for ``action``.

    Raises
    ------
    DecodeError
        When a constraint does not decode.
    """
    if pod.topology_spread_constraints:
        return decode_constraints(
            pod.topology_spread_constraints,
            pod,
            action,
            obj=f"Pod {pod.key}",
            path="spec.topologySpreadConstraints",
        )
    raws = (
        SYSTEM_DEFAULT_CONSTRAINTS if args.defaulting_type == "System" else args.default_constraints
    )
    if not any(r.get("whenUnsatisfiable") == action for r in raws):
        return ()
    selector = defaults()
    if selector.empty:
        return ()
    return decode_constraints(
        raws, pod, action, obj="PodTopologySpreadArgs", path="defaultConstraints", selector=selector
    )


def hard_constraints_error(pod: PodInfo, exc: DecodeError) -> str:
    """PreFilter's Error message for constraints that do not decode."""
    where = "obtaining pod's" if pod.topology_spread_constraints else "setting default"
    return f"{where} hard topology spread constraints: {exc}"


def soft_constraints_error(exc: DecodeError) -> str:
    """PreScore's Error message for constraints that do not decode."""
    return f"calculating preScoreState: {exc}"


def requires_all_keys(pod: PodInfo, args: SpreadDefaults) -> bool:
    """Whether Score ignores nodes lacking a constraint's key.

    True except under the system defaults, so that a node without a zone still gets
    hostname spreading.
    """
    return bool(pod.topology_spread_constraints) or args.defaulting_type != "System"
