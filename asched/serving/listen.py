"""``listen``: serve an aiohttp application on one address for the length of a block.

The health and metrics server and the debug pages both listen this way: an AppRunner
without access log or signal handling, one TCP site (TLS when given a context), the
bound port reported (``port=0`` picks a free one), and the socket always closed on exit.
An address that cannot be bound (in use, not an address of this host, a privileged
port) is an InputError whose text ``refusal(reason)`` makes (it names the flag or the
listener, and the address).

On a loopback address every request must *name* a loopback host (``Host: 127.0.0.1:P``,
``localhost``, ``[::1]``), else it gets 421 Misdirected Request: a page a browser loaded
from elsewhere can resolve its own name to 127.0.0.1 (DNS rebinding) and would otherwise
read the debug pages and metrics of a developer's scheduler; its requests carry that
name, never a loopback one.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

from aiohttp import web

from asched.errors import InputError
from asched.serving.plan import is_loopback

#: The answer to a request naming another host on a loopback listener.
MISDIRECTED: Final = "421: this listener serves loopback host names only\n"


def loopback_host(header: str) -> bool:
    """Whether a Host header names this machine's loopback (any port, or none)."""
    host = header.strip().lower()
    if host.startswith("["):  # [::1] or [::1]:port
        name, _, rest = host[1:].partition("]")
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return False
    else:
        name, colon, port = host.rpartition(":") if host.count(":") == 1 else (host, "", "")
        if colon and not port.isdigit():
            return False
    return bool(name) and is_loopback(name)


@web.middleware
async def loopback_hosts_only(request: web.Request, handler: Callable[..., Any]) -> Any:
    """421 for a request whose Host header does not name a loopback host."""
    if not loopback_host(request.headers.get("Host", "")):
        return web.Response(status=421, text=MISDIRECTED)
    return await handler(request)


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

    ``refusal`` turns the operating system's reason into the error's one line. On a loopback
    ``host``, requests naming another host are refused first (see the module docstring).
    """
    if is_loopback(host):
        app.middlewares.insert(0, loopback_hosts_only)
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
