"""``listen``: serve an aiohttp application on one address for the length of a block.

The health and metrics server and the debug pages both listen this way: an AppRunner
without access log or signal handling, one TCP site (TLS when given a context), the
bound port reported (``port=0`` picks a free one), and the socket always closed on exit.
An address that cannot be bound (in use, not an address of this host, a privileged
port) is an InputError whose text ``refusal(reason)`` makes (it names the flag or the
listener, and the address).
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Callable

from aiohttp import web

from asched.errors import InputError


@contextlib.asynccontextmanager
async def listen(
    app: web.Application,
    host: str,
    port: int,
    *,
    ssl_context: ssl.SSLContext | None = None,
    refusal: Callable[[str], str],
) -> AsyncIterator[int]:
    """Serve ``app`` on ``host:port`` until the block exits; yields the bound port.

    ``refusal`` turns the operating system's reason into the error's one line.
    """
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port, ssl_context=ssl_context)
        try:
            await site.start()
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise InputError(refusal(reason)) from None
        yield int(runner.addresses[0][1]) if runner.addresses else port
    finally:
        await runner.cleanup()
