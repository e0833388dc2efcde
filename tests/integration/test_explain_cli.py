"""``asched explain`` end to end: the JSON contract, one-line errors on bad input, and
the configured extenders called (or skipped with ``--no-extenders``)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from asched.tools.bench.extender_server import ExtenderRules, serve_extender

DATA = Path(__file__).resolve().parents[1] / "data"
SNAPSHOT = DATA / "cluster-snapshot.yaml"
DIRECTORY = b"<make a directory>"


def explain(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "asched", "explain", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_json_contract_on_a_real_cluster_shape() -> None:
    result = explain("--snapshot", SNAPSHOT, "--pod", DATA / "pod-frontend.yaml", "-o", "json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert set(answer) == {
        "pod",
        "profile",
        "nodes",
        "weights",
        "selected",
        "top",
        "message",
        "preemption",
        "configuration",
        "bound",
    }
    assert answer["configuration"] == {"source": "default", "name": None}  # no --config
    assert answer["preemption"] is None  # a node fits: PostFilter does not run
    assert answer["bound"] is None  # a pending pod
    assert answer["pod"] == "shop/frontend-extra"
    assert answer["profile"] == "default-scheduler"
    assert answer["message"] is None
    nodes = answer["nodes"]
    assert len(nodes) == 7
    # the control plane and the GPU node keep their NoSchedule taints; worker-a2 is cordoned
    assert nodes["cp-1"] == {
        "feasible": False,
        "plugin": "TaintToleration",
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"],
    }
    assert nodes["worker-a2"]["plugin"] == "NodeUnschedulable"
    assert nodes["gpu-c1"]["reasons"] == ["node(s) had untolerated taint {nvidia.com/gpu: present}"]
    feasible = {name: v for name, v in nodes.items() if v["feasible"]}
    assert set(feasible) == {"worker-a1", "worker-b1", "worker-c1", "worker-b2"}
    for verdict in feasible.values():
        assert set(verdict) == {"feasible", "scores", "total"}
        assert verdict["total"] == sum(
            answer["weights"][p] * s for p, s in verdict["scores"].items()
        )
        assert all(0 <= s <= 100 for s in verdict["scores"].values())
    # worker-b2 has an untolerated PreferNoSchedule taint: TaintToleration scores it 0
    assert feasible["worker-b2"]["scores"]["TaintToleration"] == 0
    # no preferred node affinity: NodeAffinity's PreScore skipped, so its score is absent
    assert all("NodeAffinity" not in v["scores"] for v in feasible.values())
    assert answer["weights"]["TaintToleration"] == 3
    best = max(v["total"] for v in feasible.values())
    assert answer["top"] == [n for n, v in feasible.items() if v["total"] == best]
    assert answer["selected"] in answer["top"]


def test_unschedulable_pod_is_an_answer_with_upstream_message() -> None:
    result = explain("--snapshot", SNAPSHOT, "--pod", DATA / "pod-too-big.yaml", "-o", "json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["selected"] is None
    assert answer["top"] == []
    # 3 workers lack cpu and memory, worker-b2 only memory: 3 cpu, 4 memory (sorted as strings);
    # preemption: the pod has priority 0, so the 4 short nodes have no lower-priority victim
    # and the 3 others (taints, cordon: Unresolvable) are not worth trying
    not_helpful = (
        "preemption: 0/7 nodes are available: 3 Preemption is not helpful for scheduling, "
        "4 No preemption victims found for incoming pod."
    )
    assert answer["message"] == (
        "0/7 nodes are available: 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }, 1 node(s) had untolerated taint "
        "{nvidia.com/gpu: present}, 1 node(s) were unschedulable, 3 Insufficient cpu, "
        "4 Insufficient memory. " + not_helpful
    )
    assert answer["preemption"] == {
        "code": "Unschedulable",
        "node": None,
        "victims": [],
        "pdbViolations": 0,
        "message": not_helpful,
    }


PREEMPTION_SNAPSHOT = """
kind: List
items:
- {kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}}
- {kind: Node, metadata: {name: n2}, status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}}
- kind: PodDisruptionBudget
  apiVersion: policy/v1
  metadata: {name: keep-db, namespace: default}
  spec: {selector: {matchLabels: {app: db}}}
  status: {disruptionsAllowed: 0}
