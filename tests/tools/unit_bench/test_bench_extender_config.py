"""`asched bench run --extender-latency-ms`: the extenders[] entry both schedulers get, and
the invariant it adds (no pod on a node the extender rejects).

Both schedulers read ``kubescheduler.config.k8s.io/v1`` and get the same entry. asched's document goes through the real loader here; the
genuine kube-scheduler reads its own in tests/tools/bench/test_bench_extender_end_to_end.py.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from asched.tools.backends.scheduler import scheduler_config
from asched.tools.bench.extender_child import extender_entry, pods_on_rejected_nodes
from asched.tools.bench.hash_extender import HashRule
from asched.tools.bench.observe import PodRecord
from asched.tools.bench.results import Invariants
from asched.tools.bench.schedulers import SCHEDULER_NAME, asched_config
from tests.configs import load_config

CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


@pytest.mark.parametrize(
    ("url", "ca_pem", "weight", "timeout", "expected"),
    [
        pytest.param(
            "http://127.0.0.1:4321",
            None,
            1,
            "5s",
            {
                "urlPrefix": "http://127.0.0.1:4321",
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "weight": 1,
                "enableHTTPS": False,
                "nodeCacheCapable": True,
                "httpTimeout": "5s",
            },
            id="http",
        ),
        pytest.param(
            "https://127.0.0.1:4321",
            CA_PEM,
            3,
            "250ms",
            {
                "urlPrefix": "https://127.0.0.1:4321",
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "weight": 3,
                "enableHTTPS": True,
                "nodeCacheCapable": True,
                "httpTimeout": "250ms",
                # Go's []byte in JSON: standard base64
                "tlsConfig": {"caData": base64.b64encode(CA_PEM).decode()},
            },
            id="https-with-its-CA",
        ),
    ],
)
def test_extender_entry(
    url: str, ca_pem: bytes | None, weight: int, timeout: str, expected: dict[str, Any]
) -> None:
    assert extender_entry(url, weight=weight, http_timeout=timeout, ca_pem=ca_pem) == expected


@pytest.mark.parametrize(
    ("timeout", "seconds"),
    [
        pytest.param("5s", 5.0, id="upstream-default-written-out"),
        pytest.param("250ms", 0.25, id="milliseconds"),
    ],
)
def test_asched_v1_config_loads_with_the_extender(timeout: str, seconds: float) -> None:
    entry = extender_entry("https://127.0.0.1:4321", weight=2, http_timeout=timeout, ca_pem=CA_PEM)
    document = asched_config(0, extenders=[entry])
    assert document["extenders"] == [entry]
    config = load_config(document, source="benchmark configuration")
    (extender,) = config.extenders
    assert extender.url_prefix == "https://127.0.0.1:4321"
    assert (extender.filter_verb, extender.prioritize_verb) == ("filter", "prioritize")
    assert (extender.preempt_verb, extender.bind_verb) == ("", "")
    assert extender.weight == 2
    assert extender.enable_https is True
    assert extender.node_cache_capable is True
    assert extender.http_timeout_seconds == seconds
    assert extender.tls_config is not None
    assert extender.tls_config.ca_data == CA_PEM
    assert config.percentage_of_nodes_to_score == 0
    assert [p.scheduler_name for p in config.profiles] == [SCHEDULER_NAME]


def test_kube_scheduler_config_holds_the_same_entry() -> None:
    entry = extender_entry("http://127.0.0.1:4321", ca_pem=None)
    config = scheduler_config(
        Path("/tmp/kubeconfig"),
        scheduler_name=SCHEDULER_NAME,
        percentage_of_nodes_to_score=0,
        extenders=[entry],
    )
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert config["extenders"] == [entry]
    assert config["percentageOfNodesToScore"] == 0


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(asched_config(100), id="asched-v1"),
        pytest.param(scheduler_config(Path("/tmp/kubeconfig")), id="kube-scheduler"),
    ],
)
def test_no_extender_no_extenders_key(document: dict[str, Any]) -> None:
    assert "extenders" not in document


# node-5 fails crc32 % 10 (tests/tools/unit_bench/test_bench_hash_rule.py); node-0 passes.
@pytest.mark.parametrize(
    ("records", "expected"),
    [
        pytest.param(
            [PodRecord("m/a", "measured", 0.0, 1.0, "node-5")], 1, id="measured-on-rejected"
        ),
        pytest.param([PodRecord("i/a", "init", 0.0, 1.0, "node-5")], 1, id="init-on-rejected"),
        pytest.param([PodRecord("m/a", "measured", 0.0, 1.0, "node-0")], 0, id="on-accepted"),
        pytest.param([PodRecord("m/a", "measured", 0.0)], 0, id="not-bound"),
        # the bind ceiling places its pods round-robin without asking: not a violation
        pytest.param([PodRecord("c/a", "ceiling", 0.0, 1.0, "node-5")], 0, id="ceiling-pod"),
        pytest.param(
            [
                PodRecord("m/a", "measured", 0.0, 1.0, "node-5"),
                PodRecord("m/b", "measured", 0.0, 1.0, "node-6"),
                PodRecord("m/c", "measured", 0.0, 1.0, "node-0"),
            ],
            2,
            id="two-of-three",
        ),
    ],
)
def test_pods_on_rejected_nodes(records: list[PodRecord], expected: int) -> None:
    assert pods_on_rejected_nodes(HashRule(10), records) == expected


def test_a_pod_on_a_rejected_node_breaks_the_invariants() -> None:
    assert Invariants().ok
    assert not Invariants(pods_on_rejected_nodes=1).ok
