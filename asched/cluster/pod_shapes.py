"""Pods of one shape decoded once: a cache of the spec-derived part of decoded pods.

A workload's pods come from a few templates: they differ in their names, uids, labels and
status, and agree in everything else the scheduler reads of their specs (requests,
tolerations, affinity, ports, selectors...). :class:`PodShapes` decodes the first pod of
each shape in full with :func:`~asched.cluster.decode.decode_pod`, and the next ones with
:func:`~asched.cluster.decode.decode_pod_like`, which reads only the per-pod fields and
shares the rest of the first record. The result equals a full decode, field for field.

**The key** (:func:`shape_key`) is the JSON of exactly the inputs of the shared part:
:data:`SHAPE_FIELDS` of the spec, the read fields of each container
(:data:`CONTAINER_FIELDS`), ``spec.hostNetwork`` as the decoder reads it, and the
namespace (pod affinity terms default to it). Two pods whose keys differ never share a
record; two pods that differ in any of those inputs get different keys. What is read per
pod is left out: metadata (annotations and owner references included), status,
``spec.nodeName``, ``spec.volumes`` (decoded again for every pod, since the claims of
ephemeral volumes are named after the pod, and an API server adds a projected
service-account token volume with a name of its own to every pod), and the containers'
other fields (their ``volumeMounts`` name that volume).

The JSON keeps the types apart (``1``, ``"1"``, ``1.0`` and ``true`` differ) and the
order of the keys (two specs in different orders are two shapes, a miss and not a
mistake). It assumes JSON as the API serves it: a NaN would be written as ``null`` (the
watch's parser cannot produce one). An object the key cannot be built for (a field of an
unexpected type, a non-string key) is decoded in full, uncached; an object that does not
decode is never cached, so its error is raised by the full decoder as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from asched.api.objects import PodJSON
from asched.cluster.decode import decode_pod, decode_pod_like
from asched.cluster.records import PodInfo

#: The spec fields the shared part is decoded from (besides the containers and
#: ``hostNetwork``, keyed apart).
SHAPE_FIELDS: Final = (
    "overhead",
    "tolerations",
    "affinity",
    "priority",
    "topologySpreadConstraints",
    "schedulerName",
    "preemptionPolicy",
    "nodeSelector",
    "schedulingGates",
)

#: The fields of a container (or init container) the decoder reads.
CONTAINER_FIELDS: Final = ("resources", "image", "ports", "restartPolicy")

#: The spec fields read for every pod, outside the key.
PER_POD_SPEC_FIELDS: Final = ("nodeName", "volumes", "workloadRef")

#: How many shapes are kept; past it the cache starts over (a workload of distinct pods
#: then costs a key per pod, and memory stays bounded).
DEFAULT_LIMIT: Final = 1024


class _Unkeyable(Exception):
    """The object's shape cannot be keyed (decoded in full instead)."""


def _containers(value: Any) -> list[tuple[Any, ...]] | None:
    if value is None:
        return None
    if type(value) is not list:
        raise _Unkeyable
    out = []
    for container in value:
        if type(container) is not dict:
            raise _Unkeyable
        get = container.get  # CONTAINER_FIELDS, spelled out: this runs for every pod
        out.append((get("resources"), get("image"), get("ports"), get("restartPolicy")))
    return out


def shape_key(raw: PodJSON | Mapping[str, Any]) -> bytes | None:
    """The key of the pod's shape (see the module docstring); None when it has none."""
    if type(raw) is not dict:
        return None
    meta = raw.get("metadata")
    spec = raw.get("spec")
    if type(meta) is not dict or type(spec) is not dict:
        return None
    get = spec.get  # SHAPE_FIELDS, spelled out: this runs for every pod
    try:
        return orjson.dumps(
            (
                meta.get("namespace"),
                bool(get("hostNetwork", False)),
                _containers(get("initContainers")),
                _containers(get("containers")),
                get("overhead"),
                get("tolerations"),
                get("affinity"),
                get("priority"),
                get("topologySpreadConstraints"),
                get("schedulerName"),
                get("preemptionPolicy"),
                get("nodeSelector"),
                get("schedulingGates"),
            )
        )
    except (_Unkeyable, TypeError):  # orjson.JSONEncodeError is a TypeError
        return None


class PodShapes:
    """Decodes pods, sharing the spec-derived part among pods of one shape."""

    def __init__(self, limit: int = DEFAULT_LIMIT, *, keep_annotations: bool = False) -> None:
        self.limit = limit
        #: decode the pods' annotations (``decode_pod(..., keep_annotations=True)``)
        self.keep_annotations = keep_annotations
        self._shapes: dict[bytes, PodInfo] = {}
        #: decodes answered from a known shape, and decoded in full (for tests and stats)
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._shapes)

    def decode(self, raw: PodJSON | Mapping[str, Any]) -> PodInfo:
        """``decode_pod(raw)`` (with :attr:`keep_annotations`): equal to it, and raising
        what it raises."""
        key = shape_key(raw)
        if key is not None:
            shape = self._shapes.get(key)
            if shape is not None:
                self.hits += 1
                return decode_pod_like(raw, shape, keep_annotations=self.keep_annotations)
        self.misses += 1
        pod = decode_pod(raw, keep_annotations=self.keep_annotations)
        if key is not None:
            if len(self._shapes) >= self.limit:
                self._shapes.clear()
            self._shapes[key] = pod
        return pod
