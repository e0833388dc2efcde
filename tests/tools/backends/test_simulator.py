"""The simulator as a child process (asched.tools.backends.simulator) and the sim fixtures."""

from __future__ import annotations

import os

import pytest

from asched.tools.backends.errors import StatusError
from asched.tools.backends.kubeconfig import KubeconfigEntry, read_kubeconfig
from asched.tools.backends.rest import RestClient, nodes_path
from asched.tools.backends.simulator import SimServer

pytestmark = pytest.mark.sim_only


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
async def test_sim_server_serves_its_kubeconfig_and_stops_cleanly(tls):
    server = SimServer(tls=tls)
    with server:
        entry = read_kubeconfig(server.kubeconfig)
        pids = server.pids()
        directory = server.directory
        async with RestClient(entry) as rest:
            version = await rest.get("/version")
        scheme = "https://" if tls else "http://"

        assert entry.server.startswith(scheme + "127.0.0.1:")
        assert (entry.ca_pem is not None) is tls  # HTTPS is verified against the sim's own CA
        assert entry.token == server.token
        assert version["gitVersion"].startswith("v")
        assert all(_running(pid) for pid in pids.values())

    assert [pid for pid in pids.values() if _running(pid)] == []
    assert not directory.exists()


async def test_sim_cluster_is_a_fresh_simulator_of_its_own(sim_cluster, sim_server):
    assert sim_cluster.backend == "sim"
    assert sim_cluster.kubeconfig != sim_server.kubeconfig
    nodes = await sim_cluster.rest.list(nodes_path())
    assert nodes["items"] == []


async def test_sim_requires_the_token(sim_server):
    good = read_kubeconfig(sim_server.kubeconfig)
    async with RestClient(KubeconfigEntry(server=good.server, token=None)) as rest:
        with pytest.raises(StatusError) as caught:
            await rest.list(nodes_path())
    assert caught.value.status == 401


async def test_api_backed_tests_run_on_uvloop():
    import asyncio

    import uvloop

    assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