"""


def _bound(name: str, node: str, priority: int, app: str) -> str:
    return (
        f"- kind: Pod\n  metadata: {{name: {name}, namespace: default, labels: {{app: {app}}}}}\n"
        f"  spec: {{nodeName: {node}, priority: {priority}, containers: "
        f"[{{name: c, resources: {{requests: {{cpu: 600m}}}}}}]}}\n"
    )


def test_explain_shows_what_preemption_would_do(tmp_path: Path) -> None:
    # n1's pod has the lower priority (10 < 20) but a PDB allows no disruption: n2 is chosen
    snapshot = tmp_path / "snap.yaml"
    snapshot.write_text(
        PREEMPTION_SNAPSHOT + _bound("db-0", "n1", 10, "db") + _bound("web-0", "n2", 20, "web")
    )
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "kind: Pod\nmetadata: {name: urgent, namespace: default}\nspec:\n  priority: 1000\n"
        "  containers: [{name: c, resources: {requests: {cpu: 800m}}}]\n"
    )
    result = explain("--snapshot", snapshot, "--pod", pod, "-o", "json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["preemption"] == {
        "code": "Success",
        "node": "n2",
        "victims": [{"pod": "default/web-0", "node": "n2", "priority": 20}],
        "pdbViolations": 0,
        "message": "",
    }
    assert answer["message"] == "0/2 nodes are available: 2 Insufficient cpu."
    table = explain("--snapshot", snapshot, "--pod", pod)
    assert "preemption: would nominate n2, evicting 1 pod(s)" in table.stdout
    assert "default/web-0" in table.stdout


def test_preemption_that_would_not_help_says_preemption_once(tmp_path: Path) -> None:
    # both pods outrank the new one (priority 0 < 10, 20): no victim anywhere
    snapshot = tmp_path / "snap.yaml"
    snapshot.write_text(
        PREEMPTION_SNAPSHOT + _bound("db-0", "n1", 10, "db") + _bound("web-0", "n2", 20, "web")
    )
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "kind: Pod\nmetadata: {name: humble, namespace: default}\nspec:\n"
        "  containers: [{name: c, resources: {requests: {cpu: 800m}}}]\n"
    )
    answer = json.loads(explain("--snapshot", snapshot, "--pod", pod, "-o", "json").stdout)
    assert answer["preemption"]["node"] is None
    assert answer["preemption"]["message"].startswith("preemption: ")  # upstream's own text
    table = explain("--snapshot", snapshot, "--pod", pod).stdout
    assert "preemption would not help: 0/2 nodes are available" in table
    assert "preemption: preemption" not in table


SCHEDULED = (
    "  status: {conditions: [{type: PodScheduled, status: 'True'}]}\n"  # a scheduler bound it
)


@pytest.mark.parametrize(
    ("extra", "by"),
    [
        pytest.param(SCHEDULED, "placed by the scheduler 'default-scheduler'", id="scheduled"),
        pytest.param(
            "",
            "its spec.nodeName was set when it was created: no scheduler placed it",
            id="nodeName set by its author",
        ),
    ],
)
def test_a_bound_pod_is_explained_as_if_pending(tmp_path: Path, extra: str, by: str) -> None:
    # web-0 (600m) is bound to n2; n1 holds db-0 (600m): each node has 400m left, so the pod
    # fits nowhere if counted on n2, and anywhere once taken off it: n2 has 1 CPU free then
    snapshot = tmp_path / "snap.yaml"
    snapshot.write_text(
        PREEMPTION_SNAPSHOT
        + _bound("db-0", "n1", 10, "db")
        + _bound("web-0", "n2", 20, "web")
        + extra
    )
    answer = json.loads(explain("--snapshot", snapshot, "default/web-0", "-o", "json").stdout)

    assert answer["bound"] == {"node": "n2", "by": by}
    assert answer["selected"] == "n2"  # the room it holds is its own: where it would go now
    assert answer["nodes"]["n2"]["feasible"] is True
    assert answer["nodes"]["n1"]["plugin"] == "NodeResourcesFit"  # not NodeName
    table = " ".join(explain("--snapshot", snapshot, "default/web-0").stdout.split())
    assert f"note: the pod is bound to n2 ({by})" in table
    assert "where asched would place it now" in table


def test_a_pod_of_no_profile_is_refused_unless_a_profile_is_named(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: asched\n"
    )
    refused = explain(
        "--snapshot", SNAPSHOT, "--pod", DATA / "pod-frontend.yaml", "--config", config
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "asched explain: error: the pod's schedulerName 'default-scheduler' names no profile of"
        " the configuration (profiles: asched): asched does not schedule it; --scheduler-name"
        " PROFILE explains it under one of them"
    ]
    named = explain(
        "--snapshot",
        SNAPSHOT,
        "--pod",
        DATA / "pod-frontend.yaml",
        "--config",
        config,
        "--scheduler-name",
        "asched",
        "-o",
        "json",
    )
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["profile"] == "asched"


def test_table_output_names_the_selected_node() -> None:
    result = explain("--snapshot", SNAPSHOT, "--pod", DATA / "pod-frontend.yaml")
    assert result.returncode == 0, result.stderr
    assert "selected:" in result.stdout
    assert "Infeasible nodes" in result.stdout


@pytest.mark.parametrize(
    ("pod_yaml", "expected"),
    [
        pytest.param(
            "kind: Pod\nmetadata: {name: bad, namespace: ns}\nspec:\n  containers:\n"
            "  - name: c\n    resources: {requests: {cpu: 12x}}\n",
            "Pod ns/bad: spec.containers[0].resources.requests.cpu",
            id="bad quantity",
        ),
        pytest.param(
            "kind: Pod\nmetadata: {name: sel}\nspec:\n  containers: []\n  affinity:\n"
            "    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
            "        nodeSelectorTerms:\n        - matchExpressions:\n"
            "          - {key: zone, operator: Near, values: [a]}\n",
            "nodeSelectorTerms[0].matchExpressions[0].operator",
            id="invalid selector operator",
        ),
        pytest.param(
            "kind: Pod\nmetadata: {name: x\n", ":3:1: malformed YAML: ", id="malformed YAML"
        ),
    ],
)
def test_bad_pod_is_a_one_line_error(tmp_path: Path, pod_yaml: str, expected: str) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(pod_yaml)
    result = explain("--snapshot", SNAPSHOT, "--pod", pod)
    assert result.returncode == 2
    assert expected in result.stderr
    assert str(pod) in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_snapshot_names_file_object_and_field(tmp_path: Path) -> None:
    snapshot = tmp_path / "snap.yaml"
    snapshot.write_text(
        "kind: List\nitems:\n- kind: Node\n  metadata: {name: n1}\n"
        "  status: {allocatable: {cpu: lots}}\n"
    )
    result = explain("--snapshot", snapshot, "--pod", DATA / "pod-frontend.yaml")
    assert result.returncode == 2
    assert f"{snapshot}: Node n1: status.allocatable.cpu" in result.stderr


def test_bad_config_lists_field_paths(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "percentageOfNodesToScore: -5\nprofiles:\n- schedulerName: s\n  pluginConfig:\n"
        "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
        "        resources: [{name: cpu, weight: 101}]\n"
    )
    result = explain(
        "--snapshot", SNAPSHOT, "--pod", DATA / "pod-frontend.yaml", "--config", config
    )
    assert result.returncode == 2
    assert "percentageOfNodesToScore" in result.stderr
    assert "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight" in result.stderr


def test_scheduler_name_picks_the_profile(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: spread\n- schedulerName: pack\n  pluginConfig:\n"
        "  - name: NodeResourcesFit\n    args:\n      scoringStrategy: {type: MostAllocated}\n"
    )
    result = explain(
        "--snapshot",
        SNAPSHOT,
        "--pod",
        DATA / "pod-frontend.yaml",
        "--config",
        config,
        "--scheduler-name",
        "pack",
        "-o",
        "json",
    )
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["profile"] == "pack"
    unknown = explain(
        "--snapshot",
        SNAPSHOT,
        "--pod",
        DATA / "pod-frontend.yaml",
        "--config",
        config,
        "--scheduler-name",
        "nope",
    )
    assert unknown.returncode == 2
    assert "no profile named 'nope'" in unknown.stderr


@pytest.mark.parametrize("flag", ["--snapshot", "--pod"])
@pytest.mark.parametrize(
    ("content", "reason"),
    [
        pytest.param(None, "No such file or directory", id="missing"),
        # a PNG header: 0x89 then "PNG\r\n\x1a\n" (8 bytes) and a NUL at offset 8
        pytest.param(
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "binary data, not text (NUL byte at offset 8)",
            id="binary",
        ),
        # "kind: caf" is 9 bytes: the latin-1 e-acute is at offset 9
        pytest.param(
            "kind: caf\xe9\n".encode("latin-1"),
            "not UTF-8 text (byte 0xe9 at offset 9",
            id="not UTF-8",
        ),
        pytest.param(DIRECTORY, "Is a directory", id="a directory"),
        pytest.param(b"items: [\n", ":2:1: malformed YAML: ", id="malformed YAML"),
    ],
)
def test_unreadable_input_is_a_one_line_error(
    tmp_path: Path, flag: str, content: bytes | None, reason: str
) -> None:
    bad = tmp_path / "input.yaml"
    if content is DIRECTORY:
        bad.mkdir()
    elif content is not None:
        bad.write_bytes(content)
    files = {"--snapshot": SNAPSHOT, "--pod": DATA / "pod-frontend.yaml", flag: bad}
    result = explain("--snapshot", files["--snapshot"], "--pod", files["--pod"])
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"asched explain: error: {bad}")
    assert reason in result.stderr


async def explain_async(*args: str | Path) -> tuple[int, str, str]:
    """``asched explain`` in a child process, awaited (a test extender answers meanwhile)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "asched",
        "explain",
        *map(str, args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "COLUMNS": "250"},  # wide enough for every table row
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


