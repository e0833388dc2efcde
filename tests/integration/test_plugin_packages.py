"""The example plugin packages, installed with pip into a fresh venv, end to end.

One venv per session holds only asched (built from this checkout) and the two examples
installed with their ``[test]`` extra, as a platform team would install them. In it:
each example's own tests pass with ``pytest`` run in its folder; ``asched plugins`` lists
both with where they come from; ``asched explain`` shows their reasons and scores; and
``asched run`` schedules with them against both API backends.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import venv
from pathlib import Path
from typing import Any

import pytest
import yaml
from scheduler_harness import config_for, pods_of, until

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ("price-score", "gpu-packing")
GPU = "nvidia.com/gpu"
PRICE = "example.com/price-per-hour"


#: the environment a user's shell would give (pytest sets COLUMNS for its own output)
ENV = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}


def _run(*args: str | Path, cwd: Path | None = None, timeout: float = 600) -> str:
    result = subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        check=False,
        env=ENV,
    )
    assert result.returncode == 0, f"{args}: {result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="session")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with asched and both examples (``[test]``); yields its bin directory.

    The sources are copied first, so pip's build leaves nothing in the checkout."""
    root = tmp_path_factory.mktemp("plugin-env")
    source = root / "asched"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(
        REPO / "asched", source / "asched", ignore=shutil.ignore_patterns("__pycache__")
    )
    for example in EXAMPLES:
        shutil.copytree(
            REPO / "examples" / example,
            root / example,
            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"),
        )
    env = root / "venv"
    venv.create(env, with_pip=True)
    bin_dir = env / "bin"
    pip = (bin_dir / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check")
    _run(*pip, source)
    _run(*pip, *(f"{root / example}[test]" for example in EXAMPLES))
    return bin_dir


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_tests_pass_in_the_fresh_venv(plugin_env: Path, example: str) -> None:
    folder = plugin_env.parent.parent / example
    out = _run(plugin_env / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=folder)
    assert " passed" in out
    assert "failed" not in out


def test_asched_plugins_lists_the_installed_plugins(plugin_env: Path) -> None:
    listing = json.loads(_run(plugin_env / "asched", "plugins", "-o", "json"))
    rows = {row["name"]: row for row in listing["plugins"]}
    assert rows["PreferCheaperNodes"]["extensionPoints"] == ["score"]
    assert rows["PreferCheaperNodes"]["origin"] == "asched-price-score 0.1.0"
    assert rows["PreferCheaperNodes"]["source"] == "asched_price_score:PLUGIN"
    assert rows["GPUPacking"]["extensionPoints"] == ["filter", "preScore", "score"]
    assert rows["GPUPacking"]["argsKind"] == "GPUPackingArgs"
    assert rows["NodeResourcesFit"]["origin"] == "in-tree"
    assert listing["broken"] == []


def _config(scheduler: str, *, pinned: dict[str, Any] | None = None) -> dict[str, Any]:
    """A profile with both plugins on top of the defaults, price weighted 10."""
    plugin_config: list[dict[str, Any]] = [
        {"name": "PreferCheaperNodes", "args": {"priceLabel": PRICE}},
        {"name": "GPUPacking", "args": {"reserveGPUNodes": True}},
    ]
    if pinned is not None:
        plugin_config.append({"name": "NodeAffinity", "args": {"addedAffinity": pinned}})
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [
            {
                "schedulerName": scheduler,
                "plugins": {
                    "multiPoint": {
                        "enabled": [
                            {"name": "PreferCheaperNodes", "weight": 10},
                            {"name": "GPUPacking"},
                        ]
                    }
                },
                "pluginConfig": plugin_config,
            }
        ],
    }


def _node(name: str, price: str, gpus: int = 0) -> dict[str, Any]:
    allocatable = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    if gpus:
        allocatable[GPU] = str(gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, PRICE: price}},
        "status": {"allocatable": allocatable, "capacity": allocatable},
    }


def test_explain_shows_their_reasons_and_scores(plugin_env: Path, tmp_path: Path) -> None:
    snapshot = tmp_path / "cluster.yaml"
    nodes = [_node("cheap", "0.10"), _node("dear", "0.50"), _node("gpu", "0.05", gpus=8)]
    snapshot.write_text(yaml.safe_dump_all(nodes))
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"schedulerName": "priced", "containers": [{"name": "c", "image": "x"}]},
            }
        )
    )
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(_config("priced")))
    explain = (plugin_env / "asched", "explain", "--snapshot", snapshot, "--pod", pod)
    result = json.loads(_run(*explain, "--config", config, "-o", "json"))
    gpu = result["nodes"]["gpu"]
    assert gpu == {
        "feasible": False,
        "plugin": "GPUPacking",
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) reserve their GPUs for GPU pods"],
    }
    # cheap 0.10 and dear 0.50 take part: cheap -> 100, dear -> 0
    assert result["nodes"]["cheap"]["scores"]["PreferCheaperNodes"] == 100
    assert result["nodes"]["dear"]["scores"]["PreferCheaperNodes"] == 0
    assert result["weights"]["PreferCheaperNodes"] == 10
    assert result["selected"] == "cheap"
    table = _run(*explain, "--config", config)
    assert "PreferCheaperNodes" in table
    assert "reserve their GPUs" in table


async def test_run_schedules_with_them(plugin_env: Path, cluster: Any, tmp_path: Path) -> None:
    scheduler = cluster.unique_name("priced")
    pinned = config_for(cluster, scheduler)["profiles"][0]["pluginConfig"][0]["args"]
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(_config(scheduler, pinned=pinned["addedAffinity"])))
    cheap, dear, gpu = (cluster.unique_name(n) for n in ("cheap", "dear", "gpu"))
    await cluster.create_node(cheap, cpu="8", memory="32Gi", labels={PRICE: "0.10"})
    await cluster.create_node(dear, cpu="8", memory="32Gi", labels={PRICE: "0.50"})
    await cluster.create_node(
        gpu, cpu="8", memory="32Gi", labels={PRICE: "0.01"}, extended={GPU: "8"}
    )
    process = await asyncio.create_subprocess_exec(
        plugin_env / "asched",
        "run",
        "--config",
        str(config),
        "--kubeconfig",
        str(cluster.kubeconfig),
        "--health-port",
        "0",
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PATH": f"{plugin_env}:{os.environ['PATH']}"},
    )
    try:
        for index in range(4):
            await cluster.create_pod(f"web-{index}", scheduler_name=scheduler)
        gpu_pod = {
            "containers": [
                {
                    "name": "c",
                    "image": "x",
                    "resources": {"requests": {GPU: "2"}, "limits": {GPU: "2"}},
                }
            ]
        }
        await cluster.create_pod("train", scheduler_name=scheduler, spec=gpu_pod)

        async def all_bound() -> bool:
            return all(p["spec"].get("nodeName") for p in await pods_of(cluster))

        await until(all_bound, within=60)
        placed = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in await pods_of(cluster)}
        # CPU pods: the GPU node is reserved, and cheap (score 100 x 10) beats dear (0)
        assert {placed[f"web-{i}"] for i in range(4)} == {cheap}
        assert placed["train"] == gpu  # the only node with GPUs
    finally:
        process.terminate()
        _, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    assert process.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
