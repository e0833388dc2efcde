"""The scheduler extender wire format, ``k8s.io/kube-scheduler/extender/v1``, and its checks.

The Go types carry no JSON tags, so every key is the Go field name itself (``Pod``,
``Nodes``, ``NodeNames``, ``FailedNodes``, ``FailedAndUnresolvableNodes``, ``Error``,
``Host``, ``Score``, ``PodName``, ``PodNamespace``, ``PodUID``, ``Node``,
``NodeNameToVictims``, ``NodeNameToMetaVictims``, ``Pods``, ``NumPDBViolations``,
``UID``); only the embedded Kubernetes objects (``Nodes`` is a ``v1.NodeList``) use
their own lower-case keys. Requests are built the way Go marshals them: a nil pointer or
map is ``null``, so exactly one of ``Nodes`` / ``NodeNames`` is set.

Answers are read the way kube-scheduler's ``encoding/json`` reads them, so an extender
that works with kube-scheduler works here: keys match their field case-insensitively,
unknown keys are ignored and ``null`` is the zero value. Beyond that every value is
checked, and a wrong one raises :class:`~asched.errors.ExtenderError` naming the call,
never a ``KeyError``/``TypeError``: a non-object where an object belongs, a non-string
name or reason, a score that is not an integer in int64 (Go refuses ``5.0`` as well), a
feasible node that was not sent (upstream refuses that in ``nodeCacheCapable`` mode and
asched in both), a node both feasible and failed, a victim UID not on its node.
Deliberately lenient, as upstream: a failed node or a scored host that was not sent is
dropped (it cannot change the decision), and duplicated hosts' scores add up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypedDict

import numpy as np
import numpy.typing as npt

from asched.errors import ExtenderError

#: upstream's MinExtenderPriority / MaxExtenderPriority: the score range of HostPriority.
MAX_EXTENDER_PRIORITY: Final = 10
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
# the types the fast paths compare against
_STR: Final = frozenset({str})

#: A Kubernetes object as JSON (a Pod or a Node).
RawObject = Mapping[str, Any]


class NodeList(TypedDict):
    """``v1.NodeList`` as Go marshals it (no kind or apiVersion)."""

    metadata: dict[str, Any]
    items: list[RawObject]


class ExtenderArgs(TypedDict):
    """The body of a filter or prioritize call."""

    Pod: RawObject
    Nodes: NodeList | None
    NodeNames: list[str] | None


class ExtenderFilterResult(TypedDict, total=False):
    """The answer to a filter call; every key is optional."""

    Nodes: NodeList | None
    NodeNames: list[str] | None
    FailedNodes: dict[str, str] | None
    FailedAndUnresolvableNodes: dict[str, str] | None
    Error: str


class HostPriority(TypedDict):
    """One entry of the answer to a prioritize call (a JSON list of these)."""

    Host: str
    Score: int


class ExtenderBindingArgs(TypedDict):
    """The body of a bind call."""

    PodName: str
    PodNamespace: str
    PodUID: str
    Node: str


class ExtenderBindingResult(TypedDict, total=False):
    """The answer to a bind call."""

    Error: str


class MetaPod(TypedDict):
    """A pod named by UID only."""

    UID: str


class Victims(TypedDict):
    """Pods to preempt on one node, with full Pod objects."""

    Pods: list[RawObject]
    NumPDBViolations: int


class MetaVictims(TypedDict):
    """Pods to preempt on one node, by UID."""

    Pods: list[MetaPod]
    NumPDBViolations: int


class ExtenderPreemptionArgs(TypedDict):
    """The body of a preempt call: full victims, or UIDs when ``nodeCacheCapable``."""

    Pod: RawObject
    NodeNameToVictims: dict[str, Victims] | None
    NodeNameToMetaVictims: dict[str, MetaVictims] | None


class ExtenderPreemptionResult(TypedDict, total=False):
    """The answer to a preempt call: the victims that remain, by UID, per node."""

    NodeNameToMetaVictims: dict[str, MetaVictims | None] | None


@dataclass(frozen=True, slots=True)
class CallSite:
    """Which call an answer belongs to, for error messages."""

    url: str
    verb: str

    def error(self, detail: str) -> ExtenderError:
        return ExtenderError(self.url, self.verb, detail)


@dataclass(frozen=True, slots=True)
class FilterAnswer:
    """A checked filter answer: names only, every one of them sent (``feasible``: a
    tuple, or the :class:`~asched.extenders.sent_names.SentNames` subset of the names
    sent when the fast path took the answer as their bytes).

    ``positions`` (intp, ``(len(feasible),)``), when the reader knows them: the index of
    each feasible name among the names sent (an answer in the order sent,
    :mod:`asched.extenders.fast`); None otherwise.
    """

    feasible: Sequence[str]
    failed: Mapping[str, str]
    unresolvable: Mapping[str, str]
    positions: npt.NDArray[np.intp] | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class NodeVictims:
    """The pods preemption would evict on one node (full Pod objects, as JSON)."""

    pods: tuple[RawObject, ...]
    num_pdb_violations: int = 0


@dataclass(frozen=True, slots=True)
class VictimUids:
    """A checked preemption answer for one node: the victims' UIDs and PDB violations."""

    uids: tuple[str, ...]
    num_pdb_violations: int


