"""``asched explain POD`` against a live cluster, on both backends.

Every test builds its own nodes (labelled with the test's id) and pods in its own
namespace; the pod explained selects the test's nodes (``nodeSelector``), so nodes of
other tests, if any were left, are infeasible and change no number asserted here.

The cluster used by most tests::

    node-a  4 CPU, 8Gi   holds a bound pod of 2 CPU, 1Gi
    node-b  4 CPU, 8Gi   empty
    node-c  1 CPU, 8Gi   too small for the pod

    pod     1500m CPU, 1Gi, pending (no scheduler runs here)

NodeResourcesFit (LeastAllocated, cpu and memory weight 1) scores a node
``(cpu% + memory%) // 2`` with ``x% = (allocatable - requested) * 100 // allocatable``:

- node-b: cpu (4000 - 1500) * 100 // 4000 = 62, memory (8 - 1) * 100 // 8 = 87 -> 74
- node-a: cpu (4000 - 3500) * 100 // 4000 = 12, memory (8 - 2) * 100 // 8 = 75 -> 43
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
import yaml
from aiohttp import web

from asched.api.client import KubeClient
from asched.explain import live
from asched.explain.config_source import CONFIG_MAP_KEY, DEFAULT_CONFIG_MAP
from asched.tools.backends.errors import StatusError
from asched.tools.backends.kubeconfig import read_kubeconfig, write_kubeconfig
from asched.tools.backends.launcher import LIMITED_USER, KubeApiServer
from asched.tools.bench.extender_server import ExtenderRules, serve_extender
from tests.kubectl import kubectl_path

ROOT = Path(__file__).resolve().parents[2]
CPU_NEEDED = "1500m"


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    def json(self) -> dict[str, Any]:
        assert self.code == 0, self.err
        answer: dict[str, Any] = json.loads(self.out)
        return answer


async def run(
    *argv: str | Path, env: Mapping[str, str] | None = None, program: tuple[str, ...] = ()
) -> Result:
    """A child process, awaited (so a server in this loop can answer it meanwhile);
    by default ``python -m asched explain ARGV``."""
    command = program or (sys.executable, "-m", "asched", "explain")
    process = await asyncio.create_subprocess_exec(
        *command,
        *map(str, argv),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "COLUMNS": "250", **(env or {})},
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return Result(process.returncode, stdout.decode(), stderr.decode())


@dataclass(frozen=True)
class Scene:
    """The cluster of the module docstring: node names and the pending pod's name."""

    a: str
    b: str
    c: str
    pod: str


async def build_scene(cluster: Any, scheduler_name: str = "default-scheduler") -> Scene:
    a, b, c = (cluster.unique_name(f"node-{x}") for x in "abc")
    await cluster.create_node(a, cpu="4", memory="8Gi")
    await cluster.create_node(b, cpu="4", memory="8Gi")
    await cluster.create_node(c, cpu="1", memory="8Gi")
    await cluster.create_pod(cluster.unique_name("bound"), cpu="2", memory="1Gi", node_name=a)
    pod = cluster.unique_name("web")
    await cluster.create_pod(
        pod,
        cpu=CPU_NEEDED,
        memory="1Gi",
        scheduler_name=scheduler_name,
        spec={"nodeSelector": dict(cluster.labels)},
    )
    return Scene(a, b, c, pod)


def write_yaml(path: Path, document: Any) -> Path:
    path.write_text(yaml.safe_dump(document))
    return path


async def export(cluster: Any, path: Path) -> Path:
    """What ``kubectl get nodes,pods,namespaces,... -A -o yaml`` would write, read with the
    tests' own REST client (not asched's reader)."""
    items: list[dict[str, Any]] = []
    for collection, kind in (
        ("/api/v1/nodes", "Node"),
        ("/api/v1/pods", "Pod"),
        ("/api/v1/namespaces", "Namespace"),
        ("/api/v1/services", "Service"),
        ("/api/v1/replicationcontrollers", "ReplicationController"),
        ("/apis/apps/v1/replicasets", "ReplicaSet"),
        ("/apis/apps/v1/statefulsets", "StatefulSet"),
        ("/apis/policy/v1/poddisruptionbudgets", "PodDisruptionBudget"),
    ):
        items.extend({"kind": kind, **item} for item in await cluster.rest.list_all(collection))
    return write_yaml(path, {"apiVersion": "v1", "kind": "List", "items": items})


