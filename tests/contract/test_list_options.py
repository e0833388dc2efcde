"""List query parameters: decoding (400) and ``ValidateListOptions`` (422), as v1.20.2 does them."""

from __future__ import annotations

import pytest

from asched.backends.rest import pods_path

MATCH = "resourceVersionMatch"
FORBIDDEN_WITHOUT_RV = "resourceVersionMatch is forbidden unless resourceVersion is provided"
UNSUPPORTED_BOGUS = 'Unsupported value: "bogus": supported values: "Exact", "NotOlderThan", ""'


def _forbidden(why: str) -> dict[str, str]:
    return {"reason": "FieldValueForbidden", "message": f"Forbidden: {why}", "field": MATCH}


BOGUS = {"reason": "FieldValueNotSupported", "message": UNSUPPORTED_BOGUS, "field": MATCH}


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
            [_forbidden("resourceVersionMatch is forbidden for watch")],
            id="on a watch",
        ),
    ],
)
async def test_invalid_resource_version_match_is_422(cluster, params, causes):
    answer = await cluster.rest.request(
        "GET", pods_path(cluster.namespace), params=params, check=False
    )

    # The message: every cause, joined as Go's aggregate ("[a, b]" when more than one).
    texts = [f"{MATCH}: {cause['message']}" for cause in causes]
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


async def test_a_resource_version_past_uint64_is_a_plain_500(cluster):
    rv = "9" * 25  # > 2**64 - 1 (20 digits)

    answer = await cluster.rest.request(
        "GET", pods_path(cluster.namespace), params={"resourceVersion": rv}, check=False
    )

    assert (answer.status, answer.body.get("reason"), answer.body["message"]) == (
        500,
        None,
        f'resourceVersion: Invalid value: "{rv}": strconv.ParseUint: parsing "{rv}": '
        "value out of range",
    )
