"""The HTTP client of one scheduler extender: JSON over POST, TLS as client-go builds it.

One :class:`ExtenderClient` per configured extender, one aiohttp session each (opened on
the first call, inside the running loop). ``post(verb, body)`` sends ``body`` as JSON
(orjson, ``Content-Type: application/json``) to ``urlPrefix/verb`` and returns the
decoded answer. The whole call (connecting, sending, reading the answer) must finish
within ``httpTimeout``, as Go's ``http.Client.Timeout`` bounds it.

Every failure leaves as :class:`~asched.errors.ExtenderError` naming the URL and verb:
a refused or reset connection, a TLS handshake or verification failure, no answer in
time, a status other than 200 (upstream accepts exactly 200), a body that is not JSON.
aiohttp and OS errors never leave this module; ``asyncio.CancelledError`` passes through.

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

import logging
import ssl
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Protocol

import aiohttp
import orjson

from asched.errors import ExtenderError, InputError

logger = logging.getLogger(__name__)

_HEADERS: Final = {"Content-Type": "application/json", "Accept": "application/json"}
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

    ``connections`` caps the simultaneous calls (aiohttp's connector limit); a call waiting
    for a connection spends its ``httpTimeout`` waiting, as Go's client would.

    Raises
    ------
    InputError
        From the constructor, when the TLS material cannot be loaded.
    """

    def __init__(self, settings: ExtenderSettings, *, connections: int = 100) -> None:
        self.url_prefix = settings.url_prefix
        self.timeout_seconds = settings.http_timeout_seconds
        self._base = settings.url_prefix.rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=settings.http_timeout_seconds)
        self._ssl = ssl_context(settings)
        tls = settings.tls_config
        self._server_hostname = (tls.server_name if tls is not None else "") or None
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None
        if settings.enable_https and self._base.startswith("http://"):
            logger.warning(
                "extender %s: enableHTTPS is set but urlPrefix is http://; "
                "calls go out as plain HTTP, as kube-scheduler's do",
                self.url_prefix,
            )

    def url(self, verb: str) -> str:
        """The URL a call of ``verb`` goes to (``urlPrefix`` without trailing ``/``, ``/``, verb)."""
        return f"{self._base}/{verb}"

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(
                ssl=self._ssl if self._ssl is not None else True, limit=self._connections
            )
            self._session = aiohttp.ClientSession(connector=connector, trust_env=False)
        return self._session

    async def post(self, verb: str, body: Any) -> Any:
        """POST ``body`` as JSON to ``verb`` and return the decoded answer.

        Raises
        ------
        ExtenderError
            On any transport failure, after ``httpTimeout``, on a status other than 200,
            or when the answer is not JSON; the message names the URL and the verb.
        """
        url = self.url(verb)
        data = orjson.dumps(body, default=_plain)
        extra: dict[str, Any] = {}
        if self._server_hostname is not None and url.startswith("https://"):
            extra["server_hostname"] = self._server_hostname
        try:
            async with self._open().post(
                url, data=data, headers=_HEADERS, timeout=self._timeout, **extra
            ) as response:
                raw = await response.read()
                status = response.status
        except TimeoutError:
            detail = f"no answer within httpTimeout ({self.timeout_seconds:g}s)"
            raise ExtenderError(url, verb, detail) from None
        except aiohttp.ClientSSLError as exc:
            raise ExtenderError(url, verb, f"TLS: {_one_line(exc)}") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise ExtenderError(url, verb, _one_line(exc)) from None
        if status != 200:
            text = " ".join(raw[:_SNIPPET].decode("utf-8", "replace").split())
            detail = f"HTTP status {status}, expected 200" + (f": {text}" if text else "")
            raise ExtenderError(url, verb, detail)
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ExtenderError(url, verb, f"the answer is not JSON ({exc})") from None

    async def close(self) -> None:
        """Close the session (idempotent); a later call opens a new one."""
        if self._session is not None:
            await self._session.close()
            self._session = None


def _plain(value: Any) -> Any:
    """orjson's fallback: read-only mappings and sets as plain JSON objects and lists."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")
