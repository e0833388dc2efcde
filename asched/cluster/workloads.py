"""The Services, ReplicationControllers, ReplicaSets and StatefulSets that select pods.

PodTopologySpread gives a pod without constraints of its own the default constraints,
with a selector built from these objects (:func:`asched.cluster.spread.default_selector`).
:class:`SelectorSources` keeps them per namespace and caches the selector per
(namespace, pod labels): the replicas of a Deployment share their labels, so a
5,000-replica rollout computes it once, not once per pod.

Invalidation: any change to an object's namespace set or selector drops that
namespace's cached selectors. Updates that leave the selector as it was (a ReplicaSet's
status moving on every pod it creates) keep them. The cache is emptied when it holds
more than ``cache_limit`` entries (pods with unique labels, as a StatefulSet's, would
otherwise grow it without bound).

Only :class:`~asched.cluster.table.NodeTable`'s writers (the ingest, ``table_of``)
call the mutators.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from asched.cluster.labelselector import LabelSelector
from asched.cluster.records import PodInfo
from asched.cluster.spread import (
    SELECTOR_KINDS,
    Extras,
    default_selector,
    namespace_of,
    selector_field,
)

#: API resource (watch) name -> kind.
KIND_OF_RESOURCE: Final[Mapping[str, str]] = {
    "services": "Service",
    "replicationcontrollers": "ReplicationController",
    "replicasets": "ReplicaSet",
    "statefulsets": "StatefulSet",
}
_CACHE_LIMIT: Final = 16384

_Key = frozenset[tuple[str, str]]


def _name_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


class SelectorSources:
    """Selector-bearing objects by namespace and kind, and the cached default selectors."""

    def __init__(self, cache_limit: int = _CACHE_LIMIT) -> None:
        #: namespace -> kind -> name -> raw object
        self._objects: dict[str, dict[str, dict[str, Mapping[str, Any]]]] = {}
        self._cache: dict[str, dict[_Key, LabelSelector]] = {}
        self._cached = 0
        self._limit = cache_limit
        self.hits = 0
        self.misses = 0

    def upsert(self, kind: str, obj: Mapping[str, Any]) -> None:
        """Add or replace one object of ``kind`` (ignored unless a selector kind)."""
        if kind not in SELECTOR_KINDS:
            return
        namespace = namespace_of(obj)
        by_name = self._objects.setdefault(namespace, {}).setdefault(kind, {})
        name = _name_of(obj)
        old = by_name.get(name)
        by_name[name] = obj
        if old is None or selector_field(old) != selector_field(obj):
            self._invalidate(namespace)

    def delete(self, kind: str, obj: Mapping[str, Any]) -> None:
        """Forget one object of ``kind`` (no-op when unknown)."""
        if kind not in SELECTOR_KINDS:
            return
        namespace = namespace_of(obj)
        by_name = self._objects.get(namespace, {}).get(kind, {})
        if by_name.pop(_name_of(obj), None) is not None:
            self._invalidate(namespace)

    def replace(self, kind: str, objects: Iterable[Mapping[str, Any]]) -> None:
        """Make ``objects`` the whole set of ``kind`` (a relist, or a snapshot's extras)."""
        if kind not in SELECTOR_KINDS:
            return
        for namespace, kinds in self._objects.items():
            if kinds.pop(kind, None):
                self._invalidate(namespace)
        for obj in objects:
            self.upsert(kind, obj)

    def _invalidate(self, namespace: str) -> None:
        dropped = self._cache.pop(namespace, None)
        if dropped is not None:
            self._cached -= len(dropped)

    def objects(self, namespace: str) -> Extras:
        """The namespace's objects, kind -> list (the reference's ``extras`` shape)."""
        kinds = self._objects.get(namespace, {})
        return {kind: list(by_name.values()) for kind, by_name in kinds.items()}

    def default_selector(self, pod: PodInfo) -> LabelSelector:
        """:func:`~asched.cluster.spread.default_selector` for ``pod``, cached."""
        key: _Key = frozenset(pod.labels.items())
        cached = self._cache.get(pod.namespace)
        if cached is not None:
            found = cached.get(key)
            if found is not None:
                self.hits += 1
                return found
        self.misses += 1
        selector = default_selector(pod, self.objects(pod.namespace))
        if self._cached >= self._limit:
            self._cache.clear()
            self._cached = 0
        self._cache.setdefault(pod.namespace, {})[key] = selector
        self._cached += 1
        return selector