async def pod_file(cluster: Any, name: str, path: Path) -> Path:
    pod = await cluster.rest.get(f"/api/v1/namespaces/{cluster.namespace}/pods/{name}")
    return write_yaml(path, {"kind": "Pod", **pod})


def without_configuration(answer: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in answer.items() if key != "configuration"}


async def test_live_answer_is_the_snapshot_answer(cluster: Any, tmp_path: Path) -> None:
    scene = await build_scene(cluster)
    live = await run(
        scene.pod, "--kubeconfig", cluster.kubeconfig, "-n", cluster.namespace, "-o", "json"
    )
    answer = live.json()
    snapshot = await export(cluster, tmp_path / "cluster.yaml")
    pod = await pod_file(cluster, scene.pod, tmp_path / "pod.yaml")
    replayed = (await run("--snapshot", snapshot, "--pod", pod, "-o", "json")).json()

    assert without_configuration(answer) == without_configuration(replayed)
    assert answer["pod"] == f"{cluster.namespace}/{scene.pod}"
    assert answer["selected"] == scene.b  # 74 beats 43 (module docstring)
    nodes = answer["nodes"]
    assert nodes[scene.b]["scores"]["NodeResourcesFit"] == 74
    assert nodes[scene.a]["scores"]["NodeResourcesFit"] == 43
    assert nodes[scene.c] == {
        "feasible": False,
        "plugin": "NodeResourcesFit",
        "code": "Unschedulable",
        "reasons": ["Insufficient cpu"],
    }
    # no --config and no ConfigMap: the default profile, and the output says why
    assert answer["configuration"] == {
        "source": "default",
        "name": None,
        "note": "no ConfigMap kube-system/asched-config",
    }


async def test_a_pod_from_a_file_is_placed_in_the_live_cluster(
    cluster: Any, tmp_path: Path
) -> None:
    # the scene's pending pod as a file, then deleted from the cluster: "where would this
    # pod go if I created it now" needs no snapshot, and answers as the pod itself did
    scene = await build_scene(cluster)
    pod = await pod_file(cluster, scene.pod, tmp_path / "pod.yaml")
    before = (
        await run(
            scene.pod, "--kubeconfig", cluster.kubeconfig, "-n", cluster.namespace, "-o", "json"
        )
    ).json()
    await cluster.rest.delete(
        f"/api/v1/namespaces/{cluster.namespace}/pods/{scene.pod}", grace_period_seconds=0
    )

    answer = (await run("--pod", pod, "--kubeconfig", cluster.kubeconfig, "-o", "json")).json()

    assert without_configuration(answer) == without_configuration(before)
    assert answer["selected"] == scene.b
    assert answer["bound"] is None


async def test_a_bound_pod_is_explained_where_it_would_go_now(cluster: Any) -> None:
    # the scene's bound pod (2 CPU on node a): taken off its node, node a is empty again,
    # and it would go where a pending copy of it would go
    scene = await build_scene(cluster)
    pods = await cluster.rest.list(f"/api/v1/namespaces/{cluster.namespace}/pods")
    bound = next(p["metadata"]["name"] for p in pods["items"] if p["spec"].get("nodeName"))

    answer = (
        await run(bound, "--kubeconfig", cluster.kubeconfig, "-n", cluster.namespace, "-o", "json")
    ).json()

    assert answer["bound"] == {
        "node": scene.a,
        "by": "its spec.nodeName was set when it was created: no scheduler placed it",
    }
    assert answer["nodes"][scene.a]["feasible"] is True  # not "rejected by NodeName"
    assert all(v.get("plugin") != "NodeName" for v in answer["nodes"].values())


async def test_snapshot_out_replays_to_the_same_answer(cluster: Any, tmp_path: Path) -> None:
    scene = await build_scene(cluster)
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    saved = tmp_path / "saved.json"
    common = ("--config", config, "--seed", "3", "-o", "json")
    live = (
        await run(
            f"{cluster.namespace}/{scene.pod}",
            "--kubeconfig",
            cluster.kubeconfig,
            "--snapshot-out",
            saved,
            *common,
        )
    ).json()
    by_name = await run("--snapshot", saved, f"{cluster.namespace}/{scene.pod}", *common)
    assert by_name.json() == live

    # the pod is in the saved List (last); as a --pod file it gives the same answer
    document = json.loads(saved.read_text())
    assert document["kind"] == "List"
    assert document["items"][-1]["metadata"]["name"] == scene.pod
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(document["items"][-1]))
    assert (await run("--snapshot", saved, "--pod", pod, *common)).json() == live
    assert live["configuration"] == {"source": "file", "name": str(config)}


