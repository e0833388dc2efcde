"""An in-memory API server with only the two review endpoints, and a fake monotonic clock.

:class:`ReviewApi` answers TokenReviews from a token table and SubjectAccessReviews from a
set of grants, as kube-apiserver's static token file and RBAC would (checked on the real
server by tests/integration/test_secure_serving_live.py); it records every request, and can
be made unreachable. The unit tests count its requests to see what the caches saved.
"""

from __future__ import annotations

from typing import Any

import pytest

from asched.api.client import Response
from asched.errors import ApiUnavailable
from asched.serving.reviews import ACCESS_REVIEWS, TOKEN_REVIEWS


class FakeClock:
    """Monotonic seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ReviewApi:
    """``tokens``: token -> TokenReview ``status.user``; ``grants``: (user, verb, path)."""

    def __init__(self) -> None:
        self.tokens: dict[str, dict[str, Any]] = {}
        self.grants: set[tuple[str, str, str]] = set()
        self.reasons: dict[str, str] = {}  # user -> reason of a denial
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.unreachable: set[str] = set()  # review paths whose requests fail in transport
        self.refusals: dict[str, Response] = {}  # review path -> a non-2xx answer

    def add_user(self, token: str, name: str, *groups: str, uid: str = "") -> None:
        user: dict[str, Any] = {"username": name, "groups": [*groups, "system:authenticated"]}
        if uid:
            user["uid"] = uid
        self.tokens[token] = user

    def count(self, path: str) -> int:
        return sum(1 for sent, _ in self.requests if sent == path)

    async def request(
        self, method: str, path: str, *, body: Any = None, request_timeout: float | None = None
    ) -> Response:
        assert method == "POST"
        self.requests.append((path, body))
        if path in self.unreachable:
            raise ApiUnavailable(method, path, "https://10.0.0.1:6443", "ClientConnectorError")
        if path in self.refusals:
            return self.refusals[path]
        spec = body["spec"]
        if path == TOKEN_REVIEWS:
            user = self.tokens.get(spec["token"])
            if user is None:
                status: dict[str, Any] = {"authenticated": False, "error": "invalid bearer token"}
            else:
                status = {"authenticated": True, "user": user}
        else:
            assert path == ACCESS_REVIEWS
            attributes = spec["nonResourceAttributes"]
            allowed = (spec["user"], attributes["verb"], attributes["path"]) in self.grants
            status = {"allowed": allowed}
            if not allowed and spec["user"] in self.reasons:
                status["reason"] = self.reasons[spec["user"]]
        return Response(201, {**body, "status": status})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def api() -> ReviewApi:
    return ReviewApi()
