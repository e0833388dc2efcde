"""KubeClient's fast-path writes (bindings, status patches) on each backend.

On the genuine kube-apiserver v1.37.2 this is TLS with its own CA and a bearer token, as in a
cluster; on the simulator (a child process) plain HTTP. Each test reads back what the server
stored through the tests' own REST client, not through the client under test. (The uid in
the body is checked by the rendering tests in tests/unit/api. A stale one is refused with
409 by kube-apiserver v1.37.2 and the simulator alike, where v1.20.2 refused nothing:
tests/contract/test_bindings.py pins that answer.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from asched.api.client import KubeClient
from tests.conftest import Cluster


@pytest.fixture
async def client(cluster: Cluster) -> AsyncIterator[KubeClient]:
    api = await KubeClient.connect(str(cluster.kubeconfig))
    try:
        assert api.fast_writes
        yield api
    finally:
        await api.close()


def _pod_path(cluster: Cluster, name: str) -> str:
    return f"/api/v1/namespaces/{cluster.namespace}/pods/{name}"


async def test_bind_conflict_and_missing_pod(cluster: Cluster, client: KubeClient) -> None:
    node = (await cluster.create_node())["metadata"]["name"]
    other = (await cluster.create_node())["metadata"]["name"]
    pod = await cluster.create_pod(scheduler_name="nobody")
    name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    bound = await client.bind(cluster.namespace, name, uid, node)
    assert bound.status == 201
    assert (await cluster.rest.get(_pod_path(cluster, name)))["spec"]["nodeName"] == node
    again = await client.bind(cluster.namespace, name, uid, other)
    assert again.status == 409
    assert (again.body["kind"], again.body["reason"]) == ("Status", "Conflict")
    assert (await cluster.rest.get(_pod_path(cluster, name)))["spec"]["nodeName"] == node
    missing = await client.bind(cluster.namespace, cluster.unique_name("gone"), "", node)
    assert missing.status == 404
    assert missing.body["reason"] == "NotFound"


async def test_patch_status_sets_and_clears(cluster: Cluster, client: KubeClient) -> None:
    pod = await cluster.create_pod(scheduler_name="nobody")
    name = pod["metadata"]["name"]
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    patch = {"status": {"conditions": [condition], "nominatedNodeName": "node-x"}}
    answer = await client.patch_pod_status(cluster.namespace, name, patch)
    assert answer.status == 200
    assert answer.body["status"]["nominatedNodeName"] == "node-x"
    cleared = await client.patch_pod_status(
        cluster.namespace, name, {"status": {"nominatedNodeName": None}}
    )
    assert cleared.ok
    stored = (await cluster.rest.get(_pod_path(cluster, name)))["status"]
    assert "nominatedNodeName" not in stored
    assert [c["reason"] for c in stored["conditions"] if c["type"] == "PodScheduled"] == [
        "Unschedulable"
    ]
