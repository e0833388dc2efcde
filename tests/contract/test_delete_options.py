"""DeleteOptions, from a body or from the query: how kube-apiserver v1.37.2 decodes and checks them.

A body is decoded by ``sigs.k8s.io/json`` (encoding/json's case-sensitive fork) into the Go
struct, and any failure there is a 400 BadRequest with encoding/json's message (v1.20 decoded
with json-iterator and answered a plain 500); the query goes through the parameter codec (400).
Every refused DELETE leaves the pod in place.
"""

from __future__ import annotations

import orjson
import pytest

from asched.tools.backends.rest import pods_path

from ._support import send_raw

UNSUPPORTED_POLICY = (
    'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": '
    'supported values: "Foreground", "Background", "Orphan", "nil"'
)
TYPE_META = (
    'Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)


async def _still_there(cluster) -> None:
    pod = await cluster.rest.get(pods_path(cluster.namespace, "p"))
    assert "deletionTimestamp" not in pod["metadata"]


UNMARSHAL = "json: cannot unmarshal"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            {"gracePeriodSeconds": "abc"},
            f"{UNMARSHAL} string into Go struct field DeleteOptions.gracePeriodSeconds of type "
            "int64",
            id="grace a string",
        ),
        pytest.param(
            {"gracePeriodSeconds": 1.5},
            f"{UNMARSHAL} number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of "
            "type int64",
            id="grace a fraction",
        ),
        pytest.param(
            {"gracePeriodSeconds": True},
            f"{UNMARSHAL} bool into Go struct field DeleteOptions.gracePeriodSeconds of type int64",
            id="grace a boolean",
        ),
        pytest.param(
            {"preconditions": "x"},
            f"{UNMARSHAL} string into Go struct field DeleteOptions.preconditions of type "
            "v1.Preconditions",
            id="preconditions a string",
        ),
        pytest.param(
            {"preconditions": {"uid": 5}},
            f"{UNMARSHAL} number into Go struct field Preconditions.preconditions.uid of type "
            "types.UID",
            id="precondition uid a number",
        ),
        pytest.param(
            {"orphanDependents": "yes"},
            f"{UNMARSHAL} string into Go struct field DeleteOptions.orphanDependents of type bool",
            id="orphanDependents a string",
        ),
        pytest.param(
            {"dryRun": "All"},
            f"{UNMARSHAL} string into Go struct field DeleteOptions.dryRun of type []string",
            id="dryRun a string",
        ),
        pytest.param(
            {"dryRun": [5]},
            f"{UNMARSHAL} number into Go struct field DeleteOptions.dryRun of type string",
            id="dryRun an item a number",
        ),
        pytest.param(
            {"propagationPolicy": 5},
            f"{UNMARSHAL} number into Go struct field DeleteOptions.propagationPolicy of type "
            "v1.DeletionPropagation",
            id="policy a number",
        ),
        pytest.param(
            # the first error in the document's order, not the struct's
            {"orphanDependents": "yes", "gracePeriodSeconds": "abc"},
            f"{UNMARSHAL} string into Go struct field DeleteOptions.orphanDependents of type bool",
            id="two errors: the first in the body",
        ),
        pytest.param(
            [1, 2],
            f"couldn't get version/kind; json parse error: {UNMARSHAL} array into {TYPE_META}",
            id="an array",
        ),
        pytest.param(
            {"kind": 5},
            f"couldn't get version/kind; json parse error: {UNMARSHAL} number into Go struct "
            "field .kind of type string",
            id="kind a number",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "Pod"},
            'no kind "Pod" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"',
            id="another kind",
        ),
    ],
)
async def test_a_body_that_does_not_decode_is_400(cluster, body, message):
    await cluster.create_pod("p", termination_grace_period_seconds=30)

    answer = await cluster.rest.request(
        "DELETE", pods_path(cluster.namespace, "p"), body=body, check=False
    )

    assert (answer.status, answer.body.get("reason"), answer.body["message"]) == (
        400,
        "BadRequest",
        message,
    )
    await _still_there(cluster)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(b"{", "unexpected end of JSON input", id="truncated"),
        pytest.param(b"xyz", "invalid character 'x' looking for beginning of value", id="not JSON"),
        pytest.param(b"   ", "unexpected end of JSON input", id="only whitespace"),
        pytest.param(
            b'{"gracePeriodSeconds": 5,}',
            "invalid character '}' looking for beginning of object key string",
            id="a trailing comma",
        ),
        pytest.param(
            b'{"dryRun": ["All"]}{', "invalid character '{' after top-level value", id="two values"
        ),
        pytest.param(
            b'{"gracePeriodSeconds": 99999999999999999999}',
            f"{UNMARSHAL} number 99999999999999999999 into Go struct field "
            "DeleteOptions.gracePeriodSeconds of type int64",
            id="grace past int64",
        ),
    ],
)
async def test_a_body_that_is_not_json_is_400(cluster, raw, message):
    await cluster.create_pod("p")

    status, body = await send_raw(
        cluster.kubeconfig, "DELETE", pods_path(cluster.namespace, "p"), raw
    )

    if message.startswith(UNMARSHAL):
        expected = message
    else:
        expected = f"couldn't get version/kind; json parse error: {message}"
    assert (status, body.get("reason"), body["message"]) == (400, "BadRequest", expected)
    await _still_there(cluster)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param({"propagationPolicy": "Bogus"}, UNSUPPORTED_POLICY, id="unknown policy"),
        pytest.param(
            {"propagationPolicy": "Orphan", "orphanDependents": True},
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": '
            "orphanDependents and deletionPropagation cannot be both set",
            id="policy and orphanDependents",
        ),
        pytest.param(
            # the list is printed as JSON (v1.20: Go's []string{"Bogus"})
            {"dryRun": ["Bogus"]},
            'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: '
            'supported values: "All"',
            id="unknown dryRun",
        ),
    ],
)
async def test_invalid_delete_options_are_422(cluster, body, message):
    await cluster.create_pod("p")

    answer = await cluster.rest.request(
        "DELETE", pods_path(cluster.namespace, "p"), body=body, check=False
    )

    assert (answer.status, answer.body["reason"], answer.body["message"]) == (
        422,
        "Invalid",
        message,
    )
    assert answer.body["details"]["group"] == "meta.k8s.io"
    assert answer.body["details"]["kind"] == "DeleteOptions"
    await _still_there(cluster)


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        pytest.param(
            {"gracePeriodSeconds": "abc"},
            400,
            'strconv.ParseInt: parsing "abc": invalid syntax',
            id="grace not a number",
        ),
        pytest.param(
            {"gracePeriodSeconds": "1.5"},
            400,
            'strconv.ParseInt: parsing "1.5": invalid syntax',
            id="grace a fraction",
        ),
        pytest.param(
            {"gracePeriodSeconds": ""},
            400,
            'strconv.ParseInt: parsing "": invalid syntax',
            id="grace empty",
        ),
        pytest.param(
            # 2**63 = 9223372036854775808 > int64's maximum
            {"gracePeriodSeconds": "9223372036854775808"},
            400,
            'strconv.ParseInt: parsing "9223372036854775808": value out of range',
            id="grace past int64",
        ),
        pytest.param({"propagationPolicy": "Bogus"}, 422, UNSUPPORTED_POLICY, id="unknown policy"),
    ],
)
async def test_delete_query_parameters_are_checked(cluster, params, status, message):
    await cluster.create_pod("p")

    answer = await cluster.rest.request(
        "DELETE", pods_path(cluster.namespace, "p"), params=params, check=False
    )

    assert (answer.status, answer.body["message"]) == (status, message)
    await _still_there(cluster)


async def test_with_a_body_the_query_parameters_do_not_count(cluster):
    # The body's dryRun is honoured; the query's broken grace period is never parsed.
    await cluster.create_pod("p")

    status, body = await send_raw(
        cluster.kubeconfig,
        "DELETE",
        pods_path(cluster.namespace, "p"),
        orjson.dumps({"apiVersion": "v1", "kind": "DeleteOptions", "dryRun": ["All"]}),
        params={"gracePeriodSeconds": "abc"},
    )

    assert status == 200, body
    assert body["kind"] == "Pod"
    await _still_there(cluster)


async def test_a_null_body_is_empty_options(cluster):
    await cluster.create_pod("p")  # not on a node: deleted at once

    status, body = await send_raw(
        cluster.kubeconfig, "DELETE", pods_path(cluster.namespace, "p"), b"null"
    )

    assert status == 200, body
    listed = await cluster.rest.list(pods_path(cluster.namespace))
    assert listed["items"] == []
