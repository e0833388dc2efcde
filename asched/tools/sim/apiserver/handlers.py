"""The HTTP face of the simulated server: one aiohttp low-level handler for every request.

Order of work for a request: injected latency, bearer-token check (401), admin and
discovery paths, then :func:`asched.tools.sim.apiserver.routing.parse` and the verb. Bodies are decoded
with orjson; answers are pre-encoded bytes (see :mod:`asched.tools.sim.apiserver.views`). Every
:class:`~asched.tools.sim.apiserver.apierrors.StatusError` becomes a ``kind: Status`` answer here and
nowhere else; any other exception is logged and answered 500, so bad input never stops
the server. Bodies may be up to 3 MiB, as kube-apiserver's; a larger one is 413.

The binding POST is the benchmark's hot path: it avoids the generic machinery (no
query parsing, no object encoding in the answer, a constant 201 body).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, Protocol

import orjson
from aiohttp import web
from multidict import CIMultiDict

from asched.tools.sim.apiserver import (
    admin,
    apierrors,
    binding,
    discovery,
    files,
    gojson,
    lifecycle,
    options,
    patch,
    protobuf,
    reviews,
    routing,
    selectors,
    tables,
    views,
    watch,
)
from asched.tools.sim.apiserver.apierrors import StatusError
from asched.tools.sim.apiserver.faults import Faults
from asched.tools.sim.apiserver.listing import ListOptions, parse_list_rv, parse_rv
from asched.tools.sim.apiserver.options import DeleteOptions
from asched.tools.sim.apiserver.registry import FieldCheck, Registry
from asched.tools.sim.apiserver.resources import ResourceSpec
from asched.tools.sim.apiserver.store import Entry, Event, TooOld

logger = logging.getLogger(__name__)

JSON = dict[str, Any]

JSON_TYPE: Final = "application/json"
HEADERS: Final = {"Content-Type": JSON_TYPE, "Cache-Control": "no-cache, private"}
BOUND: Final = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}'
HEALTH_PATHS: Final = frozenset({"/healthz", "/livez", "/readyz"})
PATCH_TYPES: Final = [patch.JSON_PATCH, patch.MERGE_PATCH, patch.STRATEGIC_PATCH]
#: what a custom resource accepts, as the real server lists it in its 415 (the sim does not
#: implement server-side apply: an apply patch gets the generic 415).
CUSTOM_PATCH_TYPES: Final = (patch.JSON_PATCH, patch.MERGE_PATCH, "application/apply-patch+yaml")
#: how long a list or watch waits for a future resourceVersion before 504 (the watch cache's
#: ``blockTimeout``: 3 s).
FUTURE_RV_WAIT: Final = 3.0
#: the largest request body, in bytes (kube-apiserver's ``MaxRequestBodyBytes``: 3 MiB);
#: one byte more is 413 RequestEntityTooLarge. The server's requests are built with it.
MAX_BODY_BYTES: Final = 3 * 1024 * 1024
#: the methods :meth:`Api.answer_plain` may answer
_PLAIN_METHODS: Final = frozenset({"POST", "PATCH"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiSettings:
    """Per-server settings of the handler."""

    token: str
    bookmark_interval: float = 60.0
    watch_queue_limit: int = 100_000
    default_watch_timeout: float = 1800.0


class Controls(admin.Controls, Protocol):
    """What the handler needs from the server object (restart, stats)."""


def _json(body: bytes, status: int = 200, warnings: list[str] | None = None) -> web.Response:
    if not warnings:
        return web.Response(body=body, status=status, headers=HEADERS)
    headers = CIMultiDict(HEADERS)
    for text in warnings:  # what Go's warning recorder sends: 299, no agent, the text quoted
        headers.add("Warning", f"299 - {apierrors.go_quote(text)}")
    return web.Response(body=body, status=status, headers=headers)


def _field_check(
    query: Any, write: options.WriteOptions, raw: bytes, content_type: str | None
) -> FieldCheck:
    """The body's field check: the duplicate fields of a JSON body are looked for when the
    request names ``fieldValidation`` (the default, Warn, skips that parse: see
    docs/simulator-fidelity.md)."""
    duplicates: tuple[str, ...] = ()
    media = (content_type or "application/json").split(";")[0].strip()
    if (
        "fieldValidation" in query
        and write.field_validation != "Ignore"
        and media
        in (
            "application/json",
            "",
        )
    ):
        duplicates = tuple(gojson.duplicate_fields(raw))
    return FieldCheck(write.field_validation, duplicates)


def status_bytes(error: StatusError) -> bytes:
    """The body of a failure's ``kind: Status`` answer."""
    return orjson.dumps(error.body())


