"""A pod's containers, decoded: their requests, images and host ports, and the pod's
effective requests.

Two pieces of API-server defaulting are reproduced here, because snapshots and
simulated objects may not have been through a real server: a container's request
defaults to its limit for each resource with a limit and no request, and host-network
pods get ``hostPort = containerPort``. Apart from :mod:`asched.cluster.decode` because
the containers are the bulk of a pod's spec and the only part that sums quantities.
"""

from __future__ import annotations

from asched.cluster import bounds
from asched.cluster.decode_context import DecodeContext, Raw
from asched.cluster.records import HostPort
from asched.cluster.requests import ContainerRequests, nonzero_requests, pod_requests


def _container_requests(ctx: DecodeContext, raw: Raw, path: str) -> dict[str, int]:
    resources = ctx.mapping(raw.get("resources"), f"{path}.resources")
    requests = ctx.quantities(resources.get("requests"), f"{path}.resources.requests")
    limits = ctx.quantities(resources.get("limits"), f"{path}.resources.limits")
    for name, amount in limits.items():
        requests.setdefault(name, amount)  # API defaulting: request = limit when unset
    return requests


def _host_ports(ctx: DecodeContext, raw: Raw, path: str, *, host_network: bool) -> list[HostPort]:
    out = []
    for index, port in enumerate(ctx.items(raw.get("ports"), f"{path}.ports")):
        here = f"{path}.ports[{index}]"
        port = ctx.mapping(port, here)
        container_port = ctx.integer(port.get("containerPort"), f"{here}.containerPort")
        host_port = ctx.integer(port.get("hostPort"), f"{here}.hostPort")
        if host_network and host_port == 0:
            host_port = container_port
        if not 0 <= host_port <= 65535:
            raise ctx.fail(
                f"{here}.hostPort",
                f"Invalid value: {host_port}: must be between 1 and 65535, inclusive",
            )
        if host_port > 0:
            ip = ctx.string(port.get("hostIP"), f"{here}.hostIP") or "0.0.0.0"
            protocol = ctx.string(port.get("protocol"), f"{here}.protocol") or "TCP"
            out.append(HostPort(ip, protocol, host_port))
    return out


def decode_containers(
    ctx: DecodeContext, spec: Raw
) -> tuple[list[ContainerRequests], list[ContainerRequests], list[str], list[HostPort]]:
    """``spec.initContainers`` then ``spec.containers``: the app containers' requests,
    the init containers' (sidecars marked), every image (init containers' first) and the
    host ports the pod holds (a sidecar's, not another init container's: it has exited
    before the app containers start)."""
    host_network = bool(spec.get("hostNetwork", False))

    containers: list[ContainerRequests] = []
    inits: list[ContainerRequests] = []
    images: list[str] = []
    ports: list[HostPort] = []
    init_raw = ctx.items(spec.get("initContainers"), "spec.initContainers")
    for index, item in enumerate(init_raw):
        path = f"spec.initContainers[{index}]"
        item = ctx.mapping(item, path)
        restartable = ctx.string(item.get("restartPolicy"), f"{path}.restartPolicy") == "Always"
        inits.append(ContainerRequests(_container_requests(ctx, item, path), restartable))
        images.append(ctx.string(item.get("image"), f"{path}.image"))
        if restartable:
            ports.extend(_host_ports(ctx, item, path, host_network=host_network))
    for index, item in enumerate(ctx.items(spec.get("containers"), "spec.containers")):
        path = f"spec.containers[{index}]"
        item = ctx.mapping(item, path)
        containers.append(ContainerRequests(_container_requests(ctx, item, path)))
        images.append(ctx.string(item.get("image"), f"{path}.image"))
        ports.extend(_host_ports(ctx, item, path, host_network=host_network))
    return containers, inits, images, ports


def effective_requests(
    ctx: DecodeContext,
    spec: Raw,
    containers: list[ContainerRequests],
    inits: list[ContainerRequests],
) -> tuple[dict[str, int], int, int]:
    """The pod's effective request per resource (``spec.overhead`` added) and its nonzero
    cpu and memory requests (the scoring ones), in canonical units. A total beyond
    :data:`~asched.cluster.bounds.MAX_AMOUNT` is clamped to it and, if it is the first
    amount out of range, recorded in ``ctx.out_of_range``."""
    overhead = ctx.quantities(spec.get("overhead"), "spec.overhead")
    requests = pod_requests(containers, inits, overhead)
    for resource, amount in requests.items():
        if amount > bounds.MAX_AMOUNT:
            ctx.out_of_range = ctx.out_of_range or bounds.total_too_large(resource, amount)
            requests[resource] = bounds.MAX_AMOUNT
    nonzero_cpu, nonzero_memory = (
        bounds.clamp(amount) for amount in nonzero_requests(containers, inits, overhead)
    )
    return requests, nonzero_cpu, nonzero_memory