async def test_a_bound_pod_is_not_counted_on_its_own_node(cluster: Any) -> None:
    # explaining a pod that already runs: its own 2 CPU must not count against node-a
    scene = await build_scene(cluster)
    pods = await cluster.rest.list_all(f"/api/v1/namespaces/{cluster.namespace}/pods")
    bound = next(p["metadata"]["name"] for p in pods if p["spec"].get("nodeName") == scene.a)
    answer = (
        await run(bound, "-n", cluster.namespace, "--kubeconfig", cluster.kubeconfig, "-o", "json")
    ).json()
    # it is said to be bound to node-a, by no scheduler (spec.nodeName set at creation)
    assert answer["bound"]["node"] == scene.a
    assert "no scheduler placed it" in answer["bound"]["by"]
    # and evaluated as if pending (2 CPU, 1Gi), its own requests left off node-a:
    # cpu (4000 - 2000) * 100 // 4000 = 50, memory (8 - 1) * 100 // 8 = 87
    # -> (50 + 87) // 2 = 68 (counted twice it would be cpu 0, memory 75 -> 37);
    # node-b, empty, scores the same 68, node-c (1 CPU) cannot hold it
    assert answer["nodes"][scene.a]["scores"]["NodeResourcesFit"] == 68
    assert answer["nodes"][scene.b]["scores"]["NodeResourcesFit"] == 68
    assert answer["nodes"][scene.c]["feasible"] is False
    assert answer["selected"] in (scene.a, scene.b)


async def test_a_missing_pod_is_one_line_and_status_2(cluster: Any) -> None:
    result = await run("ghost", "-n", cluster.namespace, "--kubeconfig", cluster.kubeconfig)
    assert result.code == 2
    assert result.err == (
        f'asched explain: error: pods "ghost" not found in namespace "{cluster.namespace}"\n'
    )