def status_response(error: StatusError) -> web.Response:
    """The ``kind: Status`` answer of a failure."""
    return _json(status_bytes(error), error.code)


class PlainAnswer(NamedTuple):
    """An answer made without aiohttp (:meth:`Api.answer_plain`): the HTTP status, the
    ``Content-Type`` (sent with ``Cache-Control: no-cache, private``, as :data:`HEADERS`)
    and the body."""

    status: int
    content_type: str
    body: bytes


def _wants_table(request: web.BaseRequest) -> bool:
    accept = request.headers.get("Accept", "")
    return tables.TABLE_MEDIA in accept and "g=meta.k8s.io" in accept


class Api:
    """The request handler (``aiohttp.web.Server`` calls it for every request)."""

    def __init__(
        self,
        registry: Registry,
        faults: Faults,
        settings: ApiSettings,
        controls: Controls,
        stats: admin.Stats,
    ) -> None:
        self.registry = registry
        self.faults = faults
        self.settings = settings
        self.controls = controls
        self.stats = stats
        self._bearer = f"Bearer {settings.token}"

    async def __call__(self, request: web.BaseRequest) -> web.StreamResponse:
        """Answer one request; never raises (except cancellation)."""
        self.stats.requests += 1
        try:
            if self.faults.latency_ms:
                await asyncio.sleep(self.faults.latency_ms / 1000)
            path = request.path
            auth = request.headers.get("Authorization")
            if auth != self._bearer:  # as kube-apiserver with --anonymous-auth=false
                raise apierrors.unauthorized()
            if path.endswith("/binding") and request.method == "POST":
                return await self._bind(request, path)
            if path in reviews.PATHS and request.method == "POST":
                review = reviews.answer(path, await self._body(request), self.settings.token)
                return _json(orjson.dumps(review), status=201)
            if path.startswith("/admin/"):
                return await admin.handle(request, self.controls, self.faults, self.stats)
            served = self.registry.catalog
            document = served.discovery.get(path.rstrip("/") or "/")
            if document is not None and request.method == "GET":
                return _json(document)
            if path in HEALTH_PATHS:
                return web.Response(text="ok", content_type="text/plain")
            if path == "/openapi/v2" and request.method == "GET":
                return _openapi(request)
            route = routing.parse(path, served.by_gvr, served.group_versions)
            return await self._resource(request, route)
        except apierrors.PageNotFound:
            return web.Response(status=404, text="404 page not found\n", content_type="text/plain")
        except StatusError as error:
            return status_response(error)
        except web.HTTPRequestEntityTooLarge:  # request.read() past MAX_BODY_BYTES
            return status_response(apierrors.request_entity_too_large(MAX_BODY_BYTES))
        except Exception:
            logger.exception("unexpected failure answering %s %s", request.method, request.path)
            return status_response(apierrors.internal("the simulated server failed; see its log"))

    async def _body(self, request: web.BaseRequest, kind: str = "") -> Any:
        return decode_body(await request.read(), request.headers.get("Content-Type"), kind)

    def answer_plain(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes
    ) -> PlainAnswer | None:
        """Answer a hot request without aiohttp, or None: not hot, let aiohttp answer it.

        For :mod:`asched.tools.sim.apiserver.front`. ``path`` has no query string; ``headers`` maps
        lower-case names to values (the first of repeated ones); ``body`` is the whole
        request body. Hot, unless a latency fault is set (that one awaits): a POST with a
        JSON body to ``.../pods/<name>/binding`` or to a collection (a create), and a PATCH
        of a named object or its subresource (the harness's node status patches, the
        scheduler's pod status patches). The work is the same functions aiohttp's path
        calls (:meth:`_bind_body`, :meth:`_binding`, :meth:`_create`, :func:`_patch_media`,
        :meth:`_patch`), so both answer the same bytes and status.
        Never raises: failures are the same ``kind: Status`` answers as :meth:`__call__`.
        """
        if self.faults.latency_ms or method not in _PLAIN_METHODS:
            return None
        content_type = headers.get("content-type")
        if content_type is None:
            return None
        media = content_type.split(";")[0].strip()
        route: routing.Route | None = None  # None: a pod's binding
        if method != "POST" or not path.endswith("/binding"):
            if path.startswith("/admin/") or path in HEALTH_PATHS or path in reviews.PATHS:
                return None
            served = self.registry.catalog
            try:
                route = routing.parse(path, served.by_gvr, served.group_versions)
            except StatusError:
                return None
            if route.spec is None or route.watch or route.subresource == "binding":
                return None
            if route.spec.custom:  # its unknown fields are warnings: headers aiohttp sends
                return None
            if method == "POST" and (route.name or media != JSON_TYPE):
                return None
            if method == "PATCH" and not route.name:
                return None
        elif media != JSON_TYPE:
            return None
        self.stats.requests += 1
        try:
            if headers.get("authorization") != self._bearer:
                raise apierrors.unauthorized()
            if route is None:
                namespace, found = self._bind_body(path, body, content_type)
                self._binding(namespace, found)
                return PlainAnswer(201, JSON_TYPE, BOUND)
            spec, namespace = route.spec, route.namespace or ""
            assert spec is not None  # checked above; mypy does not carry it
            if method == "PATCH":
                patched = self._patch(
                    spec, namespace, route, _patch_media(spec, content_type), body
                )
                return PlainAnswer(200, JSON_TYPE, patched)
            self._verb(spec, "create")
            return PlainAnswer(201, JSON_TYPE, self._create(spec, namespace, body, content_type))
        except StatusError as error:
            return PlainAnswer(error.code, JSON_TYPE, status_bytes(error))
        except Exception:
            logger.exception("unexpected failure answering %s %s", method, path)
            failure = apierrors.internal("the simulated server failed; see its log")
            return PlainAnswer(failure.code, JSON_TYPE, status_bytes(failure))

    async def _bind(self, request: web.BaseRequest, path: str) -> web.Response:
        """``POST .../namespaces/<ns>/pods/<name>/binding`` (hot path)."""
        # A scheduler's bind has no query: parse one only when there is one.
        dry_run = bool(request.query_string) and options.dry_run(request.query, "CreateOptions")
        raw = await request.read()
        namespace, found = self._bind_body(path, raw, request.headers.get("Content-Type"))
        self._binding(namespace, found, dry_run=dry_run)
        return _json(BOUND, 201)

    def _bind_body(
        self, path: str, raw: bytes, content_type: str | None
    ) -> tuple[str, binding.Binding]:
        """The namespace and the decoded Binding of a ``.../pods/<name>/binding`` POST."""
        parts = path.split("/")
        # "", "api", "v1", "namespaces", ns, "pods", name, "binding"
        if (
            len(parts) != 8
            or parts[1] != "api"
            or parts[2] != "v1"
            or parts[3] != "namespaces"
            or parts[5] != "pods"
        ):
            raise apierrors.path_not_found()
        media = (content_type or "").split(";")[0].strip().lower()
        body: Any
        if media == "application/json":  # the common case, without decode_body's checks
            try:
                body = orjson.loads(raw)
            except orjson.JSONDecodeError:
                body = decode_body(raw, content_type)  # for the real server's error message
        else:
            body = decode_body(raw, content_type)
        return parts[4], binding.decode(body, parts[6])

    def _binding(self, namespace: str, found: binding.Binding, *, dry_run: bool = False) -> None:
        """Bind (or, with ``dry_run``, check); raises StatusError (faults included)."""
        self.stats.bindings += 1
        if self.faults.bind_fails():
            self.stats.bind_faults += 1
            if self.faults.bind_error_code == 409:
                raise apierrors.conflict(
                    "pods/binding", "", found.name, "injected fault (asched sim)"
                )
            raise apierrors.internal("injected fault (asched sim)")
        lifecycle.bind(self.registry, namespace, found, dry_run=dry_run)

    def _create(
        self,
        spec: ResourceSpec,
        namespace: str,
        raw: bytes,
        content_type: str | None,
        *,
        dry_run: bool = False,
        fields: FieldCheck | None = None,
    ) -> bytes:
        """``POST`` to a collection (its verb checked already): the created object's bytes,
        answered 201."""
        entry = self.registry.create(
            spec,
            namespace,
            decode_body(raw, content_type, spec.kind),
            dry_run=dry_run,
            fields=fields,
        )
        return views.object_bytes(spec, entry)

    async def _resource(self, request: web.BaseRequest, route: routing.Route) -> web.StreamResponse:
        method = request.method
        query = request.query
        if route.spec is None:  # POST /api/v1/namespaces/<ns>/bindings
            if method != "POST":
                raise apierrors.method_not_allowed()
            dry_run = options.dry_run(query, "CreateOptions")
            found = binding.decode(await self._body(request), None)
            self._binding(route.namespace or "", found, dry_run=dry_run)
            return _json(BOUND, 201)
        spec = route.spec
        namespace = route.namespace or ""
        if not route.name:
            if method == "GET":
                watching = route.watch or options.query_bool(query, "watch")
                self._verb(spec, "watch" if watching else "list")
                selected = options.list_options(spec, query)
                if watching:
                    return await self._watch(request, spec, route.namespace, selected)
                return await self._list(request, spec, route.namespace, selected)
            if method == "POST":
                self._verb(spec, "create")
                write = options.write_options(query, "CreateOptions")
                raw = await request.read()
                content_type = request.headers.get("Content-Type")
                fields = _field_check(query, write, raw, content_type)
                created = self._create(
                    spec, namespace, raw, content_type, dry_run=write.dry_run, fields=fields
                )
                return _json(created, 201, fields.warnings)
            if method == "DELETE":
                self._verb(spec, "deletecollection")
                selected = options.list_options(spec, query)
                deleted = lifecycle.delete_collection(
                    self.registry, spec, route.namespace, selected, await _delete_options(request)
                )
                return _json(
                    views.list_bytes(
                        spec, deleted, {"resourceVersion": str(self.registry.store.rv)}
                    )
                )
            raise apierrors.method_not_allowed()
        if route.watch:
            watch_options = options.list_options(spec, query)
            pinned = selectors.parse_fields(f"metadata.name={route.name}", spec.fields)
            watch_options.fields = selectors.FieldSelector(
                watch_options.fields.terms + pinned.terms
            )
            return await self._watch(request, spec, route.namespace, watch_options)
        if route.subresource == "binding":
            raise apierrors.method_not_allowed()
        if method == "GET":
            if query.get("resourceVersion"):
                parse_rv(query["resourceVersion"])  # not a number: the real server's 500
            entry = self.registry.get(spec, namespace, route.name)
            if _wants_table(request):
                return _json(tables.table(spec, [entry], {"resourceVersion": str(entry.rv)}))
            return _json(views.object_bytes(spec, entry))
        if method == "PUT":
            write = options.write_options(query, "UpdateOptions")
            raw = await request.read()
            content_type = request.headers.get("Content-Type")
            fields = _field_check(query, write, raw, content_type)
            entry, made = self.registry.update(
                spec,
                namespace,
                route.name,
                decode_body(raw, content_type, spec.kind),
                subresource=route.subresource,
                dry_run=write.dry_run,
                fields=fields,
            )
            return _json(views.object_bytes(spec, entry), 201 if made else 200, fields.warnings)
        if method == "PATCH":
            media = _patch_media(spec, request.headers.get("Content-Type"))
            write = options.write_options(query, "PatchOptions")
            raw = await request.read()
            fields = FieldCheck(write.field_validation)
            patched = self._patch(
                spec, namespace, route, media, raw, dry_run=write.dry_run, fields=fields
            )
            return _json(patched, 200, fields.warnings)
        if method == "DELETE" and not route.subresource:
            entry, gone = lifecycle.delete(
                self.registry, spec, namespace, route.name, await _delete_options(request)
            )
            if gone and not spec.return_deleted:
                details: JSON = {"name": route.name}
                if spec.group:
                    details["group"] = spec.group
                details["kind"] = spec.resource
                details["uid"] = entry.obj["metadata"].get("uid", "")
                body = {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "details": details,
                }
                return _json(orjson.dumps(body))
            return _json(views.object_bytes(spec, entry))
        raise apierrors.method_not_allowed()

    def _patch(
        self,
        spec: ResourceSpec,
        namespace: str,
        route: routing.Route,
        media: str,
        raw: bytes,
        *,
        dry_run: bool = False,
        fields: FieldCheck | None = None,
    ) -> bytes:
        """``PATCH`` of a named object or its subresource (``media`` checked by
        :func:`_patch_media`): the patched object's bytes, answered 200."""
        entry = self.registry.patch(
            spec,
            namespace,
            route.name,
            media,
            raw,
            subresource=route.subresource,
            dry_run=dry_run,
            fields=fields,
        )
        return views.object_bytes(spec, entry)

    def _verb(self, spec: ResourceSpec, verb: str) -> None:
        if verb not in spec.verbs:
            raise apierrors.method_not_allowed()

    async def _list(
        self,
        request: web.BaseRequest,
        spec: ResourceSpec,
        namespace: str | None,
        selected: ListOptions,
    ) -> web.Response:
        wanted = selected.resource_version
        if wanted not in ("", "0") and not selected.continue_token:
            target = parse_list_rv(wanted)
            waited = 0.0  # as waitUntilFreshAndBlock: up to 3 s, then 504
            while target > self.registry.store.rv and waited < FUTURE_RV_WAIT:
                await asyncio.sleep(0.05)
                waited += 0.05
        entries, meta = self.registry.list(spec, namespace, selected)
        if _wants_table(request):
            return _json(tables.table(spec, entries, meta))
        return _json(views.list_bytes(spec, entries, meta))

    async def _watch(
        self,
        request: web.BaseRequest,
        spec: ResourceSpec,
        namespace: str | None,
        selected: ListOptions,
    ) -> web.StreamResponse:
        self.stats.watches += 1
        loop = asyncio.get_running_loop()
        store = self.registry.store
        table = self.registry.table(spec)
        query = request.query
        table_mode = _wants_table(request)
        timeout = self.settings.default_watch_timeout
        if selected.timeout_seconds is not None:
            timeout = float(selected.timeout_seconds)
        rv_text = selected.resource_version
        history: list[Event] = []
        initial: list[bytes] = []
        bookmarks = options.query_bool(query, "allowWatchBookmarks")
        sent_first = selected.send_initial_events
        if sent_first or (sent_first is None and rv_text in ("", "0")):
            # the current state as ADDED events: a watch-list (sendInitialEvents=true, what
            # v1.37 defaults a watch from "" or "0" to), or a watch of a server without it
            start_rv = store.rv
            found, _ = self.registry.list(
                spec, namespace, ListOptions(labels=selected.labels, fields=selected.fields)
            )
            initial = [_added(spec, entry, table_mode=table_mode) for entry in found]
            if sent_first and bookmarks:
                initial.append(views.bookmark_line(spec, start_rv, initial_events_end=True))
        elif rv_text in ("", "0"):  # sendInitialEvents=false: from now on, no initial state
            start_rv = store.rv
        else:
            start_rv = parse_rv(rv_text)  # a future version: events after it, when they come
            try:
                history = table.since(start_rv)
            except TooOld as exc:
                error = apierrors.expired(str(exc))
                return await _one_error(request, error)
        render: watch.Render = functools.partial(
            tables.watch_line if table_mode else views.watch_line, spec
        )
        watcher = watch.Watcher(
            render,
            namespace,
            selected.labels,
            selected.fields,
            start_rv=start_rv,
            queue_limit=self.settings.watch_queue_limit,
        )
        for line in initial:
            watcher.queue_line(line)
        for event in history:
            watcher.offer(event)
        table.subscribers.add(watcher)
        now = loop.time()
        cut = self.faults.watch_cut_after
        times = watch.StreamTimes(
            deadline=now + timeout,
            bookmark_every=self.settings.bookmark_interval if bookmarks else None,
            cut_at=now + cut if cut is not None else None,
        )
        return await watch.stream(request, spec, table, watcher, times, HEADERS)


