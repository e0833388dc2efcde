"""Helpers for the contract tests: bounded watch reading and object accessors."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import Any

#: Upper bound for any single wait on a server in these tests (seconds). Generous on purpose:
#: it only bounds a failing test, a passing one returns as soon as the event arrives.
DEADLINE = 20.0

Event = dict[str, Any]


async def read_events(
    stream: AsyncGenerator[Event, None],
    *,
    until: Callable[[list[Event]], bool] | None = None,
    deadline: float = DEADLINE,
) -> list[Event]:
    """Read events until ``until(events)`` holds or the server closes the stream.

    The stream is always closed afterwards. Exceeding ``deadline`` fails the test with the
    events read so far.
    """
    events: list[Event] = []
    try:
        async with asyncio.timeout(deadline):
            async for event in stream:
                events.append(event)
                if until is not None and until(events):
                    break
    except TimeoutError:
        summary = [(e["type"], name(e["object"])) for e in events]
        raise AssertionError(f"no end of watch after {deadline} s; got {summary}") from None
    finally:
        with contextlib.suppress(Exception):
            await stream.aclose()
    return events


def name(obj: dict[str, Any]) -> str | None:
    """Return metadata.name (None for a bookmark or a Status)."""
    value = obj.get("metadata", {}).get("name")
    return str(value) if value is not None else None


def rv(obj: dict[str, Any]) -> str:
    """Return metadata.resourceVersion."""
    return str(obj["metadata"]["resourceVersion"])


def kinds(events: list[Event]) -> list[tuple[str, str | None]]:
    """Return ``[(type, name), ...]`` for compact assertions."""
    return [(event["type"], name(event["object"])) for event in events]


def conditions_by_type(pod: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Return the pod's status.conditions keyed by type."""
    return {c["type"]: c for c in pod.get("status", {}).get("conditions") or []}
