"""Nodes created with a status, as kube-apiserver v1.37.2 keeps them (as v1.20 did): unlike most
kinds, a Node's status is taken on create, defaulted, and only its ``config`` dropped."""

from __future__ import annotations

from asched.tools.backends.rest import nodes_path

READY = {
    "type": "Ready",
    "status": "True",
    "reason": "KubeletReady",
    "message": "x",
    "lastHeartbeatTime": "2024-01-01T00:00:00Z",
    "lastTransitionTime": "2024-01-01T00:00:00Z",
}
NODE_INFO = {
    "machineID": "",
    "systemUUID": "",
    "bootID": "",
    "kernelVersion": "",
    "osImage": "",
    "containerRuntimeVersion": "",
    "kubeletVersion": "v1.37.2",
    "kubeProxyVersion": "",
    "operatingSystem": "",
    "architecture": "",
}


async def test_a_node_created_with_a_status_keeps_it(cluster):
    name = cluster.unique_name("node")
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    body = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": cluster.labels},  # deleted at teardown
        "status": {
            "capacity": capacity,
            "conditions": [READY],
            "nodeInfo": {"kubeletVersion": "v1.37.2"},
            "config": {"active": {"configMap": {"name": "c", "namespace": "kube-system"}}},
        },
    }

    created = await cluster.rest.create(nodes_path(), body)
    read = await cluster.rest.get(nodes_path(name))

    for node in (created, read):
        assert node["spec"] == {}
        status = node["status"]
        # the allocatable defaults to the capacity; the node info's strings to ""
        assert (status["capacity"], status["allocatable"]) == (capacity, capacity)
        assert status["conditions"] == [READY]
        assert status["nodeInfo"] == NODE_INFO
        assert status["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 0}}
        assert "config" not in status  # dropped on create


async def test_a_node_update_keeps_the_stored_status(cluster):
    node = await cluster.create_node(cpu="4")
    node["status"]["capacity"]["cpu"] = "64"
    node["metadata"]["labels"]["extra"] = "x"

    updated = await cluster.rest.replace(nodes_path(node["metadata"]["name"]), node)

    assert updated["metadata"]["labels"]["extra"] == "x"
    assert updated["status"]["capacity"]["cpu"] == "4"  # only /status writes the status