def extender_config(tmp_path: Path, entry: dict[str, Any]) -> Path:
    config = tmp_path / "config.yaml"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "extenders": [entry],
            }
        )
    )
    return config


DRAINING = ExtenderRules(fail=frozenset({"worker-b1"}), fail_reason="rack b is being drained")


async def test_explain_calls_the_configured_extenders(tmp_path: Path) -> None:
    rules = dataclasses.replace(DRAINING, scores={"worker-c1": 10})
    async with serve_extender(rules) as server:
        config = extender_config(tmp_path, server.entry(weight=1))
        pod = DATA / "pod-frontend.yaml"
        code, out, err = await explain_async(
            "--snapshot", SNAPSHOT, "--pod", pod, "--config", config, "-o", "json"
        )
        assert code == 0, err
        table_code, table, _ = await explain_async(
            "--snapshot", SNAPSHOT, "--pod", pod, "--config", config
        )
    answer = json.loads(out)
    url = server.url
    assert answer["nodes"]["worker-b1"] == {
        "feasible": False,
        "plugin": url,
        "code": "Unschedulable",
        "reasons": ["rack b is being drained"],
    }
    totals = {name: v["total"] for name, v in answer["nodes"].items() if v["feasible"]}
    # in-tree (test_table_output above): worker-a1 456, worker-c1 420, worker-b2 182; the
    # extender adds 10 x1 x10 = 100 to worker-c1 and 0 to the others
    assert totals == {"worker-a1": 456, "worker-c1": 420 + 100, "worker-b2": 182}
    assert answer["nodes"]["worker-c1"]["scores"][url] == 100
    assert answer["weights"][url] == 1
    assert answer["selected"] == "worker-c1"
    assert answer["extenders"] == [
        {
            "name": url,
            "weight": 1,
            "ignorable": False,
            # 4 nodes pass the in-tree filters, worker-b1 goes: 3 are scored
            "filter": {"outcome": "called", "sent": 4, "error": None},
            "prioritize": {"outcome": "called", "sent": 3, "error": None},
        }
    ]
    # sent: the pod file's object and the snapshot file's Node objects, as written
    objects = yaml.safe_load(SNAPSHOT.read_text())["items"]
    written = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Node"}
    first = server.calls_of("filter")[0].body
    assert first["Pod"] == yaml.safe_load(pod.read_text())
    assert [node["metadata"]["name"] for node in first["Nodes"]["items"]] == [
        "worker-a1",
        "worker-b1",
        "worker-b2",
        "worker-c1",
    ]
    assert first["Nodes"]["items"] == [
        written[n["metadata"]["name"]] for n in first["Nodes"]["items"]
    ]
    assert table_code == 0
    assert "Extenders (in call order)" in table
    assert "rack b is being drained" in table
    assert "selected: worker-c1" in table


