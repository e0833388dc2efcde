"""A small raw-JSON REST client for tests and benchmarks (aiohttp + orjson).

Why not :mod:`asched.api`: the scheduler's client is tuned for the scheduler's few calls; tests
and benchmarks need the *whole* surface (any path, any verb, any patch type, raw watch lines) and
must see exactly what the server answered, so this client adds nothing on top: objects are plain
dicts, non-2xx answers are :class:`~asched.tools.backends.errors.StatusError` carrying the ``Status``
body's code, reason and message, and :meth:`RestClient.request` returns the status without
raising when asked (bindings: 201 bound, 404 gone, 409 already bound).

It is built from a kubeconfig (:func:`asched.tools.backends.kubeconfig.read_kubeconfig`): HTTPS servers
are verified against the embedded CA, plain-HTTP servers (the simulator) are accepted, and the
bearer token is sent but never logged or printed.

The session is created lazily inside the running event loop and must be closed
(``async with RestClient.from_kubeconfig(path) as rest: ...``).
"""

from __future__ import annotations

import builtins
import datetime as dt
import ssl
import types
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Self

import aiohttp
import orjson

from asched.errors import WatchExpired
from asched.tools.backends.errors import StatusError
from asched.tools.backends.kubeconfig import KubeconfigEntry, read_kubeconfig

PatchType = Literal["merge", "json", "strategic"]
PATCH_CONTENT_TYPES: dict[PatchType, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}
#: Image of the pods created by :meth:`RestClient.create_pod`; nothing ever runs it.
PAUSE_IMAGE = "registry.k8s.io/pause:3.9"


class ExpiredError(StatusError, WatchExpired):
    """410 Gone / Expired: the resourceVersion is older than the server's history."""