async def test_an_unreachable_api_is_one_line_and_status_1(tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(
        tmp_path / "kubeconfig", server="http://127.0.0.1:1", ca_pem=None, token="t"
    )
    result = await run("default/web", "--kubeconfig", kubeconfig)
    assert result.code == 1, result.err
    assert result.err.count("\n") == 1, result.err
    assert result.err.startswith(
        "asched explain: error: cannot reach the API server http://127.0.0.1:1: "
        'cannot get pods "web" in namespace "default" (needed for the pod to explain): '
    )


MOST_ALLOCATED = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: asched
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
"""


async def create_config_map(cluster: Any, namespace: str, name: str) -> None:
    await cluster.rest.create(
        f"/api/v1/namespaces/{namespace}/configmaps",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name},
            "data": {CONFIG_MAP_KEY: MOST_ALLOCATED},
        },
    )


@pytest.fixture
async def deployed_config(cluster: Any) -> AsyncIterator[None]:
    """The ConfigMap deploy/ ships (kube-system/asched-config) with MOST_ALLOCATED."""
    namespace, name = DEFAULT_CONFIG_MAP
    await create_config_map(cluster, namespace, name)
    try:
        yield
    finally:
        try:
            await cluster.rest.delete(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
        except StatusError as exc:
            if exc.status != 404:
                raise


def test_the_default_config_map_is_the_one_deploy_ships() -> None:
    documents = list(yaml.safe_load_all((ROOT / "deploy" / "configmap.yaml").read_text()))
    (config_map,) = [d for d in documents if d and d.get("kind") == "ConfigMap"]
    meta = config_map["metadata"]
    assert (meta["namespace"], meta["name"]) == DEFAULT_CONFIG_MAP
    assert CONFIG_MAP_KEY in config_map["data"]
    deployment = yaml.safe_load((ROOT / "deploy" / "deployment.yaml").read_text())
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--config") + 1] == f"/etc/asched/{CONFIG_MAP_KEY}"


@pytest.mark.usefixtures("deployed_config")
async def test_the_deployed_config_map_is_used_and_named(cluster: Any) -> None:
    scene = await build_scene(cluster, scheduler_name="asched")
    base = (scene.pod, "-n", cluster.namespace, "--kubeconfig", cluster.kubeconfig)
    answer = (await run(*base, "-o", "json")).json()
    assert answer["configuration"] == {
        "source": "ConfigMap",
        "name": "kube-system/asched-config",
        "key": "config.yaml",
    }
    # its only profile, which the pod names
    assert answer["profile"] == "asched"
    # MostAllocated scores x% = requested * 100 // allocatable:
    # node-a: cpu 3500 * 100 // 4000 = 87, memory 2 * 100 // 8 = 25 -> 56
    # node-b: cpu 1500 * 100 // 4000 = 37, memory 1 * 100 // 8 = 12 -> 24
    assert answer["nodes"][scene.a]["scores"]["NodeResourcesFit"] == 56
    assert answer["nodes"][scene.b]["scores"]["NodeResourcesFit"] == 24
    assert answer["selected"] == scene.a
    table = await run(*base)
    assert table.code == 0, table.err
    assert table.out.splitlines()[0] == (
        "configuration: ConfigMap kube-system/asched-config (key config.yaml)"
    )


async def test_config_map_flag_and_config_file_precedence(cluster: Any, tmp_path: Path) -> None:
    scene = await build_scene(cluster)
    await create_config_map(cluster, cluster.namespace, "my-asched")
    base = (scene.pod, "-n", cluster.namespace, "--kubeconfig", cluster.kubeconfig, "-o", "json")
    # the pod names default-scheduler, which the ConfigMap's profiles do not: picked by flag
    named = (
        await run(
            *base, "--config-map", f"{cluster.namespace}/my-asched", "--scheduler-name", "asched"
        )
    ).json()
    assert named["configuration"]["name"] == f"{cluster.namespace}/my-asched"
    assert named["selected"] == scene.a  # MostAllocated (see above)
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
    )
    chosen = (
        await run(*base, "--config-map", f"{cluster.namespace}/my-asched", "--config", config)
    ).json()
    assert chosen["configuration"] == {"source": "file", "name": str(config)}
    assert chosen["selected"] == scene.b  # the default profile's LeastAllocated
    missing = await run(*base, "--config-map", f"{cluster.namespace}/nope")
    assert missing.code == 2
    assert missing.err == (
        f'asched explain: error: configmaps "nope" not found in namespace '
        f'"{cluster.namespace}" (--config-map)\n'
    )


@dataclass
class Recorder:
    """A plain-HTTP proxy in front of the test's API server that records every request."""

    upstream: str
    ssl: Any
    requests: list[tuple[str, str]]


@pytest.fixture
async def recording_proxy(cluster: Any, tmp_path: Path) -> AsyncIterator[tuple[Recorder, Path]]:
    """(the recorder, a kubeconfig that goes through it)."""
    entry = read_kubeconfig(cluster.kubeconfig)
    context = ssl.create_default_context(cadata=entry.ca_pem.decode()) if entry.ca_pem else None
    recorder = Recorder(entry.server, context, [])
    session = aiohttp.ClientSession()

    async def forward(request: web.Request) -> web.StreamResponse:
        recorder.requests.append((request.method, request.path_qs))
        async with session.request(
            request.method,
            recorder.upstream + request.path_qs,
            headers={k: v for k, v in request.headers.items() if k.lower() != "host"},
            data=await request.read(),
            ssl=recorder.ssl if recorder.ssl is not None else True,
        ) as answer:
            body = await answer.read()
            return web.Response(status=answer.status, body=body, content_type=answer.content_type)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    kubeconfig = write_kubeconfig(
        tmp_path / "proxied", server=f"http://127.0.0.1:{port}", ca_pem=None, token=entry.token
    )
    try:
        yield recorder, kubeconfig
    finally:
        await runner.cleanup()
        await session.close()


async def test_explain_only_reads(
    cluster: Any, recording_proxy: tuple[Recorder, Path], tmp_path: Path
) -> None:
    recorder, kubeconfig = recording_proxy
    scene = await build_scene(cluster)
    result = await run(
        scene.pod,
        "-n",
        cluster.namespace,
        "--kubeconfig",
        kubeconfig,
        "--snapshot-out",
        tmp_path / "saved.yaml",
        "-o",
        "json",
    )
    assert result.json()["selected"] == scene.b
    assert {method for method, _ in recorder.requests} == {"GET"}
    lists = [path for _, path in recorder.requests if "limit=" in path]
    # every collection of a snapshot, paged (limit=500), pods without finished ones
    assert sorted(path.split("?")[0].rsplit("/", 1)[-1] for path in lists) == sorted(
        [
            "namespaces",
            "nodes",
            "poddisruptionbudgets",
            "pods",
            "replicasets",
            "replicationcontrollers",
            "services",
            "statefulsets",
            "persistentvolumes",
            "persistentvolumeclaims",
            "storageclasses",
            "csinodes",
            "csidrivers",
            "csistoragecapacities",
            # the gangs' (optional: a server that does not serve them has none)
            "podgroups",
            "workloads",
        ]
    )
    queries = {urlsplit(path).path: parse_qs(urlsplit(path).query) for path in lists}
    assert all(query["limit"] == ["500"] for query in queries.values())
    assert queries["/api/v1/pods"]["fieldSelector"] == [
        "status.phase!=Succeeded,status.phase!=Failed"
    ]


# --------------------------------------------------------------------------- RBAC

#: The simulator has no RBAC: these tests run on the genuine kube-apiserver only.
KUBE_APISERVER_ONLY = pytest.mark.parametrize(
    "backend",
    [pytest.param("kube-apiserver", marks=pytest.mark.kube_apiserver, id="kube-apiserver")],
    indirect=True,
)

#: What the limited user may read in the RBAC tests: everything explain lists but PDBs.
READ_ALL_BUT_BUDGETS: list[dict[str, Any]] = [
    {
        "apiGroups": [""],
        "resources": [
            "nodes",
            "pods",
            "namespaces",
            "services",
            "replicationcontrollers",
        ],
        "verbs": ["get", "list"],
    },
    {"apiGroups": ["apps"], "resources": ["replicasets", "statefulsets"], "verbs": ["list"]},
    {
        "apiGroups": [""],
        "resources": ["persistentvolumes", "persistentvolumeclaims"],
        "verbs": ["list"],
    },
    {
        "apiGroups": ["storage.k8s.io"],
        "resources": ["storageclasses", "csinodes", "csidrivers", "csistoragecapacities"],
        "verbs": ["list"],
    },
    # listed where served, but forbidden is an error: explain's reader may list them
    {"apiGroups": ["scheduling.x-k8s.io"], "resources": ["podgroups"], "verbs": ["list"]},
    {"apiGroups": ["scheduling.k8s.io"], "resources": ["workloads"], "verbs": ["list"]},
]
BUDGETS: dict[str, Any] = {
    "apiGroups": ["policy"],
    "resources": ["poddisruptionbudgets"],
    "verbs": ["list"],
}


@pytest.fixture
async def limited_kubeconfig(cluster: Any, tmp_path: Path) -> AsyncIterator[Any]:
    """grant(rules) -> a kubeconfig of the launcher's unprivileged user, given ``rules``
    cluster-wide (kube-apiserver only: the simulator has no RBAC)."""
    server = cluster.server
    assert isinstance(server, KubeApiServer)
    name = cluster.unique_name("explain-reader")
    created: list[str] = []

    async def grant(rules: list[dict[str, Any]]) -> Path:
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        await cluster.rest.create(
            f"{rbac}/clusterroles",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": name},
                "rules": rules,
            },
        )
        created.append(f"{rbac}/clusterroles/{name}")
        await cluster.rest.create(
            f"{rbac}/clusterrolebindings",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": name,
                },
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": LIMITED_USER}
                ],
            },
        )
        created.append(f"{rbac}/clusterrolebindings/{name}")
        return write_kubeconfig(
            tmp_path / "limited",
            server=server.url,
            ca_pem=server.ca_pem,
            token=server.limited_token,
        )

    try:
        yield grant
    finally:
        for path in reversed(created):
            await cluster.rest.delete(path)


