"""The binder's slots: a :class:`Slot` is the only thing that gives a place back, once."""

from __future__ import annotations

import asyncio

import pytest

from asched.framework.status import Status
from asched.scheduler.binder import Binder, BindJob, Slot


class NoOutcomes:
    """The scheduler's side of a binding cycle, unused by these tests."""

    def bound(self, job: BindJob) -> None:
        raise AssertionError("no binding here")

    def rollback(self, job: BindJob, status: Status) -> None:
        raise AssertionError("no binding here")

    async def ask(self, pending: object) -> None:
        raise AssertionError("no consultation here")

    def conclude(self, pending: object) -> None:
        raise AssertionError("no consultation here")

    def abandon(self, pending: object, status: Status) -> None:
        raise AssertionError("no consultation here")


def binder(places: int) -> tuple[Binder, list[int]]:
    """A binder of ``places`` slots, and the free count seen at each release."""
    made = Binder(NoOutcomes(), max_in_flight=places)  # type: ignore[arg-type]
    seen: list[int] = []
    made.on_release = lambda: seen.append(made.free_slots)
    return made, seen


async def test_a_released_slot_comes_back_once() -> None:
    made, seen = binder(2)
    slot = await made.take_slot()
    assert made.free_slots == 1  # 2 places - 1 taken
    slot.release()
    slot.release()  # a second release gives nothing back twice
    assert made.free_slots == 2
    assert seen == [2]  # one release, one wake-up of the loop


async def test_a_handed_over_slot_is_released_by_its_new_owner_only() -> None:
    made, seen = binder(1)
    loops = await made.take_slot()
    tasks = loops.hand_over()
    loops.release()  # the loop's finally: handed over, so nothing
    assert made.free_slots == 0
    assert not made.slot_free()
    tasks.release()
    assert made.free_slots == 1
    assert seen == [1]


async def test_a_slot_cannot_be_handed_over_twice_or_after_release() -> None:
    made, _ = binder(1)
    slot = await made.take_slot()
    owner = slot.hand_over()
    with pytest.raises(RuntimeError, match="handed over twice"):
        slot.hand_over()
    assert made.free_slots == 0  # the place stays with its one owner
    owner.release()
    released = await made.take_slot()
    released.release()
    with pytest.raises(RuntimeError, match="after its release"):
        released.hand_over()
    assert isinstance(owner, Slot)


async def test_waiting_at_permit_releases_and_retakes_the_place() -> None:
    made, _ = binder(1)
    slot = await made.take_slot()
    slot.release()  # a pod waiting at Permit gives its place to the next cycle
    other = await made.take_slot()
    retaking = asyncio.ensure_future(slot.retake())  # allowed: it needs its place again
    await asyncio.sleep(0)
    assert not retaking.done()  # the place is the other cycle's
    other.release()
    await retaking
    assert slot.held
    assert made.free_slots == 0
    slot.release()
    assert made.free_slots == 1


class SilentExtenders(NoOutcomes):
    """Extenders that never answer: ``ask`` waits until cancelled."""

    def __init__(self) -> None:
        self.asking = asyncio.Event()
        self.abandoned: list[str] = []

    async def ask(self, pending: object) -> None:
        self.asking.set()
        await asyncio.Event().wait()

    def abandon(self, pending: object, status: Status) -> None:
        self.abandoned.append(status.message)


class Pending:
    class qp:  # noqa: N801 (the consultation's queued pod, only its key is read)
        key = "default/p"


async def test_a_stop_cancels_the_extender_calls_in_flight() -> None:
    # nothing of a pod is assumed while its extenders are asked: a stop gives it back at
    # once instead of waiting for an extender that does not answer (its httpTimeout)
    outcomes = SilentExtenders()
    made = Binder(outcomes, max_in_flight=1)  # type: ignore[arg-type]
    running = asyncio.create_task(made.run())
    await made.running.wait()
    made.consult(Pending(), await made.take_slot())  # type: ignore[arg-type]
    await outcomes.asking.wait()
    made.stop()
    await asyncio.wait_for(running, timeout=5)  # a bound on a hang, not a speed check
    assert outcomes.abandoned == ["cancelled (shutdown)"]
    assert made.free_slots == 1  # the consultation's slot came back
    assert made.consulting == 0
