"""Helpers for the tests' scripted HTTP/1.1 servers on loopback."""

from __future__ import annotations

import asyncio


async def read_request(reader: asyncio.StreamReader) -> bytes | None:
    """One whole request (head and ``Content-Length`` body); None when the client closed."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return head + await reader.readexactly(length)
