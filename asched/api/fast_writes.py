"""The scheduler's hot API writes (bindings, pod status patches, events) over
:mod:`asched.api.http1`.

Why: through aiohttp a binding POST cost the scheduler about 15-20 % of its CPU per pod
(request and response objects, header multidicts, a timer, several small TLS writes per
request). Here each request is rendered to bytes at once (request line, headers, body:
one write, one TLS record) and sent over kept-alive connections of
:class:`~asched.api.http1.Pool`, at most ``limit`` at once; the answer is read by that
module's parser. Measured on a shared 2-core machine (issue 14): the client CPU per
binding to ``asched sim`` with 64 in flight went from about 120 to 55 µs (HTTPS) and
from 90-130 to 40-57 µs (HTTP), ``bench/bind_client_cpu.py``; the scheduler's CPU per
pod on SchedulingBasic 5,000 nodes / 10,000 pods over TLS from 0.93 to 0.77 ms (medians
of 8 interleaved runs).

What stays as on the aiohttp path of :mod:`asched.api.client` (which owns this module):

- TLS is verified exactly as kubernetes-asyncio's ``RESTClientObject`` sets up its
  connector: the configuration's CA file (``ssl_ca_cert``, else the system roots), the
  client certificate (``cert_file``/``key_file``), ``verify_ssl=False`` alone turns
  verification off, ``disable_strict_ssl_verification`` clears ``VERIFY_X509_STRICT``, and
  ``tls_server_name`` is the name sent (SNI) and checked. ``assert_hostname`` is ignored,
  as that library's aiohttp path ignores it: the host name is always checked when
  verification is on.
- The ``Authorization`` header comes from the caller's ``authorize`` (the library's own
  ``update_params_for_auth``) on every request, so exec-plugin and in-cluster token
  rotation keep working; it costs about 1 µs, so nothing is cached across requests but
  the encoded header line for an unchanged value. A token never reaches an error text.
- A proxy (``ASCHED_API_TRUST_ENV=1``, or a ``proxy-url`` in the kubeconfig) is not
  spoken here: the client then keeps every request on the aiohttp path.

A binding is never sent twice (a kept connection dropped under it is an error, not a
replay: the caller already counts the binding as failed and requeues the pod); a status
patch is idempotent and may be replayed once on a kept connection the server closed while
idle. Failures leave as ``http1``'s exceptions and :class:`TimeoutError`; the client maps
them to :class:`~asched.errors.ApiUnavailable`.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from collections.abc import Awaitable, Callable
from typing import Final, Protocol
from urllib.parse import quote, urlsplit

import orjson

from asched.api.http1 import Pool
from asched.api.objects import BindingJSON, ObjectMetaJSON

#: the fixed headers of every request (Host, Authorization, Content-Type and
#: Content-Length are rendered per request)
_HEADERS: Final = b"Accept: application/json\r\nUser-Agent: asched\r\n"


class ApiTLS(Protocol):
    """What the fast path reads of kubernetes-asyncio's ``Configuration``."""

    @property
    def host(self) -> str | None: ...
    @property
    def ssl_ca_cert(self) -> str | None: ...
    @property
    def cert_file(self) -> str | None: ...
    @property
    def key_file(self) -> str | None: ...
    @property
    def verify_ssl(self) -> bool: ...
    @property
    def disable_strict_ssl_verification(self) -> bool: ...
    @property
    def tls_server_name(self) -> str | None: ...


def ssl_context(configuration: ApiTLS) -> ssl.SSLContext:
    """The TLS context kubernetes-asyncio's REST client builds for ``configuration``.

    Raises OSError or ssl.SSLError when a file cannot be loaded (the library's own client,
    built first from the same configuration, fails the same way before this runs).
    """
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, keyfile=configuration.key_file)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if configuration.disable_strict_ssl_verification:
        context.verify_flags &= ~ssl.VERIFY_X509_STRICT
    return context


class BadHeader(ValueError):
    """A header value the request cannot carry (a line break, a non-Latin-1 character);
    the message never quotes the value."""


