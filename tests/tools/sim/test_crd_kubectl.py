"""The real ``kubectl`` (v1.32) with custom resources on the simulator: apply the shipped
PodGroup CRD, wait for it, create and list PodGroups with the CRD's printer columns.

The simulator runs in its own process with ``--tls`` (client-go sends bearer tokens only over
TLS), as in ``test_kubectl.py``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kubectl import kubectl_path

pytestmark = pytest.mark.kubectl

CRD_FILE = Path(__file__).parents[3] / "deploy" / "crds" / "scheduling.x-k8s.io_podgroups.yaml"
PODGROUPS = """\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang-a, namespace: default}
spec: {minMember: 3}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang-b, namespace: kube-public}
spec: {minMember: 2, minResources: {cpu: "4"}}
"""


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("kubectl-crd")
    path = directory / "kubeconfig"
    with (directory / "sim.log").open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "asched",
                "sim",
                "--tls",
                "--port",
                "0",
                "--kubeconfig-out",
                str(path),
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        deadline = time.monotonic() + 30
        while not path.exists():
            assert process.poll() is None, (directory / "sim.log").read_text()
            assert time.monotonic() < deadline, (directory / "sim.log").read_text()
            time.sleep(0.05)
        yield path
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)


def kubectl(
    kubeconfig: Path, *args: str, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(kubeconfig.parent)}
    result = subprocess.run(
        [kubectl_path(), *args], input=stdin, capture_output=True, text=True, env=env, timeout=60
    )
    if check:
        assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
    return result


def cells(table: str) -> list[list[str]]:
    """kubectl's table as rows of cells, cut at the header's column starts (cells may be
    empty, so splitting on blanks would shift them)."""
    header, *rows = table.splitlines()
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    bounds = list(zip(starts, [*starts[1:], None], strict=True))
    return [[line[a:b].strip() for a, b in bounds] for line in (header, *rows)]


def test_apply_the_podgroup_crd_then_get_podgroups(kubeconfig: Path):
    applied = kubectl(kubeconfig, "apply", "-f", str(CRD_FILE)).stdout
    assert "customresourcedefinition.apiextensions.k8s.io/podgroups.scheduling.x-k8s.io" in applied
    kubectl(
        kubeconfig,
        "wait",
        "--for=condition=Established",
        "--timeout=20s",
        "crd/podgroups.scheduling.x-k8s.io",
    )
    kubectl(kubeconfig, "apply", "-f", "-", stdin=PODGROUPS)

    # the group named: v1.37 serves a PodGroup of its own (scheduling.k8s.io/v1beta1), and
    # kubectl resolves a bare "podgroups" to the built-in group first
    table = cells(kubectl(kubeconfig, "get", "podgroups.scheduling.x-k8s.io", "-A").stdout)

    # Namespace (from -A), then the server's columns: Name and the CRD's printer columns;
    # no status yet: empty cells, as kubectl prints a real server's missing values.
    assert [row[:7] for row in table] == [
        ["NAMESPACE", "NAME", "PHASE", "MINMEMBER", "RUNNING", "SUCCEEDED", "FAILED"],
        ["default", "gang-a", "", "3", "", "", ""],
        ["kube-public", "gang-b", "", "2", "", "", ""],
    ]
    assert table[0][7] == "AGE"
    assert all(row[7].endswith("s") for row in table[1:])  # seconds old
    by_short_name = kubectl(kubeconfig, "get", "pg", "-n", "default", "-o", "name").stdout
    assert by_short_name.split() == ["podgroup.scheduling.x-k8s.io/gang-a"]
    kubectl(
        kubeconfig,
        "patch",
        "pg",
        "gang-a",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"phase":"Running","running":3}}',
    )
    gang = json.loads(kubectl(kubeconfig, "get", "pg", "gang-a", "-o", "json").stdout)
    assert gang["status"] == {"phase": "Running", "running": 3}
    assert cells(kubectl(kubeconfig, "get", "pg", "gang-a").stdout)[1][:6] == [
        "gang-a",
        "Running",
        "3",
        "3",
        "",
        "",
    ]


def test_deleting_the_crd_removes_the_resource_type(kubeconfig: Path):
    kubectl(kubeconfig, "apply", "-f", str(CRD_FILE))
    kubectl(
        kubeconfig,
        "wait",
        "--for=condition=Established",
        "--timeout=20s",
        "crd/podgroups.scheduling.x-k8s.io",
    )

    kubectl(kubeconfig, "delete", "-f", str(CRD_FILE), "--wait=true", "--timeout=20s")

    # named with its group: a bare "podgroups" is v1.37's own scheduling.k8s.io PodGroup
    missing = kubectl(kubeconfig, "get", "podgroups.scheduling.x-k8s.io", "-A", check=False)
    # discovery no longer lists it (kubectl's words, as against a genuine v1.37 server)
    assert missing.returncode == 1
    assert (
        'the server doesn\'t have a resource type "podgroups" in group "scheduling.x-k8s.io"'
        in missing.stderr
    )