@dataclass(frozen=True, slots=True)
class Response:
    """A raw answer: HTTP status and decoded JSON body (empty dict when not JSON)."""

    status: int
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True for 2xx."""
        return 200 <= self.status < 300


def now_rfc3339(*, micro: bool = False) -> str:
    """Return the current UTC time as ``...Z`` (with microseconds for ``eventTime``)."""
    stamp = dt.datetime.now(dt.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


def pods_path(namespace: str, name: str | None = None) -> str:
    """Return ``/api/v1/namespaces/NS/pods[/NAME]``."""
    base = f"/api/v1/namespaces/{namespace}/pods"
    return f"{base}/{name}" if name else base


def nodes_path(name: str | None = None) -> str:
    """Return ``/api/v1/nodes[/NAME]``."""
    return f"/api/v1/nodes/{name}" if name else "/api/v1/nodes"


class RestClient:
    """Raw JSON access to one API server.

    Parameters
    ----------
    entry : KubeconfigEntry
        Server, CA and token.
    timeout : float
        Seconds allowed for a whole non-watch request.
    connections : int
        Maximum simultaneous connections (aiohttp connector limit).
    """

    def __init__(self, entry: KubeconfigEntry, *, timeout: float = 30.0, connections: int = 64):
        self.server = entry.server
        self._entry = entry
        self._timeout = timeout
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None
        self._ssl: ssl.SSLContext | bool = True
        if entry.server.startswith("https://"):
            if entry.insecure_skip_tls_verify:
                self._ssl = False
            elif entry.ca_pem is not None:
                self._ssl = ssl.create_default_context(cadata=entry.ca_pem.decode("ascii"))
            else:
                self._ssl = ssl.create_default_context()

    @classmethod
    def from_kubeconfig(cls, path: Path | str, **kwargs: Any) -> RestClient:
        """Build a client from a kubeconfig file's current context."""
        return cls(read_kubeconfig(path), **kwargs)

    def __repr__(self) -> str:  # the token stays out of reprs and logs
        return f"RestClient(server={self.server!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the session and its connections. Idempotent."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def reconnect(self) -> None:
        """Drop pooled connections (after the server restarted); the next call reconnects."""
        await self.close()

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"Accept": "application/json", "User-Agent": "asched-tests/rest"}
            if self._entry.token:
                headers["Authorization"] = f"Bearer {self._entry.token}"
            self._session = aiohttp.ClientSession(
                base_url=self.server,
                headers=headers,
                connector=aiohttp.TCPConnector(limit=self._connections, ssl=self._ssl),
                timeout=aiohttp.ClientTimeout(total=self._timeout),
                json_serialize=lambda obj: orjson.dumps(obj).decode(),
            )
        return self._session

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        check: bool = True,
    ) -> Response:
        """Send one request; return the status and decoded body.

        Raises
        ------
        StatusError
            For a non-2xx status when ``check`` is true (:class:`ExpiredError` for 410).
        """
        data = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": content_type} if data is not None else None
        query = {k: str(v) for k, v in (params or {}).items()}
        async with self._client().request(
            method, path, params=query, data=data, headers=headers
        ) as resp:
            raw = await resp.read()
            status, reason_phrase = resp.status, resp.reason or ""
        decoded = _decode(raw)
        response = Response(status, decoded)
        if check and not response.ok:
            raise status_error(status, decoded, reason_phrase)
        return response

    async def get(self, path: str, **params: str | int) -> dict[str, Any]:
        """GET one object (or any JSON path, e.g. ``/version``)."""
        return (await self.request("GET", path, params=params)).body

    async def list(
        self,
        path: str,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> dict[str, Any]:
        """LIST a collection; returns the ``...List`` object (``items``, ``metadata``)."""
        params = _query(
            labelSelector=label_selector,
            fieldSelector=field_selector,
            limit=limit,
            resourceVersion=resource_version,
            resourceVersionMatch=resource_version_match,
        )
        if continue_:
            params["continue"] = continue_
        return (await self.request("GET", path, params=params)).body

    async def list_all(self, path: str, *, page: int = 500, **selectors: str) -> builtins.list[Any]:
        """LIST every item of a collection, following ``continue`` tokens."""
        items: builtins.list[Any] = []
        token: str | None = None
        while True:
            chunk = await self.list(path, limit=page, continue_=token, **selectors)
            items.extend(chunk.get("items") or [])
            token = chunk.get("metadata", {}).get("continue")
            if not token:
                return items

    async def create(self, path: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``obj`` to a collection."""
        return (await self.request("POST", path, body=obj)).body

    async def replace(self, path: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """PUT ``obj`` (optimistic concurrency through ``metadata.resourceVersion``)."""
        return (await self.request("PUT", path, body=obj)).body

    async def patch(
        self, path: str, patch: Any, *, patch_type: PatchType = "merge"
    ) -> dict[str, Any]:
        """PATCH with a merge, JSON or strategic-merge patch."""
        content_type = PATCH_CONTENT_TYPES[patch_type]
        return (await self.request("PATCH", path, body=patch, content_type=content_type)).body

    async def delete(
        self,
        path: str,
        *,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
    ) -> dict[str, Any]:
        """DELETE with a DeleteOptions body; returns the object (or a Status)."""
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if propagation_policy is not None:
            options["propagationPolicy"] = propagation_policy
        return (await self.request("DELETE", path, body=options)).body

    async def bind_raw(self, namespace: str, pod: str, node: str) -> Response:
        """POST a Binding to ``pods/POD/binding`` and return the raw answer (never raises)."""
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod, "namespace": namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        return await self.request(
            "POST", f"{pods_path(namespace, pod)}/binding", body=binding, check=False
        )

    async def bind(self, namespace: str, pod: str, node: str) -> int:
        """Bind ``pod`` to ``node``; return the HTTP status (201 bound, 404, 409...)."""
        return (await self.bind_raw(namespace, pod, node)).status

    async def watch(
        self,
        path: str,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        allow_watch_bookmarks: bool = False,
        timeout_seconds: int | None = None,
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Yield watch events (``{"type": ..., "object": {...}}``) as raw dicts.

        The server's ``ERROR`` events (e.g. a 410 ``Status``) are yielded like the others; the
        iterator ends when the server closes the stream. A non-200 answer raises StatusError.
        """
        params = _query(
            watch="true",
            resourceVersion=resource_version,
            labelSelector=label_selector,
            fieldSelector=field_selector,
            allowWatchBookmarks="true" if allow_watch_bookmarks else None,
            timeoutSeconds=timeout_seconds,
        )
        no_deadline = aiohttp.ClientTimeout(total=None, sock_connect=self._timeout)
        async with self._client().get(path, params=params, timeout=no_deadline) as resp:
            if resp.status != 200:
                raise status_error(resp.status, _decode(await resp.read()), resp.reason or "")
            buffer = b""
            async for chunk in resp.content.iter_any():
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield orjson.loads(line)
            if buffer.strip():
                yield orjson.loads(buffer)

    async def create_namespace(
        self, name: str, labels: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Create a Namespace."""
        metadata: dict[str, Any] = {"name": name}
        if labels:
            metadata["labels"] = dict(labels)
        obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}
        return await self.create("/api/v1/namespaces", obj)

    async def create_node(
        self,
        name: str,
        *,
        cpu: str = "4",
        memory: str = "8Gi",
        pods: int = 110,
        labels: Mapping[str, str] | None = None,
        taints: builtins.list[dict[str, Any]] | None = None,
        unschedulable: bool = False,
        extended: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Create a Ready Node without a kubelet; return it as the status patch left it.
        ``extended``: extended resources (``nvidia.com/gpu: "8"``) in its allocatable.

        The real server ignores ``status`` on create, so the capacity, allocatable and Ready
        condition are written with a merge patch of the ``status`` subresource.
        """
        metadata: dict[str, Any] = {"name": name, "labels": {"kubernetes.io/hostname": name}}
        metadata["labels"].update(labels or {})
        spec: dict[str, Any] = {}
        if taints:
            spec["taints"] = taints
        if unschedulable:
            spec["unschedulable"] = True
        node = {"apiVersion": "v1", "kind": "Node", "metadata": metadata, "spec": spec}
        await self.create(nodes_path(), node)
        resources = {"cpu": cpu, "memory": memory, "pods": str(pods), **(extended or {})}
        now = now_rfc3339()
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "message": "hollow node (asched tests)",
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }
        status = {"capacity": resources, "allocatable": resources, "conditions": [ready]}
        return await self.patch(f"{nodes_path(name)}/status", {"status": status})

    async def create_pod(
        self,
        namespace: str,
        name: str,
        *,
        cpu: str | None = "100m",
        memory: str | None = "64Mi",
        labels: Mapping[str, str] | None = None,
        node_name: str | None = None,
        scheduler_name: str | None = None,
        termination_grace_period_seconds: int | None = 0,
        spec: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create a one-container Pod; ``spec`` entries override the defaults."""
        requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
        container: dict[str, Any] = {"name": "c", "image": PAUSE_IMAGE}
        if requests:
            container["resources"] = {"requests": requests}
        pod_spec: dict[str, Any] = {"containers": [container]}
        if node_name is not None:
            pod_spec["nodeName"] = node_name
        if scheduler_name is not None:
            pod_spec["schedulerName"] = scheduler_name
        if termination_grace_period_seconds is not None:
            pod_spec["terminationGracePeriodSeconds"] = termination_grace_period_seconds
        pod_spec.update(spec or {})
        metadata: dict[str, Any] = {"name": name, "namespace": namespace}
        if labels:
            metadata["labels"] = dict(labels)
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec}
        return await self.create(pods_path(namespace), pod)


def status_error(status: int, body: dict[str, Any], reason_phrase: str = "") -> StatusError:
    """Build the exception for a non-2xx answer from its (Status) body."""
    reason = str(body.get("reason") or reason_phrase or "Unknown")
    message = str(body.get("message") or "")
    cls = ExpiredError if status == 410 else StatusError
    return cls(status, reason, message, body)


def _decode(raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        decoded = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    return decoded if isinstance(decoded, dict) else {"value": decoded}


def _query(**params: str | int | None) -> dict[str, str | int]:
    return {key: value for key, value in params.items() if value is not None}