def _patch_media(spec: ResourceSpec, content_type_header: str | None) -> str:
    """A PATCH body's media type, or the real server's 415 for one it does not take."""
    content_type = (content_type_header or "").split(";")[0].strip()
    if spec.custom and content_type not in CUSTOM_PATCH_TYPES:
        raise apierrors.StatusError(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types "
            f"include: {', '.join(CUSTOM_PATCH_TYPES)}",
        )
    if content_type not in PATCH_TYPES:
        raise apierrors.StatusError(415, "UnsupportedMediaType", "415: Unsupported Media Type", {})
    return content_type


async def _delete_options(request: web.BaseRequest) -> DeleteOptions:
    content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
    return options.delete_options(await request.read(), request.query, content_type)


def _summary(raw: bytes, limit: int = 30) -> str:
    """apimachinery's ``summarizeData``: the body's start, hex unless it looks like JSON."""
    if not raw:
        return "<empty>"
    head = raw[:limit]
    text = head.decode(errors="replace") if raw[:1] == b"{" else head.hex()
    return text + " ..." if len(raw) > limit else text


def _openapi(request: web.BaseRequest) -> web.Response:
    if "protobuf" in request.headers.get("Accept", ""):
        return web.Response(
            body=discovery.OPENAPI_V2_PROTOBUF,
            headers={"Content-Type": discovery.OPENAPI_V2_PROTOBUF_TYPE},
        )
    return _json(discovery.OPENAPI_V2_JSON)


