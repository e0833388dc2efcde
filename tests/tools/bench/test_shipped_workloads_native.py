"""The shipped workloads in upstream's scheduler_perf format build what their home-grown
files built.

Every expected value below was read off the objects the old ``asched.bench/v1`` files
produced (before the conversion, a one-off script built every node, pod, claim, PV and
CSINode of each old file and of its replacement and compared them: equal apart from the
node names, the churned nodes' hostname label and the per-file timeouts). The deliberate
differences, pinned here so they stay deliberate:

* nodes are named ``node-<op>-<i>`` (upstream's op index), not ``node-<i>``;
* every node createNodes makes carries ``kubernetes.io/hostname: <its name>``, as
  upstream's node preparer sets it (as the old files did), whatever node prepare strategy
  the op runs (one, as upstream's ``getNodePreparer``: nodeAllocatable, else label, else
  unique label);
* a churned node has no hostname label (upstream's churn adds none);
* ``timeoutSeconds`` is gone: ``--timeout`` says how long the measured phase may take.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

from asched.textfile import parse_yaml, read_text
from asched.tools.bench import loadgen, objects, perf_config
from asched.tools.bench.observe import PHASE_LABEL
from asched.tools.bench.workload import PodGroup, Workload
from asched.tools.bench.workload_files import load_workload_file

REPO = Path(__file__).resolve().parents[3]
WORKLOADS = REPO / "asched" / "tools" / "bench" / "workloads"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
#: the home-grown bridge: what upstream's format (or asched's translation of it) cannot say
BRIDGE = {
    "gang-contention-100n-12x50",
    "gang-throughput-5000n-1000x8",
    "gang-tiny",
    "statefulset-local-5000n-2pv-5000p",
    "statefulset-local-tiny",
    "taints-5000n-10000p",
}

R100 = {"cpu": "100m", "memory": "500Mi"}
NODE_ALLOCATABLE = {"cpu": "4", "memory": "32Gi", "pods": "110"}
CSI_ALLOCATABLE = {**NODE_ALLOCATABLE, "attachable-volumes-csi-ebs.csi.aws.com": "39"}
DEFAULT_POD: dict[str, Any] = {"requests": R100, "limits": R100, "labels": {"app": "bench"}}
NODE_AFFINITY_POD: dict[str, Any] = {
    **DEFAULT_POD,
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}
                        ]
                    }
                ]
            }
        }
    },
}
ANTI_AFFINITY_POD: dict[str, Any] = {
    **DEFAULT_POD,
    "labels": {"app": "bench", "color": "green"},
    "affinity": {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"color": "green"}},
                    "topologyKey": HOSTNAME,
                    "namespaces": ["sched-0", "sched-1"],
                }
            ]
        }
    },
}


def spreading_pod(when: str) -> dict[str, Any]:
    return {
        **DEFAULT_POD,
        "labels": {"app": "bench", "color": "blue"},
        "topologySpreadConstraints": [
            {
                "maxSkew": 5,
                "topologyKey": ZONE,
                "whenUnsatisfiable": when,
                "labelSelector": {"matchLabels": {"color": "blue"}},
            }
        ],
    }


def cpu_pod(cpu: str, **extra: Any) -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": "500Mi"}
    return {**DEFAULT_POD, "requests": resources, "limits": resources, **extra}


LOW_PRIORITY_POD = cpu_pod("900m", terminationGracePeriodSeconds=0)
HIGH_PRIORITY_POD = cpu_pod("3000m", priorityClassName="bench-priority-10")
LARGE_CPU_POD = cpu_pod("9", priorityClassName="bench-priority-10")


@dataclass(frozen=True)
class Expected:
    """What one converted workload must build (values of its old home-grown file)."""

    name: str
    threshold: float | None
    nodes: int
    init: int
    measured: int
    namespaces: list[str]
    #: labels of the group's first and last node (phase label left out; "<name>": the
    #: node's own name), and the first node's allocatable
    first_node_labels: Mapping[str, str]
    last_node_labels: Mapping[str, str]
    allocatable: Mapping[str, str] = field(default_factory=lambda: NODE_ALLOCATABLE)
    #: the first init and measured pod (see :func:`shape`); None: no init pods
    init_pod: Mapping[str, Any] | None = None
    measured_pod: Mapping[str, Any] = field(default_factory=lambda: DEFAULT_POD)
    #: the kinds created before each pod (its pre-bound PV and claim), and the PV source
    volumes: tuple[str, ...] = ()
    #: CSINode per node: drivers' allocatable counts and the migrated-plugins annotation
    csi_node: tuple[Mapping[str, int], str] | None = None
    #: churn mode, interval (s), number, kinds; the churned pod's shape
    churn: tuple[str, float, int, list[str]] | None = None
    churn_pod: Mapping[str, Any] | None = None


HOST = {HOSTNAME: "<name>"}
CASES = [
    pytest.param(
        "tiny",
        # old: 20 nodes, 20 init, 100 measured, timeoutSeconds 60
        Expected("SchedulingBasic/20Nodes_100Pods", None, 20, 20, 100,
                 ["bench-init", "bench-measured"], HOST, HOST, init_pod=DEFAULT_POD),
        id="tiny",
    ),
    pytest.param(
        "scheduling-basic-500n",
        Expected("SchedulingBasic/500Nodes", None, 500, 500, 1000,
                 ["bench-init", "bench-measured"], HOST, HOST, init_pod=DEFAULT_POD),
        id="scheduling-basic-500n",
    ),
    pytest.param(
        "scheduling-basic-5000n-10000p",
        Expected("SchedulingBasic/5000Nodes_10000Pods", 680.0, 5000, 1000, 10000,
                 ["bench-init", "bench-measured"], HOST, HOST, init_pod=DEFAULT_POD),
        id="scheduling-basic-5000n-10000p",
    ),
    pytest.param(
        "scheduling-basic-5000n-2000p",
        Expected("SchedulingBasic/5000Nodes_2000Pods", None, 5000, 500, 2000,
                 ["bench-init", "bench-measured"], HOST, HOST, init_pod=DEFAULT_POD),
        id="scheduling-basic-5000n-2000p",
    ),
    pytest.param(
        "scheduling-basic-5000n-50000p",
        Expected("SchedulingBasic/5000Nodes_50000Pods", 810.0, 5000, 5000, 50000,
                 ["bench-init", "bench-measured"], HOST, HOST, init_pod=DEFAULT_POD),
        id="scheduling-basic-5000n-50000p",
    ),
    pytest.param(
        "scheduling-basic-50000n-50000p",
        Expected("SchedulingBasic/50000Nodes_50000Pods", None, 50000, 5000, 50000,
                 ["bench-init", "bench-measured"], HOST, HOST, init_pod=DEFAULT_POD),
        id="scheduling-basic-50000n-50000p",
    ),
    pytest.param(
        "scheduling-basic-15000n-10000p",
        Expected("SchedulingBasic/15000Nodes_10000Pods", None, 15000, 1000, 10000,
                 ["bench-init", "bench-measured"], HOST, HOST, init_pod=DEFAULT_POD),
        id="scheduling-basic-15000n-10000p",
    ),
    pytest.param(
        "node-affinity-5000n-10000p",
        # every node zone1 (one label value), and its hostname
        Expected("SchedulingNodeAffinity/5000Nodes_10000Pods", 220.0, 5000, 5000, 10000,
                 ["bench-init", "bench-measured"], {ZONE: "zone1", **HOST},
                 {ZONE: "zone1", **HOST},
                 init_pod=NODE_AFFINITY_POD, measured_pod=NODE_AFFINITY_POD),
        id="node-affinity",
    ),
    pytest.param(
        "mixed-churn-5000n-10000p",
        # no init pods; every 1000 ms a node, a 9-CPU priority-10 pod and a Service,
        # one of each alive at a time
        Expected("SchedulingWithMixedChurn/5000Nodes_10000Pods", 710.0, 5000, 0, 10000,
                 ["bench-measured", "bench-churn"], HOST, HOST,
                 churn=("recreate", 1.0, 1, ["Node", "Pod", "Service"]),
                 churn_pod=LARGE_CPU_POD),
        id="mixed-churn",
    ),
    pytest.param(
        "unschedulable-5000n-10000p",
        # a 9-CPU pod every 200 ms, never deleted (create mode)
        Expected("Unschedulable/5kNodes/100Init/10kPods", 590.0, 5000, 100, 10000,
                 ["bench-init", "bench-measured", "bench-churn"], HOST, HOST,
                 init_pod=DEFAULT_POD, churn=("create", 0.2, 1, ["Pod"]),
                 churn_pod=LARGE_CPU_POD),
        id="unschedulable-5000n",
    ),
    pytest.param(
        "unschedulable-1000n-30000p",
        # old: timeoutSeconds 110 (now --timeout 110)
        Expected("Unschedulable/1000Nodes/100Init/30kPods", None, 1000, 100, 30000,
                 ["bench-init", "bench-measured", "bench-churn"], HOST, HOST,
                 init_pod=DEFAULT_POD, churn=("create", 0.2, 1, ["Pod"]),
                 churn_pod=LARGE_CPU_POD),
        id="unschedulable-1000n",
    ),
    pytest.param(
        "scheduling-pod-anti-affinity-5000n-2000p",
        Expected("SchedulingPodAntiAffinity/5000Nodes_2000Pods", 60.0, 5000, 1000, 2000,
                 ["sched-0", "sched-1"], HOST, HOST,
                 init_pod=ANTI_AFFINITY_POD, measured_pod=ANTI_AFFINITY_POD),
        id="pod-anti-affinity",
    ),
    pytest.param(
        "topology-spreading-5000n-5000p",
        # zones round-robin: node 0 moon-1, node 4999 moon-2 (4999 % 3 = 1)
        Expected("TopologySpreading/5000Nodes_5000Pods", 460.0, 5000, 5000, 5000,
                 ["bench-init", "bench-measured"], {ZONE: "moon-1", **HOST},
                 {ZONE: "moon-2", **HOST},
                 init_pod=DEFAULT_POD, measured_pod=spreading_pod("DoNotSchedule")),
        id="topology-spreading",
    ),
    pytest.param(
        "preferred-topology-spreading-5000n-5000p",
        Expected("PreferredTopologySpreading/5000Nodes_5000Pods", 340.0, 5000, 5000, 5000,
                 ["bench-init", "bench-measured"], {ZONE: "moon-1", **HOST},
                 {ZONE: "moon-2", **HOST},
                 init_pod=DEFAULT_POD, measured_pod=spreading_pod("ScheduleAnyway")),
        id="preferred-topology-spreading",
    ),
    pytest.param(
        "preemption-basic-500n",
        # 2000 victims of 900m (four per 4-CPU node), 500 preemptors of 3 CPU
        Expected("PreemptionBasic/500Nodes", None, 500, 2000, 500,
                 ["bench-init", "bench-measured"], HOST, HOST,
                 init_pod=LOW_PRIORITY_POD, measured_pod=HIGH_PRIORITY_POD),
        id="preemption-basic",
    ),
    pytest.param(
        "volumes-tiny",
        # old: timeoutSeconds 60
        Expected("SchedulingCSIPVs/5Nodes", None, 5, 5, 10,
                 ["bench-init", "bench-measured"], HOST, HOST, allocatable=CSI_ALLOCATABLE,
                 init_pod={**DEFAULT_POD, "volumes": ["vol"]},
                 measured_pod={**DEFAULT_POD, "volumes": ["vol"]},
                 volumes=("PersistentVolume:csi", "PersistentVolumeClaim"),
                 csi_node=({"ebs.csi.aws.com": 39}, "")),
        id="volumes-tiny",
    ),
    pytest.param(
        "volumes-intree-5000n-1000i-2000p",
        Expected("SchedulingInTreePVs/5000Nodes_2000Pods", 290.0, 5000, 1000, 2000,
                 ["bench-init", "bench-measured"], HOST, HOST,
                 init_pod={**DEFAULT_POD, "volumes": ["vol"]},
                 measured_pod={**DEFAULT_POD, "volumes": ["vol"]},
                 volumes=("PersistentVolume:awsElasticBlockStore", "PersistentVolumeClaim")),
        id="volumes-intree",
    ),
    pytest.param(
        "volumes-migrated-5000n-5000i-5000p",
        Expected("SchedulingMigratedInTreePVs/5000Nodes_5000Pods", 100.0, 5000, 5000, 5000,
                 ["bench-init", "bench-measured"], HOST, HOST, allocatable=CSI_ALLOCATABLE,
                 init_pod={**DEFAULT_POD, "volumes": ["vol"]},
                 measured_pod={**DEFAULT_POD, "volumes": ["vol"]},
                 volumes=("PersistentVolume:awsElasticBlockStore", "PersistentVolumeClaim"),
                 csi_node=({"ebs.csi.aws.com": 39}, "kubernetes.io/aws-ebs")),
        id="volumes-migrated",
    ),
    pytest.param(
        "volumes-csi-5000n-5000i-5000p",
        Expected("SchedulingCSIPVs/5000Nodes_5000Pods", 100.0, 5000, 5000, 5000,
                 ["bench-init", "bench-measured"], HOST, HOST, allocatable=CSI_ALLOCATABLE,
                 init_pod={**DEFAULT_POD, "volumes": ["vol"]},
                 measured_pod={**DEFAULT_POD, "volumes": ["vol"]},
                 volumes=("PersistentVolume:csi", "PersistentVolumeClaim"),
                 csi_node=({"ebs.csi.aws.com": 39}, "")),
        id="volumes-csi",
    ),
]  # fmt: skip


def shape(pod: Mapping[str, Any]) -> dict[str, Any]:
    """What matters of a pod: its one container's requests and limits, its labels (the
    benchmark's phase label left out), affinity, tolerations, spread constraints,
    priority class, grace period and volume names (absent fields left out)."""
    spec = pod["spec"]
    [container] = spec["containers"]
    out: dict[str, Any] = {
        "requests": container["resources"]["requests"],
        "limits": container["resources"]["limits"],
        "labels": {k: v for k, v in pod["metadata"]["labels"].items() if k != PHASE_LABEL},
    }
    for key in (
        "affinity",
        "tolerations",
        "topologySpreadConstraints",
        "priorityClassName",
        "terminationGracePeriodSeconds",
    ):
        if key in spec:
            out[key] = spec[key]
    if "volumes" in spec:
        out["volumes"] = [v["name"] for v in spec["volumes"]]
    return out


def node_labels(node: Mapping[str, Any]) -> dict[str, str]:
    name = node["metadata"]["name"]
    labels = node["metadata"]["labels"]
    return {k: "<name>" if v == name else v for k, v in labels.items() if k != PHASE_LABEL}


def first_chain(groups: tuple[PodGroup, ...], phase: str) -> tuple[dict[str, Any], ...]:
    return next(loadgen.pod_chains(groups[:1], phase, scheduler_name="bench-scheduler"))


def chain_kinds(chain: tuple[dict[str, Any], ...]) -> tuple[str, ...]:
    """The kinds before the pod; a PV with its volume source (``PersistentVolume:csi``)."""
    kinds = []
    for raw in chain[:-1]:
        kind = raw["kind"]
        if kind == "PersistentVolume":
            source = {"csi", "awsElasticBlockStore"} & raw["spec"].keys()
            kind = f"{kind}:{source.pop()}"
        kinds.append(kind)
    return tuple(kinds)


@pytest.fixture(scope="module")
def loaded() -> dict[str, Workload]:
    return {}


def load(stem: str, cache: dict[str, Workload]) -> Workload:
    if stem not in cache:
        cache[stem] = load_workload_file(WORKLOADS / f"{stem}.yaml")
    return cache[stem]


@pytest.mark.parametrize(("stem", "expected"), CASES)
def test_sizes_names_and_threshold(stem: str, expected: Expected) -> None:
    path = WORKLOADS / f"{stem}.yaml"
    workload = load_workload_file(path)
    assert (workload.name, workload.n_nodes, workload.n_init, workload.n_measured) == (
        expected.name,
        expected.nodes,
        expected.init,
        expected.measured,
    )
    assert workload.namespaces() == expected.namespaces
    assert workload.source == str(path)
    assert workload.timeout is None  # --timeout, or the runner's default
    [(_case, chosen)] = perf_config.load_config_file(path).all()
    assert chosen.threshold == expected.threshold


@pytest.mark.parametrize(("stem", "expected"), CASES)
def test_nodes(stem: str, expected: Expected, loaded: dict[str, Workload]) -> None:
    workload = load(stem, loaded)
    [group] = workload.nodes
    first = next(loadgen.node_objects([group]))
    last = objects.node(group, f"{group.name_prefix}-{group.count - 1}", group.count - 1)
    assert first["metadata"]["name"] == "node-0-0"  # createNodes is op 0
    assert node_labels(first) == expected.first_node_labels
    assert node_labels(last) == expected.last_node_labels
    assert first["status"]["allocatable"] == expected.allocatable
    assert first["status"]["capacity"] == NODE_ALLOCATABLE
    assert first["status"]["conditions"] == [
        {"type": "Ready", "status": "True", "reason": "KubeletReady"}
    ]
    assert "taints" not in first["spec"]
    csi = list(islice(loadgen.node_storage_objects([group]), 1))
    if expected.csi_node is None:
        assert csi == []
    else:
        drivers, migrated = expected.csi_node
        [csi_node] = csi
        assert csi_node["metadata"]["name"] == "node-0-0"
        assert {d["name"]: d["allocatable"]["count"] for d in csi_node["spec"]["drivers"]} == (
            drivers
        )
        annotations = csi_node["metadata"]["annotations"]
        assert annotations["storage.alpha.kubernetes.io/migrated-plugins"] == migrated


@pytest.mark.parametrize(("stem", "expected"), CASES)
def test_pods(stem: str, expected: Expected, loaded: dict[str, Workload]) -> None:
    workload = load(stem, loaded)
    if expected.init_pod is None:
        assert workload.init_pods == ()
    else:
        chain = first_chain(workload.init_pods, "init")
        assert shape(chain[-1]) == expected.init_pod
        assert chain_kinds(chain) == expected.volumes
    chain = first_chain(workload.measured_pods, "measured")
    pod = chain[-1]
    assert shape(pod) == expected.measured_pod
    assert chain_kinds(chain) == expected.volumes
    assert pod["spec"]["schedulerName"] == "bench-scheduler"
    assert pod["metadata"]["name"] == "measured-0-0"


@pytest.mark.parametrize(("stem", "expected"), CASES)
def test_churn(stem: str, expected: Expected, loaded: dict[str, Workload]) -> None:
    churn = load(stem, loaded).churn
    if expected.churn is None:
        assert churn is None
        return
    assert churn is not None
    kinds = [o.kind for o in churn.objects]
    assert (churn.mode, churn.interval, churn.number, kinds) == expected.churn
    [pod_group] = [o.pod for o in churn.objects if o.pod is not None]
    assert pod_group.namespace == "bench-churn"  # bench/pod_writes.py watches it
    pod = objects.pod(pod_group, "churn-0-1", scheduler_name="bench-scheduler")
    assert shape(pod) == expected.churn_pod
    for node_group in (o.node for o in churn.objects if o.node is not None):
        node = objects.node(node_group, "churn-node-1-1", 1)
        assert node["status"]["allocatable"] == NODE_ALLOCATABLE
        assert node_labels(node) == {}  # no hostname label (upstream's churn adds none)


def shipped() -> list[Path]:
    return sorted(WORKLOADS.glob("*.yaml"))


@pytest.mark.parametrize("path", shipped(), ids=lambda p: p.stem)
def test_every_shipped_file_is_upstream_format_or_a_bridge(path: Path) -> None:
    data = parse_yaml(read_text(path, "the workload"), str(path))
    if path.stem in BRIDGE:
        assert isinstance(data, dict)
        assert data["format"] == "asched.bench/v1"
        return
    # one test case, one workload (upstream's tools can read it), its templates here
    [case] = data
    assert len(case["workloads"]) == 1
    config = perf_config.load_config_file(path)
    for op in config.test_cases[0].ops:
        for key in perf_config.PATH_FIELDS:
            if key in op.fields:
                assert op.fields[key].parent == WORKLOADS / "templates", op
        for template in op.fields.get("templatePaths", ()):
            assert template.parent == WORKLOADS / "templates", op


def test_the_table_covers_every_converted_file() -> None:
    converted = {p.stem for p in shipped()} - BRIDGE
    assert converted == {param.values[0] for param in CASES}


def test_the_templates_ship_with_the_package(tmp_path: Path) -> None:
    """What a wheel holds (setuptools' build_py, pyproject's package-data) loads every
    shipped workload, templates included, from any directory."""
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(REPO / "pyproject.toml", source)
    shutil.copy(REPO / "README.md", source)
    shutil.copytree(
        REPO / "asched", source / "asched", ignore=shutil.ignore_patterns("__pycache__")
    )
    built = tmp_path / "lib"
    subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
         "--build-lib", str(built)],
        cwd=source, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert (
        built / "asched" / "tools" / "bench" / "workloads" / "templates" / "pod-default.yaml"
    ).is_file()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = (
        "from asched.tools.bench.workload_files import load_workload_file, resolve, shipped_workloads\n"
        "for name in shipped_workloads():\n"
        "    print(name, load_workload_file(resolve(name)).n_measured)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=elsewhere, env={"PYTHONPATH": str(built), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded = dict(line.split() for line in done.stdout.splitlines())
    assert set(loaded) == {p.stem for p in shipped()}
    assert loaded["tiny"] == "100"
