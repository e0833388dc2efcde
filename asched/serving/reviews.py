"""Delegated authentication and authorization: TokenReview and SubjectAccessReview, cached.

kube-scheduler does not judge a bearer token or a permission itself: it asks the API server
with its own credentials (``k8s.io/apiserver``'s DelegatingAuthenticator and Authorizer).
So does asched, through its :class:`~asched.api.client.KubeClient`:

* :class:`TokenReviewer` POSTs ``authentication.k8s.io/v1`` TokenReviews. The answer, a
  user or "not authenticated", is cached for ``ttl_seconds`` (upstream's
  ``--authentication-token-webhook-cache-ttl``, 10 s), keyed by the token's SHA-256 digest.
* :class:`AccessReviewer` POSTs ``authorization.k8s.io/v1`` SubjectAccessReviews for a
  non-resource request (``nonResourceAttributes{path, verb}``) as the reviewed user (name,
  uid, groups, extra). Allowed decisions are cached for ``allow_ttl_seconds``, denied ones
  (and "no opinion", which is a denial here) for ``deny_ttl_seconds`` (10 s each upstream).

A review the API server cannot answer (unreachable, a non-2xx status such as the 403 of a
missing ``system:auth-delegator`` binding, a malformed answer) raises
:class:`~asched.errors.ApiError` and is not cached: the next request asks again. The caches
are bounded LRUs (:mod:`asched.serving.cache`). Tokens are never logged nor put in an error
message; the cache holds digests, not tokens.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from asched.api.client import Response, api_error
from asched.errors import ApiError
from asched.serving.cache import ExpiringCache

TOKEN_REVIEWS: Final = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS: Final = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
#: Upstream's defaults (kube-scheduler's --authentication-token-webhook-cache-ttl,
#: --authorization-webhook-cache-authorized-ttl / -unauthorized-ttl), in seconds.
DEFAULT_TTL_SECONDS: Final = 10.0
#: Bounds of the caches (upstream's authorization webhook keeps 8192 decisions).
MAX_TOKENS: Final = 4096
MAX_DECISIONS: Final = 8192
#: A review that takes longer is a failure, in seconds (upstream's webhook timeout is 10 s
#: too; a scrape times out after 10 s by default).
REVIEW_TIMEOUT_SECONDS: Final = 10.0


class ReviewClient(Protocol):
    """What the reviewers need of :class:`~asched.api.client.KubeClient`."""

    async def request(
        self, method: str, path: str, *, body: Any = ..., request_timeout: float | None = ...
    ) -> Response:
        """Send a request; return its status and parsed JSON body."""
        ...


@dataclass(frozen=True, slots=True)
class UserInfo:
    """Who a token belongs to, as the TokenReview said (hashable: it keys decisions)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def from_review(cls, user: Mapping[str, Any]) -> UserInfo:
        """From a TokenReview's ``status.user``."""
        extra = user.get("extra") or {}
        return cls(
            name=str(user.get("username", "")),
            uid=str(user.get("uid", "")),
            groups=tuple(str(group) for group in user.get("groups") or ()),
            extra=tuple(
                sorted(
                    (str(key), tuple(str(v) for v in values or ())) for key, values in extra.items()
                )
            ),
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """A SubjectAccessReview's answer: ``allowed``, and the authorizer's ``reason`` (may be empty)."""

    allowed: bool
    reason: str = ""


def _status(response: Response, what: str) -> Mapping[str, Any]:
    """The ``status`` of a created review; ApiError for a refusal or a malformed answer."""
    if not response.ok:
        raise api_error(response.status, response.body, what)
    body = response.body
    status = body.get("status") if isinstance(body, Mapping) else None
    if not isinstance(status, Mapping):
        raise ApiError(response.status, "Invalid", f"{what}: the answer has no status")
    return status


def digest(token: str) -> bytes:
    """The cache key of ``token`` (a SHA-256 digest: the token itself is never kept)."""
    return hashlib.sha256(token.encode()).digest()


@dataclass
class TokenReviewer:
    """Bearer token -> :class:`UserInfo` (None: not authenticated), via cached TokenReviews."""

    client: ReviewClient
    ttl_seconds: float = DEFAULT_TTL_SECONDS
    clock: Callable[[], float] | None = None
    max_entries: int = MAX_TOKENS
    _cache: ExpiringCache[bytes, UserInfo | None] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._cache = ExpiringCache(self.max_entries, self.clock)

    async def authenticate(self, token: str) -> UserInfo | None:
        """The user ``token`` authenticates as; None when the API server says it does not.

        Raises
        ------
        ApiError
            The review could not be made (never cached; the message holds no token).
        """
        key = digest(token)
        found, cached = self._cache.get(key)
        if found:
            return cached
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        try:
            response = await self.client.request(
                "POST", TOKEN_REVIEWS, body=body, request_timeout=REVIEW_TIMEOUT_SECONDS
            )
            status = _status(response, "TokenReview")
        except ApiError as exc:
            if token in str(exc):  # defensive: no error text may carry the token
                raise ApiError(exc.status, exc.reason, "TokenReview failed") from None
            raise
        user_json = status.get("user")
        if status.get("authenticated") is True and isinstance(user_json, Mapping):
            user: UserInfo | None = UserInfo.from_review(user_json)
        else:
            user = None
        self._cache.put(key, user, self.ttl_seconds)
        return user


@dataclass
class AccessReviewer:
    """(user, path, verb) -> :class:`Decision`, via cached SubjectAccessReviews."""

    client: ReviewClient
    allow_ttl_seconds: float = DEFAULT_TTL_SECONDS
    deny_ttl_seconds: float = DEFAULT_TTL_SECONDS
    clock: Callable[[], float] | None = None
    max_entries: int = MAX_DECISIONS
    _cache: ExpiringCache[tuple[UserInfo, str, str], Decision] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._cache = ExpiringCache(self.max_entries, self.clock)

    async def authorize(self, user: UserInfo, path: str, verb: str) -> Decision:
        """May ``user`` do ``verb`` (lower case: ``get``, ``head``...) on the URL ``path``?

        Raises
        ------
        ApiError
            The review could not be made, or says both allowed and denied (not cached).
        """
        key = (user, path, verb)
        found, decision = self._cache.get(key)
        if found and decision is not None:
            return decision
        spec: dict[str, Any] = {
            "nonResourceAttributes": {"path": path, "verb": verb},
            "user": user.name,
            "groups": list(user.groups),
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {key: list(values) for key, values in user.extra}
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": spec,
        }
        response = await self.client.request(
            "POST", ACCESS_REVIEWS, body=body, request_timeout=REVIEW_TIMEOUT_SECONDS
        )
        status = _status(response, "SubjectAccessReview")
        allowed, denied = status.get("allowed") is True, status.get("denied") is True
        if allowed and denied:
            raise ApiError(
                response.status, "Invalid", "SubjectAccessReview: both allowed and denied"
            )
        decision = Decision(allowed=allowed, reason=str(status.get("reason", "")))
        self._cache.put(key, decision, self.allow_ttl_seconds if allowed else self.deny_ttl_seconds)
        return decision
