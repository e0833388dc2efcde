"""The genuine kube-apiserver backend: lifecycle, TLS verification, authentication, CLI."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import aiohttp
import pytest

from asched.tools.backends.errors import StatusError
from asched.tools.backends.kubeconfig import KubeconfigEntry, read_kubeconfig
from asched.tools.backends.launcher import KubeApiServer
from asched.tools.backends.provision import BINARIES, ETCD_VERSION, KUBERNETES_VERSION, provision
from asched.tools.backends.rest import RestClient, pods_path

pytestmark = pytest.mark.kube_apiserver

READY_DEADLINE = 120.0


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _wrong_ca(tmp_path: Path) -> bytes:
    """A self-signed certificate for 127.0.0.1 that did not sign the server's certificate."""
    key, cert = tmp_path / "wrong.key", tmp_path / "wrong.crt"
    argv = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    argv += ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        [*argv, "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert.read_bytes()


def test_start_and_stop_leave_no_processes_and_no_files():
    server = KubeApiServer(controller_manager=True)
    with server:
        scheduler = server.start_scheduler()
        pids = server.pids()
        directory = server.directory
        manager = server.controller_manager
        assert set(pids) == {"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager"}
        assert all(_running(pid) for pid in pids.values())
        assert scheduler.child is not None
        assert scheduler.child.pid == pids["kube-scheduler"]
        assert manager is not None
        assert manager.log == directory / "kube-controller-manager.log"

    assert [name for name, pid in pids.items() if _running(pid)] == []
    assert server.pids() == {}
    assert not directory.exists()
    server.stop()  # idempotent


def test_kubeconfig_embeds_the_server_certificate_and_is_private(kube_apiserver):
    entry = read_kubeconfig(kube_apiserver.kubeconfig)

    assert entry.server == kube_apiserver.url
    assert entry.server.startswith("https://127.0.0.1:")
    assert entry.ca_pem == (kube_apiserver.directory / "certs" / "apiserver.crt").read_bytes()
    assert entry.token == kube_apiserver.token
    assert not entry.insecure_skip_tls_verify
    assert kube_apiserver.kubeconfig.stat().st_mode & 0o777 == 0o600
    assert kube_apiserver.token not in repr(entry)


async def test_client_from_kubeconfig_verifies_tls_and_reaches_the_provisioned_version(
    kube_apiserver,
):
    async with RestClient.from_kubeconfig(kube_apiserver.kubeconfig) as rest:
        version = await rest.get("/version")

    assert version["gitVersion"] == KUBERNETES_VERSION
    assert kube_apiserver.token not in repr(rest)


@pytest.mark.parametrize("ca", ["wrong", "system"])
async def test_client_with_another_ca_fails_verification(kube_apiserver, tmp_path, ca):
    good = read_kubeconfig(kube_apiserver.kubeconfig)
    ca_pem = _wrong_ca(tmp_path) if ca == "wrong" else None
    entry = KubeconfigEntry(server=good.server, ca_pem=ca_pem, token=good.token)

    async with RestClient(entry) as rest:
        with pytest.raises(aiohttp.ClientConnectorCertificateError) as caught:
            await rest.get("/version")

    assert isinstance(caught.value.certificate_error, ssl.SSLCertVerificationError)


@pytest.mark.parametrize("token", [None, "not-the-token"], ids=["no token", "wrong token"])
async def test_requests_without_the_token_are_401(kube_apiserver, token):
    good = read_kubeconfig(kube_apiserver.kubeconfig)
    entry = KubeconfigEntry(server=good.server, ca_pem=good.ca_pem, token=token)

    async with RestClient(entry) as rest:
        with pytest.raises(StatusError) as caught:
            await rest.list(pods_path("default"))

    assert (caught.value.status, caught.value.reason) == (401, "Unauthorized")
    assert caught.value.body["kind"] == "Status"


def test_provisioning_is_a_fast_no_op_once_cached():
    provision()  # the session fixture already built or found the binaries

    started = time.monotonic()
    binaries = provision()
    elapsed = time.monotonic() - started

    assert elapsed < 1.0
    for path in (
        binaries.kube_apiserver,
        binaries.kube_scheduler,
        binaries.kube_controller_manager,
        binaries.etcd,
    ):
        assert os.access(path, os.X_OK)
    assert (binaries.cache_dir / "manifest.json").is_file()


async def test_kube_scheduler_started_by_the_launcher_binds_pods(kube_apiserver, tmp_path):
    # A profile name of its own, so this scheduler never touches other tests' pods.
    name = "kube-scheduler-under-test"
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "profiles": [{"schedulerName": name}],
    }
    scheduler = kube_apiserver.start_scheduler(config)
    try:
        async with RestClient.from_kubeconfig(kube_apiserver.kubeconfig) as rest:
            ns = f"sched-{os.urandom(4).hex()}"
            await rest.create_namespace(ns)
            node = f"node-{os.urandom(4).hex()}"
            await rest.create_node(node, labels={"asched.test/id": ns})
            created = await rest.create_pod(ns, "p", scheduler_name=name)
            bound = ""
            stream = rest.watch(
                pods_path(ns), resource_version=created["metadata"]["resourceVersion"]
            )
            async with asyncio.timeout(READY_DEADLINE):
                async for event in stream:
                    bound = event["object"]["spec"].get("nodeName", "")
                    if bound:
                        break
            await stream.aclose()
            await rest.delete(pods_path(ns, "p"), grace_period_seconds=0)
            await rest.delete(f"/api/v1/nodes/{node}")
    finally:
        scheduler.stop()

    assert bound == node


@pytest.mark.parametrize(
    ("flags", "children"),
    [
        pytest.param((), 2, id="etcd and kube-apiserver"),
        pytest.param(("--controller-manager",), 3, id="and kube-controller-manager"),
    ],
)
def test_cli_start_serves_until_sigterm_then_cleans_up(tmp_path, flags, children):
    kubeconfig = tmp_path / "out" / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "asched",
            "kube-apiserver",
            "start",
            "--kubeconfig-out",
            str(kubeconfig),
            *flags,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + READY_DEADLINE
        while not kubeconfig.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "no kubeconfig written"
            time.sleep(0.1)  # polling for readiness with a deadline
        entry = read_kubeconfig(kubeconfig)
        assert entry.ca_pem is not None
        context = ssl.create_default_context(cadata=entry.ca_pem.decode())
        request = urllib.request.Request(
            f"{entry.server}/version", headers={"Authorization": f"Bearer {entry.token}"}
        )
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            assert response.status == 200
        pids = subprocess.run(
            ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        assert len(pids) == children

        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    assert proc.returncode == 0, err
    assert "ready at https://127.0.0.1:" in out
    assert not kubeconfig.exists()
    assert [pid for pid in pids if _running(int(pid))] == []


def test_cli_status_reports_the_cache():
    result = subprocess.run(
        [sys.executable, "-m", "asched", "kube-apiserver", "status"],
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert f"kubernetes     {KUBERNETES_VERSION}" in result.stdout
    assert ", ".join(BINARIES) in result.stdout
    assert f"kubernetes-{KUBERNETES_VERSION}" in result.stdout
    assert f"etcd           {ETCD_VERSION}" in result.stdout
    assert re.search(
        r"size +\d+ MB binaries, \d+ MB Go modules, \d+ MB Go build cache", result.stdout
    )
