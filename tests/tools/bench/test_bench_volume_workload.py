"""Workload files with storage: node groups' CSINodes and local PVs, pod groups' pre-bound
pairs and claim templates, StorageClasses; what they build and every field error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asched.tools.bench import loadgen, runner
from asched.tools.bench.workload_files import load_workload_file
from asched.tools.bench.workload_format import load_workload
from tests.tools.bench.documents import DELETE, changed, field_errors

WORKLOADS = Path(__file__).resolve().parents[3] / "bench" / "workloads"

VALID: dict[str, Any] = {
    "format": "asched.bench/v1",
    "name": "t",
    "storageClasses": [{"name": "local-wffc"}],
    "nodes": [
        {
            "count": 2,
            "namePrefix": "n",
            "localVolumes": {"count": 2, "storage": "10Gi", "storageClassName": "local-wffc"},
            "csiNode": {
                "drivers": [{"name": "ebs.csi.aws.com", "count": 39}],
                "migratedPlugins": ["kubernetes.io/aws-ebs"],
            },
        }
    ],
    "initPods": [{"count": 1, "boundVolumes": {"persistentVolumeTemplate": "pv-aws"}}],
    "measuredPods": [
        {
            "count": 3,
            "volumeClaimTemplates": [{"name": "data", "storageClassName": "local-wffc"}],
        }
    ],
}


def with_change(path: list[Any], value: Any) -> dict[str, Any]:
    return changed(VALID, path, value)


def test_the_valid_document_builds_its_storage() -> None:
    w = load_workload(VALID)
    # 2 nodes x 2 local PVs; 1 init pod with a pair; 3 measured pods x 1 claim template
    assert w.volumes_json() == {
        "storage_classes": ["local-wffc"],
        "csi_nodes": 2,
        "local_pvs": 4,
        "prebound_pairs": 1,
        "unbound_claims": 3,
    }
    klass = w.storage_classes[0]
    # defaults: no provisioner, bound when a pod uses the claim
    assert (klass.provisioner, klass.binding_mode) == (
        "kubernetes.io/no-provisioner",
        "WaitForFirstConsumer",
    )
    per_node = list(loadgen.node_storage_objects(w.nodes))
    # node by node: its CSINode, then its local PVs
    assert [(o["kind"], o["metadata"]["name"]) for o in per_node] == [
        ("CSINode", "n-0"),
        ("PersistentVolume", "n-0-local-0"),
        ("PersistentVolume", "n-0-local-1"),
        ("CSINode", "n-1"),
        ("PersistentVolume", "n-1-local-0"),
        ("PersistentVolume", "n-1-local-1"),
    ]
    pv = per_node[2]
    assert pv["spec"]["storageClassName"] == "local-wffc"
    assert pv["spec"]["capacity"] == {"storage": "10Gi"}
    assert pv["spec"]["accessModes"] == ["ReadWriteOnce"]
    # the node's hostname label (set on every node of the format) is what the PV pins to
    node = next(loadgen.node_objects(w.nodes))
    expression = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]
    assert expression["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n-0"]}
    ]
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "n-0"


def test_claim_templates_name_claims_like_a_statefulset() -> None:
    w = load_workload(VALID)
    chains = list(loadgen.pod_chains(w.measured_pods, "measured", scheduler_name="s"))
    claim, pod = chains[2]
    # <template>-<pod>, unbound, of the template's class; default 1Gi ReadWriteOnce
    assert claim["metadata"] == {
        "name": "data-measured-0-2",
        "namespace": "bench-measured",
        "labels": {"bench.asched.io/phase": "measured"},
    }
    assert claim["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "local-wffc",
        "resources": {"requests": {"storage": "1Gi"}},
    }
    assert "status" not in claim
    assert pod["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-measured-0-2"}}
    ]


def test_bound_volumes_use_upstreams_templates() -> None:
    w = load_workload(VALID)
    pv, claim, pod = next(loadgen.pod_chains(w.init_pods, "init", scheduler_name="s"))
    # claimTemplate defaults to upstream's pvc.yaml
    assert claim["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "true"}
    assert claim["spec"]["volumeName"] == pv["metadata"]["name"] == "bench-init-vol-init-0-0"
    assert pv["spec"]["awsElasticBlockStore"] == {"volumeID": "bench-init-vol-init-0-0"}
    assert pod["spec"]["volumes"][0]["persistentVolumeClaim"] == {"claimName": "pvc-init-0-0"}


def test_the_ceiling_and_plain_groups_make_pods_alone() -> None:
    w = load_workload(with_change(["measuredPods", 0, "volumeClaimTemplates"], DELETE))
    assert (
        next(loadgen.pod_chains(w.measured_pods, "measured", scheduler_name="s"))[0]["kind"]
        == "Pod"
    )


@pytest.mark.parametrize(
    ("document", "path", "message"),
    [
        pytest.param(
            with_change(["storageClasses", 0, "volumeBindingMode"], "Later"),
            "storageClasses[0].volumeBindingMode",
            "must be one of WaitForFirstConsumer, Immediate; got 'Later'",
            id="binding-mode",
        ),
        pytest.param(
            with_change(["storageClasses", 0, "name"], "Local_WFFC"),
            "storageClasses[0].name",
            "must be a DNS subdomain name (lower case), got 'Local_WFFC'",
            id="class-name",
        ),
        pytest.param(
            with_change(["storageClasses"], [{"name": "a"}, {"name": "a"}]),
            "storageClasses[1].name",
            "'a' is already declared",
            id="class-twice",
        ),
        pytest.param(
            with_change(["storageClasses", 0, "provisioner"], "no provisioner"),
            "storageClasses[0].provisioner",
            "must be a provisioner name, got 'no provisioner'",
            id="provisioner",
        ),
        pytest.param(
            with_change(["nodes", 0, "localVolumes", "count"], 0),
            "nodes[0].localVolumes.count",
            "must be an integer >= 1, got 0",
            id="local-count",
        ),
        pytest.param(
            with_change(["nodes", 0, "localVolumes", "storage"], "ten gigs"),
            "nodes[0].localVolumes.storage",
            "not a valid quantity 'ten gigs'",
            id="local-storage",
        ),
        pytest.param(
            with_change(["nodes", 0, "localVolumes", "storageClassName"], "fast"),
            "nodes[0].localVolumes.storageClassName",
            "storage class 'fast' is not in storageClasses (local-wffc)",
            id="local-undeclared-class",
        ),
        pytest.param(
            with_change(["nodes", 0, "localVolumes", "storageClassName"], DELETE),
            "nodes[0].localVolumes.storageClassName",
            "required",
            id="local-class-missing",
        ),
        pytest.param(
            with_change(["nodes", 0, "localVolumes", "accessModes"], ["ReadWriteSometimes"]),
            "nodes[0].localVolumes.accessModes[0]",
            "must be one of ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod; "
            "got 'ReadWriteSometimes'",
            id="access-mode",
        ),
        pytest.param(
            with_change(["nodes", 0, "localVolumes", "size"], "1Gi"),
            "nodes[0].localVolumes.size",
            "unknown field",
            id="local-unknown-field",
        ),
        pytest.param(
            with_change(["nodes", 0, "csiNode", "drivers", 0, "count"], -1),
            "nodes[0].csiNode.drivers[0].count",
            "must be an integer >= 0, got -1",
            id="driver-count",
        ),
        pytest.param(
            with_change(["nodes", 0, "csiNode", "drivers", 0, "name"], DELETE),
            "nodes[0].csiNode.drivers[0].name",
            "required",
            id="driver-name",
        ),
        pytest.param(
            with_change(["nodes", 0, "csiNode", "drivers"], [{"name": "d.io"}, {"name": "d.io"}]),
            "nodes[0].csiNode.drivers[1].name",
            "driver d.io is listed twice",
            id="driver-twice",
        ),
        pytest.param(
            with_change(["nodes", 0, "csiNode", "migratedPlugins"], ["aws-ebs"]),
            "nodes[0].csiNode.migratedPlugins[0]",
            "must be an in-tree plugin name like kubernetes.io/aws-ebs, got 'aws-ebs'",
            id="migrated-plugin",
        ),
        pytest.param(
            with_change(["initPods", 0, "boundVolumes", "persistentVolumeTemplate"], "pv-gce"),
            "initPods[0].boundVolumes.persistentVolumeTemplate",
            "unknown template 'pv-gce'; one of pv-aws, pv-csi",
            id="pv-template",
        ),
        pytest.param(
            with_change(["initPods", 0, "boundVolumes", "persistentVolumeTemplate"], DELETE),
            "initPods[0].boundVolumes.persistentVolumeTemplate",
            "required: one of pv-aws, pv-csi",
            id="pv-template-missing",
        ),
        pytest.param(
            with_change(["measuredPods", 0, "volumeClaimTemplates", 0, "storageClassName"], "x"),
            "measuredPods[0].volumeClaimTemplates[0].storageClassName",
            "storage class 'x' is not in storageClasses (local-wffc)",
            id="claim-undeclared-class",
        ),
        pytest.param(
            with_change(["measuredPods", 0, "volumeClaimTemplates", 0, "name"], "da.ta"),
            "measuredPods[0].volumeClaimTemplates[0].name",
            "must be a DNS label (a volume name), got 'da.ta'",
            id="claim-name",
        ),
        pytest.param(
            with_change(
                ["measuredPods", 0, "volumeClaimTemplates"],
                [
                    {"name": "data", "storageClassName": "local-wffc"},
                    {"name": "data", "storageClassName": "local-wffc"},
                ],
            ),
            "measuredPods[0].volumeClaimTemplates[1].name",
            "'data' is already used by another claim template",
            id="claim-twice",
        ),
        pytest.param(
            with_change(["measuredPods", 0, "volumeClaimTemplates", 0, "storage"], "-1Gi"),
            "measuredPods[0].volumeClaimTemplates[0].storage",
            "must not be negative",
            id="claim-storage",
        ),
        pytest.param(
            with_change(
                ["churn"],
                {
                    "intervalMilliseconds": 100,
                    "objects": [
                        {"kind": "Pod", "boundVolumes": {"persistentVolumeTemplate": "pv-aws"}}
                    ],
                },
            ),
            "churn.objects[0].boundVolumes",
            "not supported for churned pods (only initPods and measuredPods get claims)",
            id="churned-claims",
        ),
        pytest.param(
            with_change(
                ["churn"],
                {
                    "intervalMilliseconds": 100,
                    "objects": [
                        {
                            "kind": "Node",
                            "localVolumes": {"count": 1, "storageClassName": "local-wffc"},
                        }
                    ],
                },
            ),
            "churn.objects[0].localVolumes",
            "not supported for churned nodes (only nodes[] get storage)",
            id="churned-node-storage",
        ),
        pytest.param(
            with_change(
                ["measuredGangs"],
                [
                    {
                        "count": 1,
                        "members": [
                            {
                                "count": 2,
                                "volumeClaimTemplates": [
                                    {"name": "d", "storageClassName": "local-wffc"}
                                ],
                            }
                        ],
                    }
                ],
            ),
            "measuredGangs[0].members[0].volumeClaimTemplates",
            "not supported for a gang's member pods",
            id="gang-member-claims",
        ),
    ],
)
def test_storage_errors_name_the_field(document: dict[str, Any], path: str, message: str) -> None:
    _, found = field_errors(document, "w.yaml")
    assert path in found, found
    assert message in found[path]


@pytest.mark.parametrize(
    ("stem", "volumes"),
    [
        pytest.param(
            "volumes-tiny",
            # 5 nodes, each a CSINode; 5 init + 10 measured pods, each a pair
            {
                "storage_classes": [],
                "csi_nodes": 5,
                "local_pvs": 0,
                "prebound_pairs": 15,
                "unbound_claims": 0,
            },
            id="volumes-tiny",
        ),
        pytest.param(
            "statefulset-local-tiny",
            # 4 nodes x 2 local PVs; 6 pods x 1 claim
            {
                "storage_classes": ["local-wffc"],
                "csi_nodes": 0,
                "local_pvs": 8,
                "prebound_pairs": 0,
                "unbound_claims": 6,
            },
            id="statefulset-local-tiny",
        ),
        pytest.param(
            "volumes-intree-5000n-1000i-2000p",
            {
                "storage_classes": [],
                "csi_nodes": 0,
                "local_pvs": 0,
                "prebound_pairs": 3000,
                "unbound_claims": 0,
            },
            id="in-tree",
        ),
        pytest.param(
            "volumes-migrated-5000n-5000i-5000p",
            {
                "storage_classes": [],
                "csi_nodes": 5000,
                "local_pvs": 0,
                "prebound_pairs": 10000,
                "unbound_claims": 0,
            },
            id="migrated",
        ),
        pytest.param(
            "volumes-csi-5000n-5000i-5000p",
            {
                "storage_classes": [],
                "csi_nodes": 5000,
                "local_pvs": 0,
                "prebound_pairs": 10000,
                "unbound_claims": 0,
            },
            id="csi",
        ),
        pytest.param(
            "statefulset-local-5000n-2pv-5000p",
            # 5000 nodes x 2 local PVs; 5000 pods x 1 claim: half the PVs taken
            {
                "storage_classes": ["local-wffc"],
                "csi_nodes": 0,
                "local_pvs": 10000,
                "prebound_pairs": 0,
                "unbound_claims": 5000,
            },
            id="statefulset-local",
        ),
    ],
)
def test_shipped_volume_workloads(stem: str, volumes: dict[str, Any]) -> None:
    assert load_workload_file(WORKLOADS / f"{stem}.yaml").volumes_json() == volumes


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        pytest.param(
            {"snapshot": Path("cluster.yaml")},
            "t: nodes[0].localVolumes: per-node storage needs the workload's own nodes, which "
            "--snapshot replaces",
            id="snapshot",
        ),
        pytest.param(
            {"kubeconfig": Path("kubeconfig"), "existing_nodes": True},
            "t: nodes[0].localVolumes: per-node storage needs the workload's own nodes, which "
            "--existing-nodes replaces",
            id="existing-nodes",
        ),
    ],
)
def test_per_node_storage_needs_the_workloads_nodes(flags: dict[str, Any], message: str) -> None:
    # refused before any backend starts (the files named here do not exist)
    options = runner.RunOptions(workload=load_workload(VALID), **flags)
    with pytest.raises(runner.BenchmarkError) as caught:
        runner.run(options)
    assert str(caught.value) == message
