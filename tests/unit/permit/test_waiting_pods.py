"""Permit waiting on fake loop time (looptime): exact timeouts, first decision wins."""

from __future__ import annotations

import asyncio

import pytest

from asched.framework.status import Code
from asched.framework.waiting import MAX_TIMEOUT_SECONDS, WaitingPod

pytestmark = pytest.mark.looptime


async def test_allow_from_every_plugin_lets_it_through() -> None:
    waiting = WaitingPod("ns/p", "uid-1", "node-a", {"A": 10.0, "B": 20.0})
    loop = asyncio.get_running_loop()
    start = loop.time()
    loop.call_later(3.0, waiting.allow, "A")
    loop.call_later(5.0, waiting.allow, "B")
    status = await waiting.wait()
    assert status.ok
    assert loop.time() - start == pytest.approx(5.0)


async def test_timeout_rejects_at_exactly_its_deadline() -> None:
    waiting = WaitingPod("ns/p", "uid-1", "node-a", {"Gang": 2.5})
    loop = asyncio.get_running_loop()
    start = loop.time()
    status = await waiting.wait()
    assert status.code == Code.UNSCHEDULABLE
    assert status.plugin == "Gang"
    assert status.reasons == ("rejected due to timeout after waiting 2.5s at plugin Gang",)
    assert loop.time() - start == pytest.approx(2.5)


async def test_first_decision_wins() -> None:
    waiting = WaitingPod("ns/p", "uid-1", "node-a", {"A": 10.0})
    waiting.reject("A", "no room in the gang")
    waiting.allow("A")  # too late: ignored
    status = await waiting.wait()
    assert status.code == Code.UNSCHEDULABLE
    assert status.reasons == ("no room in the gang",)


async def test_reject_cancels_the_other_timers() -> None:
    waiting = WaitingPod("ns/p", "uid-1", "node-a", {"A": 1.0, "B": 2.0})
    waiting.allow("A")
    waiting.reject("B", "B says no")
    status = await waiting.wait()
    assert status.reasons == ("B says no",)
    assert waiting.pending_plugins == ()


async def test_timeouts_are_capped_at_fifteen_minutes() -> None:
    waiting = WaitingPod("ns/p", "uid-1", "node-a", {"Slow": 10_000.0})
    loop = asyncio.get_running_loop()
    start = loop.time()
    status = await waiting.wait()
    assert loop.time() - start == pytest.approx(MAX_TIMEOUT_SECONDS)
    assert "after waiting 900s" in status.reasons[0]
