"""The load generator's POSTs over a lean HTTP/1.1 client instead of aiohttp's.

Why: the benchmark process shares the machine's cores with the scheduler and the API
server, so its CPU per created pod lowers the throughput it measures. A create is one
POST whose answer (the created object) is never read on success; aiohttp's client spends
more CPU on its request and response objects, header multidicts and timers than on the
bytes. :class:`FastCreator` writes each request as one prepared head plus the body over
kept-alive connections (:class:`asched.api.http1.Pool`) and decodes an answer's
body only when it is a failure.

What it keeps of :class:`~asched.tools.backends.rest.RestClient`: the same server, CA, token and
TLS verification (built from the same kubeconfig entry); a non-2xx answer raises the same
:class:`~asched.tools.backends.errors.StatusError` (code, reason and message from the ``Status``
body); a dropped connection is an :class:`OSError` and a request taking longer than
``timeout`` seconds a :class:`TimeoutError`, which the load generator retries as before.
Anything but a create (the status writes of nodes, claims and PVs) goes through the
RestClient unchanged.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from asched.api.http1 import Pool
from asched.tools.backends.kubeconfig import KubeconfigEntry
from asched.tools.backends.rest import RestClient, status_error

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def ssl_context(entry: KubeconfigEntry) -> ssl.SSLContext | None:
    """The TLS context :class:`~asched.tools.backends.rest.RestClient` verifies ``entry``'s server
    with (None for plain HTTP)."""
    if not entry.server.startswith("https://"):
        return None
    if entry.insecure_skip_tls_verify:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    if entry.ca_pem is not None:
        return ssl.create_default_context(cadata=entry.ca_pem.decode("ascii"))
    return ssl.create_default_context()


class FastCreator:
    """POST objects to an API server; everything else through ``rest``.

    Parameters
    ----------
    rest : RestClient
        The client for every other call (patches), open for as long as this one.
    entry : KubeconfigEntry
        Server, CA and token: the same as ``rest`` was built from.
    connections : int
        The most connections at once.
    timeout : float
        Seconds allowed for one request, waiting for a connection included.
    """

    def __init__(
        self,
        rest: RestClient,
        entry: KubeconfigEntry,
        *,
        connections: int = 64,
        timeout: float = 60.0,
    ) -> None:
        url = urlsplit(entry.server)
        if url.scheme not in _DEFAULT_PORTS or not url.hostname:
            raise ValueError(f"server {entry.server!r}: not an http(s) URL with a host")
        self.rest = rest
        self._timeout = timeout
        self._prefix = url.path.rstrip("/")
        context = ssl_context(entry)
        self._pool = Pool(
            url.hostname,
            url.port or _DEFAULT_PORTS[url.scheme],
            ssl_context=context,
            server_hostname=url.hostname if context is not None else None,
            limit=connections,
        )
        auth = f"Authorization: Bearer {entry.token}\r\n" if entry.token else ""
        self._head = (
            f"Host: {url.netloc}\r\n{auth}Accept: application/json\r\n"
            "Content-Type: application/json\r\nUser-Agent: asched-bench/loadgen\r\n"
            "Content-Length: "
        ).encode("latin-1")

    def __repr__(self) -> str:  # the token stays out of reprs and logs
        return f"FastCreator(server={self.rest.server!r})"

    def request(self, path: str, body: bytes) -> bytes:
        """The whole HTTP/1.1 request that POSTs ``body`` to ``path``."""
        line = f"POST {self._prefix}{path} HTTP/1.1\r\n".encode("latin-1")
        return b"%s%s%d\r\n\r\n%s" % (line, self._head, len(body), body)

    async def create(self, path: str, obj: Mapping[str, Any]) -> None:
        """POST ``obj`` to a collection; the created object is not read.

        Raises
        ------
        StatusError
            For a non-2xx answer.
        OSError, TimeoutError
            The connection failed or the answer took longer than ``timeout``.
        """
        request = self.request(path, orjson.dumps(obj))
        async with asyncio.timeout(self._timeout):
            status, raw = await self._pool.exchange(request)
        if not 200 <= status < 300:
            raise status_error(status, _decoded(raw))

    async def patch(self, path: str, patch: Any) -> dict[str, Any]:
        """A merge patch, through ``rest``."""
        return await self.rest.patch(path, patch)

    def close(self) -> None:
        """Close the kept connections (those in use close when their request ends)."""
        self._pool.close()

    async def aclose(self) -> None:
        """:meth:`close` (for ``contextlib.aclosing``)."""
        self.close()


def _decoded(raw: bytes) -> dict[str, Any]:
    """A failure's body as a dict ({} when it is not a JSON object)."""
    try:
        body = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        return {}
    return body if isinstance(body, dict) else {}
