"""ImageLocality.

Cases transcribed from upstream ``imagelocality/image_locality_test.go``
(TestImageLocalityPriority, TestNormalizedImageName) with the per-container threshold
of recent releases: sum = sum over the pod's images present on the node of
int(size * nodes_with_image / all_nodes), clamped to [23 MiB, 1000 MiB * containers],
score = 100 * (sum - 23 MiB) // (max - 23 MiB).
"""

from __future__ import annotations

import pytest

from asched.tools.reference.plugins.image_locality import normalized_image_name
from tests.builders import (
    MB,
    container,
    make_node,
    make_pod,
    pod_info,
    profile_with,
    scores_of,
    snapshot_of,
)

IMAGES = "ImageLocality"

# node 1 holds gcr.io/40 (40 MiB, two names, one listed twice), gcr.io/300, gcr.io/2000
IMAGES_40_300_2000 = [
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
    (["gcr.io/2000:latest"], 2000 * MB),
]
# node 2 holds gcr.io/250 and gcr.io/10
IMAGES_250_10 = [
    (["gcr.io/250:latest"], 250 * MB),
    (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB),
]


def image_nodes(count: int = 2) -> list[dict[str, object]]:
    nodes = [
        make_node("machine1", images=IMAGES_40_300_2000),
        make_node("machine2", images=IMAGES_250_10),
    ]
    if count == 3:
        nodes.append(make_node("machine3"))  # a node without images
    return nodes


CASES = [
    # two containers -> max 2000 MiB, range 2000 - 23 = 1977 MiB.
    # machine1: gcr.io/40 on 1 of 2 nodes: 40 MiB * 1/2 = 20 MiB < 23 MiB -> 0
    # machine2: gcr.io/250: 250 MiB / 2 = 125 MiB -> 100 * (125 - 23) / 1977 = 5.16 -> 5
    pytest.param(
        make_pod(images=["gcr.io/40", "gcr.io/250"]),
        2,
        {"machine1": 0, "machine2": 5},
        id="two images spread on two nodes, prefer the larger image one",
    ),
    # machine1: (40 + 300) MiB / 2 = 170 MiB -> 100 * (170 - 23) / 1977 = 7.4 -> 7
    pytest.param(
        make_pod(images=["gcr.io/40", "gcr.io/300"]),
        2,
        {"machine1": 7, "machine2": 0},
        id="two images on one node, prefer this node",
    ),
    # machine1: 2000 MiB / 2 = 1000 MiB -> 100 * 977 / 1977 = 49.4 -> 49
    # machine2: gcr.io/10: 10 MiB / 2 = 5 MiB < 23 MiB -> 0
    pytest.param(
        make_pod(images=["gcr.io/10", "gcr.io/2000"]),
        2,
        {"machine1": 49, "machine2": 0},
        id="if exceed limit, use limit",
    ),
    # three nodes: machine1: int(2097152000 * (1/3)) = 699050666 bytes
    #   -> 100 * (699050666 - 24117248) / (2097152000 - 24117248) = 32.56 -> 32
    pytest.param(
        make_pod(images=["gcr.io/10", "gcr.io/2000"]),
        3,
        {"machine1": 32, "machine2": 0, "machine3": 0},
        id="if exceed limit, use limit (with node which has no images present)",
    ),
    # init containers count: two images (init gcr.io/300, app gcr.io/40) as above -> 7
    pytest.param(
        make_pod(
            containers=[container(image="gcr.io/40")],
            init_containers=[container("init", image="gcr.io/300")],
        ),
        2,
        {"machine1": 7, "machine2": 0},
        id="init container images count and raise the threshold",
    ),
    # a tagged reference matches that name: gcr.io/300:v1 (300 MiB / 2 = 150 MiB), one
    # container -> max 1000 MiB: 100 * (150 - 23) / 977 = 12.99 -> 12
    pytest.param(
        make_pod(images=["gcr.io/300:v1"]),
        2,
        {"machine1": 12, "machine2": 0},
        id="a tagged image matches its tagged name",
    ),
    # one container without any local image: 0 everywhere
    pytest.param(
        make_pod(images=["docker.io/library/nginx"]),
        2,
        {"machine1": 0, "machine2": 0},
        id="no node has the image",
    ),
]


@pytest.mark.parametrize(("pod", "node_count", "want"), CASES)
def test_image_locality_priority(evaluate, pod, node_count, want) -> None:
    evaluation = evaluate(
        snapshot_of(image_nodes(node_count)), pod_info(pod), profile_with(score=((IMAGES, 1),))
    )
    assert scores_of(evaluation, IMAGES) == want


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param("root@" + "0" * 64, "root@" + "0" * 64 + ":latest", id="digest without tag"),
        pytest.param("gcr.io:5000/root:tag", "gcr.io:5000/root:tag", id="keep it as is 2"),
    ],
)
def test_normalized_image_name(name, want) -> None:
    assert normalized_image_name(name) == want


def test_registry_port_is_not_a_tag(evaluate) -> None:
    # localhost:5000/app is normalized to localhost:5000/app:latest, which node1 holds:
    # 500 MiB on 1 of 1 nodes, one container -> 100 * (500 - 23) / 977 = 48.8 -> 48
    node = make_node("node1", images=[(["localhost:5000/app:latest"], 500 * MB)])
    pod = make_pod(images=["localhost:5000/app"])
    evaluation = evaluate(snapshot_of([node]), pod_info(pod), profile_with(score=((IMAGES, 1),)))
    assert scores_of(evaluation, IMAGES) == {"node1": 48}
