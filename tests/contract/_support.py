"""Helpers for the contract tests: bounded watch reading, raw requests and object accessors."""

from __future__ import annotations

import asyncio
import contextlib
import io
import ssl
from collections.abc import AsyncGenerator, Callable, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from asched.tools.backends.kubeconfig import read_kubeconfig

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


def _session_args(kubeconfig: Path) -> tuple[str, ssl.SSLContext | bool, dict[str, str]]:
    entry = read_kubeconfig(kubeconfig)
    verify: ssl.SSLContext | bool = True
    if entry.server.startswith("https://"):
        if entry.insecure_skip_tls_verify:
            verify = False
        elif entry.ca_pem is not None:
            verify = ssl.create_default_context(cadata=entry.ca_pem.decode("ascii"))
    headers = {"Accept": "application/json"}
    if entry.token:
        headers["Authorization"] = f"Bearer {entry.token}"
    return entry.server, verify, headers


async def watch_lines(
    kubeconfig: Path, path: str, params: Mapping[str, str], *, deadline: float = DEADLINE
) -> list[Event]:
    """The events of a watch with any query (``params`` must end it: ``timeoutSeconds``),
    read until the server closes the stream; a non-200 answer is one event, its body."""
    server, verify, headers = _session_args(kubeconfig)
    connector = aiohttp.TCPConnector(ssl=verify)
    async with (
        asyncio.timeout(deadline),
        aiohttp.ClientSession(connector=connector) as session,
        session.get(server + path, params={"watch": "true", **params}, headers=headers) as r,
    ):
        raw = await r.read()
        if r.status != 200:
            return [{"type": str(r.status), "object": orjson.loads(raw)}]
    return [orjson.loads(line) for line in raw.splitlines() if line.strip()]


async def send_raw(
    kubeconfig: Path,
    method: str,
    path: str,
    data: bytes,
    *,
    content_type: str = "application/json",
    params: Mapping[str, str] | None = None,
) -> tuple[int, dict[str, Any]]:
    """Send ``data`` as the body, byte for byte (RestClient always JSON-encodes an object).

    Returns the status and the decoded body (``{}`` when it is not a JSON object).
    """
    status, body, _ = await send_for_warnings(
        kubeconfig, method, path, data, content_type=content_type, params=params
    )
    return status, body


async def send_for_warnings(
    kubeconfig: Path,
    method: str,
    path: str,
    data: bytes,
    *,
    content_type: str = "application/json",
    params: Mapping[str, str] | None = None,
) -> tuple[int, dict[str, Any], list[str]]:
    """:func:`send_raw`, with the ``Warning`` headers of the answer (every one, in order)."""
    server, verify, headers = _session_args(kubeconfig)
    headers["Content-Type"] = content_type
    connector = aiohttp.TCPConnector(ssl=verify)
    async with (
        aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as s,
        # A BytesIO: aiohttp warns (an error here) about sending megabytes of raw bytes.
        s.request(
            method, server + path, data=io.BytesIO(data), headers=headers, params=params
        ) as r,
    ):
        raw = await r.read()
        status = r.status
        warnings = r.headers.getall("Warning", [])
    try:
        decoded = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return status, {}, warnings
    return status, decoded if isinstance(decoded, dict) else {}, warnings