@KUBE_APISERVER_ONLY
async def test_a_forbidden_list_names_what_it_was_needed_for(
    cluster: Any, limited_kubeconfig: Any
) -> None:
    scene = await build_scene(cluster)
    kubeconfig = await limited_kubeconfig(READ_ALL_BUT_BUDGETS)
    result = await run(scene.pod, "-n", cluster.namespace, "--kubeconfig", kubeconfig)
    assert result.code == 1, result.out
    assert result.err.count("\n") == 1, result.err
    assert result.err.startswith(
        "asched explain: error: forbidden: cannot list poddisruptionbudgets "
        "(needed for the disruption budgets preemption respects): "
        f'poddisruptionbudgets.policy is forbidden: User "{LIMITED_USER}" cannot list'
    )


@KUBE_APISERVER_ONLY
async def test_an_unreadable_default_config_map_falls_back_and_says_so(
    cluster: Any, limited_kubeconfig: Any
) -> None:
    scene = await build_scene(cluster)
    # no grant on configmaps: kube-system/asched-config cannot be read
    kubeconfig = await limited_kubeconfig([*READ_ALL_BUT_BUDGETS, BUDGETS])
    answer = (
        await run(scene.pod, "-n", cluster.namespace, "--kubeconfig", kubeconfig, "-o", "json")
    ).json()
    assert answer["selected"] == scene.b
    configuration = answer["configuration"]
    assert configuration["source"] == "default"
    assert configuration["note"].startswith(
        "ConfigMap kube-system/asched-config not read: forbidden: "
        "cannot get ConfigMap kube-system/asched-config: "
    )


