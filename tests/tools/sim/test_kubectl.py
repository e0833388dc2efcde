"""The real ``kubectl`` (v1.32) against the simulator: discovery, tables, apply, watch.

The simulator runs in its own process with ``--tls``: client-go only sends bearer tokens
over TLS, so this also checks the generated CA in the kubeconfig.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.kubectl import kubectl_path

pytestmark = pytest.mark.kubectl

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: c
    image: nginx:1.25
    resources:
      requests: {cpu: "0.5", memory: 1024Mi}
"""


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("kubectl")
    path = directory / "kubeconfig"
    with (directory / "sim.log").open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "asched",
                "sim",
                "--tls",
                "--nodes",
                "3",
                "--zones",
                "3",
                "--port",
                "0",
                "--kubeconfig-out",
                str(path),
                "--time-scale",
                "0.01",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        deadline = time.monotonic() + 30
        while not path.exists():
            log = (directory / "sim.log").read_text()
            assert process.poll() is None, log
            assert time.monotonic() < deadline, log
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


def test_get_nodes_prints_the_server_table(kubeconfig: Path):
    out = kubectl(kubeconfig, "get", "nodes", "-o", "wide").stdout.splitlines()
    assert out[0].split()[:5] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert [line.split()[:2] for line in out[1:]] == [
        ["node-0", "Ready"],
        ["node-1", "Ready"],
        ["node-2", "Ready"],
    ]


@pytest.mark.parametrize(
    "name",
    [
        "po",
        "no",
        "ns",
        "ev",
        "svc",
        "rs",
        "sts",
        "pdb",
        "pc",
        "sc",
        "lease",
        "rc",
        "pv",
        "pvc",
        "csinodes",
        "csidrivers",
    ],
)
def test_short_and_singular_names_resolve(kubeconfig: Path, name: str):
    kubectl(kubeconfig, "get", name, "-A")


def test_apply_create_get_describe_delete(kubeconfig: Path):
    assert "pod/web created" in kubectl(kubeconfig, "apply", "-f", "-", stdin=POD).stdout
    changed = POD.replace("nginx:1.25", "nginx:1.26")
    assert "pod/web configured" in kubectl(kubeconfig, "apply", "-f", "-", stdin=changed).stdout
    pod = json.loads(kubectl(kubeconfig, "get", "pod", "web", "-o", "json").stdout)
    assert pod["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    as_yaml = yaml.safe_load(kubectl(kubeconfig, "get", "po", "web", "-o", "yaml").stdout)
    assert as_yaml["metadata"]["uid"] == pod["metadata"]["uid"]
    described = kubectl(kubeconfig, "describe", "pod", "web").stdout
    assert "Name:         web" in described
    assert "QoS Class:        Burstable" in described
    assert "Name:" in kubectl(kubeconfig, "describe", "node", "node-0").stdout
    kubectl(kubeconfig, "label", "pod", "web", "tier=fe")
    kubectl(
        kubeconfig,
        "patch",
        "pod",
        "web",
        "--type",
        "merge",
        "-p",
        '{"metadata":{"annotations":{"a":"b"}}}',
    )
    assert 'pod "web" deleted' in kubectl(kubeconfig, "delete", "pod", "web").stdout
    assert kubectl(kubeconfig, "get", "pod", "web", check=False).returncode == 1


def test_create_namespaces(kubeconfig: Path):
    # create -f sends JSON; create namespace sends protobuf (decoded for Namespace only).
    kubectl(
        kubeconfig,
        "create",
        "-f",
        "-",
        stdin="apiVersion: v1\nkind: Namespace\nmetadata: {name: from-file}\n",
    )
    kubectl(kubeconfig, "create", "namespace", "typed")
    names = kubectl(kubeconfig, "get", "ns", "-o", "name").stdout.split()
    assert {"namespace/from-file", "namespace/typed"} <= set(names)
    kubectl(kubeconfig, "delete", "namespace", "typed")


def test_get_watch(kubeconfig: Path):
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(kubeconfig.parent)}
    with subprocess.Popen(
        [kubectl_path(), "get", "pods", "-w", "--request-timeout=8s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    ) as watcher:
        time.sleep(1.0)
        kubectl(kubeconfig, "run", "watched", "--image=nginx")
        time.sleep(1.0)
        watcher.send_signal(signal.SIGTERM)
        out, _ = watcher.communicate(timeout=10)
    assert any(line.split()[:1] == ["watched"] for line in out.splitlines()), out


README = Path(__file__).resolve().parents[3] / "README.md"


def _readme_sim_command() -> list[str]:
    """The README's ``asched sim ... --kubeconfig-out ...`` line, as a user would type it."""
    lines = [
        line.split("#", 1)[0].split()
        for line in README.read_text(encoding="utf-8").splitlines()
        if line.startswith("asched sim ")
    ]
    assert len(lines) == 1, "the README shows one `asched sim` command"
    return lines[0]


def test_the_readme_sim_command_works_with_kubectl(tmp_path: Path):
    # The README's exact flags, with a small --nodes and the kubeconfig in tmp_path.
    argv = _readme_sim_command()
    assert argv[:2] == ["asched", "sim"]
    flags = argv[2:]
    flags[flags.index("--nodes") + 1] = "2"
    out = flags.index("--kubeconfig-out") + 1
    path = tmp_path / flags[out]
    flags[out] = str(path)
    with (tmp_path / "sim.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "asched", "sim", *flags], stdout=subprocess.DEVNULL, stderr=log
        )
    try:
        deadline = time.monotonic() + 30
        while not path.exists():
            assert process.poll() is None, (tmp_path / "sim.log").read_text()
            assert time.monotonic() < deadline, "no kubeconfig within 30 s"
            time.sleep(0.05)
            result = subprocess.run(
                [kubectl_path(), "--kubeconfig", str(path), "get", "nodes"],
                capture_output=True,
                text=True,
                env={**os.environ, "HOME": str(tmp_path)},
                timeout=60,
            )
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)

    assert result.returncode == 0, result.stderr
    assert [line.split()[:2] for line in result.stdout.splitlines()[1:]] == [
        ["node-0", "Ready"],
        ["node-1", "Ready"],
    ]


def test_without_kubeconfig_out_the_sim_says_where_its_kubeconfig_is(tmp_path: Path):
    # `asched sim` alone: once it generated a token it never showed, and every request got
    # 401; now it writes the kubeconfig to a file of its own and says so, and kubectl works
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path), "HOME": str(tmp_path)}
    with subprocess.Popen(
        [sys.executable, "-m", "asched", "sim", "--nodes", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        try:
            assert process.stderr is not None
            serving = process.stderr.readline()
            assert serving.startswith("asched sim: serving on https://127.0.0.1:"), serving
            port = serving.rsplit(":", 1)[1].strip()
            path = tmp_path / f"asched-sim-{port}.kubeconfig"
            said = process.stderr.readline()
            assert said.startswith(f"asched sim: kubeconfig (server, token, CA) in {path}:"), said
            assert f"kubectl --kubeconfig {path} get nodes" in said
            assert oct(path.stat().st_mode & 0o777) == "0o600"
            result = subprocess.run(
                [kubectl_path(), "--kubeconfig", str(path), "get", "nodes", "-o", "name"],
                capture_output=True,
                text=True,
                env=env,
                timeout=60,
            )
            assert result.returncode == 0, result.stderr
            assert len(result.stdout.split()) == 2
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=30) == 0
    assert not path.exists()  # its own file: removed when it stops
