"""List query parameters: decoding (400) and ``ValidateListOptions`` (422), as v1.37.2 does them."""

from __future__ import annotations

import pytest

from asched.tools.backends.rest import pods_path

MATCH = "resourceVersionMatch"
FORBIDDEN_WITHOUT_RV = "resourceVersionMatch is forbidden unless resourceVersion is provided"
UNSUPPORTED_BOGUS = 'Unsupported value: "bogus": supported values: "Exact", "NotOlderThan", ""'


def _forbidden(why: str) -> dict[str, str]:
    return {"reason": "FieldValueForbidden", "message": f"Forbidden: {why}", "field": MATCH}


BOGUS = {"reason": "FieldValueNotSupported", "message": UNSUPPORTED_BOGUS, "field": MATCH}
SEND_NEEDS_MATCH = "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"


@pytest.mark.parametrize(
    ("params", "causes"),
    [
        pytest.param(
            {MATCH: "bogus"},
            [_forbidden(FORBIDDEN_WITHOUT_RV), BOGUS],
            id="bogus, without a resourceVersion",
        ),
        pytest.param({MATCH: "bogus", "resourceVersion": "0"}, [BOGUS], id="bogus"),
        pytest.param(
            {MATCH: "Exact"}, [_forbidden(FORBIDDEN_WITHOUT_RV)], id="Exact without a version"
        ),
        pytest.param(
            {MATCH: "Exact", "resourceVersion": "0"},
            [_forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')],
            id="Exact at version 0",
        ),
        pytest.param(
            {MATCH: "NotOlderThan", "resourceVersion": "1", "continue": "x"},
            [_forbidden("resourceVersionMatch is forbidden when continue is provided")],
            id="with continue",
        ),
        pytest.param(
            {MATCH: "NotOlderThan", "resourceVersion": "0", "watch": "true"},
            [
                _forbidden(
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                    "provided"
                )
            ],
            id="on a watch",
        ),
        # sendInitialEvents (the WatchList feature, on in v1.37): NotOlderThan on a watch only
        pytest.param(
            {"sendInitialEvents": "true", "watch": "true"},
            [_forbidden(SEND_NEEDS_MATCH)],
            id="sendInitialEvents without a match",
        ),
        pytest.param(
            {"sendInitialEvents": "yes", "watch": "true"},
            [_forbidden(SEND_NEEDS_MATCH)],
            id="sendInitialEvents of any value",
        ),
        pytest.param(
            {"sendInitialEvents": "true", MATCH: "Exact", "watch": "true"},
            [
                _forbidden(SEND_NEEDS_MATCH),
                {
                    "reason": "FieldValueNotSupported",
                    "message": 'Unsupported value: "Exact": supported values: "NotOlderThan"',
                    "field": MATCH,
                },
            ],
            id="sendInitialEvents with Exact",
        ),
        pytest.param(
            {"sendInitialEvents": "false"},
            [
                {
                    "reason": "FieldValueForbidden",
                    "message": "Forbidden: sendInitialEvents is forbidden for list",
                    "field": "sendInitialEvents",
                }
            ],
            id="sendInitialEvents on a list",
        ),
    ],
)
async def test_invalid_resource_version_match_is_422(cluster, params, causes):
    answer = await cluster.rest.request(
        "GET", pods_path(cluster.namespace), params=params, check=False
    )

    # The message: every cause, joined as Go's aggregate ("[a, b]" when more than one).
    texts = [f"{cause['field']}: {cause['message']}" for cause in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    assert (answer.status, answer.body["reason"]) == (422, "Invalid")
    assert answer.body["message"] == f'ListOptions.meta.k8s.io "" is invalid: {joined}'
    assert answer.body["details"] == {
        "group": "meta.k8s.io",
        "kind": "ListOptions",
        "causes": causes,
    }


async def test_resource_version_match_not_older_than_lists(cluster):
    await cluster.create_pod("p")

    listed = await cluster.rest.list(
        pods_path(cluster.namespace), resource_version="0", resource_version_match="NotOlderThan"
    )

    assert [pod["metadata"]["name"] for pod in listed["items"]] == ["p"]


async def test_invalid_resource_version_match_also_refuses_deletecollection(cluster):
    await cluster.create_pod("p")

    answer = await cluster.rest.request(
        "DELETE", pods_path(cluster.namespace), params={MATCH: "bogus"}, check=False
    )

    assert (answer.status, answer.body["details"]["kind"]) == (422, "ListOptions")
    assert len((await cluster.rest.list(pods_path(cluster.namespace)))["items"]) == 1


@pytest.mark.parametrize(
    ("params", "message"),
    [
        pytest.param(
            {"limit": "abc"}, 'strconv.ParseInt: parsing "abc": invalid syntax', id="limit"
        ),
        pytest.param(
            {"limit": ""}, 'strconv.ParseInt: parsing "": invalid syntax', id="empty limit"
        ),
        pytest.param(
            {"limit": " 5"},
            'strconv.ParseInt: parsing " 5": invalid syntax',
            id="limit with a space",
        ),
        pytest.param(
            {"limit": "99999999999999999999"},
            'strconv.ParseInt: parsing "99999999999999999999": value out of range',
            id="limit past int64",
        ),
        pytest.param(
            {"timeoutSeconds": "abc"},
            'strconv.ParseInt: parsing "abc": invalid syntax',
            id="timeoutSeconds on a list",
        ),
        pytest.param(
            {"watch": "1", "timeoutSeconds": "abc"},
            'strconv.ParseInt: parsing "abc": invalid syntax',
            id="timeoutSeconds on a watch",
        ),
    ],
)
async def test_an_integer_parameter_that_does_not_parse_is_400(cluster, params, message):
    answer = await cluster.rest.request(
        "GET", pods_path(cluster.namespace), params=params, check=False
    )

    assert (answer.status, answer.body["reason"], answer.body["message"]) == (
        400,
        "BadRequest",
        message,
    )


@pytest.mark.parametrize(
    ("value", "watches"),
    [
        pytest.param("yes", True, id="any word is true"),
        pytest.param("", True, id="the empty string is true"),
        pytest.param("False", False, id="false in any case"),
        pytest.param("0", False, id="zero"),
    ],
)
async def test_the_watch_parameter_is_a_go_boolean(cluster, value, watches):
    await cluster.create_pod("p")

    answer = await cluster.rest.request(
        "GET",
        pods_path(cluster.namespace),
        params={"watch": value, "timeoutSeconds": "1"},
        check=False,
    )

    # A watch answers one ADDED line for the one pod, then ends after timeoutSeconds.
    assert answer.status == 200
    if watches:
        assert (answer.body["type"], answer.body["object"]["metadata"]["name"]) == ("ADDED", "p")
    else:
        assert answer.body["kind"] == "PodList"


async def test_get_with_a_resource_version_that_is_not_a_number_is_a_plain_500(cluster):
    await cluster.create_pod("p")

    answer = await cluster.rest.request(
        "GET", pods_path(cluster.namespace, "p"), params={"resourceVersion": "abc"}, check=False
    )

    assert (answer.status, answer.body.get("reason"), answer.body["message"]) == (
        500,
        None,
        'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    )


@pytest.mark.parametrize(
    "limit",
    [
        pytest.param("+5", id="a plus sign"),
        pytest.param("0" * 30 + "5", id="thirty leading zeros"),
    ],
)
async def test_integers_parse_as_go_parses_them(cluster, limit):
    for name in ("a", "b", "c", "d", "e", "f"):
        await cluster.create_pod(name)

    listed = await cluster.rest.list(pods_path(cluster.namespace), limit=limit)

    assert len(listed["items"]) == 5  # limit 5 of 6 pods


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("9" * 25, id="past uint64"),  # > 2**64 - 1 (20 digits)
        pytest.param("abc", id="not a number"),
        pytest.param("-1", id="negative"),
    ],
)
async def test_a_list_resource_version_that_does_not_parse_is_400(cluster, value):
    # a LIST answers 400 since storage.ValidateListOptions (v1.20: a plain 500, as a GET
    # still does)
    answer = await cluster.rest.request(
        "GET", pods_path(cluster.namespace), params={"resourceVersion": value}, check=False
    )

    why = "value out of range" if value.isdigit() else "invalid syntax"
    assert (answer.status, answer.body.get("reason"), answer.body["message"]) == (
        400,
        "BadRequest",
        f'invalid resource version: resourceVersion: Invalid value: "{value}": '
        f'strconv.ParseUint: parsing "{value}": {why}',
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        pytest.param(
            {"continue": "bogus"},
            "invalid continue token: continue key is not valid: illegal base64 data at input "
            "byte 4",
            id="not base64",
        ),
        pytest.param(
            {"continue": "bogus", "resourceVersion": "5"},
            "invalid continue token: continue key is not valid: illegal base64 data at input "
            "byte 4",
            id="the token is read before the resourceVersion",
        ),
        pytest.param(
            # base64url of {"v":"meta.k8s.io/v2","rv":5,"start":"a"}
            {"continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjIiLCJydiI6NSwic3RhcnQiOiJhIn0"},
            "invalid continue token: continue key is not valid: server does not recognize this "
            "encoded version meta.k8s.io/v2",
            id="another token version",
        ),
    ],
)
async def test_a_continue_token_that_does_not_decode_is_400(cluster, params, message):
    answer = await cluster.rest.request(
        "GET", pods_path(cluster.namespace), params={"limit": "1", **params}, check=False
    )

    assert (answer.status, answer.body.get("reason"), answer.body["message"]) == (
        400,
        "BadRequest",
        message,
    )


async def test_a_continue_token_with_a_resource_version_is_400(cluster):
    for name in ("a", "b"):
        await cluster.create_pod(name)
    first = await cluster.rest.list(pods_path(cluster.namespace), limit=1)

    answer = await cluster.rest.request(
        "GET",
        pods_path(cluster.namespace),
        params={"continue": first["metadata"]["continue"], "resourceVersion": "5"},
        check=False,
    )

    assert (answer.status, answer.body["message"]) == (
        400,
        "specifying resource version is not allowed when using continue",
    )
