"""The HTTP client of one scheduler extender: JSON over POST, TLS as client-go builds it.

One :class:`ExtenderClient` per configured extender, with its own kept-alive connections
(:mod:`asched.api.http1`, opened on the first call, inside the running loop).
``post(verb, body)`` sends ``body`` as JSON (orjson, ``Content-Type: application/json``)
to ``urlPrefix/verb`` and returns the decoded answer. The whole call (waiting for a
connection, connecting, sending, reading the answer) must finish within ``httpTimeout``,
as Go's ``http.Client.Timeout`` bounds it (0: no limit, as Go).

Every failure leaves as :class:`~asched.errors.ExtenderError` naming the URL and verb:
a refused or reset connection, a TLS handshake or verification failure, no answer in
time, a malformed HTTP answer, a status other than 200 (upstream accepts exactly 200), a
body that is not JSON. Transport and OS errors never leave this module;
``asyncio.CancelledError`` passes through.

TLS follows kube-scheduler's ``makeTransport`` and client-go's ``TLSConfigFor``: the CA
(``caData`` over ``caFile``) replaces the system roots; ``enableHTTPS`` without a CA means
*no verification* (upstream sets ``insecure`` then); ``insecure`` skips verification;
``serverName`` is sent as SNI and checked against the certificate; a client certificate
(``certData``/``keyData`` over the files) is presented when the server asks. The scheme of
``urlPrefix`` decides between HTTP and HTTPS, as upstream: ``enableHTTPS`` with an
``http://`` prefix still sends plain HTTP (logged once as a warning). Proxy variables are
not consulted (the scheduler talks to its extenders directly).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

import orjson

from asched.api.http1 import CannotConnect, HTTPProtocolError, Pool
from asched.errors import ExtenderError, InputError

logger = logging.getLogger(__name__)

#: the request's fixed headers (``Host`` and ``Content-Length`` are added per call)
_HEADERS: Final = (
    b"Content-Type: application/json\r\n"
    b"Accept: application/json\r\n"
    b"Accept-Encoding: identity\r\n"
    b"User-Agent: asched\r\n"
)
_SNIPPET: Final = 200  # characters of a refused answer's body quoted in the error


class TLSSettings(Protocol):
    """What the client reads of an extender's ``tlsConfig`` (config.types.ExtenderTLSConfig)."""

    @property
    def insecure(self) -> bool: ...
    @property
    def server_name(self) -> str: ...
    @property
    def cert_file(self) -> str: ...
    @property
    def key_file(self) -> str: ...
    @property
    def ca_file(self) -> str: ...
    @property
    def cert_data(self) -> bytes: ...
    @property
    def key_data(self) -> bytes: ...
    @property
    def ca_data(self) -> bytes: ...


class ExtenderSettings(Protocol):
    """What the client reads of an extender's configuration (config.types.ExtenderConfig)."""

    @property
    def url_prefix(self) -> str: ...
    @property
    def http_timeout_seconds(self) -> float: ...
    @property
    def enable_https(self) -> bool: ...
    @property
    def tls_config(self) -> TLSSettings | None: ...
    @property
    def bind_verb(self) -> str: ...


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _load_client_cert(context: ssl.SSLContext, tls: TLSSettings, where: str) -> None:
    """Load the client certificate and key (data over files) into ``context``."""
    cert, key = tls.cert_data, tls.key_data
    try:
        if not cert and not key:
            context.load_cert_chain(tls.cert_file, tls.key_file)
            return
        # ssl loads certificates from files only: write the PEM data to a private
        # directory that is removed as soon as the context holds them
        with tempfile.TemporaryDirectory(prefix="asched-extender-tls-") as directory:
            cert_path = Path(directory) / "tls.crt"
            key_path = Path(directory) / "tls.key"
            cert_path.write_bytes(cert or Path(tls.cert_file).read_bytes())
            key_path.touch(mode=0o600)
            key_path.write_bytes(key or Path(tls.key_file).read_bytes())
            context.load_cert_chain(cert_path, key_path)
    except (OSError, ssl.SSLError, ValueError) as exc:
        files = ", ".join(f for f in (tls.cert_file, tls.key_file) if f)
        source = f" ({files})" if files else ""
        raise InputError(
            f"{where}: tlsConfig{source}: cannot load the client certificate and key: "
            f"{_one_line(exc)}"
        ) from None


def ssl_context(settings: ExtenderSettings) -> ssl.SSLContext | None:
    """The SSL context for ``settings``; None when nothing is configured (system roots).

    Raises
    ------
    InputError
        A CA or client certificate that cannot be read or parsed, naming the extender
        and the field.
    """
    tls = settings.tls_config
    where = f"extender {settings.url_prefix}"
    if tls is None and not settings.enable_https:
        return None
    has_ca = tls is not None and bool(tls.ca_data or tls.ca_file)
    try:
        if tls is not None and tls.ca_data:
            field = "caData"
            context = ssl.create_default_context(cadata=tls.ca_data.decode("ascii", "replace"))
        elif tls is not None and tls.ca_file:
            field = f"caFile ({tls.ca_file})"
            context = ssl.create_default_context(cafile=tls.ca_file)
        else:
            field = ""
            context = ssl.create_default_context()
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise InputError(
            f"{where}: tlsConfig.{field}: cannot load the CA: {_one_line(exc)}"
        ) from None
    if (tls is not None and tls.insecure) or (settings.enable_https and not has_ca):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if tls is not None and (tls.cert_data or tls.cert_file):
        _load_client_cert(context, tls, where)
    return context


