"""``fieldValidation`` (server-side field validation, GA in 1.27) as kube-apiserver v1.37.2
answers it: the value is checked with the write's other options (422); a custom resource's
unknown fields, and any JSON body's duplicate fields, are a 400 under ``Strict`` and
``Warning`` headers under ``Warn`` (the default) and nothing under ``Ignore``.

The simulator knows a custom resource's fields from its schema; it does not know every field
of a built-in kind, which it keeps (see docs/simulator-fidelity.md), so built-in kinds are
checked here for duplicates only. It looks for duplicate fields only when the request names
``fieldValidation``.
"""

from __future__ import annotations

import orjson
import pytest

from asched.tools.backends.rest import pods_path

from ._support import send_for_warnings
from .test_custom_resources import served_podgroups

SUPPORTED = 'supported values: "", "Ignore", "Strict", "Warn"'


@pytest.fixture
async def podgroups(cluster):
    """The PodGroup CRD of tests/contract/test_custom_resources.py, served for the test."""
    async with served_podgroups(cluster) as handle:
        yield handle


def _warning(text: str) -> str:
    """A ``Warning`` header as Go's recorder writes it: code 299, no agent, the text quoted."""
    return "299 - " + orjson.dumps(text).decode()


@pytest.mark.parametrize(
    ("method", "suffix", "kind", "content_type"),
    [
        pytest.param("POST", "", "CreateOptions", "application/json", id="create"),
        pytest.param("PUT", "/p", "UpdateOptions", "application/json", id="update"),
        pytest.param("PATCH", "/p", "PatchOptions", "application/merge-patch+json", id="patch"),
    ],
)
async def test_an_unknown_field_validation_is_422(cluster, method, suffix, kind, content_type):
    pod = await cluster.create_pod("p")

    status, body, _ = await send_for_warnings(
        cluster.kubeconfig,
        method,
        pods_path(cluster.namespace) + suffix,
        orjson.dumps({} if method == "PATCH" else pod),
        content_type=content_type,
        params={"fieldValidation": "Bogus"},
    )

    assert (status, body["reason"], body["message"]) == (
        422,
        "Invalid",
        f'{kind}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": '
        f"{SUPPORTED}",
    )
    assert body["details"] == {
        "group": "meta.k8s.io",
        "kind": kind,
        "causes": [
            {
                "reason": "FieldValueNotSupported",
                "message": f'Unsupported value: "Bogus": {SUPPORTED}',
                "field": "fieldValidation",
            }
        ],
    }


async def test_field_validation_is_checked_with_dry_run(cluster):
    status, body, _ = await send_for_warnings(
        cluster.kubeconfig,
        "POST",
        pods_path(cluster.namespace),
        b"{}",
        params={"fieldValidation": "x", "dryRun": "y"},
    )

    assert (status, [c["field"] for c in body["details"]["causes"]]) == (
        422,
        ["dryRun", "fieldValidation"],
    )


def _podgroup(podgroups, name: str, **spec) -> dict:
    body = podgroups.body(name, minMember=3, **spec)
    body["metadata"]["junk"] = 1
    body["extra"] = {"a": 1}
    return body


UNKNOWN = ["metadata.junk", "extra", "spec.aa", "spec.zz"]  # metadata's first, then sorted


@pytest.mark.parametrize(
    "mode", [pytest.param(None, id="default"), pytest.param("Warn", id="Warn")]
)
async def test_a_custom_resource_s_unknown_fields_are_warnings(podgroups, cluster, mode):
    params = {"fieldValidation": mode} if mode else {}

    status, body, warnings = await send_for_warnings(
        cluster.kubeconfig,
        "POST",
        podgroups.path(),
        orjson.dumps(_podgroup(podgroups, "w", zz=1, aa={"b": 1})),
        params=params,
    )

    assert status == 201
    assert body["spec"] == {"minMember": 3}  # pruned
    assert warnings == [_warning(f'unknown field "{path}"') for path in UNKNOWN]


async def test_ignore_prunes_unknown_fields_without_a_word(podgroups, cluster):
    status, body, warnings = await send_for_warnings(
        cluster.kubeconfig,
        "POST",
        podgroups.path(),
        orjson.dumps(_podgroup(podgroups, "i", zz=1)),
        params={"fieldValidation": "Ignore"},
    )

    assert (status, body["spec"], warnings) == (201, {"minMember": 3}, [])


