"""NodePorts.

Cases transcribed from upstream ``nodeports/node_ports_test.go`` (TestNodePorts,
TestFits). Ports are written ``PROTOCOL/hostIP/port`` as upstream does; the node runs
one pod holding the "used" ports. A wanted port conflicts with a used one on the same
protocol and port when either binds 0.0.0.0 or both name the same ip.
"""

from __future__ import annotations

import pytest

from asched.framework.status import Code
from tests.builders import (
    FITS,
    bound_pod,
    container,
    make_node,
    make_pod,
    outcome,
    pod_info,
    profile_with,
    snapshot_of,
)

PORTS = "NodePorts"
CONFLICT = (
    PORTS,
    Code.UNSCHEDULABLE,
    ("node(s) didn't have free ports for the requested pod ports",),
)


def ports(*specs: str) -> list[tuple[int, str, str]]:
    """``"UDP/127.0.0.1/8080"`` -> ``(8080, "UDP", "127.0.0.1")``."""
    out = []
    for spec in specs:
        protocol, host_ip, port = spec.split("/")
        out.append((int(port), protocol, host_ip))
    return out


CASES = [
    pytest.param(make_pod(), [], FITS, id="skip filter"),
    pytest.param(
        make_pod(host_ports=ports("UDP/127.0.0.1/8080")),
        ["UDP/127.0.0.1/9090"],
        FITS,
        id="other port",
    ),
    pytest.param(
        make_pod(host_ports=ports("UDP/127.0.0.1/8080")),
        ["UDP/127.0.0.1/8080"],
        CONFLICT,
        id="same udp port",
    ),
    pytest.param(
        make_pod(host_ports=ports("TCP/127.0.0.1/8080")),
        ["TCP/127.0.0.1/8080"],
        CONFLICT,
        id="same tcp port",
    ),
    pytest.param(
        make_pod(host_ports=ports("TCP/127.0.0.1/8080")),
        ["TCP/127.0.0.2/8080"],
        FITS,
        id="different host ip",
    ),
    pytest.param(
        make_pod(host_ports=ports("UDP/127.0.0.1/8080")),
        ["TCP/127.0.0.1/8080"],
        FITS,
        id="different protocol",
    ),
    pytest.param(
        make_pod(host_ports=ports("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080")),
        ["UDP/127.0.0.1/8080"],
        CONFLICT,
        id="second udp port conflict",
    ),
    pytest.param(
        make_pod(host_ports=ports("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080")),
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
        CONFLICT,
        id="first tcp port conflict",
    ),
    pytest.param(
        make_pod(host_ports=ports("TCP/0.0.0.0/8001")),
        ["TCP/127.0.0.1/8001"],
        CONFLICT,
        id="first tcp port conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        make_pod(host_ports=ports("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001")),
        ["TCP/127.0.0.1/8001"],
        CONFLICT,
        id="TCP hostPort conflict due to 0.0.0.0 hostIP",
    ),
    pytest.param(
        make_pod(host_ports=ports("TCP/127.0.0.1/8001")),
        ["TCP/0.0.0.0/8001"],
        CONFLICT,
        id="second tcp port conflict to 0.0.0.0 hostIP",
    ),
    pytest.param(
        make_pod(host_ports=ports("UDP/127.0.0.1/8001")),
        ["TCP/0.0.0.0/8001"],
        FITS,
        id="second different protocol",
    ),
    pytest.param(
        make_pod(host_ports=ports("UDP/127.0.0.1/8001")),
        ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
        CONFLICT,
        id="UDP hostPort conflict due to 0.0.0.0 hostIP",
    ),
    # a classic init container's host port is not counted: PreFilter skips
    pytest.param(
        make_pod(init_containers=[container("init", ports=[(8001, "TCP")])]),
        ["TCP/0.0.0.0/8001"],
        FITS,
        id="non-sidecar initContainer using hostPort",
    ),
    pytest.param(
        make_pod(
            init_containers=[container("init", ports=[(8001, "TCP")], restart_policy="Always")]
        ),
        ["TCP/0.0.0.0/8001"],
        CONFLICT,
        id="TCP hostPort conflict from sidecar initContainer",
    ),
    # asched: empty hostIP means 0.0.0.0 and empty protocol means TCP
    pytest.param(
        make_pod(host_ports=[8001]),
        ["TCP/10.1.1.1/8001"],
        CONFLICT,
        id="defaults 0.0.0.0 and TCP conflict",
    ),
    # TestFits
    pytest.param(
        make_pod(host_ports=ports("TCP/127.0.0.1/80")),
        ["TCP/127.0.0.1/9090"],
        FITS,
        id="non-conflicting ports",
    ),
    pytest.param(
        make_pod(
            host_ports=ports(
                "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"
            )
        ),
        ["TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"],
        FITS,
        id="multiple non-conflicting ports",
    ),
    pytest.param(
        make_pod(host_ports=ports("TCP/127.0.0.1/80")),
        ["UDP/127.0.0.1/80"],
        FITS,
        id="same ports on different protocols",
    ),
    pytest.param(
        make_pod(
            host_ports=ports(
                "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"
            )
        ),
        ["TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"],
        CONFLICT,
        id="multiple ports, some conflicting",
    ),
]


@pytest.mark.parametrize(("pod", "used", "want"), CASES)
def test_node_ports(evaluate, pod, used, want) -> None:
    existing = [bound_pod("m1", host_ports=ports(*used))] if used else []
    snapshot = snapshot_of([make_node("m1")], existing)
    evaluation = evaluate(snapshot, pod_info(pod), profile_with(filter=(PORTS,)))
    assert outcome(evaluation, "m1") == want


def test_ports_of_pods_on_other_nodes_do_not_count(evaluate) -> None:
    nodes = [make_node("m1"), make_node("m2")]
    existing = [bound_pod("m1", host_ports=ports("TCP/0.0.0.0/80"))]
    pod = make_pod(host_ports=ports("TCP/0.0.0.0/80"))
    evaluation = evaluate(
        snapshot_of(nodes, existing), pod_info(pod), profile_with(filter=(PORTS,))
    )
    assert (outcome(evaluation, "m1"), outcome(evaluation, "m2")) == (CONFLICT, FITS)
    assert evaluation.selected == "m2"
