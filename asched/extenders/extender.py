"""Scheduler extenders with upstream's semantics (``pkg/scheduler/extender.go`` and its callers).

:class:`Extender` is one configured extender over a transport (the HTTP client of
:mod:`asched.extenders.client`, or anything with the same three methods). Its calls check the
answer (:mod:`asched.extenders.protocol`) and raise
:class:`~asched.errors.ExtenderError` on any failure. The ``run_*`` functions combine
several extenders the way kube-scheduler does, and are pure apart from the calls:

* :func:`run_filters` (``findNodesThatPassExtenders``): extenders in order, each seeing
  the previous one's survivors; stop when none is left; skip an extender not interested
  in the pod. ``FailedAndUnresolvableNodes`` become UnschedulableAndUnresolvable and
  ``FailedNodes`` Unschedulable, with the extender's text as the reason (the former wins
  for a node in both). A failing ignorable extender is skipped (logged); a failing
  other one fails the attempt: the ExtenderError propagates, and the caller reports it
  as upstream does, an Error status with the error's text.
* :func:`run_prioritizers` (the extender half of ``prioritizeNodes``): every interested
  prioritizer at once; each score becomes ``score * weight * (MAX_SCORE /
  MAX_EXTENDER_PRIORITY)``, i.e. x10 per weight unit, added to the node's total. A
  failing prioritizer only loses its scores, ignorable or not (logged), as upstream.
* :func:`run_preemption` (``callExtenders`` of the preemption evaluator): extenders that
  support preemption and are interested, in order, each narrowing the victims map; a node
  answered with no victims is an error, or dropped when the extender is ignorable.
* :func:`run_bind` (``extendersBinding``): the first interested binder binds instead of
  the Bind plugins; when it fails and is ignorable the next one (in practice: the Bind
  plugins) gets the pod.

:func:`build_extenders` orders extenders as upstream's ``buildExtenders``: the
non-ignorable ones first, then the ignorable ones, each group in configuration order.

Nothing here awaits anything but the extenders: the callers (the scheduling cycle,
explain) decide where these awaits happen.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypeVar, cast

import numpy as np
import numpy.typing as npt
import orjson

from asched import metrics
from asched.cluster.records import PodInfo
from asched.config.types import ExtenderConfig
from asched.errors import ExtenderError
from asched.extenders import protocol
from asched.extenders.fast import (
    EncodedPod,
    RawTransport,
    SentNames,
    fast_filter_result,
    fast_host_scores,
    render_names_args,
)
from asched.extenders.protocol import MAX_EXTENDER_PRIORITY, FilterAnswer, NodeVictims, RawObject
from asched.framework.interface import MAX_SCORE
from asched.framework.status import Status

logger = logging.getLogger(__name__)

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


@dataclass(frozen=True, slots=True)
class FilterOutcome:
    """What the filter extenders left of the nodes, and why the others went.

    Attributes
    ----------
    feasible : sequence of str
        The surviving node names, in the last extender's order: a tuple, or
        :class:`SentNames` when an answer was taken as the bytes sent (decoded when read).
    statuses : dict
        Node name -> Unschedulable or UnschedulableAndUnresolvable status, the
        extender's text as the reason, tagged with the extender's name (its URL, for
        explain; the queue's event interests know no such plugin: requeue such a pod
        on any event, as upstream does for :data:`EXTENDER_NAME`). A node an extender
        dropped without naming it in a failed map has no status (as upstream).
    skipped : tuple of (str, ExtenderError)
        Ignorable extenders whose call failed, and why.
    """

    feasible: Sequence[str]
    statuses: Mapping[str, Status]
    skipped: tuple[tuple[str, ExtenderError], ...] = ()
    #: the extenders removed a node: upstream then adds :data:`EXTENDER_NAME` to the
    #: pod's unschedulable plugins, so that any cluster event requeues it
    filtered: bool = False
    #: intp, ``(len(feasible),)``: each feasible name's index among the names
    #: :func:`run_filters` was given, when every answer's positions were known; else None
    positions: npt.NDArray[np.intp] | None = field(default=None, compare=False)


async def run_filters(
    extenders: Sequence[Extender],
    pod: PodInfo,
    pod_json: RawObject,
    names: Sequence[str],
    node_objects: NodeObjects,
    *,
    encoded: EncodedPod | None = None,
) -> FilterOutcome:
    """Chain the extenders' filters over ``names`` (see the module docstring).

    ``encoded`` is the pod's JSON encoded once for every call; ``names`` may be
    :class:`SentNames`, which the first call then sends as they are.

    Raises
    ------
    ExtenderError
        From the first non-ignorable extender whose call failed: the attempt fails.
    """
    feasible: Sequence[str] = names
    # the survivors' indices among ``names`` while every answer said where they stand
    # (None while no extender answered: all of them; the first answer's are taken as
    # they are, no arange to compose with)
    known = True
    positions: npt.NDArray[np.intp] | None = None
    statuses = _Statuses()
    skipped: list[tuple[str, ExtenderError]] = []
    for extender in extenders:
        if not feasible:
            break
        if not extender.is_interested(pod_json):
            continue
        try:
            answer = await extender.filter(pod_json, feasible, node_objects, encoded=encoded)
        except ExtenderError as exc:
            if not extender.is_ignorable:
                raise
            logger.info(
                "skipping ignorable extender %s for pod %s: %s", extender.name, pod.key, exc
            )
            skipped.append((extender.name, exc))
            continue
        statuses.add(answer.unresolvable, Status.unresolvable, extender.name)
        failed = answer.failed
        if not failed.keys().isdisjoint(answer.unresolvable):  # Unresolvable wins
            failed = {n: r for n, r in failed.items() if n not in answer.unresolvable}
        statuses.add(failed, Status.unschedulable, extender.name)
        feasible = answer.feasible  # SentNames when taken as bytes: sent on as they are
        if answer.positions is None:
            known = False
        elif known:
            positions = answer.positions if positions is None else positions[answer.positions]
    if not known:
        positions = None
    elif positions is None:
        positions = np.arange(len(names), dtype=np.intp)
    filtered = len(feasible) != len(names)
    if not isinstance(feasible, tuple | SentNames):
        feasible = tuple(feasible)
    return FilterOutcome(feasible, statuses, tuple(skipped), filtered, positions)


class _Statuses(Mapping[str, Status]):
    """:attr:`FilterOutcome.statuses` as :func:`run_filters` collects them: each
    extender's failed nodes and reasons are noted as they come, and the Statuses are
    made when first read (a pod that is bound never reads them: that was some fifty
    Statuses and a dict per consultation for nothing)."""

    __slots__ = ("_made", "_noted")

    def __init__(self) -> None:
        self._noted: list[tuple[Mapping[str, str], Callable[..., Status], str]] = []
        self._made: dict[str, Status] | None = None

    def add(self, reasons: Mapping[str, str], make: Callable[..., Status], plugin: str) -> None:
        """``make(reason, plugin=plugin)`` for each node of ``reasons``, replacing what an
        earlier call said of it."""
        if reasons:
            assert self._made is None, "statuses are noted before they are read"
            self._noted.append((reasons, make, plugin))

    def _statuses(self) -> dict[str, Status]:
        if self._made is None:
            made: dict[str, Status] = {}
            for reasons, make, plugin in self._noted:
                # one (frozen) Status per distinct reason: an extender gives most nodes
                # the same text
                kinds = {reason: make(reason, plugin=plugin) for reason in set(reasons.values())}
                made.update(zip(reasons, map(kinds.__getitem__, reasons.values()), strict=True))
            self._made = made
        return self._made

    def __getitem__(self, name: str) -> Status:
        return self._statuses()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._statuses())

    def __len__(self) -> int:
        return len(self._statuses())

    def __repr__(self) -> str:
        return repr(self._statuses())


@dataclass(frozen=True, slots=True)
class ExtenderScores:
    """Each interested prioritizer's scaled contribution per node, in extender order.

    ``failed`` lists the prioritizers whose call failed (they contribute nothing).
    """

    by_extender: tuple[tuple[str, Mapping[str, int]], ...] = ()
    failed: tuple[tuple[str, ExtenderError], ...] = ()

    def totals(self) -> dict[str, int]:
        """Node name -> the sum of every extender's contribution (absent: 0)."""
        out: dict[str, int] = {}
        for _, scores in self.by_extender:
            for node, score in scores.items():
                out[node] = out.get(node, 0) + score
        return out


