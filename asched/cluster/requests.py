"""A pod's effective resource requests, as upstream's ``PodRequests`` computes them.

Upstream: staging/src/k8s.io/component-helpers/resource/helpers.go, PodRequests. App
containers are summed; init containers run one at a time, so they count as a running
maximum, except restartable ("sidecar") init containers, which keep running and therefore
stack onto both the app total and every later init phase; the pod overhead is added last.
For scoring, a container that leaves cpu or memory unset is counted as 100m / 200Mi.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from asched.cluster.resources import CPU, DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, MEMORY


@dataclass(frozen=True, slots=True)
class ContainerRequests:
    """One container's requests in canonical units, and whether it is a sidecar."""

    requests: Mapping[str, int]
    restartable: bool = False


def _add(total: dict[str, int], more: Mapping[str, int]) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, 0) + amount


def pod_requests(
    containers: Sequence[ContainerRequests],
    init_containers: Sequence[ContainerRequests],
    overhead: Mapping[str, int],
) -> dict[str, int]:
    """Return the pod's effective request per resource (zero entries dropped)."""
    app: dict[str, int] = {}
    for container in containers:
        _add(app, container.requests)
    sidecars: dict[str, int] = {}
    peak: dict[str, int] = {}
    for init in init_containers:
        if init.restartable:
            _add(app, init.requests)
            _add(sidecars, init.requests)
            phase = dict(sidecars)
        else:
            phase = dict(init.requests)
            _add(phase, sidecars)
        for name, amount in phase.items():
            peak[name] = max(peak.get(name, 0), amount)
    total = {name: max(app.get(name, 0), peak.get(name, 0)) for name in app.keys() | peak.keys()}
    _add(total, overhead)
    return {name: amount for name, amount in total.items() if amount != 0}


def with_scoring_defaults(container: ContainerRequests) -> ContainerRequests:
    """The container as scoring sees it: unset cpu -> 100m, unset memory -> 200Mi."""
    requests = dict(container.requests)
    requests.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
    requests.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
    return ContainerRequests(requests, container.restartable)


def nonzero_requests(
    containers: Sequence[ContainerRequests],
    init_containers: Sequence[ContainerRequests],
    overhead: Mapping[str, int],
) -> tuple[int, int]:
    """Return the (cpu millicores, memory bytes) a pod counts for when scoring."""
    totals = pod_requests(
        [with_scoring_defaults(c) for c in containers],
        [with_scoring_defaults(c) for c in init_containers],
        overhead,
    )
    return totals.get(CPU, 0), totals.get(MEMORY, 0)
