"""Gang workloads: the format's validation (field paths), the objects they create, the
PodGroup CRD shipped with the package, and asched's Coscheduling configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from asched.cluster.gangs import POD_GROUP_LABEL
from asched.tools.bench import gang_objects
from asched.tools.bench.observe import PHASE_LABEL, cpu_request_milli, gang_of
from asched.tools.bench.schedulers import asched_config
from asched.tools.bench.workload_files import load_workload_file
from asched.tools.bench.workload_format import load_workload
from tests.tools.bench.documents import DELETE as _DELETE, changed, field_errors

ROOT = Path(__file__).resolve().parents[3]

VALID: dict[str, Any] = {
    "format": "asched.bench/v1",
    "name": "g",
    "nodes": [{"count": 4}],
    "schedulerProfile": "coscheduling",
    "settleSeconds": 3,
    "measuredGangs": [
        {
            "count": 2,
            "namePrefix": "job",
            "minMember": 3,
            "interleave": True,
            "members": [
                {"count": 1, "cpu": "500m", "labels": {"role": "launcher"}},
                {"count": 3, "template": "pod-default", "labels": {"role": "worker"}},
            ],
        }
    ],
}


def with_change(path: list[Any], value: Any) -> dict[str, Any]:
    """VALID with the value at ``path`` replaced (or deleted, with ``_DELETE``)."""
    return changed(VALID, path, value)


def test_a_heterogeneous_gang_loads() -> None:
    workload = load_workload(VALID)
    (group,) = workload.measured_gangs
    # 2 gangs of 1 launcher + 3 workers: 8 measured pods, no plain measured pods needed
    assert (group.size, group.n_pods, workload.n_measured, workload.n_gangs) == (4, 8, 8, 2)
    assert (group.min_member, group.interleave, group.namespace) == (3, True, "bench-measured")
    assert [m.cpu for m in group.members] == ["500m", None]
    assert workload.scheduler_profile == "coscheduling"
    assert workload.settle == 3.0
    assert workload.namespaces() == ["bench-measured"]
    assert workload.measured_shape() == group.members[0]
    assert workload.to_json()["measured_gangs"] == 2


def test_defaults() -> None:
    document = with_change(["measuredGangs", 0], {"count": 1, "members": [{"count": 5}]})
    del document["schedulerProfile"], document["settleSeconds"]
    workload = load_workload(document)
    (group,) = workload.measured_gangs
    # minMember defaults to every member; the prefix to gang-<index>
    assert (group.min_member, group.name_prefix, group.interleave) == (5, "gang-0", False)
    assert (workload.scheduler_profile, workload.settle) == ("default", None)


@pytest.mark.parametrize(
    ("document", "path", "message"),
    [
        pytest.param(
            with_change(["measuredGangs", 0, "count"], 0),
            "measuredGangs[0].count",
            "must be an integer >= 1, got 0",
            id="count zero",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "minMember"], 5),
            "measuredGangs[0].minMember",
            "must be an integer in 1..4 (the gang's member pods), got 5",
            id="minMember above the members",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "minMember"], 0),
            "measuredGangs[0].minMember",
            "must be an integer in 1..4",
            id="minMember zero",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "members"], []),
            "measuredGangs[0].members",
            "required: at least one kind of member pod",
            id="no members",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "members"], _DELETE),
            "measuredGangs[0].members",
            "required: at least one kind of member pod",
            id="members missing",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "members", 1, "count"], _DELETE),
            "measuredGangs[0].members[1].count",
            "required",
            id="member count missing",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "members", 0, "namespace"], "other"),
            "measuredGangs[0].members[0].namespace",
            "unknown field",
            id="members live in the gang's namespace",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "members", 0, "cpu"], "half"),
            "measuredGangs[0].members[0].cpu",
            "not a valid quantity 'half'",
            id="member quantity",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "minResources"], {"cpu": "2", "memory": "lots"}),
            "measuredGangs[0].minResources.memory",
            "not a valid quantity 'lots'",
            id="minResources quantity",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "minResources"], ["cpu"]),
            "measuredGangs[0].minResources",
            "must be an object",
            id="minResources not a map",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "scheduleTimeoutSeconds"], 0),
            "measuredGangs[0].scheduleTimeoutSeconds",
            "must be >= 1, got 0",
            id="schedule timeout",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "interleave"], "yes"),
            "measuredGangs[0].interleave",
            "",
            id="interleave not a boolean",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "namePrefix"], "Job_A"),
            "measuredGangs[0].namePrefix",
            "must be a DNS label prefix, got 'Job_A'",
            id="name prefix",
        ),
        pytest.param(
            with_change(["measuredGangs", 0, "minmember"], 3),
            "measuredGangs[0].minmember",
            "unknown field (did you mean 'minMember'?)",
            id="unknown field with a hint",
        ),
        pytest.param(
            with_change(["measuredGangs"], [VALID["measuredGangs"][0]] * 2),
            "measuredGangs[1].namePrefix",
            "'job' is already used by measuredGangs[0] in namespace bench-measured",
            id="gang names would collide",
        ),
        pytest.param(
            with_change(["schedulerProfile"], "gang"),
            "schedulerProfile",
            "must be one of default, coscheduling; got 'gang'",
            id="scheduler profile",
        ),
        pytest.param(
            with_change(["settleSeconds"], 0),
            "settleSeconds",
            "must be a positive number, got 0",
            id="settle",
        ),
        pytest.param(
            with_change(["measuredGangs"], []),
            "measuredPods",
            "required: at least one group of measured pods or gangs",
            id="nothing measured",
        ),
    ],
)
def test_errors_name_the_field(document: dict[str, Any], path: str, message: str) -> None:
    _error, found = field_errors(document, "g.yaml")
    assert path in found, found
    assert message in found[path]


@pytest.mark.parametrize(
    "name", ["gang-tiny", "gang-throughput-5000n-1000x8", "gang-contention-100n-12x50"]
)
def test_shipped_gang_workloads(name: str) -> None:
    workload = load_workload_file(
        ROOT / "asched" / "tools" / "bench" / "workloads" / f"{name}.yaml"
    )
    assert workload.scheduler_profile == "coscheduling"
    assert workload.n_gangs > 0


@pytest.mark.parametrize(
    ("name", "slots", "gangs_that_fit", "demand"),
    [
        # 4 nodes x 4 pods of 900m (3.6 CPU + the 100m warm-up pod <= 4; 5 would be 4.5)
        pytest.param("gang-tiny", 4 * 4, 2, 1.5, id="tiny"),
        pytest.param("gang-contention-100n-12x50", 100 * 4, 8, 1.5, id="contention"),
    ],
)
def test_contention_arithmetic(name: str, slots: int, gangs_that_fit: int, demand: float) -> None:
    workload = load_workload_file(
        ROOT / "asched" / "tools" / "bench" / "workloads" / f"{name}.yaml"
    )
    (group,) = workload.measured_gangs
    assert group.interleave
    per_node = (4000 - 100) // 900  # node-default's 4 CPU, the warm-up pod, 900m members
    assert workload.n_nodes * per_node == slots
    assert slots // group.min_member == gangs_that_fit
    assert workload.n_gang_pods / slots == demand
    assert workload.settle is not None


def test_podgroups_and_members() -> None:
    (group,) = load_workload(VALID).measured_gangs
    assert [pg["metadata"]["name"] for pg in gang_objects.pod_groups([group])] == ["job-0", "job-1"]
    podgroup = gang_objects.pod_group(group, 1)
    assert podgroup["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert podgroup["kind"] == "PodGroup"
    assert podgroup["spec"] == {"minMember": 3}
    assert podgroup["metadata"]["labels"] == {PHASE_LABEL: "measured"}
    pods = list(gang_objects.member_pods([group], scheduler_name="s"))
    # interleaved: member 0 of both gangs, then member 1, ...; member 0 is the launcher
    assert [p["metadata"]["name"] for p in pods] == [
        "job-0-0", "job-1-0", "job-0-1", "job-1-1", "job-0-2", "job-1-2", "job-0-3", "job-1-3",
    ]  # fmt: skip
    launcher = pods[0]
    assert launcher["metadata"]["namespace"] == "bench-measured"
    assert launcher["metadata"]["labels"][POD_GROUP_LABEL] == "job-0"
    assert launcher["metadata"]["labels"][PHASE_LABEL] == "measured"
    assert launcher["metadata"]["labels"]["role"] == "launcher"
    assert pods[2]["metadata"]["labels"]["role"] == "worker"
    # what the observer reads back: the gang's key and the CPU request
    assert gang_of(launcher) == "bench-measured/job-0"
    assert (cpu_request_milli(launcher), cpu_request_milli(pods[2])) == (500, 100)
    assert gang_of(pods[2]) == "bench-measured/job-0"


def test_podgroup_optional_fields() -> None:
    document = with_change(["measuredGangs", 0, "minResources"], {"cpu": "2", "memory": "1Gi"})
    document["measuredGangs"][0]["scheduleTimeoutSeconds"] = 30
    (group,) = load_workload(document).measured_gangs
    assert gang_objects.pod_group(group, 0)["spec"] == {
        "minMember": 3,
        "minResources": {"cpu": "2", "memory": "1Gi"},
        "scheduleTimeoutSeconds": 30,
    }


def test_the_shipped_crd_is_deploys() -> None:
    deployed = ROOT / "deploy" / "crds" / "scheduling.x-k8s.io_podgroups.yaml"
    assert gang_objects.CRD_FILE.read_bytes() == deployed.read_bytes()
    assert gang_objects.crd()["metadata"]["name"] == gang_objects.CRD_NAME


def test_coscheduling_profile_only_when_asked() -> None:
    (default,) = asched_config(0)["profiles"]
    assert default == {"schedulerName": "bench-scheduler"}
    (gang,) = asched_config(0, profile="coscheduling")["profiles"]
    assert gang == {
        "schedulerName": "bench-scheduler",
        "plugins": {
            "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
            "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
        },
        "pluginConfig": [
            {
                "name": "Coscheduling",
                "args": {"permitWaitingTimeSeconds": 60, "podGroupBackoffSeconds": 0},
            }
        ],
    }
