"""Pods nominated to nodes by preemption (upstream's nominator), by pod and by node.

A preemptor whose victims are being deleted waits, nominated to the node it will take.
Until it is bound, lower- or equal-priority pods must not take that room: the filter
pass counts the nominated pods of at least the incoming pod's priority on their node
(section 4.3). Nominations come from the preemption decision (at once) and from the
pods' ``status.nominatedNodeName`` (after a restart); they end when the pod is assumed,
bound or deleted, or when a higher-priority preemption clears them.
"""

from __future__ import annotations

from collections.abc import Iterator

from asched.cluster.records import PodInfo


class Nominations:
    """``pod key -> (pod, node)`` and ``node -> {pod key: pod}``."""

    __slots__ = ("_by_node", "_by_pod")

    def __init__(self) -> None:
        self._by_pod: dict[str, tuple[PodInfo, str]] = {}
        self._by_node: dict[str, dict[str, PodInfo]] = {}

    def __len__(self) -> int:
        return len(self._by_pod)

    def __iter__(self) -> Iterator[tuple[PodInfo, str]]:
        return iter(list(self._by_pod.values()))

    def set(self, pod: PodInfo, node: str) -> None:
        """Nominate ``pod`` to ``node`` (replacing an earlier nomination); "" clears."""
        self.clear(pod.key)
        if node:
            self._by_pod[pod.key] = (pod, node)
            self._by_node.setdefault(node, {})[pod.key] = pod

    def clear(self, key: str) -> None:
        found = self._by_pod.pop(key, None)
        if found is None:
            return
        on_node = self._by_node.get(found[1])
        if on_node is not None:
            on_node.pop(key, None)
            if not on_node:
                del self._by_node[found[1]]

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