# --------------------------------------------------------------------------- kubectl plugin

needs_kubectl = pytest.mark.kubectl


def plugin_on_path(directory: Path) -> dict[str, str]:
    """A ``kubectl-asched`` executable in ``directory`` (what the console script does) and
    the environment that puts it on PATH."""
    script = directory / "kubectl-asched"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m asched.kubectl_plugin "$@"\n')
    script.chmod(0o755)
    return {
        "PATH": f"{directory}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


@needs_kubectl
async def test_kubectl_asched_explain_is_asched_explain(cluster: Any, tmp_path: Path) -> None:
    scene = await build_scene(cluster)
    env = plugin_on_path(tmp_path)
    argv = ("--kubeconfig", cluster.kubeconfig, "-n", cluster.namespace, scene.pod, "-o", "json")
    through_kubectl = await run(*argv, env=env, program=(kubectl_path(), "asched", "explain"))
    assert through_kubectl.json() == (await run(*argv)).json()
    assert through_kubectl.json()["selected"] == scene.b
    # -o yaml is the same document
    as_yaml = await run(*argv[:-1], "yaml", env=env, program=(kubectl_path(), "asched", "explain"))
    assert as_yaml.code == 0, as_yaml.err
    assert yaml.safe_load(as_yaml.out) == through_kubectl.json()
    # errors are named after the plugin
    missing = await run("ghost", *argv[:4], env=env, program=(kubectl_path(), "asched", "explain"))
    assert missing.code == 2
    assert missing.err == (
        f'kubectl asched explain: error: pods "ghost" not found in namespace '
        f'"{cluster.namespace}"\n'
    )


def unreachable_first(tmp_path: Path, cluster: Any) -> tuple[str, str]:
    """A $KUBECONFIG list whose first file sets current-context to an unreachable
    cluster, and the second is the test's; returns (the list, the test's context)."""
    first = tmp_path / "first"
    first.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "nowhere", "cluster": {"server": "http://127.0.0.1:1"}}],
                "users": [{"name": "nobody", "user": {"token": "t"}}],
                "contexts": [
                    {"name": "nowhere", "context": {"cluster": "nowhere", "user": "nobody"}}
                ],
                "current-context": "nowhere",
            }
        )
    )
    ours = yaml.safe_load(Path(cluster.kubeconfig).read_text())["current-context"]
    return os.pathsep.join([str(first), str(tmp_path / "missing"), str(cluster.kubeconfig)]), ours


@needs_kubectl
async def test_kubectl_asched_merges_kubeconfig_and_honours_context(
    cluster: Any, tmp_path: Path
) -> None:
    scene = await build_scene(cluster)
    listed, ours = unreachable_first(tmp_path, cluster)
    env = {**plugin_on_path(tmp_path), "KUBECONFIG": listed}
    program = (kubectl_path(), "asched", "explain")
    # the first file that sets current-context wins: its cluster cannot be reached
    first = await run("-n", cluster.namespace, scene.pod, env=env, program=program)
    assert first.code == 1
    assert "cannot reach the API server http://127.0.0.1:1" in first.err
    # --context picks the test's context, defined by the third file of the list
    chosen = await run(
        "-n",
        cluster.namespace,
        scene.pod,
        "--context",
        ours,
        "-o",
        "json",
        env=env,
        program=program,
    )
    assert chosen.json()["selected"] == scene.b


