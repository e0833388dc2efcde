"""Filters and prioritizers of several extenders, combined as kube-scheduler combines them:
what every consulted pod goes through.

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

Both are pure apart from the extenders' calls (:class:`~asched.extenders.extender.Extender`):
the callers (the scheduling cycle, explain) decide where these awaits happen. They are
apart from :mod:`asched.extenders.preempt_bind` because they are the consultation's path,
measured at 5,000 nodes, while preemption and binding come once a pod's fate is known.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from asched.cluster.records import PodInfo
from asched.errors import ExtenderError
from asched.extenders.extender import Extender, NodeObjects
from asched.extenders.fast import EncodedPod
from asched.extenders.protocol import RawObject
from asched.extenders.sent_names import SentNames
from asched.framework.status import Status

logger = logging.getLogger(__name__)


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
        on any event, as upstream does for
        :data:`~asched.extenders.extender.EXTENDER_NAME`). A node an extender dropped
        without naming it in a failed map has no status (as upstream).
    skipped : tuple of (str, ExtenderError)
        Ignorable extenders whose call failed, and why.
    """

    feasible: Sequence[str]
    statuses: Mapping[str, Status]
    skipped: tuple[tuple[str, ExtenderError], ...] = ()
    #: the extenders removed a node: upstream then adds
    #: :data:`~asched.extenders.extender.EXTENDER_NAME` to the pod's unschedulable
    #: plugins, so that any cluster event requeues it
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
