"""A pod's effective requests and its non-zero scoring requests (upstream:
pkg/api/v1/resource/helpers.go, PodRequests; pkg/scheduler/framework/plugins/noderesources non-zero defaults)."""

from __future__ import annotations

import pytest

from tests.builders import MB, container, make_pod, pod_info

MI = MB

REQUESTS = [
    # app 100m + 200m = 300m, plus the sidecar D (50m) that keeps running = 350m;
    # phases: C alone (D not started yet) = 150m, D = 50m; max(350m, 150m) = 350m
    pytest.param(
        make_pod(
            requests=[{"cpu": "100m"}, {"cpu": "200m"}],
            init=[{"cpu": "150m"}],
            sidecars=[{"cpu": "50m"}],
        ),
        {"cpu": 350},
        id="upstream's example: containers 100m+200m, init [classic 150m, sidecar 50m]",
    ),
    # a classic init container larger than the app: max(100m, 500m)
    pytest.param(
        make_pod(requests=[{"cpu": "100m"}], init=[{"cpu": "500m"}]),
        {"cpu": 500},
        id="classic init container dominates",
    ),
    # sidecar first: the classic init container runs beside it: 300m + 50m = 350m;
    # app = 100m + 50m = 150m -> 350m
    pytest.param(
        make_pod(
            requests=[{"cpu": "100m"}],
            init_containers=[
                container("sidecar", requests={"cpu": "50m"}, restart_policy="Always"),
                container("classic", requests={"cpu": "300m"}),
            ],
        ),
        {"cpu": 350},
        id="classic init container after a sidecar runs beside it",
    ),
    # init containers take the max per resource independently
    pytest.param(
        make_pod(
            requests=[{"cpu": "100m", "memory": "100Mi"}],
            init=[{"cpu": "300m", "memory": "10Mi"}, {"cpu": "10m", "memory": "300Mi"}],
        ),
        {"cpu": 300, "memory": 300 * MI},
        id="max per resource across init containers",
    ),
    # overhead is added after the max: 100m + 50m, 64Mi + 16Mi
    pytest.param(
        make_pod(
            requests=[{"cpu": "100m", "memory": "64Mi"}], overhead={"cpu": "50m", "memory": "16Mi"}
        ),
        {"cpu": 150, "memory": 80 * MI},
        id="overhead",
    ),
    pytest.param(
        make_pod(requests=[{"cpu": "0", "memory": "0"}]),
        {},
        id="zero requests are dropped",
    ),
    pytest.param(
        make_pod(requests=[{"cpu": "1", "example.com/gpu": "2"}, {"example.com/gpu": "1"}]),
        {"cpu": 1000, "example.com/gpu": 3},
        id="extended resources add up",
    ),
    # the API server defaults a missing request to the limit
    pytest.param(
        make_pod(containers=[container(limits={"cpu": "2", "memory": "1Gi"})]),
        {"cpu": 2000, "memory": 1024 * MI},
        id="requests default to limits",
    ),
    pytest.param(
        make_pod(
            containers=[
                container(requests={"memory": "512Mi"}, limits={"cpu": "1", "memory": "1Gi"})
            ]
        ),
        {"cpu": 1000, "memory": 512 * MI},
        id="an explicit request wins over the limit",
    ),
]


@pytest.mark.parametrize(("pod", "want"), REQUESTS)
def test_pod_requests(pod, want) -> None:
    assert dict(pod_info(pod).requests) == want


DEFAULT_CPU = 100
DEFAULT_MEMORY = 200 * MI

NONZERO = [
    pytest.param(make_pod(), (0, 0), id="no containers: nothing"),
    pytest.param(
        make_pod(containers=[container()]),
        (DEFAULT_CPU, DEFAULT_MEMORY),
        id="a container without requests counts 100m and 200Mi",
    ),
    pytest.param(
        make_pod(containers=[container(), container("b")]),
        (2 * DEFAULT_CPU, 2 * DEFAULT_MEMORY),
        id="each container gets the defaults",
    ),
    # explicit 0 is a set value: it stays 0
    pytest.param(
        make_pod(requests=[{"cpu": "0", "memory": "0"}]),
        (0, 0),
        id="explicit zero stays zero",
    ),
    pytest.param(
        make_pod(requests=[{"cpu": "250m"}]),
        (250, DEFAULT_MEMORY),
        id="only the missing resource is defaulted",
    ),
    # init container without requests: max(50m, 100m) and max(10Mi, 200Mi)
    pytest.param(
        make_pod(requests=[{"cpu": "50m", "memory": "10Mi"}], init_containers=[container("init")]),
        (DEFAULT_CPU, DEFAULT_MEMORY),
        id="init containers get the defaults too",
    ),
    # defaults then overhead: 100m + 10m, 200Mi + 1Mi
    pytest.param(
        make_pod(containers=[container()], overhead={"cpu": "10m", "memory": "1Mi"}),
        (DEFAULT_CPU + 10, DEFAULT_MEMORY + MI),
        id="overhead is added to the non-zero requests",
    ),
]


@pytest.mark.parametrize(("pod", "want"), NONZERO)
def test_nonzero_requests(pod, want) -> None:
    info = pod_info(pod)
    assert (info.nonzero_cpu, info.nonzero_memory) == want