def node_list(items: Iterable[RawObject]) -> NodeList:
    """A ``v1.NodeList`` holding ``items``."""
    return {"metadata": {}, "items": list(items)}


def extender_args(
    pod: RawObject, names: Sequence[str], nodes: Sequence[RawObject] | None
) -> ExtenderArgs:
    """Filter/prioritize body: ``NodeNames`` when ``nodes`` is None (nodeCacheCapable)."""
    if nodes is None:
        return {"Pod": pod, "Nodes": None, "NodeNames": list(names)}
    return {"Pod": pod, "Nodes": node_list(nodes), "NodeNames": None}


def binding_args(namespace: str, name: str, uid: str, node: str) -> ExtenderBindingArgs:
    """Bind body (upstream builds it from the v1.Binding it would post)."""
    return {"PodName": name, "PodNamespace": namespace, "PodUID": uid, "Node": node}


def pod_uid(pod: RawObject) -> str:
    """``metadata.uid`` of a Pod object ("" when absent)."""
    meta = pod.get("metadata")
    uid = meta.get("uid") if isinstance(meta, Mapping) else None
    return uid if isinstance(uid, str) else ""


def preemption_args(
    pod: RawObject, victims: Mapping[str, NodeVictims], *, node_cache_capable: bool
) -> ExtenderPreemptionArgs:
    """Preempt body: victims by UID when ``node_cache_capable``, else full Pod objects."""
    if node_cache_capable:
        meta: dict[str, MetaVictims] = {
            node: {
                "Pods": [{"UID": pod_uid(victim)} for victim in entry.pods],
                "NumPDBViolations": entry.num_pdb_violations,
            }
            for node, entry in victims.items()
        }
        return {"Pod": pod, "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
    full: dict[str, Victims] = {
        node: {"Pods": list(entry.pods), "NumPDBViolations": entry.num_pdb_violations}
        for node, entry in victims.items()
    }
    return {"Pod": pod, "NodeNameToVictims": full, "NodeNameToMetaVictims": None}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {_quote(value)}"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _quote(text: str, limit: int = 80) -> str:
    shown = text if len(text) <= limit else text[: limit - 3] + "..."
    return '"' + shown.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _fields(site: CallSite, value: Any, what: str, names: Sequence[str]) -> dict[str, Any]:
    """``value``'s fields among ``names`` as Go matches them (case-insensitive, last wins)."""
    if not isinstance(value, dict):
        raise site.error(f"{what} must be a JSON object, got {_kind(value)}")
    canonical = {name.casefold(): name for name in names}
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = canonical.get(str(key).casefold())
        if name is not None:
            out[name] = item
    return out


def _string(site: CallSite, value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise site.error(f"{what} must be a string, got {_kind(value)}")
    return value


def _int64(site: CallSite, value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise site.error(f"{what} must be an integer, got {_kind(value)}")
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise site.error(f"{what} must fit in int64, got {value}")
    return value


def _strings(site: CallSite, value: Any, what: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise site.error(f"{what} must be a list of strings, got {_kind(value)}")
    if set(map(type, value)) <= _STR:  # the common case, checked in C: no per-item paths
        return list(value)
    return [_string(site, item, f"{what}[{index}]") for index, item in enumerate(value)]


def _reasons(site: CallSite, value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise site.error(f"{what} must be an object of node name to reason, got {_kind(value)}")
    if set(map(type, value.values())) <= _STR:  # the common case, checked in C
        return {str(name): reason for name, reason in value.items()} if _odd_keys(value) else value
    return {
        str(name): _string(site, reason, f"{what}[{_quote(str(name))}]")
        for name, reason in value.items()
    }


def _node_names(site: CallSite, value: Any) -> list[str] | None:
    """The names of the Node objects of a ``Nodes`` node list (None for null)."""
    if value is None:
        return None
    items = _fields(site, value, "Nodes", ("items",)).get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise site.error(f"Nodes.items must be a list, got {_kind(items)}")
    names = []
    for index, item in enumerate(items):
        node = _fields(site, item, f"Nodes.items[{index}]", ("metadata",))
        meta = _fields(site, node.get("metadata"), f"Nodes.items[{index}].metadata", ("name",))
        name = _string(site, meta.get("name"), f"Nodes.items[{index}].metadata.name")
        if not name:
            raise site.error(f"Nodes.items[{index}].metadata.name is missing")
        names.append(name)
    return names


def _known(site: CallSite, names: Iterable[str], sent: Mapping[str, Any], what: str) -> list[str]:
    """``names`` without repeats, in order; every one of them must have been sent."""
    unique = dict.fromkeys(names)
    if not sent.keys() >= unique.keys():
        missing = next(name for name in unique if name not in sent)
        raise site.error(f"{what} names node {_quote(missing)}, which was not sent")
    return list(unique)


def _odd_keys(value: dict[Any, Any]) -> bool:
    """Whether a decoded object has a key that is not a str (only a caller's own dict can)."""
    return not set(map(type, value)) <= _STR


def _sent_only(reasons: dict[str, str], sent: Mapping[str, Any]) -> dict[str, str]:
    if sent.keys() >= reasons.keys():
        return reasons
    return {name: reason for name, reason in reasons.items() if name in sent}


def parse_filter_result(
    site: CallSite, answer: Any, sent: Mapping[str, Any], *, node_cache_capable: bool
) -> FilterAnswer:
    """Check a filter answer against the nodes ``sent`` (a mapping keyed by node name).

    The feasible list is ``NodeNames`` for a ``nodeCacheCapable`` extender that set it,
    else the names of the ``Nodes`` items, else empty, exactly as upstream picks it.
    A non-empty ``Error`` raises with the extender's text as the detail.
    """
    fields = _fields(
        site,
        answer,
        "the answer",
        ("Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"),
    )
    message = _string(site, fields.get("Error"), "Error")
    if message:
        raise site.error(message)
    names = _strings(site, fields.get("NodeNames"), "NodeNames")
    if node_cache_capable and names is not None:
        feasible = _known(site, names, sent, "NodeNames")
    else:
        feasible = _known(site, _node_names(site, fields.get("Nodes")) or (), sent, "Nodes")
    failed = _reasons(site, fields.get("FailedNodes"), "FailedNodes")
    unresolvable = _reasons(
        site, fields.get("FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes"
    )
    if (failed or unresolvable) and not (failed.keys() | unresolvable.keys()).isdisjoint(feasible):
        both = next(name for name in feasible if name in failed or name in unresolvable)
        raise site.error(f"node {_quote(both)} is both feasible and failed")
    return FilterAnswer(tuple(feasible), _sent_only(failed, sent), _sent_only(unresolvable, sent))


def parse_host_priorities(
    site: CallSite, answer: Any, sent: Mapping[str, Any]
) -> list[tuple[str, int]]:
    """Check a prioritize answer: ``(host, score)`` pairs for hosts that were sent.

    Scores are not clamped to 0..10: upstream takes them as they come. An entry that is
    exactly ``{"Host": str, "Score": int}`` takes a fast path; any other goes through the
    general reader (case-insensitive keys, null fields, errors naming the entry).
    """
    if answer is None:
        return []
    if not isinstance(answer, list):
        raise site.error(f"the answer must be a JSON list of host priorities, got {_kind(answer)}")
    out = []
    for index, item in enumerate(answer):
        if type(item) is dict and len(item) == 2:  # the common, exact shape
            host, score = item.get("Host"), item.get("Score")
            if type(host) is str and type(score) is int and _INT64_MIN <= score <= _INT64_MAX:
                if host in sent:
                    out.append((host, score))
                continue
        entry = _fields(site, item, f"[{index}]", ("Host", "Score"))
        for required in ("Host", "Score"):
            if entry.get(required) is None:
                raise site.error(f"[{index}].{required} is missing")
        host = _string(site, entry["Host"], f"[{index}].Host")
        score = _int64(site, entry["Score"], f"[{index}].Score")
        if host in sent:
            out.append((host, score))
    return out


def host_scores(
    site: CallSite, answer: Any, sent: Mapping[str, Any], factor: int
) -> dict[str, int]:
    """A checked prioritize answer as host -> ``score * factor``, for the hosts that were
    sent; a host answered twice gets the sum (:func:`parse_host_priorities`' pairs, added).

    One pass when every entry is exactly ``{"Host": str, "Score": int}`` (int64) and names
    its host once, what every extender sends; otherwise the general reader's answer (and
    its errors).
    """
    if type(answer) is list:
        out: dict[str, int] = {}
        for item in answer:
            if type(item) is not dict or len(item) != 2:
                break
            host, score = item.get("Host"), item.get("Score")
            if type(host) is not str or type(score) is not int or host in out:
                break
            if not _INT64_MIN <= score <= _INT64_MAX:
                break
            if host in sent:
                out[host] = score * factor
        else:
            return out
    out = {}
    for host, score in parse_host_priorities(site, answer, sent):
        out[host] = out.get(host, 0) + score * factor
    return out


def parse_binding_result(site: CallSite, answer: Any) -> None:
    """Check a bind answer; a non-empty ``Error`` raises with the extender's text."""
    if answer is None:
        return
    message = _string(site, _fields(site, answer, "the answer", ("Error",)).get("Error"), "Error")
    if message:
        raise site.error(message)


def parse_preemption_result(
    site: CallSite, answer: Any, pods_on_node: Callable[[str], Mapping[str, Any] | None]
) -> dict[str, VictimUids]:
    """Check a preempt answer: per node, victim UIDs that are on that node.

    ``pods_on_node(name)`` gives the pods on a node keyed by UID, or None when there is
    no such node (upstream looks both up in its snapshot and fails the call otherwise).
    A node answered with ``null`` victims gets an empty entry; the caller decides (see
    :func:`asched.extenders.preempt_bind.run_preemption`).
    """
    fields = _fields(site, answer, "the answer", ("NodeNameToMetaVictims",))
    table = fields.get("NodeNameToMetaVictims")
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise site.error(f"NodeNameToMetaVictims must be an object, got {_kind(table)}")
    out: dict[str, VictimUids] = {}
    for node, value in table.items():
        where = f"NodeNameToMetaVictims[{_quote(str(node))}]"
        pods = pods_on_node(str(node))
        if pods is None:
            raise site.error(f"{where}: no node {_quote(str(node))} in the cluster")
        if value is None:
            out[str(node)] = VictimUids((), 0)
            continue
        victims = _fields(site, value, where, ("Pods", "NumPDBViolations"))
        entries = victims.get("Pods")
        if entries is not None and not isinstance(entries, list):
            raise site.error(f"{where}.Pods must be a list, got {_kind(entries)}")
        uids = []
        for index, entry in enumerate(entries or ()):
            here = f"{where}.Pods[{index}]"
            uid = _string(site, _fields(site, entry, here, ("UID",)).get("UID"), f"{here}.UID")
            if uid not in pods:
                raise site.error(
                    f"claims to preempt pod UID {_quote(uid)} on node {_quote(str(node))}, "
                    "but the pod is not on that node"
                )
            uids.append(uid)
        count = _int64(site, victims.get("NumPDBViolations"), f"{where}.NumPDBViolations")
        out[str(node)] = VictimUids(tuple(uids), count)
    return out
