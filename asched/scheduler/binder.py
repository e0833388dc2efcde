"""The binding cycle: concurrent tasks, bounded in number, one per assumed pod.

WaitOnPermit -> PreBind -> Bind (a binding extender first, when one is interested) ->
PostBind (upstream: pkg/scheduler/schedule_one.go, bindingCycle). A pod whose extenders
are consulted gets its task earlier: it awaits the extenders, concludes (decides, assumes,
reserves, permits: synchronous), and goes on as a binding task
(:mod:`asched.extenders.consult`). Every task is owned by the binder's TaskGroup, never
raises out of it (failures become a Status and go through the scheduler's single
rollback), and on cancellation (shutdown, leadership lost) rolls its pod back before
re-raising: unreserve, forget, and no API call left half-done counted.

The number of binds in flight is bounded: the scheduling loop takes a :class:`Slot`
before it pops a pod (an await *before* the pop, never between pop and permit) and hands
it to the task of the pod, or releases it. A slot is given back only by
:meth:`Slot.release`, which is idempotent: whoever holds the slot object releases it,
once, whatever path the pod took. A pod waiting at Permit releases its slot while it
waits and takes it again once allowed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from asched.cluster.names import NodeName, PodKey
from asched.cluster.records import PodInfo
from asched.framework.cycle_state import CycleState
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.framework.waiting import WaitingPod
from asched.queue.queued import QueuedPod

if TYPE_CHECKING:
    from asched.extenders.consult import Pending

logger = logging.getLogger(__name__)


class Slot:
    """One of the binder's ``max_in_flight`` places, held by one owner at a time: the
    scheduling loop, then the task it hands it to (:meth:`hand_over`)."""

    __slots__ = ("_binder", "held")

    def __init__(self, binder: Binder) -> None:
        self._binder = binder
        #: whether this object still holds its place
        self.held = True

    def release(self) -> None:
        """Give the place back; a slot released or handed over already does nothing."""
        if self.held:
            self.held = False
            self._binder._returned()

    def hand_over(self) -> Slot:
        """The same place, for a new owner: this object no longer releases it."""
        if not self.held:
            raise RuntimeError("a binding slot handed over twice, or after its release")
        self.held = False
        return Slot(self._binder)

    async def retake(self) -> None:
        """Take a place again after :meth:`release` (a pod allowed at Permit)."""
        if not self.held:
            await self._binder._semaphore.acquire()
            self.held = True


@dataclass(slots=True)
class BindJob:
    """Everything the binding cycle of one pod needs."""

    qp: QueuedPod
    pod: PodInfo
    node: NodeName
    framework: Framework
    state: CycleState
    waiting: WaitingPod | None = None
    started: float = 0.0
    #: the binding extenders' turn: their Status, or None when none bound the pod
    extender_bind: Callable[[], Awaitable[Status | None]] | None = None
    #: its binding slot, once a task owns the job (released while it waits at Permit)
    slot: Slot | None = None


class Outcomes(Protocol):
    """What the scheduler does with a finished binding cycle."""

    def bound(self, job: BindJob) -> None: ...

    def rollback(self, job: BindJob, status: Status) -> None: ...

    async def ask(self, pending: Pending) -> None: ...

    def conclude(self, pending: Pending) -> BindJob | Pending | None: ...

    def abandon(self, pending: Pending, status: Status) -> None: ...


class Binder:
    """Runs binding cycles; ``run()`` owns their TaskGroup."""

    def __init__(self, outcomes: Outcomes, *, max_in_flight: int = 64) -> None:
        self.outcomes = outcomes
        self.max_in_flight = max_in_flight
        self._semaphore = asyncio.Semaphore(max_in_flight)
        self.in_flight: dict[PodKey, BindJob] = {}
        self._group: asyncio.TaskGroup | None = None
        self._stop = asyncio.Event()
        self.running = asyncio.Event()
        self.started = 0
        #: consultations in flight (each holds a slot)
        self.consulting = 0
        #: the consultation tasks waiting for their extenders' answers (nothing assumed
        #: yet): a stop cancels them rather than waiting out the extenders' httpTimeout
        self._asking: set[asyncio.Task[None]] = set()
        self.succeeded = 0
        self.failed = 0
        #: called whenever a slot is released (the scheduling loop waits on it)
        self.on_release: Callable[[], None] | None = None

    async def run(self) -> None:
        """Own the binding tasks until ``stop()``; then wait for the ones in flight."""
        async with asyncio.TaskGroup() as group:
            self._group = group
            self.running.set()
            await self._stop.wait()
        self._group = None
        self.running.clear()

    def stop(self) -> None:
        """Stop taking work; the binds in flight finish, the extender calls in flight are
        cancelled (their pods go back: nothing of them was assumed)."""
        self._stop.set()
        for task in self._asking:
            task.cancel()

    async def take_slot(self) -> Slot:
        """A binding slot (waits while all are held); its owner releases it, once."""
        await self._semaphore.acquire()
        return Slot(self)

    def _returned(self) -> None:
        """A :class:`Slot` gave its place back (only :meth:`Slot.release` calls this)."""
        self._semaphore.release()
        if self.on_release is not None:
            self.on_release()

    def slot_free(self) -> bool:
        """Whether :meth:`take_slot` would return at once."""
        return not self._semaphore.locked()

    @property
    def free_slots(self) -> int:
        """Slots nobody holds."""
        return self._semaphore._value

    def start(self, job: BindJob, slot: Slot) -> None:
        """Hand an assumed, permitted (or waiting) pod to a binding task, with its slot."""
        if self._group is None:
            raise RuntimeError("the binder is not running")
        job.slot = slot
        self.in_flight[job.pod.key] = job
        self.started += 1
        self._group.create_task(self._bind(job), name=f"bind {job.pod.key}")

    def consult(self, consultation: Pending, slot: Slot) -> None:
        """Hand a pod whose extenders must be asked to a task, with its slot; the task goes
        on binding the pod when the conclusion is a bind job."""
        if self._group is None:
            raise RuntimeError("the binder is not running")
        self.consulting += 1
        key = consultation.qp.key
        self._group.create_task(self._consult(consultation, slot), name=f"extenders {key}")

    async def _consult(self, consultation: Pending, slot: Slot) -> None:
        job: BindJob | None = None
        task = asyncio.current_task()
        assert task is not None  # a coroutine of the binder's group
        try:
            while True:
                if self._stop.is_set():  # stopped before its calls began
                    raise asyncio.CancelledError
                self._asking.add(task)
                try:
                    await self.outcomes.ask(consultation)
                finally:
                    self._asking.discard(task)
                concluded = self.outcomes.conclude(consultation)
                if concluded is None or isinstance(concluded, BindJob):
                    job = concluded
                    break
                consultation = concluded  # decided again: another round of calls
        except asyncio.CancelledError:
            self.outcomes.abandon(consultation, Status.error("cancelled (shutdown)"))
            raise
        except Exception as exc:  # a bug: the pod goes back, the scheduler stays up
            logger.exception("consulting extenders for %s failed", consultation.qp.key)
            self.outcomes.abandon(consultation, Status.error(f"extenders: {exc}"))
        finally:
            self.consulting -= 1
            if job is None:
                slot.release()  # no pod to bind: the place goes back
        if job is None:
            return
        job.slot = slot
        self.in_flight[job.pod.key] = job
        self.started += 1
        await self._bind(job)

    async def _bind(self, job: BindJob) -> None:
        try:
            status = await self._cycle(job)
            if status.ok:
                self.succeeded += 1
                self.outcomes.bound(job)
            else:
                self.failed += 1
                self.outcomes.rollback(job, status)
        except asyncio.CancelledError:
            self.outcomes.rollback(
                job, Status.error("binding cancelled (shutdown or leadership lost)")
            )
            raise
        except Exception as exc:  # a plugin or client bug: roll back, keep the scheduler up
            logger.exception("binding %s to %s failed", job.pod.key, job.node)
            self.failed += 1
            self.outcomes.rollback(job, Status.error(f"binding failed: {exc}"))
        finally:
            self.in_flight.pop(job.pod.key, None)
            if job.slot is not None:
                job.slot.release()

    async def _cycle(self, job: BindJob) -> Status:
        if job.waiting is not None:
            # a pod waiting at Permit holds no binding slot: members of a gang wait for
            # siblings that need slots to be decided at all (64 waiting members of
            # unfinished gangs would otherwise stop the cycle until their timeouts)
            slot = job.slot
            if slot is not None:
                slot.release()
            status = await job.waiting.wait()
            if not status.ok:
                return status
            if slot is not None:
                await slot.retake()
        status = await job.framework.run_pre_bind(job.state, job.pod, job.node)
        if not status.ok:
            return status
        if job.extender_bind is not None:
            bound = await job.extender_bind()
            if bound is not None:
                return bound
        return await job.framework.run_bind(job.state, job.pod, job.node)
