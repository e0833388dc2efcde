"""Request body size: kube-apiserver reads up to 3 MiB (``MaxRequestBodyBytes``), then 413.

Bodies are padded with JSON whitespace, so the object stored is small and only the byte
count differs between the cases.
"""

from __future__ import annotations

import orjson
import pytest

from asched.tools.backends.rest import pods_path

from ._support import send_raw

LIMIT = 3 * 1024 * 1024  # 3,145,728 bytes
TOO_LARGE = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Request entity too large: limit is 3145728",
    "reason": "RequestEntityTooLarge",
    "code": 413,
}


def _padded(obj: dict, size: int) -> bytes:
    """``obj`` as JSON of exactly ``size`` bytes (spaces before the closing brace)."""
    compact = orjson.dumps(obj)
    assert len(compact) <= size
    return compact[:-1] + b" " * (size - len(compact)) + b"}"


def _pod(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]},
    }


@pytest.mark.parametrize(
    "size",
    [
        pytest.param(2 * 1024 * 1024, id="2 MiB (over aiohttp's 1 MiB default)"),
        pytest.param(LIMIT, id="exactly 3 MiB"),
    ],
)
async def test_a_body_up_to_3_mib_is_read(cluster, size):
    status, body = await send_raw(
        cluster.kubeconfig, "POST", pods_path(cluster.namespace), _padded(_pod("p"), size)
    )

    assert status == 201, body
    assert body["metadata"]["name"] == "p"


@pytest.mark.parametrize(
    ("method", "suffix", "content_type"),
    [
        pytest.param("POST", "", "application/json", id="create"),
        pytest.param("PUT", "/p", "application/json", id="update"),
        pytest.param("PATCH", "/p", "application/merge-patch+json", id="patch"),
        pytest.param("DELETE", "/p", "application/json", id="delete"),
        pytest.param("POST", "/p/binding", "application/json", id="binding"),
    ],
)
async def test_one_byte_over_3_mib_is_413(cluster, method, suffix, content_type):
    await cluster.create_pod("p")

    status, body = await send_raw(
        cluster.kubeconfig,
        method,
        pods_path(cluster.namespace) + suffix,
        _padded(_pod("p"), LIMIT + 1),
        content_type=content_type,
    )

    assert (status, body) == (413, TOO_LARGE)
    # Nothing happened to the pod.
    pod = await cluster.rest.get(pods_path(cluster.namespace, "p"))
    assert "deletionTimestamp" not in pod["metadata"]
    assert "nodeName" not in pod["spec"]


@pytest.mark.parametrize(
    "index",
    [
        pytest.param("99", id="out of bounds"),
        pytest.param("01", id="a leading zero"),
        pytest.param("1" * 5000, id="5,000 digits"),
    ],
)
async def test_a_json_patch_with_a_bad_array_index_is_422(cluster, index):
    await cluster.create_pod("p")
    patch = [{"op": "replace", "path": f"/spec/containers/{index}/image", "value": "x"}]

    answer = await cluster.rest.request(
        "PATCH",
        pods_path(cluster.namespace, "p"),
        body=patch,
        content_type="application/json-patch+json",
        check=False,
    )

    assert (answer.status, answer.body["reason"], answer.body["message"]) == (
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
    )
