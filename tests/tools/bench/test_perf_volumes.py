"""scheduler_perf's volume workloads as asched workloads: which ops become what, the objects
created per pod and per node, and what is still refused (and why)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from asched.errors import InputError
from asched.tools.bench import loadgen, perf_suite, runner
from asched.tools.bench.perf_config import load_config, load_config_file
from asched.tools.bench.perf_translate import Unsupported, translate
from asched.tools.bench.workload import Workload

DATA = Path(__file__).resolve().parent / "data" / "perf"
STORAGE = DATA / "storage" / "performance-config.yaml"
AWS = "../templates/pv-aws.yaml"
CSI = "../templates/pv-csi.yaml"
PVC = "../templates/pvc.yaml"


def upstream(name: str) -> Workload:
    case, workload = load_config_file(STORAGE).find(name)
    return translate(case, workload)


@pytest.mark.parametrize(
    ("name", "sizes", "csi_nodes", "pairs"),
    [
        # 5 nodes, 5 init + 10 measured pods, each pod one PV + one claim: 15 pairs
        pytest.param("SchedulingInTreePVs/5Nodes", (5, 5, 10), 0, 15, id="in-tree"),
        pytest.param(
            "SchedulingInTreePVs/5000Nodes_2000Pods", (5000, 1000, 2000), 0, 3000, id="in-tree-5k"
        ),
        # nodeAllocatableStrategy: a CSINode per node
        pytest.param("SchedulingMigratedInTreePVs/5Nodes", (5, 5, 10), 5, 15, id="migrated"),
        pytest.param(
            "SchedulingMigratedInTreePVs/5000Nodes_5000Pods",
            (5000, 5000, 5000),
            5000,
            10000,
            id="migrated-5k",
        ),
        pytest.param("SchedulingCSIPVs/5Nodes", (5, 5, 10), 5, 15, id="csi"),
        pytest.param(
            "SchedulingCSIPVs/5000Nodes_5000Pods", (5000, 5000, 5000), 5000, 10000, id="csi-5k"
        ),
    ],
)
def test_upstream_volume_workloads_translate(
    name: str, sizes: tuple[int, int, int], csi_nodes: int, pairs: int
) -> None:
    w = upstream(name)
    assert (w.n_nodes, w.n_init, w.n_measured) == sizes
    assert w.volumes_json() == {
        "storage_classes": [],
        "csi_nodes": csi_nodes,
        "local_pvs": 0,
        "prebound_pairs": pairs,
        "unbound_claims": 0,
    }
    # the throughput counts pods: the measured phase has exactly the measured pods
    assert sum(g.count for g in w.measured_pods) == sizes[2]


def chain(w: Workload) -> tuple[dict[str, Any], ...]:
    return next(loadgen.pod_chains(w.measured_pods, "measured", scheduler_name="asched"))


def test_each_pod_comes_after_its_claim_and_its_pv_bound_to_each_other() -> None:
    pv, claim, pod = chain(upstream("SchedulingInTreePVs/5Nodes"))
    # the PV first (a PV controller beside the API server would mark a claim bound to a PV
    # not created yet Lost), then its claim, then the pod
    assert [o["kind"] for o in (pv, claim, pod)] == [
        "PersistentVolume",
        "PersistentVolumeClaim",
        "Pod",
    ]
    # measured pods of op 2: namespace-2; the names follow the pod's (measured-0-0)
    assert claim["metadata"]["name"] == "pvc-measured-0-0"
    assert claim["metadata"]["namespace"] == "namespace-2"
    assert pv["metadata"]["name"] == "namespace-2-vol-measured-0-0"
    # pre-bound both ways, statuses Bound (written after the create), the template's
    # bind-completed annotation kept
    assert claim["spec"]["volumeName"] == pv["metadata"]["name"]
    # no class in the template: the empty class, said explicitly (no default class may
    # give the claim one its PV lacks)
    assert claim["spec"]["storageClassName"] == ""
    assert "storageClassName" not in pv["spec"]
    assert claim["status"] == {"phase": "Bound"}
    assert claim["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "true"}
    assert pv["spec"]["claimRef"] == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": "namespace-2",
        "name": "pvc-measured-0-0",
    }
    assert pv["status"] == {"phase": "Bound"}
    # the in-tree volume ID is unique per PV (upstream's volume factory)
    assert pv["spec"]["awsElasticBlockStore"] == {"volumeID": "namespace-2-vol-measured-0-0"}
    assert pv["spec"]["accessModes"] == claim["spec"]["accessModes"] == ["ReadOnlyMany"]
    # the pod's one volume "vol" names the claim
    assert pod["spec"]["volumes"] == [
        {"name": "vol", "persistentVolumeClaim": {"claimName": "pvc-measured-0-0"}}
    ]
    # every object carries the phase label (how cleanup on a cluster finds it)
    assert {o["metadata"]["labels"]["bench.asched.io/phase"] for o in (claim, pv, pod)} == {
        "measured"
    }


def test_a_csi_pv_gets_its_name_as_volume_handle() -> None:
    pv, _, _ = chain(upstream("SchedulingCSIPVs/5Nodes"))
    assert pv["spec"]["csi"] == {
        "driver": "ebs.csi.aws.com",
        "volumeHandle": "namespace-2-vol-measured-0-0",
    }


@pytest.mark.parametrize(
    ("name", "drivers", "migrated"),
    [
        pytest.param(
            "SchedulingMigratedInTreePVs/5Nodes",
            [
                {
                    "name": "ebs.csi.aws.com",
                    "nodeID": "scheduler-perf-0-3",
                    "allocatable": {"count": 39},
                }
            ],
            "kubernetes.io/aws-ebs",
            id="migrated",
        ),
        # no migratedPlugins: the annotation is there, empty (upstream joins an empty list)
        pytest.param(
            "SchedulingCSIPVs/5Nodes",
            [
                {
                    "name": "ebs.csi.aws.com",
                    "nodeID": "scheduler-perf-0-3",
                    "allocatable": {"count": 39},
                }
            ],
            "",
            id="csi",
        ),
    ],
)
def test_a_csinode_per_node(name: str, drivers: list[dict[str, Any]], migrated: str) -> None:
    w = upstream(name)
    made = list(loadgen.node_storage_objects(w.nodes))
    nodes = [n["metadata"]["name"] for n in loadgen.node_objects(w.nodes)]
    # one CSINode per node, named after it
    assert [c["metadata"]["name"] for c in made] == nodes
    csi = made[3]
    assert csi["kind"] == "CSINode"
    assert csi["spec"]["drivers"] == drivers
    assert csi["metadata"]["annotations"] == {
        "storage.alpha.kubernetes.io/migrated-plugins": migrated
    }
    # nodeAllocatable still lands in the node's status
    node = next(loadgen.node_objects(w.nodes))
    assert node["status"]["allocatable"]["attachable-volumes-csi-ebs.csi.aws.com"] == "39"


def test_in_tree_workload_has_no_csinodes() -> None:
    assert list(loadgen.node_storage_objects(upstream("SchedulingInTreePVs/5Nodes").nodes)) == []


def config_with(ops: list[dict[str, Any]]) -> Workload:
    data = [{"name": "Case", "workloadTemplate": ops, "workloads": [{"name": "W"}]}]
    config = load_config(data, folder=DATA / "storage")
    return translate(config.test_cases[0], config.test_cases[0].workloads[0])


NODES = {"opcode": "createNodes", "count": 2}
MEASURED = {"opcode": "createPods", "count": 3, "collectMetrics": True}


def test_a_pv_template_without_a_claim_template_gives_plain_pods() -> None:
    # upstream's getPodStrategy looks at the claim template only
    w = config_with([NODES, {**MEASURED, "persistentVolumeTemplatePath": AWS}])
    assert w.volumes_json() is None
    pod = next(loadgen.pod_objects(w.measured_pods, "measured", scheduler_name="s"))
    assert "volumes" not in pod["spec"]


def test_volumes_in_steps_and_after_the_measured_pods() -> None:
    # pods not waited for make the workload run its ops as steps: their claims come along
    w = config_with(
        [
            NODES,
            {"opcode": "createPods", "count": 2, "skipWaitToCompletion": True, **PAIR_CSI},
            {**MEASURED, **PAIR_CSI},
        ]
    )
    assert w.volumes_json() == {
        "storage_classes": [],
        "csi_nodes": 0,
        "local_pvs": 0,
        # 2 step pods + 3 measured
        "prebound_pairs": 5,
        "unbound_claims": 0,
    }


PAIR_CSI = {"persistentVolumeTemplatePath": CSI, "persistentVolumeClaimTemplatePath": PVC}


@pytest.mark.parametrize(
    ("op", "error", "message"),
    [
        pytest.param(
            {**MEASURED, "persistentVolumeClaimTemplatePath": PVC},
            InputError,
            "Case/W: op 1 (createPods).persistentVolumeTemplatePath: required with "
            "persistentVolumeClaimTemplatePath",
            id="claim-without-pv",
        ),
        pytest.param(
            {
                **MEASURED,
                "persistentVolumeTemplatePath": PVC,
                "persistentVolumeClaimTemplatePath": PVC,
            },
            InputError,
            "op 1 (createPods) needs a PersistentVolume, the file has 'PersistentVolumeClaim'",
            id="pv-template-of-the-wrong-kind",
        ),
        pytest.param(
            {
                **MEASURED,
                "persistentVolumeTemplatePath": AWS,
                "persistentVolumeClaimTemplatePath": AWS,
            },
            InputError,
            "op 1 (createPods) needs a PersistentVolumeClaim, the file has 'PersistentVolume'",
            id="claim-template-of-the-wrong-kind",
        ),
        pytest.param(
            {
                **MEASURED,
                "persistentVolumeTemplatePath": "missing.yaml",
                "persistentVolumeClaimTemplatePath": PVC,
            },
            InputError,
            "missing.yaml",
            id="missing-pv-template",
        ),
        pytest.param(
            {**MEASURED, "podTemplatePath": "../templates/pod-with-claim.yaml"},
            Unsupported,
            "op 1 (createPods): pods whose template names claims",
            id="template-names-a-claim",
        ),
    ],
)
def test_volume_refusals(op: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        config_with([NODES, copy.deepcopy(op)])
    assert message in str(caught.value)


def test_a_template_naming_a_claim_is_fine_when_the_op_makes_the_pair() -> None:
    # upstream replaces the pod's volumes with the pair's: nothing dangling is left
    w = config_with(
        [NODES, {**MEASURED, "podTemplatePath": "../templates/pod-with-claim.yaml", **PAIR_CSI}]
    )
    *_, pod = chain(w)
    assert pod["spec"]["volumes"] == [
        {"name": "vol", "persistentVolumeClaim": {"claimName": "pvc-measured-0-0"}}
    ]


@pytest.mark.parametrize(
    ("strategy", "message"),
    [
        pytest.param(
            {"csiNodeAllocatable": {"ebs.csi.aws.com": {"count": -1}}},
            "nodeAllocatableStrategy.csiNodeAllocatable.ebs.csi.aws.com: must be {count: "
            "<integer >= 0>}",
            id="negative-count",
        ),
        pytest.param(
            {"csiNodeAllocatable": ["ebs.csi.aws.com"]},
            "nodeAllocatableStrategy.csiNodeAllocatable: must be a map of CSI driver to {count}",
            id="not-a-map",
        ),
        pytest.param(
            {"migratedPlugins": "kubernetes.io/aws-ebs"},
            "nodeAllocatableStrategy.migratedPlugins: must be a list of in-tree plugin names",
            id="plugins-not-a-list",
        ),
    ],
)
def test_csinode_strategy_errors(strategy: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as caught:
        config_with([{**NODES, "nodeAllocatableStrategy": strategy}, MEASURED])
    assert message in str(caught.value)


def test_a_driver_without_count_lists_no_allocatable() -> None:
    w = config_with(
        [{**NODES, "nodeAllocatableStrategy": {"csiNodeAllocatable": {"d.io": {}}}}, MEASURED]
    )
    (csi, _) = loadgen.node_storage_objects(w.nodes)
    assert csi["spec"]["drivers"] == [{"name": "d.io", "nodeID": "scheduler-perf-0-0"}]


def test_bench_suite_translates_every_volume_workload() -> None:
    # upstream's integration-test selection of the three test cases: 2 workloads each;
    # every one translates (none unsupported) and reaches the runner with its 10 pods
    reached: list[str] = []

    def run_one(workload: Workload, scheduler: str) -> Any:
        reached.append(workload.name)
        raise runner.BenchmarkError("not run here")

    config = load_config_file(STORAGE)
    entries = perf_suite.run_suite(config, ["integration-test"], ["asched"], run_one=run_one)
    names = [
        f"{case}/{workload}"
        for case in ("SchedulingInTreePVs", "SchedulingMigratedInTreePVs", "SchedulingCSIPVs")
        for workload in ("5Nodes", "5Nodes_QueueingHintsEnabled")
    ]
    assert [(e.name, e.status, e.measured_pods) for e in entries] == [
        (name, "failed", 10) for name in names
    ]
    assert {e.reason for e in entries} == {"asched: not run here"}
    assert reached == names


def test_preemption_pvs_shape_keeps_priority_and_the_pair() -> None:
    # upstream's PreemptionPVs: high-priority measured pods, each with its pre-bound pair
    w = config_with(
        [
            NODES,
            {"opcode": "createPods", "count": 4},
            {
                **MEASURED,
                "podTemplatePath": "../templates/pod-high-priority.yaml",
                "persistentVolumeTemplatePath": AWS,
                "persistentVolumeClaimTemplatePath": PVC,
            },
        ]
    )
    pv, claim, pod = chain(w)
    # the template's bare priority 10 becomes the runner's PriorityClass
    assert pod["spec"]["priorityClassName"] == "bench-priority-10"
    assert (
        pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
    )
    assert pv["spec"]["claimRef"]["name"] == "pvc-measured-0-0"
    # the init pods (op 1) have no claims
    assert w.volumes_json() == {
        "storage_classes": [],
        "csi_nodes": 0,
        "local_pvs": 0,
        "prebound_pairs": 3,
        "unbound_claims": 0,
    }