async def _prioritize_one(
    extender: Extender,
    pod_json: RawObject,
    names: Sequence[str],
    node_objects: NodeObjects,
    encoded: EncodedPod | None,
) -> Mapping[str, int] | ExtenderError:
    try:
        return await extender.prioritize(pod_json, names, node_objects, encoded=encoded)
    except ExtenderError as exc:
        return exc


async def run_prioritizers(
    extenders: Sequence[Extender],
    pod: PodInfo,
    pod_json: RawObject,
    names: Sequence[str],
    node_objects: NodeObjects,
    *,
    encoded: EncodedPod | None = None,
) -> ExtenderScores:
    """Every interested prioritizer's scores for ``names``, called concurrently
    (``encoded``: the pod's JSON, encoded once for every call).

    A failed call is logged and leaves that extender out, ignorable or not (upstream
    lets "k8s/other extenders determine the priorities").
    """
    chosen = [e for e in extenders if e.is_prioritizer and e.is_interested(pod_json)]
    if not chosen or not names:
        return ExtenderScores()
    results: list[Mapping[str, int] | ExtenderError]
    if len(chosen) == 1:  # nothing to overlap: no task to create
        results = [await _prioritize_one(chosen[0], pod_json, names, node_objects, encoded)]
    else:
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(_prioritize_one(extender, pod_json, names, node_objects, encoded))
                for extender in chosen
            ]
        results = [task.result() for task in tasks]
    scores: list[tuple[str, Mapping[str, int]]] = []
    failed: list[tuple[str, ExtenderError]] = []
    for extender, result in zip(chosen, results, strict=True):
        if isinstance(result, ExtenderError):
            logger.info("extender %s gave no scores for pod %s: %s", extender.name, pod.key, result)
            failed.append((extender.name, result))
        else:
            scores.append((extender.name, result))
    return ExtenderScores(tuple(scores), tuple(failed))