def _added(spec: ResourceSpec, entry: Entry, *, table_mode: bool) -> bytes:
    if table_mode:
        obj = dict(entry.obj)
        return tables.initial_line(spec, obj)
    return b'{"type":"ADDED","object":' + views.object_bytes(spec, entry) + b"}\n"


async def _one_error(request: web.BaseRequest, error: StatusError) -> web.StreamResponse:
    """HTTP 200, one ERROR event, end: how a watch from a too-old version is refused."""
    response = web.StreamResponse(status=200, headers=HEADERS)
    response.enable_chunked_encoding()
    await response.prepare(request)
    await response.write(views.error_line(error.body()))
    await response.write_eof()
    return response


def decode_body(raw: bytes, content_type_header: str | None, kind: str = "") -> Any:
    """A request body by its ``Content-Type`` (JSON when absent): JSON, YAML or protobuf.

    ``kind`` names the expected object in the 400 of unparsable JSON (``Binding`` if empty).
    """
    content_type = (content_type_header or "application/json").split(";")[0].strip()
    if content_type in ("application/yaml", "application/x-yaml"):
        try:
            return files.yaml_body(raw)
        except ValueError as exc:
            raise apierrors.bad_request(f"couldn't get version/kind; {exc}") from None
    if content_type == protobuf.MEDIA_TYPE:
        try:
            return protobuf.decode(raw)
        except (protobuf.ProtobufError, UnicodeDecodeError) as exc:
            logger.debug("refusing a protobuf body: %s", exc)
            raise apierrors.unsupported_media_type(
                content_type, ["application/json", "application/yaml"]
            ) from None
    if content_type not in ("application/json", "*/*", ""):
        raise apierrors.unsupported_media_type(
            content_type, ["application/json", "application/yaml"]
        )
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise apierrors.bad_request(
            f"the object provided is unrecognized (must be of type {kind or 'Binding'}): "
            "couldn't get version/kind; json parse error: "
            f"{options.json_syntax_error(raw, exc)} ({_summary(raw)})"
        ) from None
