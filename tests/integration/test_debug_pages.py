"""The debug pages' JSON from a live scheduler (both backends), and ``--debug-addr``'s rules.

Three 4-cpu nodes; a 1-cpu pod is bound, a 9-cpu pod fits nowhere. The queue document
shows the second pod with its attempts and the FailedScheduling message asched reported;
its decision names NodeResourcesFit's reason on each node; the first pod's decision
chose one of the nodes and follows it to "bound"; the "now" document counts the binding.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from debug_harness import debugged_scheduler, pod_decided, until

from asched.scheduler.observe import Observers

# 9 cpu on 4-cpu nodes: NodeResourcesFit rejects each of the three test nodes
BIG_REASON = "Insufficient cpu"


async def test_json_documents_of_a_live_scheduler(cluster: Any) -> None:
    name = cluster.unique_name("sched")
    nodes = [cluster.unique_name("n") for _ in range(3)]
    for node in nodes:
        await cluster.create_node(node, cpu="4", memory="8Gi")
    async with debugged_scheduler(cluster, name) as debugged:
        small, big = cluster.unique_name("small"), cluster.unique_name("big")
        await cluster.create_pod(small, scheduler_name=name, cpu="1", memory="1Gi")
        await cluster.create_pod(big, scheduler_name=name, cpu="9", memory="1Gi")
        small_key, big_key = f"{cluster.namespace}/{small}", f"{cluster.namespace}/{big}"

        decided = await pod_decided(debugged, small_key)
        assert decided["selected"] in nodes
        assert decided["message"] is None
        for node in nodes:  # every test node fits: scored, with the default plugins
            verdict = decided["nodes"][node]
            assert verdict["feasible"] is True
            assert set(verdict["scores"]) >= {"NodeResourcesFit", "NodeResourcesBalancedAllocation"}
        assert decided["selected"] in decided["top"]

        async def bound() -> bool:
            document = await debugged.json(f"/debug/api/decision?pod={small_key}")
            return str(document["outcome"]) == f"bound to {decided['selected']}"

        await until(bound, within=30)

        failed = await pod_decided(debugged, big_key)
        assert failed["selected"] is None
        assert "nodes are available" in failed["message"]
        for node in nodes:
            assert failed["nodes"][node] == {
                "feasible": False,
                "plugin": "NodeResourcesFit",
                "code": "Unschedulable",
                "reasons": [BIG_REASON],
            }

        async def queued() -> bool:
            document = await debugged.json("/debug/api/queue")
            return any(p["pod"] == big_key and p["reason"] for p in document["pods"])

        await until(queued, within=30)
        document = await debugged.json("/debug/api/queue")
        [row] = [p for p in document["pods"] if p["pod"] == big_key]
        assert row["place"] in ("unschedulable", "backoff", "active")
        assert row["attempts"] >= 1
        assert row["reason"].startswith("0/")
        assert f"{BIG_REASON}" in row["reason"]
        assert row["decision"] is not None
        assert row["age"] >= 0
        assert all(p["pod"] != small_key for p in document["pods"])  # bound: not pending
        assert document["counts"][row["place"]] >= 1

        now = await debugged.json("/debug/api/now")
        assert now["identity"] == debugged.app.options.identity
        assert now["leader"] == {"election": False}
        assert now["window"]["bound"] >= 1
        assert now["window"]["scheduled"] >= 1
        assert now["window"]["unschedulable"] >= 1
        assert now["bindsInFlight"] >= 0

        async with debugged.http.post(debugged.base + "/debug/api/queue") as response:
            assert response.status == 405


def asched_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG",)}
    env["HOME"] = str(tmp_path)
    return subprocess.run(
        [sys.executable, "-m", "asched", "run", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


@pytest.mark.parametrize(
    ("address", "error"),
    [
        # off loopback the pages get HTTPS and token checks, unless --insecure-serving asked
        # for plain HTTP: then they are refused rather than exposed without authorization
        pytest.param(
            "0.0.0.0:10260",
            "--debug-addr 0.0.0.0:10260: a non-loopback address needs TLS and delegated "
            "authorization;",
            id="every interface",
        ),
        pytest.param(
            "[::]:10260",
            "--debug-addr [::]:10260: a non-loopback address needs TLS and delegated "
            "authorization;",
            id="every IPv6 interface",
        ),
        pytest.param("127.0.0.1", "--debug-addr '127.0.0.1': expected HOST:PORT", id="no port"),
    ],
)
def test_run_refuses_an_exposed_or_bad_debug_address(
    tmp_path: Path, address: str, error: str
) -> None:
    # refused before anything else is read (the kubeconfig here does not exist)
    result = asched_run(
        tmp_path,
        *("--bind-address", "127.0.0.1", "--insecure-serving"),  # plain HTTP, asked for
        *("--debug-addr", address, "--kubeconfig", "/nonexistent"),
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"asched run: error: {error}"), line


def test_debug_decisions_must_be_positive(tmp_path: Path) -> None:
    result = asched_run(tmp_path, "--debug-addr", "127.0.0.1:0", "--debug-decisions", "0")
    assert result.returncode == 2
    assert "--debug-decisions: expected a whole number of at least 1, got '0'" in result.stderr


async def test_debug_pages_off_by_default(cluster: Any) -> None:
    # without --debug-addr nothing is recorded and nothing listens
    from scheduler_harness import running_scheduler

    async with running_scheduler(cluster, cluster.unique_name("sched")) as running:
        assert running.app.recorder is None
        observer = running.app.scheduler.observer
        assert isinstance(observer, Observers)
        assert observer.recorder is None
        assert running.app.debug_listening is None


async def test_the_ring_keeps_the_last_n_decisions_live(cluster: Any) -> None:
    name = cluster.unique_name("sched")
    await cluster.create_node(cluster.unique_name("n"), cpu="8", memory="8Gi")
    async with debugged_scheduler(cluster, name, decisions=2) as debugged:
        pods = [cluster.unique_name("p") for _ in range(4)]
        for pod in pods:
            await cluster.create_pod(pod, scheduler_name=name, cpu="100m", memory="10Mi")

        async def four_bound() -> bool:
            now = await debugged.json("/debug/api/now")
            return bool(now["window"]["bound"] == 4)

        await until(four_bound, within=30)
        listed = await debugged.json("/debug/api/decisions")
        assert listed["capacity"] == 2
        assert len(listed["decisions"]) == 2
        async with aiohttp.ClientSession() as http:
            oldest = min(d["id"] for d in listed["decisions"])
            async with http.get(f"{debugged.base}/debug/api/decision?id={oldest - 1}") as response:
                assert response.status == 404