async def test_no_extenders_gives_the_in_tree_answer(tmp_path: Path) -> None:
    async with serve_extender(DRAINING) as server:
        config = extender_config(tmp_path, server.entry(weight=1))
        code, out, err = await explain_async(
            "--snapshot",
            SNAPSHOT,
            "--pod",
            DATA / "pod-frontend.yaml",
            "--config",
            config,
            "--no-extenders",
            "-o",
            "json",
        )
    assert code == 0, err
    assert server.calls == []
    in_tree = explain("--snapshot", SNAPSHOT, "--pod", DATA / "pod-frontend.yaml", "-o", "json")
    answer, default = json.loads(out), json.loads(in_tree.stdout)
    # the default profile's answer; only the configuration it names differs
    assert answer.pop("configuration") == {"source": "file", "name": str(config)}
    assert default.pop("configuration") == {"source": "default", "name": None}
    assert answer == default
    assert answer["selected"] == "worker-b1"


async def test_a_failing_extender_is_an_answer_not_a_crash(tmp_path: Path) -> None:
    with socket.socket() as holder:  # bound, never listening: connections are refused
        holder.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{holder.getsockname()[1]}"
        config = extender_config(tmp_path, {"urlPrefix": url, "filterVerb": "filter"})
        code, out, err = await explain_async(
            "--snapshot", SNAPSHOT, "--pod", DATA / "pod-frontend.yaml", "--config", config
        )
    assert code == 0, err
    assert f"unschedulable: extender filter call to {url}/filter failed: " in out
    assert "Traceback" not in err