async def run_preemption(
    extenders: Sequence[Extender],
    pod: PodInfo,
    pod_json: RawObject,
    victims: Mapping[str, NodeVictims],
    pods_on_node: PodsOnNode,
) -> dict[str, NodeVictims]:
    """The preemption candidates (node -> victims) once every preempting extender had its say.

    Raises
    ------
    ExtenderError
        From a non-ignorable extender whose call failed or that left a node with no
        victims (``expected at least one victim pod on node "<name>"``).
    """
    current = dict(victims)
    for extender in extenders:
        if not current:
            break
        if not extender.supports_preemption or not extender.is_interested(pod_json):
            continue
        try:
            answer = await extender.process_preemption(pod_json, current, pods_on_node)
        except ExtenderError as exc:
            if not extender.is_ignorable:
                raise
            logger.info(
                "skipping ignorable extender %s in preemption for pod %s: %s",
                extender.name,
                pod.key,
                exc,
            )
            continue
        kept: dict[str, NodeVictims] = {}
        for node, found in answer.items():
            if found.pods:
                kept[node] = found
            elif extender.is_ignorable:
                logger.info(
                    "ignoring node %s: extender %s reported no victims on it", node, extender.name
                )
            else:
                raise ExtenderError(
                    extender.transport.url(extender.config.preempt_verb),
                    extender.config.preempt_verb,
                    f'expected at least one victim pod on node "{node}"',
                )
        current = kept
    return current


async def run_bind(
    extenders: Sequence[Extender], pod: PodInfo, pod_json: RawObject, node: str
) -> Status | None:
    """Let the first interested binder bind ``pod`` to ``node``.

    Returns
    -------
    Status or None
        The binder's outcome (success, or an Error status with the call's message);
        None when no extender bound the pod and the Bind plugins must.
    """
    for extender in extenders:
        if not extender.is_binder or not extender.is_interested(pod_json):
            continue
        status = await extender.bind(pod, node)
        if not status.ok and extender.is_ignorable:
            logger.info(
                "skipping ignorable extender %s in bind for pod %s: %s",
                extender.name,
                pod.key,
                status.message,
            )
            continue
        return status
    return None
