"""One configured scheduler extender with upstream's semantics (``HTTPExtender`` of
``pkg/scheduler/extender.go``), and building them from the configuration.

:class:`Extender` is one configured extender over a transport (the HTTP client of
:mod:`asched.extenders.client`, or anything with the same three methods). Its calls check the
answer (:mod:`asched.extenders.protocol`) and raise
:class:`~asched.errors.ExtenderError` on any failure.

:func:`build_extenders` orders extenders as upstream's ``buildExtenders``: the
non-ignorable ones first, then the ignorable ones, each group in configuration order.
:func:`any_filter` and :func:`any_prioritizer` tell the cycle whether extenders take part
in filtering and scoring at all.

How several extenders combine, the way kube-scheduler combines them, is the business of
the callers of these calls: :mod:`asched.extenders.filter_score` (filters and
prioritizers, every consulted pod) and :mod:`asched.extenders.preempt_bind` (preemption
and binding).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Protocol, TypeVar, cast

import numpy as np
import orjson

from asched import metrics
from asched.cluster.records import PodInfo
from asched.config.types import ExtenderConfig
from asched.errors import ExtenderError
from asched.extenders import protocol
from asched.extenders.fast import (
    EncodedPod,
    RawTransport,
    fast_filter_result,
    fast_host_scores,
    render_names_args,
)
from asched.extenders.protocol import MAX_EXTENDER_PRIORITY, FilterAnswer, NodeVictims, RawObject
from asched.extenders.sent_names import SentNames
from asched.framework.interface import MAX_SCORE
from asched.framework.status import Status

_Fast = TypeVar("_Fast")

#: A node's JSON object by name (called only for extenders that are not nodeCacheCapable).
NodeObjects = Callable[[str], RawObject]
#: The pods on a node, by UID, as JSON; None when the cluster has no such node.
PodsOnNode = Callable[[str], Mapping[str, RawObject] | None]

#: How much one point of an extender's 0..10 score weighs against a plugin's 0..100.
SCORE_SCALE: Final = MAX_SCORE // MAX_EXTENDER_PRIORITY
#: upstream's framework.ExtenderName: what a pod's unschedulable plugins hold when an
#: extender rejected nodes (no event interests: any cluster event requeues the pod).
EXTENDER_NAME: Final = "Extender"


def resource_names(pod_json: RawObject) -> set[str]:
    """The resources any container or init container of a pod's JSON names in its
    ``resources.requests`` or ``resources.limits`` (upstream's ``hasManagedResources``
    input); parts of the wrong type are skipped (the pod was validated by the API)."""
    spec = pod_json.get("spec")
    names: set[str] = set()
    if not isinstance(spec, Mapping):
        return names
    for key in ("containers", "initContainers"):
        containers = spec.get(key)
        for container in containers if isinstance(containers, list) else ():
            resources = container.get("resources") if isinstance(container, Mapping) else None
            if not isinstance(resources, Mapping):
                continue
            for part in ("requests", "limits"):
                amounts = resources.get(part)
                if isinstance(amounts, Mapping):
                    names.update(str(name) for name in amounts)
    return names


class ExtenderTransport(Protocol):
    """How an :class:`Extender` reaches its server (:class:`asched.extenders.client.ExtenderClient`)."""

    def url(self, verb: str) -> str:
        """The URL a call of ``verb`` goes to."""
        ...

    async def post(self, verb: str, body: Any) -> Any:
        """Send ``body`` as JSON, return the decoded answer; ExtenderError on failure."""
        ...

    async def close(self) -> None:
        """Release the connection(s)."""
        ...


class Extender:
    """One configured extender: its flags, its interest in a pod, and its four calls."""

    def __init__(self, config: ExtenderConfig, transport: ExtenderTransport) -> None:
        self.config = config
        self.transport = transport
        self._managed = frozenset(resource.name for resource in config.managed_resources)
        # the fast path: a nodeCacheCapable extender over a transport that speaks bytes
        # (extender_fast); others send dicts through ``transport.post``
        raw = getattr(transport, "post_bytes", None)
        self._raw: RawTransport | None = (
            cast("RawTransport", transport) if callable(raw) and config.node_cache_capable else None
        )
        self._durations: dict[tuple[str, str], Any] = {}

    def __repr__(self) -> str:
        return f"Extender({self.name!r})"

    @property
    def name(self) -> str:
        """The extender's name in messages and score tables: its ``urlPrefix``, as upstream."""
        return self.config.url_prefix

    @property
    def weight(self) -> int:
        return self.config.weight

    @property
    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    @property
    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    @property
    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    @property
    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    @property
    def is_ignorable(self) -> bool:
        return self.config.ignorable

    def is_interested(self, pod_json: RawObject) -> bool:
        """True without managedResources, else when a container or init container of the
        pod names one of them in its requests or limits (even with a zero amount). The
        pod's JSON is read only here, so decoding pods pays nothing for extenders."""
        return not self._managed or not self._managed.isdisjoint(resource_names(pod_json))

    async def _post(self, verb: str, body: Any) -> Any:
        """One call, timed in ``asched_extender_request_duration_seconds``."""
        started = time.perf_counter()
        result = "error"
        try:
            answer = await self.transport.post(verb, body)
            result = "ok"
            return answer
        finally:
            self._duration(verb, result).observe(time.perf_counter() - started)

    async def _post_fast(
        self, verb: str, data: bytes, fast: Callable[[bytes], _Fast | None]
    ) -> tuple[_Fast | None, Any]:
        """One call over the raw transport, timed as :meth:`_post` times it (decoding
        included, so an answer that is not JSON counts as an error, as with ``post``):
        ``(fast(answer), None)``, or ``(None, the decoded answer)`` for the general
        reader when the fast path declined."""
        assert self._raw is not None
        started = time.perf_counter()
        result = "error"
        try:
            raw = await self._raw.post_bytes(verb, data)
            checked = fast(raw)
            answer = None if checked is not None else self._load(verb, raw)
            result = "ok"
            return checked, answer
        finally:
            self._duration(verb, result).observe(time.perf_counter() - started)

    def _duration(self, verb: str, result: str) -> Any:
        """This extender's ``asched_extender_request_duration_seconds`` for ``verb`` and
        ``result``: labelled once, then kept (a labels() lookup per call costs more than
        the observation)."""
        key = (verb, result)
        child = self._durations.get(key)
        if child is None:
            child = self._durations[key] = metrics.EXTENDER_REQUEST_DURATION.labels(
                self.name, verb, result
            )
        return child

    def _load(self, verb: str, raw: bytes) -> Any:
        """The answer decoded, or the HTTP client's error for one that is not JSON."""
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            # the same text as asched.extenders.client.ExtenderClient.post's
            raise self._site(verb).error(f"the answer is not JSON ({exc})") from None

    def _site(self, verb: str) -> protocol.CallSite:
        return protocol.CallSite(self.transport.url(verb), verb)

    def _args(
        self, pod_json: RawObject, names: Sequence[str], node_objects: NodeObjects
    ) -> protocol.ExtenderArgs:
        if self.config.node_cache_capable:
            return protocol.extender_args(pod_json, names, None)
        return protocol.extender_args(pod_json, names, [node_objects(name) for name in names])

    async def filter(
        self,
        pod_json: RawObject,
        names: Sequence[str],
        node_objects: NodeObjects,
        *,
        encoded: EncodedPod | None = None,
    ) -> FilterAnswer:
        """Filter ``names`` (the nodes that passed the in-tree filters) for ``pod_json``.

        Without a filterVerb every node passes and nothing is sent. ``encoded`` (the
        pod's JSON, encoded once for all of a consultation's calls) and ``names`` given
        as :class:`SentNames` spare the work when the caller has them.
        The answer's ``positions`` are known when every name stayed, or when the fast
        path read an answer in the order sent.

        Raises
        ------
        ExtenderError
            The call failed, the answer is malformed, or the extender answered an Error.
        """
        verb = self.config.filter_verb
        if not verb:
            return FilterAnswer(tuple(names), {}, {}, np.arange(len(names), dtype=np.intp))
        given = names if isinstance(names, SentNames) else SentNames(names)
        if self._raw is not None:
            data = render_names_args(encoded or EncodedPod(pod_json), given)
            checked, answer = await self._post_fast(
                verb, data, lambda raw: fast_filter_result(raw, given)
            )
            if checked is not None:
                return checked
        else:
            answer = await self._post(verb, self._args(pod_json, names, node_objects))
        return protocol.parse_filter_result(
            self._site(verb),
            answer,
            given.where,
            node_cache_capable=self.config.node_cache_capable,
        )

    async def prioritize(
        self,
        pod_json: RawObject,
        names: Sequence[str],
        node_objects: NodeObjects,
        *,
        encoded: EncodedPod | None = None,
    ) -> Mapping[str, int]:
        """This extender's contribution to each node's total score, already scaled.

        ``score * weight * 10`` per answered host (hosts answered twice add up; hosts
        not answered get nothing). Without a prioritizeVerb every node gets 0. An answer
        the fast path read in the order sent comes as
        :class:`~asched.extenders.fast.AlignedScores` (values in ``names``' order).

        Raises
        ------
        ExtenderError
            The call failed or the answer is malformed.
        """
        verb = self.config.prioritize_verb
        if not verb:
            return dict.fromkeys(names, 0)
        factor = self.config.weight * SCORE_SCALE
        sent = names if isinstance(names, SentNames) else SentNames(names)
        if self._raw is not None:
            data = render_names_args(encoded or EncodedPod(pod_json), sent)
            checked, answer = await self._post_fast(
                verb, data, lambda raw: fast_host_scores(raw, sent, factor)
            )
            if checked is not None:
                return checked
        else:
            answer = await self._post(verb, self._args(pod_json, names, node_objects))
        return protocol.host_scores(self._site(verb), answer, sent.where, factor)

    async def bind(self, pod: PodInfo, node: str) -> Status:
        """Ask the extender to bind ``pod`` to ``node``: success, or an Error status."""
        verb = self.config.bind_verb
        if not verb:
            # upstream: "unexpected empty bindVerb in extender"; callers check is_binder
            return Status.error(f"extender {self.name} has no bindVerb", plugin=self.name)
        body = protocol.binding_args(pod.namespace, pod.name, pod.uid, node)
        try:
            protocol.parse_binding_result(self._site(verb), await self._post(verb, body))
        except ExtenderError as exc:
            return Status.error(str(exc), plugin=self.name)
        return Status.success()

    async def process_preemption(
        self,
        pod_json: RawObject,
        victims: Mapping[str, NodeVictims],
        pods_on_node: PodsOnNode,
    ) -> dict[str, NodeVictims]:
        """The victims map as the extender narrows it (a new map; ``victims`` is kept).

        Victims are sent by UID to a nodeCacheCapable extender, else in full; the answer
        is always by UID and is resolved with ``pods_on_node``.

        Raises
        ------
        ExtenderError
            No preemptVerb, the call failed, or the answer is malformed or names a node
            or pod the cluster does not have.
        """
        verb = self.config.preempt_verb
        site = self._site(verb)
        if not verb:
            raise site.error("preempt verb is not defined but process_preemption was called")
        body = protocol.preemption_args(
            pod_json, victims, node_cache_capable=self.config.node_cache_capable
        )
        answer = await self._post(verb, body)
        out: dict[str, NodeVictims] = {}
        for node, found in protocol.parse_preemption_result(site, answer, pods_on_node).items():
            pods = pods_on_node(node) or {}
            out[node] = NodeVictims(
                tuple(pods[uid] for uid in found.uids), found.num_pdb_violations
            )
        return out

    async def close(self) -> None:
        await self.transport.close()


def build_extenders(
    configs: Sequence[ExtenderConfig],
    transport: Callable[[ExtenderConfig], ExtenderTransport],
) -> tuple[Extender, ...]:
    """One :class:`Extender` per config, non-ignorable ones first (upstream's call order).

    ``transport`` makes each one's transport, e.g. ``asched.extenders.client.ExtenderClient``.
    """
    ordered = [c for c in configs if not c.ignorable] + [c for c in configs if c.ignorable]
    return tuple(Extender(config, transport(config)) for config in ordered)


def any_filter(extenders: Sequence[Extender]) -> bool:
    """Whether an extender filters (upstream's ``hasExtenderFilters``).

    With no filtering extender, no prioritizing one and no Score plugin, upstream stops
    the in-tree filters at the first feasible node.
    """
    return any(extender.is_filter for extender in extenders)


def any_prioritizer(extenders: Sequence[Extender]) -> bool:
    """Whether an extender prioritizes (the extender half of upstream's ``hasScoring``)."""
    return any(extender.is_prioritizer for extender in extenders)