async def test_the_configured_extenders_are_called(cluster: Any, tmp_path: Path) -> None:
    scene = await build_scene(cluster)
    rules = ExtenderRules(fail=frozenset({scene.b}), fail_reason="being drained")
    async with serve_extender(rules) as server:
        config = tmp_path / "config.json"
        config.write_text(
            json.dumps(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "extenders": [server.entry(weight=1)],
                }
            )
        )
        base = (scene.pod, "-n", cluster.namespace, "--kubeconfig", cluster.kubeconfig)
        answer = (await run(*base, "--config", config, "-o", "json")).json()
        sent = server.calls_of("filter")[0].body
        skipped = (await run(*base, "--config", config, "--no-extenders", "-o", "json")).json()
        assert len(server.calls_of("filter")) == 1  # --no-extenders calls nothing
    # node-b would win (74 over 43) but the extender rejects it: node-a is chosen
    assert answer["nodes"][scene.b] == {
        "feasible": False,
        "plugin": server.url,
        "code": "Unschedulable",
        "reasons": ["being drained"],
    }
    assert answer["selected"] == scene.a
    assert skipped["selected"] == scene.b
    # the extender was sent the pod and the Node objects as the API served them
    assert sent["Pod"]["metadata"]["name"] == scene.pod
    assert sorted(node["metadata"]["name"] for node in sent["Nodes"]["items"]) == sorted(
        [scene.a, scene.b]
    )
    served = await cluster.rest.get(f"/api/v1/nodes/{scene.a}")
    (node_a,) = [n for n in sent["Nodes"]["items"] if n["metadata"]["name"] == scene.a]
    assert node_a["metadata"]["uid"] == served["metadata"]["uid"]


async def test_reads_are_paged_and_the_same_whatever_the_page(
    cluster: Any, recording_proxy: tuple[Recorder, Path]
) -> None:
    recorder, kubeconfig = recording_proxy
    scene = await build_scene(cluster)
    client = await KubeClient.connect(str(kubeconfig))
    try:
        whole = await live.read_cluster(client, cluster.namespace, scene.pod)
        recorder.requests.clear()
        paged = await live.read_cluster(client, cluster.namespace, scene.pod, page_size=1)
    finally:
        await client.close()
    assert paged.objects == whole.objects
    assert paged.pod == whole.pod
    # 3 test nodes at least: pages of 1 take a continue token for every node after the first
    nodes = [
        parse_qs(urlsplit(p).query) for _, p in recorder.requests if p.startswith("/api/v1/nodes?")
    ]
    assert len(nodes) >= 3
    assert all(query["limit"] == ["1"] for query in nodes)
    assert "continue" not in nodes[0]
    assert all("continue" in query for query in nodes[1:])
    # the pod explained is read, never among the cluster's pods
    names = {o["metadata"]["name"] for o in whole.objects if o["kind"] == "Pod"}
    assert scene.pod not in names
    assert whole.pod["metadata"]["name"] == scene.pod


async def test_a_finished_pod_holds_nothing_on_its_node(cluster: Any) -> None:
    scene = await build_scene(cluster)
    pods = await cluster.rest.list_all(f"/api/v1/namespaces/{cluster.namespace}/pods")
    bound = next(p["metadata"]["name"] for p in pods if p["spec"].get("nodeName") == scene.a)
    await cluster.rest.patch(
        f"/api/v1/namespaces/{cluster.namespace}/pods/{bound}/status",
        {"status": {"phase": "Succeeded"}},
    )
    answer = (
        await run(
            scene.pod, "-n", cluster.namespace, "--kubeconfig", cluster.kubeconfig, "-o", "json"
        )
    ).json()
    # node-a is as empty as node-b now: cpu (4000 - 1500) * 100 // 4000 = 62, memory 87 -> 74
    assert answer["nodes"][scene.a]["scores"]["NodeResourcesFit"] == 74
    assert answer["nodes"][scene.b]["scores"]["NodeResourcesFit"] == 74
