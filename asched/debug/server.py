"""The debug listener: read-only pages and their JSON on an address of their own.

Off unless ``asched run --debug-addr HOST:PORT`` is given. Rules:

* **read-only**: any method but GET and HEAD is answered 405 (with ``Allow: GET, HEAD``)
  before anything else runs, on every path; nothing here changes the scheduler;
* **no secrets**: the documents hold pod and node names, plugin reasons, scores, counts
  and this replica's identity; never a token, a kubeconfig or a configuration file;
* **loopback only, unless protected**: on a loopback address (``127.0.0.0/8``, ``::1``,
  ``localhost``) it serves plain HTTP without authentication, like a kubectl
  port-forward's end; any other address needs ``ssl_context`` (TLS) and
  ``middlewares`` doing delegated authorization (TokenReview/SubjectAccessReview, as
  ``/metrics`` upstream), else :func:`check_exposure` refuses it with an InputError;
* the pages forbid inline code and framing (Content-Security-Policy), and are not cached.

Handlers only read (:mod:`asched.debug.views`): they run on the scheduler's loop between
two cycles and take well under a millisecond but for a decision over thousands of nodes.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Final

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from asched.debug import pages, views
from asched.debug.record import DecisionRecord
from asched.errors import InputError
from asched.serving.listen import listen
from asched.serving.plan import is_loopback

logger = logging.getLogger(__name__)

__all__ = ["Handler", "Middleware", "build_app", "check_exposure", "parse_address", "serve"]

#: Methods the listener answers; anything else is 405.
READ_METHODS: Final = frozenset({"GET", "HEAD"})

_HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

#: What the refusal of an unprotected non-loopback address says after the address.
NEEDS_PROTECTION: Final = (
    "needs TLS and delegated authorization; this listener serves plain HTTP on a loopback "
    "address only (127.0.0.1, ::1, localhost): use e.g. --debug-addr 127.0.0.1:10260 and "
    "kubectl port-forward"
)


def parse_address(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[V6]:PORT`` for IPv6) -> (host, port); InputError naming the flag."""
    host, sep, port_text = value.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise InputError(f"--debug-addr {value!r}: expected HOST:PORT, e.g. 127.0.0.1:10260")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise InputError(f"--debug-addr {value!r}: write an IPv6 address in brackets, [::1]:PORT")
    return host, int(port_text)


def check_exposure(
    host: str,
    port: int,
    *,
    ssl_context: ssl.SSLContext | None,
    middlewares: Sequence[Middleware],
) -> None:
    """Refuse a non-loopback address without TLS and authorization (see the module
    docstring): InputError naming the address."""
    if is_loopback(host) or (ssl_context is not None and middlewares):
        return
    shown = f"[{host}]" if ":" in host else host
    raise InputError(f"--debug-addr {shown}:{port}: a non-loopback address {NEEDS_PROTECTION}")


@web.middleware
async def read_only(request: web.Request, handler: Handler) -> web.StreamResponse:
    """405 for anything but GET and HEAD; the security headers on every answer."""
    if request.method not in READ_METHODS:
        raise web.HTTPMethodNotAllowed(
            request.method, sorted(READ_METHODS), text="405: the debug pages are read-only\n"
        )
    response = await handler(request)
    response.headers.update(_HEADERS)
    return response


def _int(request: web.Request, name: str) -> int | None:
    text = request.query.get(name)
    if text is None:
        return None
    if not text.isdigit():
        raise web.HTTPBadRequest(text=f"{name}={text!r}: expected a non-negative integer\n")
    return int(text)


def _page(name: str) -> Handler:
    """The handler of page ``name``, its HTML rendered once, here."""
    text = pages.render(name)

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(text=text, content_type="text/html")

    return handler


async def _static(request: web.Request) -> web.StreamResponse:
    """The pages' script and style sheet; 404 for any other name."""
    name = request.match_info["name"]
    if name == "debug.js":
        return web.Response(text=pages.JS, content_type="text/javascript")
    if name == "debug.css":
        return web.Response(text=pages.CSS, content_type="text/css")
    raise web.HTTPNotFound()


async def _to_index(request: web.Request) -> web.StreamResponse:
    """``/debug`` redirects to the index, ``/debug/``."""
    raise web.HTTPFound("/debug/")


def build_app(sources: views.Sources, *, middlewares: Sequence[Middleware] = ()) -> web.Application:
    """The aiohttp application of the debug pages over ``sources``.

    ``middlewares`` (authentication, authorization) run after the read-only check."""
    app = web.Application(middlewares=[read_only, *middlewares])

    async def queue(request: web.Request) -> web.StreamResponse:
        limit = _int(request, "limit")
        return web.json_response(
            views.queue_view(sources, limit=views.DEFAULT_LIMIT if limit is None else limit)
        )

    async def decisions(request: web.Request) -> web.StreamResponse:
        return web.json_response(views.decisions_view(sources))

    async def decision(request: web.Request) -> web.StreamResponse:
        seq, pod = _int(request, "id"), request.query.get("pod")
        record: DecisionRecord | None
        if seq is not None:
            record = sources.recorder.get(seq)
            what = f"decision #{seq}"
        elif pod:
            record = sources.recorder.latest(pod)
            what = f"a decision for pod {pod}"
        else:
            raise web.HTTPBadRequest(text="expected ?id=N or ?pod=NAMESPACE/NAME\n")
        if record is None:
            kept = sources.recorder.capacity
            raise web.HTTPNotFound(
                text=f"{what} is not kept (the last {kept} decisions are: --debug-decisions)\n"
            )
        return web.json_response(record.to_json())

    async def now(request: web.Request) -> web.StreamResponse:
        seconds = _int(request, "seconds")
        return web.json_response(views.now_view(sources, seconds=seconds or 300))

    for name, (path, _) in pages.PAGES.items():
        app.router.add_get(path, _page(name))
    app.router.add_get("/debug", _to_index)
    app.router.add_get("/debug/static/{name}", _static)
    app.router.add_get("/debug/api/queue", queue)
    app.router.add_get("/debug/api/decisions", decisions)
    app.router.add_get("/debug/api/decision", decision)
    app.router.add_get("/debug/api/now", now)
    return app


@dataclass(frozen=True, slots=True)
class Listening:
    """The running listener's address and scheme."""

    host: str
    port: int
    tls: bool

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}/debug/"


@contextlib.asynccontextmanager
async def serve(
    sources: views.Sources,
    host: str,
    port: int,
    *,
    ssl_context: ssl.SSLContext | None = None,
    middlewares: Sequence[Middleware] = (),
) -> AsyncIterator[Listening]:
    """Serve the debug pages on ``host:port`` until the block exits (``port=0``: a free
    one, in the yielded :class:`Listening`). InputError for an address it may not use
    (:func:`check_exposure`) or cannot bind."""
    check_exposure(host, port, ssl_context=ssl_context, middlewares=middlewares)
    async with listen(
        build_app(sources, middlewares=middlewares),
        host,
        port,
        ssl_context=ssl_context,
        refusal=lambda reason: f"--debug-addr {host}:{port}: cannot listen: {reason}",
    ) as bound:
        listening = Listening(host, bound, ssl_context is not None)
        logger.info("debug pages on %s", listening.url)
        yield listening
