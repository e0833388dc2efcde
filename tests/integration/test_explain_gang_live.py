"""``asched explain`` on a gang member of a live cluster, on both backends: the same verdict
as the running scheduler's (the PodGroup CRD and the Coscheduling profile of
tests/integration/gang_support.py).

explain lists the PodGroups (and Workloads, where served) at the paths the scheduler
watches, counts the member it explains as a pending member of its gang, and runs the
whole-gang admission the cycle runs: a gang the scheduler refuses is refused with the
scheduler's own words.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from gang_support import condition_message, coscheduling, create_group, create_members, install_crd
from scheduler_harness import config_for, running_scheduler, until


@pytest.fixture
async def gang_cluster(cluster: Any) -> Any:
    await install_crd(cluster)
    return cluster


async def explain(*argv: str | Path) -> dict[str, Any]:
    """``python -m asched explain ARGV -o json`` in a child process, awaited (the scheduler
    runs in this loop meanwhile); its JSON answer."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "asched",
        "explain",
        *map(str, argv),
        "-o",
        "json",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "COLUMNS": "250"},
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, stderr.decode()
    answer: dict[str, Any] = json.loads(stdout)
    return answer


async def test_explain_gives_the_schedulers_refusal(gang_cluster: Any, tmp_path: Path) -> None:
    # room for 5: one node of 4 CPU and one of 1 CPU; the gang needs 6 members of 1 CPU
    cluster = gang_cluster
    name = cluster.unique_name("sched")
    await cluster.create_node(cluster.unique_name("n"), cpu="4", memory="8Gi")
    await cluster.create_node(cluster.unique_name("n"), cpu="1", memory="8Gi")
    # explain reads the configuration the scheduler runs with (its profile, pinned to
    # this test's nodes)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(config_for(cluster, name, profile=coscheduling())))
    async with running_scheduler(cluster, name, profile=coscheduling()):
        await create_group(cluster, "big", 6)
        members = await create_members(cluster, "big", name, 6)

        async def reported() -> bool:
            return "cannot be placed together" in await condition_message(cluster, members[0])

        await until(reported, within=30)
        reported_message = await condition_message(cluster, members[0])
        answer = await explain(
            members[0],
            "-n",
            cluster.namespace,
            "--kubeconfig",
            cluster.kubeconfig,
            "--config",
            config,
        )
    # the scheduler's words, to the letter: the FitError over the 2 nodes, the gang's
    # reason, Coscheduling's PostFilter
    assert answer["message"] == reported_message
    reason = (
        f"pod group {cluster.namespace}/big has 0 of 6 members placed: the 6 missing cannot "
        "be placed together (room for 5)"
    )
    assert answer["gang"] == {
        "key": f"{cluster.namespace}/big",
        "minMember": 6,
        "members": 6,
        "placed": 0,
        "admitted": False,
        "reason": reason,
    }
    assert reason in reported_message
    assert answer["selected"] is None
    # what the member alone meets: both nodes have room for one member
    feasible = sorted(n for n, verdict in answer["nodes"].items() if verdict["feasible"])
    assert len(feasible) == 2
