"""The reviewers: what they send, what they cache and for how long (fake clock), errors.

Caching follows upstream's defaults: a TokenReview answer 10 s (valid or not), an allowed
and a denied SubjectAccessReview 10 s each; a failed review is never cached.
"""

from __future__ import annotations

import pytest

from asched.api.client import Response
from asched.errors import ApiError, ApiUnavailable
from asched.serving.reviews import (
    ACCESS_REVIEWS,
    TOKEN_REVIEWS,
    AccessReviewer,
    Decision,
    TokenReviewer,
    UserInfo,
)

READER = UserInfo("prometheus", groups=("system:authenticated",))


async def test_a_token_review_is_sent_and_its_user_read(api, clock) -> None:
    api.tokens["t0k3n"] = {
        "username": "system:serviceaccount:monitoring:prometheus",
        "uid": "4f1c",
        "groups": ["system:serviceaccounts", "system:authenticated"],
        "extra": {"authentication.kubernetes.io/pod-name": ["prometheus-0"]},
    }
    user = await TokenReviewer(api, clock=clock).authenticate("t0k3n")

    assert api.requests == [
        (
            TOKEN_REVIEWS,
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenReview",
                "spec": {"token": "t0k3n"},
            },
        )
    ]
    assert user == UserInfo(
        name="system:serviceaccount:monitoring:prometheus",
        uid="4f1c",
        groups=("system:serviceaccounts", "system:authenticated"),
        extra=(("authentication.kubernetes.io/pod-name", ("prometheus-0",)),),
    )


@pytest.mark.parametrize(
    ("valid", "later", "reviews"),
    [
        pytest.param(True, 9.9, 1, id="valid, within 10 s: cached"),
        # the answer expires at 10 s: the request at 10 s asks again
        pytest.param(True, 10.0, 2, id="valid, at 10 s: asked again"),
        pytest.param(False, 9.9, 1, id="invalid, within 10 s: cached too"),
        pytest.param(False, 10.0, 2, id="invalid, at 10 s: asked again"),
    ],
)
async def test_token_answers_are_cached_for_the_ttl(
    api, clock, valid: bool, later: float, reviews: int
) -> None:
    if valid:
        api.add_user("t0k3n", "prometheus")
    reviewer = TokenReviewer(api, ttl_seconds=10.0, clock=clock)
    first = await reviewer.authenticate("t0k3n")
    clock.now += later
    second = await reviewer.authenticate("t0k3n")

    assert api.count(TOKEN_REVIEWS) == reviews
    assert first == second
    assert (first is not None) is valid


async def test_two_tokens_are_two_reviews(api, clock) -> None:
    api.add_user("token-a", "a")
    api.add_user("token-b", "b")
    reviewer = TokenReviewer(api, clock=clock)
    users = [await reviewer.authenticate(t) for t in ("token-a", "token-b", "token-a")]
    assert [u.name if u else None for u in users] == ["a", "b", "a"]
    assert api.count(TOKEN_REVIEWS) == 2


async def test_a_failed_token_review_raises_and_is_not_cached(api, clock) -> None:
    api.add_user("t0k3n", "prometheus")
    api.unreachable.add(TOKEN_REVIEWS)
    reviewer = TokenReviewer(api, clock=clock)
    with pytest.raises(ApiUnavailable):
        await reviewer.authenticate("t0k3n")

    api.unreachable.clear()  # the API server is back: the next request is answered at once
    assert await reviewer.authenticate("t0k3n") == UserInfo(
        "prometheus", groups=("system:authenticated",)
    )
    assert api.count(TOKEN_REVIEWS) == 2


async def test_a_refused_token_review_names_the_review_and_never_the_token(api, clock) -> None:
    # a 403 (asched lacks system:auth-delegator) whose message happens to echo the token
    message = 'tokenreviews is forbidden: User "asched" cannot create t0k3n'
    api.refusals[TOKEN_REVIEWS] = Response(403, {"reason": "Forbidden", "message": message})
    with pytest.raises(ApiError) as raised:
        await TokenReviewer(api, clock=clock).authenticate("t0k3n")
    assert raised.value.status == 403
    assert "t0k3n" not in str(raised.value)
    assert "TokenReview" in str(raised.value)


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(Response(201, None), id="no body"),
        pytest.param(Response(201, {"kind": "TokenReview"}), id="no status"),
        pytest.param(Response(201, ["a list"]), id="not an object"),
    ],
)
async def test_a_malformed_token_review_is_an_error(api, clock, answer: Response) -> None:
    api.refusals[TOKEN_REVIEWS] = answer
    with pytest.raises(ApiError, match="TokenReview: the answer has no status"):
        await TokenReviewer(api, clock=clock).authenticate("t0k3n")


