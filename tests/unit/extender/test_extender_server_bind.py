"""A binding extender that really binds: the test extender POSTs the Binding to an API server.

On both backends: the extender binds the pod (the node appears in ``spec.nodeName``);
a binding the API server refuses (the pod is already bound) comes back as the answer's
Error, and so as an Error status naming the extender.
"""

from __future__ import annotations

from asched.cluster.decode import decode_pod
from asched.extenders.preempt_bind import run_bind
from asched.framework.status import Code
from asched.tools.backends.kubeconfig import read_kubeconfig
from asched.tools.bench.extender_server import ApiTarget, ExtenderRules
from tests.unit.extender._support import spec, started


async def test_bind_through_the_api_server(cluster) -> None:
    entry = read_kubeconfig(cluster.kubeconfig)
    api = ApiTarget(entry.server, entry.token or "", entry.ca_pem)
    node = await cluster.create_node()
    node_name = node["metadata"]["name"]
    raw = await cluster.create_pod(scheduler_name="asched-test-extender")
    pod = decode_pod(raw)
    async with started(spec(ExtenderRules(api=api), bind=True)) as running:
        first = await run_bind(running.extenders, pod, raw, node_name)
        again = await run_bind(running.extenders, pod, raw, node_name)
    assert first is not None
    assert first.code == Code.SUCCESS
    bound = await cluster.rest.get(f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}")
    assert bound["spec"]["nodeName"] == node_name
    # a second binding is refused by the API server (409): an Error status from the extender
    assert again is not None
    assert again.code == Code.ERROR
    assert again.plugin == running.servers[0].url
    assert f"binding {pod.namespace}/{pod.name}: HTTP 409" in again.message