GANG_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: asched
  plugins:
    multiPoint: {enabled: [{name: Coscheduling}]}
    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: '*'}]}
"""


def _gang_member(name: str) -> str:
    return (
        f"- kind: Pod\n  metadata: {{name: {name}, namespace: default,"
        " labels: {scheduling.x-k8s.io/pod-group: big}}\n"
        "  spec: {schedulerName: asched, containers: "
        "[{name: c, resources: {requests: {cpu: '1'}}}]}\n"
    )


#: Room for 5 members of 1 CPU (n1 4 // 1 + n2 1 // 1); the PodGroup wants 6.
GANG_SNAPSHOT = (
    "apiVersion: v1\nkind: List\nitems:\n"
    "- kind: Node\n  metadata: {name: n1}\n"
    "  status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
    "- kind: Node\n  metadata: {name: n2}\n"
    "  status: {allocatable: {cpu: '1', memory: 8Gi, pods: '110'}}\n"
    "- apiVersion: scheduling.x-k8s.io/v1alpha1\n  kind: PodGroup\n"
    "  metadata: {name: big, namespace: default}\n  spec: {minMember: 6}\n"
)


@pytest.mark.parametrize(
    "form",
    [
        pytest.param("pod", id="POD: a member in the snapshot"),
        pytest.param("file", id="--pod FILE: a member not in the snapshot"),
    ],
)
def test_a_gang_member_gets_the_gangs_verdict(tmp_path: Path, form: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(GANG_CONFIG)
    snapshot = tmp_path / "snap.yaml"
    others = "".join(_gang_member(f"big-{index}") for index in range(1, 6))
    if form == "pod":
        snapshot.write_text(GANG_SNAPSHOT + _gang_member("big-0") + others)
        target: tuple[str | Path, ...] = ("default/big-0",)
    else:
        snapshot.write_text(GANG_SNAPSHOT + others)
        pod = tmp_path / "pod.yaml"
        pod.write_text(_gang_member("big-0").removeprefix("- ").replace("\n  ", "\n"))
        target = ("--pod", pod)
    common = ("--snapshot", snapshot, *target, "--config", config)
    reason = (
        "pod group default/big has 0 of 6 members placed: the 6 missing cannot be placed "
        "together (room for 5)"
    )

    result = explain(*common, "-o", "json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    # big-0 counted once: as the pending member explained (6 pods name the group)
    assert answer["gang"] == {
        "key": "default/big",
        "minMember": 6,
        "members": 6,
        "placed": 0,
        "admitted": False,
        "reason": reason,
    }
    assert answer["selected"] is None
    assert answer["top"] == []
    assert answer["message"] == (
        f"0/2 nodes are available: {reason}. PodGroup default/big gets rejected due to Pod "
        "big-0 is unschedulable even after PostFilter"
    )
    # what big-0 alone meets: both nodes have room for it
    assert [name for name, node in answer["nodes"].items() if node["feasible"]] == ["n1", "n2"]

    table = explain(*common)
    assert table.returncode == 0, table.stderr
    text = " ".join(table.stdout.split())  # (lines wrap at the terminal's width)
    line = (
        "gang: pod group default/big: 0 of 6 members placed (6 pods name it): refused: the 6 "
        "missing cannot be placed together (room for 5)"
    )
    assert line in text  # under the configuration's line, above the tables
    assert text.index(line) < text.index("Feasible nodes")
    assert f"unschedulable: 0/2 nodes are available: {reason}." in text
