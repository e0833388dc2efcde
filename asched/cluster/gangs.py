"""Gangs as asched reads them: scheduler-plugins' PodGroup and upstream's Workload.

Two APIs describe the same thing, a group of pods that is placed all together or not at
all; both decode to one :class:`Gang`, so the plugin and the queue know one shape:

* **PodGroup** (``scheduling.x-k8s.io/v1alpha1``, scheduler-plugins): ``spec.minMember``,
  ``spec.minResources``, ``spec.scheduleTimeoutSeconds``. A pod joins with the label
  ``scheduling.x-k8s.io/pod-group: <name>``, in the PodGroup's namespace.
* **Workload** (``scheduling.k8s.io/v1alpha1``, KEP-4671, alpha in v1.35): each of
  ``spec.podGroups[]`` with ``policy.gang.minCount`` is a gang named
  ``<workload>/<podGroup>``; a pod joins with ``spec.workloadRef{name, podGroup}``.
  A group whose policy is ``basic`` (no gang) is not a gang. The group timeout is
  upstream's fixed 5 minutes.

Validation is at this boundary: a value the CRD's schema would refuse (``minMember``
below 1, a malformed quantity) raises :class:`~asched.errors.DecodeError` naming the
object and the field, so the caller reports it on the group and its members instead of
crashing. Quantities are in asched's canonical units (millicores, bytes, counts).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from asched.cluster.quantity import QuantityError, canonical
from asched.cluster.records import PodInfo
from asched.errors import DecodeError

Source = Literal["PodGroup", "Workload"]

#: The label a pod joins a PodGroup with (scheduler-plugins' ``PodGroupLabel``).
POD_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"
#: Upstream's gang group timeout for Workloads (KEP-4671): 5 minutes.
WORKLOAD_TIMEOUT_SECONDS: Final = 300.0
#: Where gangs are declared: resource -> its group version. The scheduler watches them
#: (when served and a profile enables Coscheduling); ``asched explain`` lists them.
GANG_APIS: Final[Mapping[str, str]] = {
    "podgroups": "/apis/scheduling.x-k8s.io/v1alpha1",
    "workloads": "/apis/scheduling.k8s.io/v1alpha1",
}


@dataclass(frozen=True, slots=True)
class Gang:
    """One gang: ``min_member`` pods placed together, or none.

    ``key`` is ``namespace/name`` (``namespace/workload/podGroup`` for a Workload's
    group); ``timeout_seconds`` None means the plugin's ``permitWaitingTimeSeconds``;
    ``created`` is the object's creationTimestamp (RFC 3339 text; it orders gangs in the
    queue and compares as text because the API server writes it in one format).
    """

    key: str
    namespace: str
    name: str
    source: Source
    min_member: int
    min_resources: Mapping[str, int] = field(default_factory=dict)
    timeout_seconds: float | None = None
    created: str = ""
    uid: str = ""


def _meta(raw: Mapping[str, Any], kind: str) -> tuple[str, str, str, str, str]:
    meta = raw.get("metadata")
    if not isinstance(meta, Mapping):
        raise DecodeError(kind, "metadata", "must be an object")
    name, namespace = meta.get("name"), meta.get("namespace", "default")
    if not isinstance(name, str) or not name:
        raise DecodeError(kind, "metadata.name", "must be a non-empty string")
    if not isinstance(namespace, str):
        raise DecodeError(f"{kind} {name}", "metadata.namespace", "must be a string")
    created = meta.get("creationTimestamp") or ""
    uid = meta.get("uid") or ""
    return name, namespace, f"{kind} {namespace}/{name}", str(created), str(uid)


def _whole(value: Any, obj: str, path: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(obj, path, f"must be an integer, got {value!r}")
    if value < minimum:
        raise DecodeError(obj, path, f"must be at least {minimum}, got {value}")
    return value


def _resources(raw: Any, obj: str, path: str) -> dict[str, int]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise DecodeError(obj, path, "must be a map of resource names to quantities")
    out: dict[str, int] = {}
    for name, quantity in raw.items():
        text = str(quantity) if isinstance(quantity, int | float) else quantity
        if not isinstance(text, str):
            raise DecodeError(obj, f"{path}.{name}", f"must be a quantity, got {quantity!r}")
        try:
            amount = canonical(str(name), text)
        except QuantityError as exc:
            raise DecodeError(obj, f"{path}.{name}", str(exc)) from None
        if amount < 0:
            raise DecodeError(obj, f"{path}.{name}", f"must not be negative, got {text!r}")
        out[str(name)] = amount
    return out


def decode_pod_group(raw: Mapping[str, Any]) -> Gang:
    """A PodGroup as a :class:`Gang`; DecodeError naming the field for a bad value."""
    name, namespace, obj, created, uid = _meta(raw, "PodGroup")
    spec = raw.get("spec") or {}
    if not isinstance(spec, Mapping):
        raise DecodeError(obj, "spec", "must be an object")
    min_member = _whole(spec.get("minMember", 1), obj, "spec.minMember", minimum=1)
    timeout = spec.get("scheduleTimeoutSeconds")
    return Gang(
        key=f"{namespace}/{name}",
        namespace=namespace,
        name=name,
        source="PodGroup",
        min_member=min_member,
        min_resources=_resources(spec.get("minResources"), obj, "spec.minResources"),
        timeout_seconds=None
        if timeout is None
        else float(_whole(timeout, obj, "spec.scheduleTimeoutSeconds", minimum=1)),
        created=created,
        uid=uid,
    )


def decode_workload(raw: Mapping[str, Any]) -> list[Gang]:
    """The gangs of a Workload: one per pod group with a ``gang`` policy."""
    name, namespace, obj, created, uid = _meta(raw, "Workload")
    spec = raw.get("spec") or {}
    groups = spec.get("podGroups") if isinstance(spec, Mapping) else None
    if not isinstance(groups, list):
        raise DecodeError(obj, "spec.podGroups", "must be a list")
    gangs = []
    for index, group in enumerate(groups):
        path = f"spec.podGroups[{index}]"
        if not isinstance(group, Mapping) or not isinstance(group.get("name"), str):
            raise DecodeError(obj, f"{path}.name", "must be a string")
        policy = group.get("policy") or {}
        gang = policy.get("gang") if isinstance(policy, Mapping) else None
        if gang is None:
            continue  # a basic group: its pods are scheduled one by one
        if not isinstance(gang, Mapping):
            raise DecodeError(obj, f"{path}.policy.gang", "must be an object")
        count = _whole(gang.get("minCount"), obj, f"{path}.policy.gang.minCount", minimum=1)
        gangs.append(
            Gang(
                key=f"{namespace}/{name}/{group['name']}",
                namespace=namespace,
                name=f"{name}/{group['name']}",
                source="Workload",
                min_member=count,
                timeout_seconds=WORKLOAD_TIMEOUT_SECONDS,
                created=created,
                uid=uid,
            )
        )
    return gangs


def gang_key_of(pod: Mapping[str, Any]) -> str | None:
    """The key of the gang a pod's JSON names (PodGroup label, else workloadRef), or None.

    A pod naming both is a member of its PodGroup (the label is checked first)."""
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    labels = meta.get("labels") or {}
    # (exact types first: JSON gives dicts, and the ABC's isinstance costs several times more)
    mapped = type(labels) is dict or isinstance(labels, Mapping)
    group = labels.get(POD_GROUP_LABEL) if mapped else None
    if isinstance(group, str) and group:
        return f"{namespace}/{group}"
    spec = pod.get("spec") or {}
    ref = spec.get("workloadRef") if type(spec) is dict or isinstance(spec, Mapping) else None
    if ref is not None and isinstance(ref, Mapping):
        workload, pod_group = ref.get("name"), ref.get("podGroup")
        if isinstance(workload, str) and isinstance(pod_group, str) and workload and pod_group:
            return f"{namespace}/{workload}/{pod_group}"
    return None


class GangIndex:
    """The gangs the cluster declares, and the pods that name each.

    Written by the ingest (the single writer): PodGroups and Workloads as they are
    watched, and every pod that is not finished (any scheduler's, as upstream counts
    siblings with a pod lister). A group whose object does not decode is kept in
    :attr:`invalid` with the reason, so its members are told why instead of waiting
    silently. Reads are dict lookups; nothing here knows the table (whether a member is
    placed is the table's answer).
    """

    def __init__(self) -> None:
        #: gang key -> the gang
        self.gangs: dict[str, Gang] = {}
        #: gang key (a Workload's: ``ns/workload``) -> why its object is refused, and the
        #: object's kind
        self.invalid: dict[str, tuple[Source, str]] = {}
        #: gang key -> pod key -> the member (pending or placed, not finished)
        self.members: dict[str, dict[str, PodInfo]] = {}
        #: gang key -> pod key -> the phase of a member that finished (Succeeded, Failed)
        self.finished: dict[str, dict[str, str]] = {}
        self._gang_of: dict[str, str] = {}
        self._workload_gangs: dict[str, list[str]] = {}

    def __len__(self) -> int:
        return len(self.gangs)

    def copy(self) -> GangIndex:
        """An index equal to this one that can be written without changing it (the
        records are shared: they are frozen)."""
        other = GangIndex()
        other.gangs = dict(self.gangs)
        other.invalid = dict(self.invalid)
        other.members = {key: dict(pods) for key, pods in self.members.items()}
        other.finished = {key: dict(pods) for key, pods in self.finished.items()}
        other._gang_of = dict(self._gang_of)
        other._workload_gangs = {key: list(keys) for key, keys in self._workload_gangs.items()}
        return other

    def set_pod_group(self, raw: Mapping[str, Any]) -> list[str]:
        """Add or replace a PodGroup; return its gang key if what scheduling reads of it
        changed (a status-only update changes nothing), else an empty list."""
        key = _key_of(raw)
        before = (self.gangs.get(key), self.invalid.get(key))
        try:
            gang = decode_pod_group(raw)
        except DecodeError as exc:
            self.gangs.pop(key, None)
            self.invalid[key] = ("PodGroup", str(exc))
        else:
            self.invalid.pop(key, None)
            self.gangs[key] = gang
        return [] if (self.gangs.get(key), self.invalid.get(key)) == before else [key]

    def delete_pod_group(self, raw: Mapping[str, Any]) -> str:
        key = _key_of(raw)
        self.gangs.pop(key, None)
        self.invalid.pop(key, None)
        return key

    def set_workload(self, raw: Mapping[str, Any]) -> list[str]:
        """Add or replace a Workload's gangs; return the keys of those that changed (a
        status-only update changes none)."""
        workload = _key_of(raw)
        keys = self._workload_gangs.pop(workload, [])
        before = {key: self.gangs.pop(key, None) for key in keys}
        invalid_before = self.invalid.pop(workload, None)
        try:
            gangs = decode_workload(raw)
        except DecodeError as exc:
            self.invalid[workload] = ("Workload", str(exc))
            return keys if invalid_before != self.invalid[workload] else []
        for gang in gangs:
            self.gangs[gang.key] = gang
        self._workload_gangs[workload] = [g.key for g in gangs]
        return sorted(
            key
            for key in {*keys, *self._workload_gangs[workload]}
            if before.get(key) != self.gangs.get(key) or invalid_before is not None
        )

    def delete_workload(self, raw: Mapping[str, Any]) -> list[str]:
        workload = _key_of(raw)
        self.invalid.pop(workload, None)
        keys = self._workload_gangs.pop(workload, [])
        for key in keys:
            self.gangs.pop(key, None)
        return keys

    def clear_kind(self, source: Source) -> None:
        """Forget every gang of one kind (before a relist of it)."""
        for key in [k for k, g in self.gangs.items() if g.source == source]:
            del self.gangs[key]
        if source == "Workload":
            self._workload_gangs.clear()
        self.invalid = {k: v for k, v in self.invalid.items() if v[0] != source}

    def why_invalid(self, key: str) -> str | None:
        """Why the gang ``key`` names is refused (its PodGroup's or Workload's error)."""
        found = self.invalid.get(key)
        if found is None and key.count("/") == 2:  # ns/workload/group: the Workload's
            found = self.invalid.get(key.rsplit("/", 1)[0])
        return None if found is None else found[1]

    def set_member(self, pod_key: str, gang: str, pod: PodInfo) -> None:
        """Record ``pod`` as a member of ``gang`` ("" : of none)."""
        old = self._gang_of.get(pod_key)
        if old is not None and old != gang:
            self.remove_member(pod_key)
        if not gang:
            return
        self._gang_of[pod_key] = gang
        self.members.setdefault(gang, {})[pod_key] = pod

    def remove_member(self, pod_key: str) -> str | None:
        """Forget a pod (deleted); return the gang it was in."""
        gang = self._gang_of.pop(pod_key, None)
        if gang is not None:
            members = self.members.get(gang)
            if members is not None:
                members.pop(pod_key, None)
                if not members:
                    del self.members[gang]
        for key, done in list(self.finished.items()):
            if done.pop(pod_key, None) is not None and not done:
                del self.finished[key]
        return gang

    def finish_member(self, pod_key: str, gang: str, phase: str) -> None:
        """A member finished (``phase`` Succeeded or Failed): it no longer counts as a
        sibling (upstream lists pods without finished ones), but its group's status does."""
        self.remove_member(pod_key)
        if gang:
            self.finished.setdefault(gang, {})[pod_key] = phase

    def member_count(self, gang: str) -> int:
        return len(self.members.get(gang, ()))


def _key_of(raw: Mapping[str, Any]) -> str:
    meta = raw.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"
