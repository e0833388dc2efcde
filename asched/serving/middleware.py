"""``delegated_auth``: an aiohttp middleware putting delegated authn/authz before handlers.

kube-scheduler's secure port runs every request through ``WithAuthentication`` then
``WithAuthorization`` (``k8s.io/apiserver/pkg/endpoints/filters``), with the health paths
always allowed. This is that chain for any aiohttp application (the health and metrics
server, and any other listener that serves more than probes)::

    request ─► always-allowed path? ──yes──────────────────────────────► handler
                    │ no
                    ▼
               bearer token? ──no──► 401 Unauthorized (Status JSON)
                    │ yes
                    ▼
               TokenReview ──error or not authenticated──► 401 Unauthorized
                    │ user
                    ▼
               SubjectAccessReview(path, verb) ──error──► 500 Internal Server Error
                    │                           ──not allowed──► 403 Forbidden (Status JSON)
                    ▼ allowed
                 handler

The answers are upstream's, byte for byte where they are JSON (first taken from
kube-scheduler v1.20.2's port 10259; the live test compares the 401 and 403 bodies with
kube-apiserver v1.37.2's own for its ``/metrics``, which go through the same filters)::

    401 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
         "message":"Unauthorized","reason":"Unauthorized","code":401}
    403 {... "message":"forbidden: User \\"nobody\\" cannot get path \\"/metrics\\"",
         "reason":"Forbidden","details":{},"code":403}
    500 Internal Server Error: "/metrics": <why the review failed>   (text/plain)

The verb is the HTTP method in lower case (``get``, ``head``, ``post``), as upstream's
RequestInfoFactory makes it for a non-resource URL: a ClusterRole granting ``get`` on
``/metrics`` does not grant ``head``. Every answer carries ``Cache-Control: no-cache,
private``.

Deliberate differences from upstream:

* No token is 401, not ``system:anonymous`` (asched has no anonymous authentication;
  upstream's scheduler maps it to ``system:anonymous``, which RBAC then forbids: 403).
* Always-allowed paths skip authentication as well as authorization: a probe never
  depends on the API server, even when it sends a stale token (upstream answers 401 then).
* Client certificates are not authenticated (no ``--client-ca-file``): a request with a
  client certificate and no token is 401.
* A review that fails is not retried with backoff (upstream retries the webhook a few
  times); the caller's next request asks again.

Tokens are never logged; log lines name the path, the user and the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Final

import orjson
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from asched.errors import ApiError
from asched.serving.reviews import DEFAULT_TTL_SECONDS, AccessReviewer, ReviewClient, TokenReviewer

logger = logging.getLogger(__name__)

#: Upstream's default ``--authorization-always-allow-paths`` (kube-scheduler).
ALWAYS_ALLOW: Final = ("/healthz", "/readyz", "/livez")
CACHE_CONTROL: Final = "no-cache, private"


def path_matcher(patterns: Iterable[str]) -> Callable[[str], bool]:
    """A predicate for upstream's always-allow syntax: exact paths, or ``prefix*``."""
    exact = frozenset(p for p in patterns if not p.endswith("*"))
    prefixes = tuple(p[:-1] for p in patterns if p.endswith("*"))

    def matches(path: str) -> bool:
        return path in exact or path.startswith(prefixes)

    return matches


def bearer_token(request: web.Request) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (None when absent or empty)."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


def _sanitize(text: str) -> str:
    """Upstream's ``responsewriters`` sanitizer: HTML metacharacters escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _status_json(status: int, reason: str, message: str, *, details: bool) -> web.Response:
    document: dict[str, object] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if details:
        document["details"] = {}
    document["code"] = status
    return web.Response(
        status=status,
        body=orjson.dumps(document) + b"\n",
        content_type="application/json",
        headers={"Cache-Control": CACHE_CONTROL, "X-Content-Type-Options": "nosniff"},
    )


def unauthorized() -> web.Response:
    """Upstream's 401."""
    return _status_json(401, "Unauthorized", "Unauthorized", details=False)


def forbidden(user: str, verb: str, path: str, reason: str = "") -> web.Response:
    """Upstream's 403 for a non-resource request, with the authorizer's reason if any."""
    message = f"forbidden: User {_go_quote(user)} cannot {verb} path {_go_quote(path)}"
    if reason:
        message = f"{message}: {reason}"
    return _status_json(403, "Forbidden", _sanitize(message), details=True)


def internal_error(path: str, cause: str) -> web.Response:
    """Upstream's 500 when authorization could not be decided."""
    return web.Response(
        status=500,
        text=f"Internal Server Error: {_go_quote(path)}: {cause}",
        headers={"Cache-Control": CACHE_CONTROL, "X-Content-Type-Options": "nosniff"},
    )


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the printable strings met here (JSON string syntax is the same)."""
    return orjson.dumps(text).decode()


def delegated_auth(
    client: ReviewClient,
    *,
    always_allow: Iterable[str] = ALWAYS_ALLOW,
    cache_ttl: float = DEFAULT_TTL_SECONDS,
    allow_ttl: float | None = None,
    deny_ttl: float | None = None,
    clock: Callable[[], float] | None = None,
) -> Middleware:
    """The middleware: delegated authentication and authorization through ``client``.

    Parameters
    ----------
    client : ReviewClient
        The scheduler's own :class:`~asched.api.client.KubeClient` (its identity needs
        ``system:auth-delegator``: tokenreviews and subjectaccessreviews create).
    always_allow : iterable of str
        Paths served without a token (exact, or ``prefix*``); the health paths by default.
    cache_ttl : float
        Seconds a TokenReview answer is reused, and the default of the two below.
    allow_ttl, deny_ttl : float, optional
        Seconds an allowed / a denied SubjectAccessReview decision is reused.
    clock : callable returning float, optional
        Monotonic seconds for the caches (tests give a fake one).

    Use: ``web.Application(middlewares=[delegated_auth(client)])``.
    """
    allowed_path = path_matcher(tuple(always_allow))
    tokens = TokenReviewer(client, ttl_seconds=cache_ttl, clock=clock)
    access = AccessReviewer(
        client,
        allow_ttl_seconds=cache_ttl if allow_ttl is None else allow_ttl,
        deny_ttl_seconds=cache_ttl if deny_ttl is None else deny_ttl,
        clock=clock,
    )
    return _auth_middleware(allowed_path, tokens, access)


def _auth_middleware(
    allowed_path: Callable[[str], bool], tokens: TokenReviewer, access: AccessReviewer
) -> Middleware:
    """The middleware of :func:`delegated_auth`: the always-allowed paths straight to the
    handler; every other request authenticated through ``tokens`` then authorized
    through ``access`` before it reaches the handler."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path
        if allowed_path(path):
            return await handler(request)
        token = bearer_token(request)
        if token is None:
            return unauthorized()
        try:
            user = await tokens.authenticate(token)
        except ApiError as exc:
            logger.error("Unable to authenticate the request to %s: %s", path, exc)
            return unauthorized()
        if user is None:
            logger.debug("Unable to authenticate the request to %s: invalid bearer token", path)
            return unauthorized()
        verb = request.method.lower()
        try:
            decision = await access.authorize(user, path, verb)
        except ApiError as exc:
            logger.error("Unable to authorize %s %s for %s: %s", verb, path, user.name, exc)
            return internal_error(path, str(exc))
        if not decision.allowed:
            logger.debug("Forbidden: %r, Reason: %r (user %s)", path, decision.reason, user.name)
            return forbidden(user.name, verb, path, decision.reason)
        response = await handler(request)
        response.headers.setdefault("Cache-Control", CACHE_CONTROL)
        return response

    return middleware
