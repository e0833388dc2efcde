"""Pods nominated to nodes by preemption (upstream's nominator), by pod and by node.

A preemptor whose victims are being deleted waits, nominated to the node it will take.
Until it is bound, lower- or equal-priority pods must not take that room: the filter pass
counts the nominated pods of at least the incoming pod's priority on their node (upstream:
pkg/scheduler/framework/runtime/framework.go, RunFilterPluginsWithNominatedPods).
Nominations come from the preemption decision (at once) and from the pods'
``status.nominatedNodeName`` (after a restart); they end when the pod is assumed, bound or
deleted, or when a higher-priority preemption clears them.

What the nominated pods hold is also kept summed per node and priority, updated on
every change, so a scheduling cycle reads it without walking the nominated pods.
"""

from __future__ import annotations

from collections.abc import Mapping

from asched.cluster.records import PodInfo

#: The key of the pod count in the held amounts (resource names never are empty).
PODS_HELD = ""

Amounts = dict[str, int]


def _add(into: Amounts, pod: PodInfo, sign: int) -> None:
    into[PODS_HELD] = into.get(PODS_HELD, 0) + sign
    for resource, amount in pod.requests.items():
        into[resource] = into.get(resource, 0) + sign * amount


class Nominations:
    """``pod key -> (pod, node)``, ``node -> {pod key: pod}`` and the held sums."""

    __slots__ = ("_by_node", "_by_pod", "_held", "_superseded")

    def __init__(self) -> None:
        self._by_pod: dict[str, tuple[PodInfo, str]] = {}
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        #: priority -> node -> resource -> amount held by the pods nominated there
        self._held: dict[int, dict[str, Amounts]] = {}
        #: nominations this scheduler ended whose clearing the API has not shown yet
        self._superseded: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._by_pod)

    def set(self, pod: PodInfo, node: str) -> None:
        """Nominate ``pod`` to ``node`` (replacing an earlier nomination); "" clears."""
        self.clear(pod.key)
        if node:
            self._by_pod[pod.key] = (pod, node)
            self._by_node.setdefault(node, {})[pod.key] = pod
            _add(self._held.setdefault(pod.priority, {}).setdefault(node, {}), pod, +1)

    def clear(self, key: str) -> None:
        found = self._by_pod.pop(key, None)
        if found is None:
            return
        pod, node = found
        on_node = self._by_node.get(node)
        if on_node is not None:
            on_node.pop(key, None)
            if not on_node:
                del self._by_node[node]
        by_node = self._held[pod.priority]
        amounts = by_node[node]
        _add(amounts, pod, -1)
        if not amounts[PODS_HELD]:
            del by_node[node]
            if not by_node:
                del self._held[pod.priority]

    def supersede(self, key: str) -> None:
        """End ``key``'s nomination because a higher-priority preemptor takes its node.

        Until the watch shows the pod without that ``nominatedNodeName``, events still
        carrying it do not bring the nomination back (:meth:`observed`).
        """
        node = self.node_of(key)
        self.clear(key)
        if node:
            self._superseded[key] = node

    def observed(self, pod: PodInfo) -> None:
        """The API's view of a pending pod of ours: its ``status.nominatedNodeName``.

        This scheduler is the only writer of its pods' nominations, so a nomination it
        holds is the newer one and stays; otherwise (after a restart) the API's is taken,
        unless it is one this scheduler has just superseded.
        """
        node = pod.nominated_node_name
        if not node:
            self._superseded.pop(pod.key, None)  # the API has caught up
            return
        if pod.key in self._by_pod or self._superseded.get(pod.key) == node:
            return
        self._superseded.pop(pod.key, None)
        self.set(pod, node)

    def forget(self, key: str) -> None:
        """The pod is bound, being deleted or gone: no nomination, no record of one."""
        self.clear(key)
        self._superseded.pop(key, None)

    def node_of(self, key: str) -> str:
        """The node ``key`` is nominated to ("" when none)."""
        found = self._by_pod.get(key)
        return found[1] if found is not None else ""

    def on_node(self, node: str) -> list[PodInfo]:
        return list(self._by_node.get(node, {}).values())

    def blocking(self, pod: PodInfo) -> dict[str, list[PodInfo]]:
        """Per node, the other pods nominated there with priority at least ``pod``'s."""
        out: dict[str, list[PodInfo]] = {}
        for node, pods in self._by_node.items():
            found = [p for k, p in pods.items() if k != pod.key and p.priority >= pod.priority]
            if found:
                out[node] = found
        return out

    def held(self, pod: PodInfo) -> Mapping[str, Amounts]:
        """Per node, what the other pods nominated there with priority at least ``pod``'s
        hold: requests per resource, and their number under :data:`PODS_HELD`.

        Read-only: with one priority level in play (the usual case) it is the live sum.
        """
        levels = [by_node for priority, by_node in self._held.items() if priority >= pod.priority]
        if not levels:
            return {}
        merged: dict[str, Amounts]
        if len(levels) == 1:
            merged = levels[0]
        else:
            merged = {}
            for by_node in levels:
                for node, amounts in by_node.items():
                    into = merged.setdefault(node, {})
                    for resource, amount in amounts.items():
                        into[resource] = into.get(resource, 0) + amount
        own = self._by_pod.get(pod.key)
        if own is None or own[0].priority < pod.priority:
            return merged
        node = own[1]
        merged = dict(merged)  # leave the live sums alone
        mine = dict(merged[node])
        _add(mine, own[0], -1)
        if mine[PODS_HELD]:
            merged[node] = mine
        else:
            del merged[node]
        return merged