async def test_an_access_review_asks_about_the_path_and_verb_as_the_user(api, clock) -> None:
    user = UserInfo(
        "system:serviceaccount:monitoring:prometheus",
        uid="4f1c",
        groups=("system:serviceaccounts", "system:authenticated"),
        extra=(("scopes", ("a", "b")),),
    )
    await AccessReviewer(api, clock=clock).authorize(user, "/metrics", "get")

    assert api.requests == [
        (
            ACCESS_REVIEWS,
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": {
                    "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
                    "user": "system:serviceaccount:monitoring:prometheus",
                    "groups": ["system:serviceaccounts", "system:authenticated"],
                    "uid": "4f1c",
                    "extra": {"scopes": ["a", "b"]},
                },
            },
        )
    ]


@pytest.mark.parametrize(
    ("granted", "allow_ttl", "deny_ttl", "later", "reviews"),
    [
        pytest.param(True, 10.0, 10.0, 9.9, 1, id="allowed, within its TTL: cached"),
        pytest.param(True, 10.0, 10.0, 10.0, 2, id="allowed, at its TTL: asked again"),
        pytest.param(False, 10.0, 10.0, 9.9, 1, id="denied, within its TTL: cached"),
        pytest.param(False, 10.0, 10.0, 10.0, 2, id="denied, at its TTL: asked again"),
        # the two TTLs are separate: a 2 s deny TTL is over at 5 s, a 10 s allow TTL is not
        pytest.param(True, 10.0, 2.0, 5.0, 1, id="allow TTL 10 s, deny TTL 2 s: allowed kept"),
        pytest.param(False, 10.0, 2.0, 5.0, 2, id="allow TTL 10 s, deny TTL 2 s: denied gone"),
        pytest.param(True, 2.0, 10.0, 5.0, 2, id="allow TTL 2 s, deny TTL 10 s: allowed gone"),
        pytest.param(False, 2.0, 10.0, 5.0, 1, id="allow TTL 2 s, deny TTL 10 s: denied kept"),
    ],
)
async def test_decisions_are_cached_for_their_own_ttl(
    api, clock, granted: bool, allow_ttl: float, deny_ttl: float, later: float, reviews: int
) -> None:
    if granted:
        api.grants.add(("prometheus", "get", "/metrics"))
    reviewer = AccessReviewer(
        api, allow_ttl_seconds=allow_ttl, deny_ttl_seconds=deny_ttl, clock=clock
    )
    first = await reviewer.authorize(READER, "/metrics", "get")
    clock.now += later
    second = await reviewer.authorize(READER, "/metrics", "get")

    assert first == second == Decision(allowed=granted)
    assert api.count(ACCESS_REVIEWS) == reviews


async def test_a_grant_is_seen_once_the_denial_expires(api, clock) -> None:
    reviewer = AccessReviewer(api, clock=clock)
    assert not (await reviewer.authorize(READER, "/metrics", "get")).allowed
    api.grants.add(("prometheus", "get", "/metrics"))  # kubectl create clusterrolebinding ...
    clock.now += 9.9
    assert not (await reviewer.authorize(READER, "/metrics", "get")).allowed  # still cached
    clock.now += 0.1  # 10 s after the denial
    assert (await reviewer.authorize(READER, "/metrics", "get")).allowed


async def test_decisions_are_per_user_path_and_verb(api, clock) -> None:
    api.grants.add(("prometheus", "get", "/metrics"))
    reviewer = AccessReviewer(api, clock=clock)
    other = UserInfo("nobody")
    asked = [
        (READER, "/metrics", "get"),
        (READER, "/metrics", "head"),
        (READER, "/debug", "get"),
        (other, "/metrics", "get"),
        (READER, "/metrics", "get"),  # the first again: cached
    ]
    allowed = [(await reviewer.authorize(*question)).allowed for question in asked]
    assert allowed == [True, False, False, False, True]
    assert api.count(ACCESS_REVIEWS) == 4


async def test_a_denial_keeps_its_reason(api, clock) -> None:
    api.reasons["nobody"] = "no RBAC policy matched"
    decision = await AccessReviewer(api, clock=clock).authorize(
        UserInfo("nobody"), "/metrics", "get"
    )
    assert decision == Decision(allowed=False, reason="no RBAC policy matched")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param(
            Response(500, {"reason": "InternalError", "message": "etcd timeout"}),
            "500 InternalError: SubjectAccessReview: etcd timeout",
            id="refused",
        ),
        pytest.param(
            Response(201, {"status": {"allowed": True, "denied": True}}),
            "SubjectAccessReview: both allowed and denied",
            id="allowed and denied",
        ),
        pytest.param(
            Response(201, {}), "SubjectAccessReview: the answer has no status", id="no status"
        ),
    ],
)
async def test_a_failed_access_review_raises_and_is_not_cached(
    api, clock, answer: Response, message: str
) -> None:
    api.refusals[ACCESS_REVIEWS] = answer
    reviewer = AccessReviewer(api, clock=clock)
    with pytest.raises(ApiError) as raised:
        await reviewer.authorize(READER, "/metrics", "get")
    assert message in str(raised.value)

    del api.refusals[ACCESS_REVIEWS]
    assert not (await reviewer.authorize(READER, "/metrics", "get")).allowed
    assert api.count(ACCESS_REVIEWS) == 2