def binding(namespace: str, name: str, uid: str, node: str) -> BindingJSON:
    """The Binding of pod ``namespace/name`` (``uid`` as precondition when not empty) to
    ``node``: the one document both paths of :meth:`KubeClient.bind` send."""
    metadata: ObjectMetaJSON = {"name": name, "namespace": namespace}
    if uid:
        metadata["uid"] = uid
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": metadata,
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


def binding_body(namespace: str, name: str, uid: str, node: str) -> bytes:
    """:func:`binding` as JSON bytes.

    orjson of the dict, not a bytes template with the JSON-encoded names spliced in: both
    cost about 0.45 µs per body (``bench/bind_client_cpu.py``), so the plain one stays.
    """
    return orjson.dumps(binding(namespace, name, uid, node))


def pod_path(namespace: str, name: str, sub: str) -> str:
    """``/api/v1/namespaces/NS/pods/NAME/SUB``, names percent-quoted as the client does."""
    return f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(name)}/{sub}"


#: a path that may go on the request line as it is (RFC 3986 path characters, escapes)
_PLAIN_PATH: Final = re.compile(r"/[A-Za-z0-9/._~:@!$&'()*+,;=%-]*")


def plain_path(path: str) -> bool:
    """Whether ``path`` needs no escaping to go on the request line."""
    return _PLAIN_PATH.fullmatch(path) is not None


class FastWrites:
    """Requests with a body (bindings, status patches, events) over kept-alive connections
    to the API server; :class:`~asched.api.client.KubeClient` decides which go here.

    Parameters
    ----------
    configuration : ApiTLS
        The client's configuration (host URL and TLS settings).
    authorize : callable
        Awaited per request: the ``Authorization`` header's value, or None for none.
    limit : int
        The most connections at once.
    """

    def __init__(
        self,
        configuration: ApiTLS,
        authorize: Callable[[], Awaitable[str | None]],
        *,
        limit: int,
    ) -> None:
        parts = urlsplit(str(configuration.host or "").rstrip("/"))
        https = parts.scheme == "https"
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"host {configuration.host!r}: not an http(s) URL with a host")
        self._prefix = parts.path
        authority = parts.netloc.rpartition("@")[2]
        self._host_line = b"Host: %s\r\n" % authority.encode("idna")
        self._authorize = authorize
        self._auth_value: str | None = None
        self._auth_line = b""
        self.pool = Pool(
            parts.hostname,
            parts.port or (443 if https else 80),
            ssl_context=ssl_context(configuration) if https else None,
            server_hostname=configuration.tls_server_name or None,
            limit=limit,
        )

    async def _auth_header(self) -> bytes:
        """The ``Authorization`` line for the current token (re-encoded when it changed)."""
        value = await self._authorize()
        if value != self._auth_value:
            line = b""
            if value:
                if "\r" in value or "\n" in value:
                    raise BadHeader("the Authorization value holds a line break")
                try:
                    line = b"Authorization: %s\r\n" % value.encode("latin-1")
                except UnicodeEncodeError:
                    raise BadHeader("the Authorization value is not Latin-1") from None
            self._auth_value, self._auth_line = value, line
        return self._auth_line

    async def _render(self, method: bytes, path: str, content_type: bytes, body: bytes) -> bytes:
        return b"%s %s%s HTTP/1.1\r\n%s%s%sContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s" % (
            method,
            self._prefix.encode(),
            path.encode(),
            self._host_line,
            await self._auth_header(),
            _HEADERS,
            content_type,
            len(body),
            body,
        )

    async def send(
        self,
        method: bytes,
        path: str,
        content_type: bytes,
        body: bytes,
        request_timeout: float,
        *,
        replayable: bool,
    ) -> tuple[int, bytes]:
        """One request with a body; ``path`` as it goes on the request line (see
        :func:`plain_path`), ``request_timeout`` in seconds. ``replayable``: whether it may
        go once more on a new connection when a kept one was dropped while idle."""
        request = await self._render(method, path, content_type, body)
        deadline = asyncio.get_running_loop().time() + request_timeout
        return await self.pool.exchange(request, replayable=replayable, deadline=deadline)

    def close(self) -> None:
        """Close the idle connections (those in use close when their exchange ends)."""
        self.pool.close()
