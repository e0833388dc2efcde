"""The example plugin packages, installed with pip into a fresh venv, end to end.

One venv per session holds only asched (built from this checkout) and the three examples
installed with their ``[test]`` extra, as a platform team would install them. In it:
each example's own tests pass with ``pytest`` run in its folder; ``asched plugins`` lists
them with where they come from; ``asched explain`` shows their reasons and scores; and
``asched run`` schedules with them against both API backends.

``examples/maintenance-filter`` was written from docs/plugins.md alone (issue 30): its
Filter reads annotations (a node in maintenance is skipped unless the pod ignores
maintenance), its Score reads a map of per-zone weights. Here the annotations come from
a snapshot file (explain) and from the API server (run), where a pod parked by the
Filter is bound once the node's annotation changes.
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
EXAMPLES = ("price-score", "gpu-packing", "maintenance-filter")
GPU = "nvidia.com/gpu"
PRICE = "example.com/price-per-hour"
MAINTENANCE = "example.com/maintenance"
IGNORE = "example.com/ignore-maintenance"
ZONE = "topology.kubernetes.io/zone"


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
    """A fresh venv with asched and the examples (``[test]``); yields its bin directory.

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
    assert rows["Maintenance"]["extensionPoints"] == ["filter"]
    assert rows["Maintenance"]["argsKind"] == "MaintenanceArgs"
    assert rows["Maintenance"]["origin"] == "asched-maintenance-filter 0.1.0"
    assert rows["ZoneWeights"]["extensionPoints"] == ["score"]
    assert rows["ZoneWeights"]["source"] == "asched_maintenance_filter:ZONE_WEIGHTS"
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


def _careful(scheduler: str, *, pinned: dict[str, Any] | None = None) -> dict[str, Any]:
    """A profile with Maintenance and ZoneWeights (weight 10) on top of the defaults."""
    plugin_config: list[dict[str, Any]] = [
        {"name": "ZoneWeights", "args": {"zoneWeights": {"zone-a": 100, "zone-b": 50}}},
    ]
    if pinned is not None:
        plugin_config.append({"name": "NodeAffinity", "args": {"addedAffinity": pinned}})
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 2,
        "leaderElection": {"leaderElect": False},
        "profiles": [
            {
                "schedulerName": scheduler,
                "plugins": {
                    "multiPoint": {
                        "enabled": [{"name": "Maintenance"}, {"name": "ZoneWeights", "weight": 10}]
                    }
                },
                "pluginConfig": plugin_config,
            }
        ],
    }


def _zoned(name: str, zone: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    node = _node(name, "0.10")
    node["metadata"]["labels"][ZONE] = zone
    if annotations:
        node["metadata"]["annotations"] = annotations
    return node


@pytest.mark.parametrize(
    ("annotations", "down", "selected"),
    [
        pytest.param(
            {},
            {
                "feasible": False,
                "plugin": "Maintenance",
                "code": "UnschedulableAndUnresolvable",
                "reasons": ["node(s) are in maintenance"],
            },
            "good",  # zone-b's 50 beats zone-c's default 0; zone-a's node is in maintenance
            id="kept off the node in maintenance",
        ),
        pytest.param({IGNORE: "true"}, 100, "down", id="ignores maintenance: zone-a's 100"),
    ],
)
def test_explain_reads_the_snapshots_annotations(
    plugin_env: Path, tmp_path: Path, annotations: dict[str, str], down: Any, selected: str
) -> None:
    snapshot = tmp_path / "cluster.yaml"
    nodes = [
        _zoned("down", "zone-a", {MAINTENANCE: "true", "example.com/big": "x" * 100_000}),
        _zoned("good", "zone-b", {MAINTENANCE: "false"}),
        _zoned("poor", "zone-c"),
    ]
    snapshot.write_text(yaml.safe_dump_all(nodes))
    pod = tmp_path / "pod.yaml"
    metadata = {"name": "web", "namespace": "default", "annotations": annotations}
    pod.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": metadata,
                "spec": {"schedulerName": "careful", "containers": [{"name": "c", "image": "x"}]},
            }
        )
    )
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(_careful("careful")))
    explain = (plugin_env / "asched", "explain", "--snapshot", snapshot, "--pod", pod)
    result = json.loads(_run(*explain, "--config", config, "-o", "json"))
    if isinstance(down, int):
        assert result["nodes"]["down"]["scores"]["ZoneWeights"] == down
    else:
        assert result["nodes"]["down"] == down
    assert result["nodes"]["good"]["scores"]["ZoneWeights"] == 50
    assert result["nodes"]["poor"]["scores"]["ZoneWeights"] == 0
    assert result["weights"]["ZoneWeights"] == 10
    assert result["selected"] == selected


async def _annotate(cluster: Any, path: str, annotations: dict[str, str]) -> None:
    await cluster.rest.patch(path, {"metadata": {"annotations": annotations}})


async def test_run_keeps_pods_off_nodes_in_maintenance(
    plugin_env: Path, cluster: Any, tmp_path: Path
) -> None:
    scheduler = cluster.unique_name("careful")
    pinned = config_for(cluster, scheduler)["profiles"][0]["pluginConfig"][0]["args"]
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(_careful(scheduler, pinned=pinned["addedAffinity"])))
    down, good, poor = (cluster.unique_name(n) for n in ("down", "good", "poor"))
    for name, zone in ((down, "zone-a"), (good, "zone-b"), (poor, "zone-c")):
        await cluster.create_node(name, cpu="8", memory="32Gi", labels={ZONE: zone})
    await _annotate(cluster, f"/api/v1/nodes/{down}", {MAINTENANCE: "true"})
    pods = f"/api/v1/namespaces/{cluster.namespace}/pods"
    for index in range(3):
        await cluster.create_pod(f"web-{index}", scheduler_name=scheduler)
    await cluster.create_pod("fixer", scheduler_name=scheduler)
    await _annotate(cluster, f"{pods}/fixer", {IGNORE: "true"})
    # only the node in maintenance would do: parked until its maintenance ends
    only_down = {"nodeSelector": {"kubernetes.io/hostname": down}}
    await cluster.create_pod("waiting", scheduler_name=scheduler, spec=only_down)
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

        async def placed() -> dict[str, str]:
            return {
                p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in await pods_of(cluster)
            }

        async def others_bound() -> bool:
            return all(node for name, node in (await placed()).items() if name != "waiting")

        async def waiting_reported() -> bool:
            pod = await cluster.rest.get(f"{pods}/waiting")
            conditions = pod.get("status", {}).get("conditions") or []
            return any(
                c.get("type") == "PodScheduled" and "in maintenance" in c.get("message", "")
                for c in conditions
            )

        await until(others_bound, within=60)
        await until(waiting_reported, within=60)
        where = await placed()
        # zone-b (50 x 10) beats zone-c (0); zone-a's node is in maintenance
        assert {where[f"web-{i}"] for i in range(3)} == {good}
        assert where["fixer"] == down  # it ignores maintenance: zone-a's 100 x 10 wins
        assert where["waiting"] == ""
        await _annotate(cluster, f"/api/v1/nodes/{down}", {MAINTENANCE: "false"})

        async def waiting_bound() -> bool:
            return (await placed())["waiting"] == down

        # NodeAnnotationChange moves it at once (the flush would take 5 minutes)
        await until(waiting_bound, within=30)
    finally:
        process.terminate()
        _, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
    assert process.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
