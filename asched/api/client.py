"""The one I/O seam to the Kubernetes API, over kubernetes-asyncio with raw JSON.

Why raw: the generated models deserialize at ~1,500 pods/s and the binding call raises
after succeeding while building its response model (see the client pitfalls in the
docs). Every request here goes through ``ApiClient.call_api(..., _preload_content=False)``;
the body is read as bytes, parsed with orjson, and the response is always released. A
non-2xx status is returned (for bindings, leases, status patches: the caller decides) or
raised as :class:`~asched.errors.ApiError` (``*_json`` helpers).

Transport failures never leave this module as aiohttp or OS errors: a refused or reset
connection, DNS, TLS verification, a timeout, a connection closed mid-response or a 2xx
body that is not JSON raise :class:`~asched.errors.ApiUnavailable` naming the method,
path and host, from every public method and while a watch stream is read. Callers retry
on :data:`asched.errors.RETRYABLE`. ``asyncio.CancelledError`` passes through untouched.

Tokens never reach a log line: only method, path and status are logged. TLS is verified
with the kubeconfig's CA (or the in-cluster CA).

kubernetes-asyncio opens its aiohttp session with ``trust_env=True``, which makes every
request look up proxy and netrc settings in a thread pool: measured here, that more than
doubles the client CPU per binding (736 -> 298 us). The scheduler talks straight to its
API server, so asched turns that off unless ``ASCHED_API_TRUST_ENV=1`` asks for proxies.

The hot writes, :meth:`KubeClient.bind` and :meth:`KubeClient.patch_pod_status`, and the
events the scheduler writes for every pod (:meth:`KubeClient.create` and
:meth:`KubeClient.patch` of a path that needs no escaping), go through
:mod:`asched.api.fast_writes` instead (one write per request over asched's own kept-alive
HTTP/1.1 connections, same TLS, same auth, same errors; measured by
``bench/bind_client_cpu.py``), except when requests must go through a proxy
(``ASCHED_API_TRUST_ENV=1`` or a ``proxy-url``): then every request takes the aiohttp path.
That path keeps its own connections beside aiohttp's (up to ``max_connections`` each).

This is the only module (with :mod:`asched.api.watch`) that imports kubernetes_asyncio;
every ``# type: ignore`` for that untyped library lives here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

import aiohttp
import orjson
from kubernetes_asyncio import client as k8s_client, config as k8s_config

from asched.api import kubeconfig as kubeconfig_check
from asched.api.fast_writes import BadHeader, FastWrites, binding, plain_path, pod_path
from asched.api.http1 import HTTPProtocolError
from asched.api.objects import KubeObject, PodStatusPatchJSON, WatchEventJSON
from asched.errors import ApiError, ApiUnavailable, InputError, WatchExpired
from asched.gcpause import gc_paused

logger = logging.getLogger(__name__)

MERGE_PATCH: Final = "application/merge-patch+json"
STRATEGIC_PATCH: Final = "application/strategic-merge-patch+json"
JSON: Final = "application/json"
DEFAULT_TIMEOUT: Final = 30.0

#: What the transport raises: aiohttp's errors, OS errors (refused, reset, DNS, TLS are
#: OSError subclasses), and the request timeout (aiohttp raises the builtin TimeoutError).
#: CancelledError is a BaseException and is never among them.
_TRANSPORT: Final = (aiohttp.ClientError, OSError, TimeoutError)
#: What the fast path raises (CannotConnect is an OSError, ssl.SSLError too).
_FAST_TRANSPORT: Final = (OSError, TimeoutError, HTTPProtocolError, BadHeader)


@dataclass(frozen=True, slots=True)
class Response:
    """A finished request: status code and the parsed body (None when empty or not JSON)."""

    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def raise_for_status(self, what: str) -> Any:
        if not self.ok:
            raise api_error(self.status, self.body, what)
        return self.body


def api_error(status: int, body: Any, what: str) -> ApiError:
    """An ApiError (WatchExpired for 410) carrying the Status reason and message."""
    reason = body.get("reason", "") if isinstance(body, Mapping) else ""
    message = body.get("message", "") if isinstance(body, Mapping) else ""
    cls = WatchExpired if status == 410 else ApiError
    return cls(status, reason or str(status), f"{what}: {message}" if message else what)


class _NotJson(Exception):
    """A body (or watch line) that is not what the API serves; mapped to ApiUnavailable."""


def _watch_event(buffer: bytearray, start: int, end: int, what: str) -> WatchEventJSON | None:
    """The watch event in ``buffer[start:end]`` (None for a blank line); ERROR raises.

    Raises ``_NotJson`` for a line that is not a JSON watch event.
    """
    if end - start < 4 and not buffer[start:end].strip():
        return None
    try:
        with memoryview(buffer) as view:
            event = orjson.loads(view[start:end])
        if not isinstance(event, dict):
            raise _NotJson(f"watch event is a JSON {type(event).__name__}, not an object")
        if event.get("type") == "ERROR":
            status = event.get("object") or {}
            code = int(status.get("code", 500))
        else:
            # the one point where a watch line is taken for the shape the API serves
            return cast("WatchEventJSON", event)
    except (TypeError, ValueError, AttributeError) as exc:  # JSONDecodeError is a ValueError
        raise _NotJson(f"watch event is not JSON ({exc})") from None
    raise api_error(code, status, f"watch {what}")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _parse(raw: bytes) -> Any:
    """The JSON in ``raw`` (None when empty); ``_NotJson`` when it is not JSON."""
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _NotJson(f"answer is not JSON ({exc})") from None


class KubeClient:
    """Raw-JSON access to the API server. Create it inside the running event loop."""

    def __init__(self, api: Any, *, fast: FastWrites | None = None) -> None:
        self._api = api
        self._host = str(api.configuration.host).rstrip("/")
        self._fast = fast

    @classmethod
    async def connect(
        cls,
        kubeconfig: str | None = None,
        *,
        context: str | None = None,
        max_connections: int = 128,
        fast_writes: bool = True,
    ) -> KubeClient:
        """From a kubeconfig file, or the in-cluster service account when None.

        ``kubeconfig`` may be an ``os.pathsep`` list of files, merged as kubectl merges
        them; ``context`` picks a context (default: the merged ``current-context``).
        ``fast_writes=False`` keeps bindings and status patches on the aiohttp path (for
        ``bench/bind_client_cpu.py``'s comparison); a proxy keeps them there anyway.

        Raises
        ------
        InputError
            One line naming the file (or "in-cluster configuration") when the kubeconfig
            is missing, unreadable, not a kubeconfig, or names files that do not exist;
            see :func:`asched.api.kubeconfig.check_kubeconfig`.
        """
        configuration = k8s_client.Configuration()
        try:
            if kubeconfig:
                chosen = kubeconfig_check.check_kubeconfig(kubeconfig, context=context)
                await k8s_config.load_kube_config(
                    config_file=kubeconfig, context=chosen.name, client_configuration=configuration
                )
            else:
                k8s_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except (k8s_config.ConfigException, OSError, ValueError, KeyError, TypeError) as exc:
            # what the structural check cannot see: a certificate file that is missing,
            # undecodable base64, an exec plugin that fails; never a token in the text
            where = kubeconfig or "in-cluster configuration"
            raise InputError(f"{where}: {exc}") from None
        configuration.connection_pool_maxsize = max_connections
        api = k8s_client.ApiClient(configuration)
        session = api.rest_client.pool_manager
        trust_env = os.environ.get("ASCHED_API_TRUST_ENV") == "1"
        if not trust_env and hasattr(session, "_trust_env"):
            session._trust_env = False
        client = cls(api)
        if fast_writes and not trust_env and not configuration.proxy:
            try:
                client._fast = FastWrites(
                    configuration, client._authorization, limit=max_connections
                )
            except ValueError:
                # not an http(s) URL with a host: the aiohttp path reports it on first use
                logger.debug("API writes stay on aiohttp: the server URL is not http(s)")
        return client

    async def _authorization(self) -> str | None:
        """The Authorization header's value, from the library (token refresh included)."""
        headers: dict[str, str] = {}
        await self._api.update_params_for_auth(headers, [], ["BearerToken"])
        return headers.get("authorization")

    @property
    def fast_writes(self) -> bool:
        """Whether bindings and status patches take the fast path (:mod:`.fast_writes`)."""
        return self._fast is not None

    @property
    def trusts_env(self) -> bool:
        """Whether requests consult proxy/netrc environment settings."""
        return bool(getattr(self._api.rest_client.pool_manager, "_trust_env", True))

    async def close(self) -> None:
        if self._fast is not None:
            self._fast.close()
        await self._api.close()

    @property
    def host(self) -> str:
        return str(self._api.configuration.host)

    def _unavailable(self, method: str, path: str, exc: BaseException | str) -> ApiUnavailable:
        """``exc`` as an ApiUnavailable naming ``method``, ``path`` and the host; the cause is
        one line, and any credential the configuration holds is blanked out of it."""
        cause = _one_line(exc) if isinstance(exc, BaseException) else exc
        keys = getattr(self._api.configuration, "api_key", None) or {}
        for value in keys.values():
            # the bare token first (shortest first, deterministic): "Bearer <redacted>"
            for secret in sorted({str(value), str(value).removeprefix("Bearer ")}, key=len):
                if len(secret) >= 4:
                    cause = cause.replace(secret, "<redacted>")
        return ApiUnavailable(method, path, self._host, cause)

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str = JSON,
        request_timeout: float | aiohttp.ClientTimeout | None = DEFAULT_TIMEOUT,
    ) -> aiohttp.ClientResponse:
        """One request through kubernetes-asyncio's session, auth and TLS settings.

        ``call_api`` is bypassed (its generic serialization costs ~100 us per request, measured
        on bindings); the body is encoded with orjson and auth headers come from the library's
        own ``update_params_for_auth``, so token refresh keeps working.
        """
        headers = {"Content-Type": content_type, "Accept": JSON}
        await self._api.update_params_for_auth(headers, [], ["BearerToken"])
        if isinstance(request_timeout, aiohttp.ClientTimeout):
            timeout = request_timeout
        else:
            timeout = aiohttp.ClientTimeout(total=request_timeout)
        rest = self._api.rest_client
        extra: dict[str, Any] = {}
        if rest.server_hostname:
            extra["server_hostname"] = rest.server_hostname
        if rest.proxy:
            extra["proxy"] = rest.proxy
        try:
            response: aiohttp.ClientResponse = await rest.pool_manager.request(
                method,
                self._host + path,
                params={key: str(value) for key, value in (params or {}).items()},
                data=None if body is None else orjson.dumps(body),
                headers=headers,
                timeout=timeout,
                **extra,
            )
        except _TRANSPORT as exc:
            raise self._unavailable(method, path, exc) from exc
        return response

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str = JSON,
        request_timeout: float | None = DEFAULT_TIMEOUT,
    ) -> Response:
        """Send a request and return its status and parsed body; never raises on status.

        Raises
        ------
        ApiUnavailable
            The request or the response failed in transport, or a 2xx body is not JSON
            (a non-2xx body that is not JSON, a proxy's error page, gives ``body=None``).
        """
        response = await self._send(
            method,
            path,
            params=params,
            body=body,
            content_type=content_type,
            request_timeout=request_timeout,
        )
        try:
            raw = await response.read()
        except _TRANSPORT as exc:
            raise self._unavailable(method, path, exc) from exc
        finally:
            response.release()
        return self._response(method, path, response.status, raw)

    def _response(self, method: str, path: str, status: int, raw: bytes) -> Response:
        """The Response for ``status`` and body ``raw``; a 2xx body not JSON raises."""
        if status >= 400:
            logger.debug("%s %s -> %d", method, path, status)
        try:
            parsed = _parse(raw)
        except _NotJson as exc:
            if 200 <= status < 300:
                raise self._unavailable(method, path, f"HTTP {status} {exc}") from None
            parsed = None
        return Response(status, parsed)

    async def get_json(self, path: str, params: Mapping[str, str | int] | None = None) -> Any:
        """The JSON object at ``path``; ApiError on a non-2xx status, ApiUnavailable when the
        answer is not a JSON object."""
        body = (await self.request("GET", path, params=params)).raise_for_status(f"GET {path}")
        if not isinstance(body, dict):
            raise self._unavailable("GET", path, "HTTP 2xx answer is not a JSON object")
        return body

    async def list_all(
        self, path: str, *, page_size: int = 500, params: Mapping[str, str | int] | None = None
    ) -> tuple[list[KubeObject], str]:
        """Every item of a collection, paginated; returns (items, list resourceVersion).

        Python's cyclic GC is paused while big pages are parsed (it dominates otherwise).
        """
        items: list[KubeObject] = []
        resource_version = ""
        with gc_paused():
            async for page, version, _ in self.list_pages(path, page_size=page_size, params=params):
                items.extend(page)
                resource_version = version
        return items, resource_version

    async def list_pages(
        self, path: str, *, page_size: int = 500, params: Mapping[str, str | int] | None = None
    ) -> AsyncIterator[tuple[list[KubeObject], str, bool]]:
        """A collection page by page: ``(items, list resourceVersion, last)``; the version
        is the list's (every page of one list reads the same snapshot)."""
        query: dict[str, str | int] = dict(params or {})
        query["limit"] = page_size
        resource_version = ""
        while True:
            page = await self.get_json(path, query)
            meta = page.get("metadata") or {}
            resource_version = meta.get("resourceVersion", resource_version)
            token = meta.get("continue")
            yield page.get("items") or [], resource_version, not token
            if not token:
                return
            query["continue"] = token

    async def watch(
        self,
        path: str,
        *,
        resource_version: str,
        timeout_seconds: int = 300,
        params: Mapping[str, str | int] | None = None,
    ) -> AsyncIterator[WatchEventJSON]:
        """Raw watch events (``{"type", "object"}``) from ``resource_version``.

        A 410 (HTTP status or ERROR event) raises WatchExpired; any other ERROR event or
        non-200 status raises ApiError. The stream ends when the server closes it cleanly;
        a connection lost mid-stream, a read timeout or a line that is not a JSON event
        raises ApiUnavailable (``GET <path>``, "watch" in the cause).
        """
        query: dict[str, str | int] = dict(params or {})
        query.update(
            watch="true",
            resourceVersion=resource_version,
            allowWatchBookmarks="true",
            timeoutSeconds=timeout_seconds,
        )
        timeout = aiohttp.ClientTimeout(total=None, sock_read=timeout_seconds + 30)
        response = await self._send("GET", path, params=query, request_timeout=timeout)
        try:
            if response.status != 200:
                try:
                    body = _parse(await response.read())
                except _NotJson:
                    body = None
                raise api_error(response.status, body, f"watch {path}")
            # Events are newline-delimited JSON; a pod event is kilobytes, delivered in many
            # TCP chunks. Splitting one buffer ourselves costs far less than aiohttp's
            # readline (measured: the watch was 13 % of the scheduler's CPU on kube-apiserver).
            buffer = bytearray()
            async for chunk in response.content.iter_any():
                scanned = len(buffer)  # the unfinished line kept so far holds no newline
                buffer += chunk
                start = 0
                while (end := buffer.find(b"\n", scanned if start == 0 else start)) >= 0:
                    event = _watch_event(buffer, start, end, path)
                    start = end + 1
                    if event is not None:
                        yield event
                if start:
                    del buffer[:start]
            last = _watch_event(buffer, 0, len(buffer), path)  # no final newline
            if last is not None:
                yield last
        except _TRANSPORT as exc:
            raise self._unavailable("GET", path, f"watch: {_one_line(exc)}") from exc
        except _NotJson as exc:
            raise self._unavailable("GET", path, str(exc)) from None
        finally:
            response.release()

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> Response:
        """POST the pod's Binding: 201 bound, 404 pod gone, 409 already assigned.

        Never sent twice (on the fast path too): a binding whose answer was lost raises
        ApiUnavailable, and the caller counts it as failed.
        """
        path = pod_path(namespace, name, "binding")
        body = binding(namespace, name, uid, node)
        if self._fast is not None:
            return await self._fast_send("POST", path, JSON, body, replayable=False)
        return await self.request("POST", path, body=body)

    async def patch_pod_status(
        self, namespace: str, name: str, patch: PodStatusPatchJSON
    ) -> Response:
        """Strategic-merge the pod's status (conditions merge by type)."""
        path = pod_path(namespace, name, "status")
        if self._fast is not None:  # idempotent: replayed once on a dropped idle connection
            return await self._fast_send("PATCH", path, STRATEGIC_PATCH, patch, replayable=True)
        return await self.request("PATCH", path, body=patch, content_type=STRATEGIC_PATCH)

    async def create(self, path: str, body: Mapping[str, Any]) -> Response:
        """POST ``body`` to ``path`` (an event, a lease): never sent twice on the fast path."""
        if self._fast is not None and plain_path(path):
            return await self._fast_send("POST", path, JSON, body, replayable=False)
        return await self.request("POST", path, body=body)

    async def _fast_send(
        self, method: str, path: str, content_type: str, body: Any, *, replayable: bool
    ) -> Response:
        assert self._fast is not None
        try:
            status, raw = await self._fast.send(
                method.encode(),
                path,
                content_type.encode(),
                orjson.dumps(body),
                DEFAULT_TIMEOUT,
                replayable=replayable,
            )
        except _FAST_TRANSPORT as exc:
            raise self._unavailable(method, path, exc) from exc
        return self._response(method, path, status, raw)

    async def replace(self, path: str, body: Mapping[str, Any]) -> Response:
        return await self.request("PUT", path, body=body)

    async def patch(
        self, path: str, body: Mapping[str, Any], content_type: str = MERGE_PATCH
    ) -> Response:
        if self._fast is not None and plain_path(path):
            return await self._fast_send("PATCH", path, content_type, body, replayable=True)
        return await self.request("PATCH", path, body=body, content_type=content_type)

    async def get(self, path: str) -> Response:
        return await self.request("GET", path)