class ExtenderClient:
    """POSTs JSON to one extender. Build it anywhere; call and close it inside the loop.

    ``connections`` caps the simultaneous calls; a call waiting for a connection spends
    its ``httpTimeout`` waiting, as Go's client would.

    Raises
    ------
    InputError
        From the constructor, when the TLS material cannot be loaded, or when
        ``urlPrefix`` names no host.
    """

    def __init__(self, settings: ExtenderSettings, *, connections: int = 100) -> None:
        self.url_prefix = settings.url_prefix
        self.timeout_seconds = settings.http_timeout_seconds
        self._base = settings.url_prefix.rstrip("/")
        parts = urlsplit(self._base)
        https = parts.scheme == "https"
        try:
            port = parts.port or (443 if https else 80)
        except ValueError as exc:
            raise InputError(f"extender {self.url_prefix}: urlPrefix: {exc}") from None
        if not parts.hostname:
            raise InputError(f"extender {self.url_prefix}: urlPrefix names no host")
        self._host, self._port = parts.hostname, port
        self._authority = parts.netloc.rpartition("@")[2].encode("idna")
        self._path = parts.path
        self._ssl = ssl_context(settings)
        if https and self._ssl is None:
            self._ssl = ssl.create_default_context()  # the system roots
        tls = settings.tls_config
        self._server_hostname = (tls.server_name if tls is not None else "") or None
        self._https = https
        self._bind_verb = settings.bind_verb
        self._connections = connections
        self._pool: Pool | None = None
        self._requests: dict[str, bytes] = {}
        if settings.enable_https and not https:
            logger.warning(
                "extender %s: enableHTTPS is set but urlPrefix is http://; "
                "calls go out as plain HTTP, as kube-scheduler's do",
                self.url_prefix,
            )

    def url(self, verb: str) -> str:
        """The URL a call of ``verb`` goes to (``urlPrefix`` without trailing ``/``, ``/``, verb)."""
        return f"{self._base}/{verb}"

    def _open(self) -> Pool:
        if self._pool is None:
            self._pool = Pool(
                self._host,
                self._port,
                ssl_context=self._ssl if self._https else None,
                server_hostname=self._server_hostname,
                limit=self._connections,
            )
        return self._pool

    def _request_head(self, verb: str) -> bytes:
        """``POST path HTTP/1.1`` and the fixed headers, up to ``Content-Length: ``."""
        head = self._requests.get(verb)
        if head is None:
            target = f"{self._path}/{verb}".encode()
            head = b"POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: " % (
                target,
                self._authority,
                _HEADERS,
            )
            self._requests[verb] = head
        return head

    async def post(self, verb: str, body: Any) -> Any:
        """POST ``body`` as JSON to ``verb`` and return the decoded answer.

        Raises
        ------
        ExtenderError
            On any transport failure, after ``httpTimeout``, on a status other than 200,
            or when the answer is not JSON; the message names the URL and the verb.
        """
        raw = await self.post_bytes(verb, orjson.dumps(body, default=_plain))
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            detail = f"the answer is not JSON ({exc})"
            raise ExtenderError(self.url(verb), verb, detail) from None

    async def post_bytes(self, verb: str, data: bytes) -> bytes:
        """POST ``data`` (a JSON body, already encoded) to ``verb``: the answer's body.

        Raises
        ------
        ExtenderError
            As :meth:`post`, but the answer is returned as it came, not decoded.
        """
        request = b"%s%d\r\n\r\n%s" % (self._request_head(verb), len(data), data)
        limit = self.timeout_seconds
        # the pool's own deadline (one timer, no Timeout context per call) bounds the whole
        # exchange: waiting for a connection, connecting, sending, reading the answer
        deadline = asyncio.get_running_loop().time() + limit if limit > 0 else None
        try:
            # a bind has effects: never replayed on a fresh connection
            replayable = verb != self._bind_verb
            status, raw = await self._open().exchange(
                request, replayable=replayable, deadline=deadline
            )
        except TimeoutError:
            detail = f"no answer within httpTimeout ({self.timeout_seconds:g}s)"
            raise ExtenderError(self.url(verb), verb, detail) from None
        except ssl.SSLError as exc:
            raise ExtenderError(self.url(verb), verb, f"TLS: {_one_line(exc)}") from None
        except HTTPProtocolError as exc:
            detail = f"a malformed HTTP answer: {_one_line(exc)}"
            raise ExtenderError(self.url(verb), verb, detail) from None
        except CannotConnect as exc:
            raise ExtenderError(self.url(verb), verb, str(exc)) from None
        except OSError as exc:
            detail = f"connection to {self._host}:{self._port} lost: {_one_line(exc)}"
            raise ExtenderError(self.url(verb), verb, detail) from None
        if status != 200:
            text = " ".join(raw[:_SNIPPET].decode("utf-8", "replace").split())
            detail = f"HTTP status {status}, expected 200" + (f": {text}" if text else "")
            raise ExtenderError(self.url(verb), verb, detail)
        return raw

    async def close(self) -> None:
        """Close the connections (idempotent); a later call opens new ones."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def _plain(value: Any) -> Any:
    """orjson's fallback: read-only mappings and sets as plain JSON objects and lists."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")