async def test_strict_refuses_unknown_and_duplicate_fields(podgroups, cluster):
    body = orjson.dumps(_podgroup(podgroups, "s", zz=1, aa={"b": 1}))
    # a repeated member, written by hand (a dict cannot hold one)
    body = body.replace(b'"minMember":3', b'"minMember":3,"minMember":4')

    status, answer, _ = await send_for_warnings(
        cluster.kubeconfig, "POST", podgroups.path(), body, params={"fieldValidation": "Strict"}
    )

    problems = ['duplicate field "spec.minMember"'] + [f'unknown field "{p}"' for p in UNKNOWN]
    assert (status, answer["reason"], answer["message"]) == (
        400,
        "BadRequest",
        'PodGroup in version "v1alpha1" cannot be handled as a PodGroup: strict decoding '
        "error: " + ", ".join(problems),
    )


async def test_strict_refuses_an_update_s_unknown_field(podgroups, cluster):
    created = await podgroups.create("u", minMember=1)
    created["spec"]["bogus"] = 1

    status, answer, _ = await send_for_warnings(
        cluster.kubeconfig,
        "PUT",
        podgroups.path("u"),
        orjson.dumps(created),
        params={"fieldValidation": "Strict"},
    )
    default_status, _, warnings = await send_for_warnings(
        cluster.kubeconfig, "PUT", podgroups.path("u"), orjson.dumps(created)
    )

    assert (status, answer["message"]) == (
        400,
        'PodGroup in version "v1alpha1" cannot be handled as a PodGroup: strict decoding '
        'error: unknown field "spec.bogus"',
    )
    assert (default_status, warnings) == (200, [_warning('unknown field "spec.bogus"')])


async def test_a_patch_s_unknown_field_is_a_warning_or_under_strict_a_422(podgroups, cluster):
    await podgroups.create("p", minMember=1)
    patch = orjson.dumps({"spec": {"bogus": 1}, "status": {"bogus": 2}})

    warned = await send_for_warnings(
        cluster.kubeconfig,
        "PATCH",
        podgroups.path("p"),
        patch,
        content_type="application/merge-patch+json",
    )
    status, answer, _ = await send_for_warnings(
        cluster.kubeconfig,
        "PATCH",
        podgroups.path("p"),
        patch,
        content_type="application/merge-patch+json",
        params={"fieldValidation": "Strict"},
    )

    # the status is the subresource's (the main resource ignores it), yet checked all the same
    assert (warned[0], warned[2]) == (
        200,
        [_warning('unknown field "spec.bogus"'), _warning('unknown field "status.bogus"')],
    )
    [cause] = answer["details"]["causes"]
    # the invalid value is the patched object as JSON (the simulator's has no managedFields)
    assert (status, answer["reason"], cause["field"], cause["reason"]) == (
        422,
        "Invalid",
        "patch",
        "FieldValueInvalid",
    )
    assert cause["message"].endswith(
        'strict decoding error: unknown field "spec.bogus", unknown field "status.bogus"'
    )
    assert answer["message"] == f' "" is invalid: patch: {cause["message"]}'


@pytest.mark.parametrize(
    ("mode", "status", "warnings"),
    [
        pytest.param("Warn", 201, [_warning('duplicate field "metadata.name"')], id="Warn"),
        pytest.param("Ignore", 201, [], id="Ignore"),
    ],
)
async def test_a_pod_s_duplicate_field_under_warn_and_ignore(cluster, mode, status, warnings):
    raw = (
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d","name":"d"},'
        b'"spec":{"containers":[{"name":"c","image":"i"}]}}'
    )

    answer = await send_for_warnings(
        cluster.kubeconfig,
        "POST",
        pods_path(cluster.namespace),
        raw,
        params={"fieldValidation": mode, "dryRun": "All"},
    )

    assert (answer[0], answer[2]) == (status, warnings)


async def test_a_pod_s_duplicate_field_under_strict_is_400(cluster):
    raw = (
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d","labels":{"a":"1","a":"2"}},'
        b'"spec":{"containers":[{"name":"c","image":"i","image":"j"}]}}'
    )

    status, body, _ = await send_for_warnings(
        cluster.kubeconfig,
        "POST",
        pods_path(cluster.namespace),
        raw,
        params={"fieldValidation": "Strict"},
    )

    assert (status, body["reason"], body["message"]) == (
        400,
        "BadRequest",
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field '
        '"metadata.labels.a", duplicate field "spec.containers[0].image"',
    )
