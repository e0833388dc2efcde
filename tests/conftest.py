"""Shared fixtures: one API server per backend per session, and a per-test ``cluster`` handle.

Backends (``ASCHED_BACKENDS``, a comma list, default ``sim,kube-apiserver``):

- ``sim``: the simulator, ``python -m asched sim`` in a child process (plain HTTP, token).
- ``kube-apiserver``: the genuine kube-apiserver v1.37 + etcd (TLS, token), built once from Go
  modules and cached (see ``asched.tools.backends.provision``).

Fixtures:

- ``cluster`` (function scope, parametrized over the selected backends; the kube-apiserver
  param carries ``pytest.mark.kube_apiserver``): a :class:`Cluster` with ``.backend``,
  ``.kubeconfig``, ``.rest`` (an open :class:`~asched.tools.backends.rest.RestClient`),
  ``.namespace`` (a fresh namespace), ``.unique_name(prefix)`` and helpers.
- ``sim_cluster`` (function scope, sim only, a fresh simulator per test): for fault injection
  tests marked ``sim_only``.
- ``sim_server`` / ``kube_apiserver`` (session scope): the server objects themselves.
- ``kube_controller_manager``: kube-controller-manager v1.37's PV controller beside the session
  kube-apiserver, started by the first test that asks for it and kept for the session (tests
  that don't ask never start it). A ``cluster`` test on both backends gets the same with
  ``cluster.server.ensure_controller_manager()`` when the server has that method.

Tests of an unselected backend are *deselected* (reported as such), never skipped. When a
kube-apiserver test or a ``kubectl`` test is selected, the binaries are provisioned during
collection, before any test timeout starts (a cold cache builds for ~10 minutes, with
progress lines).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pytest_asyncio import is_async_test

from asched.tools.backends.controller_manager import KubeControllerManager
from asched.tools.backends.errors import BackendError, StatusError
from asched.tools.backends.launcher import KubeApiServer
from asched.tools.backends.provision import provision, read_manifest, selected_version
from asched.tools.backends.rest import RestClient
from asched.tools.backends.simulator import SimServer

BACKENDS = ("sim", "kube-apiserver")
#: Label put on every node created through Cluster.create_node, so teardown can find them.
TEST_LABEL = "asched.test/id"


def selected_backends(config: pytest.Config | None = None) -> frozenset[str]:
    """Return the backends named in ``ASCHED_BACKENDS`` (all by default)."""
    raw = os.environ.get("ASCHED_BACKENDS", ",".join(BACKENDS))
    names = frozenset(part.strip() for part in raw.split(",") if part.strip())
    unknown = names - set(BACKENDS)
    if unknown or not names:
        raise pytest.UsageError(
            f"ASCHED_BACKENDS={raw!r}: expected a comma list of {', '.join(BACKENDS)}"
        )
    return names


def _backends_needed(item: pytest.Item) -> set[str]:
    needed: set[str] = set()
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("backend") in BACKENDS:
        needed.add(callspec.params["backend"])
    fixtures = set(getattr(item, "fixturenames", ()))
    if item.get_closest_marker("sim_only") or fixtures & {"sim_cluster", "sim_server"}:
        needed.add("sim")
    if item.get_closest_marker("kube_apiserver") or "kube_apiserver" in fixtures:
        needed.add("kube-apiserver")
    return needed


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect tests of unselected backends; provision kube-apiserver if any test needs it."""
    selected = selected_backends(config)
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        (dropped if _backends_needed(item) - selected else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    if any(
        "kube-apiserver" in _backends_needed(item) or item.get_closest_marker("kubectl")
        for item in kept
    ):
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        version = selected_version()
        if reporter is not None and read_manifest(version) is None:
            reporter.write_line(
                f"asched: building Kubernetes {version} from Go modules"
                " (~10 min on 2 cores, once; progress below)"
            )
            _log_provisioning_progress()
        try:
            provision(version=version)
        except BackendError as exc:
            raise pytest.UsageError(
                f"the kube-apiserver backend is unavailable: {exc}\n"
                "(run only the simulator's tests with ASCHED_BACKENDS=sim)"
            ) from exc


def _log_provisioning_progress() -> None:
    """Show the build's progress lines on the terminal (pytest captures logging otherwise)."""
    logger = logging.getLogger("asched.tools.backends.provision")
    if not any(getattr(h, "asched_progress", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("asched: %(message)s"))
        handler.asched_progress = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


@pytest.fixture(autouse=True)
def _no_implicit_event_loop(request: pytest.FixtureRequest) -> None:
    """Give sync tests no current event loop, so nothing creates one implicitly.

    looptime's ``pytest_pyfunc_call`` asks the policy for the current loop before *every* test;
    for a sync test with a fresh policy, Python 3.11 then creates a loop nobody closes, and
    ``filterwarnings = error`` turns its ResourceWarning into a session error.
    """
    if not is_async_test(request.node):
        asyncio.set_event_loop(None)


@pytest.fixture(scope="session")
def kube_apiserver() -> Iterator[KubeApiServer]:
    """The genuine kube-apiserver v1.37 (+ etcd) for the whole session."""
    with KubeApiServer() as server:
        yield server


@pytest.fixture
def kube_controller_manager(kube_apiserver: KubeApiServer) -> Iterator[KubeControllerManager]:
    """The PV controller beside the session kube-apiserver, for this test only: stopped after
    it, so the tests that create bound claims and PVs by hand (the benchmark's load
    generator) never race a controller on the shared server."""
    yield kube_apiserver.ensure_controller_manager()
    kube_apiserver.stop_controller_manager()


@pytest.fixture(scope="session")
def sim_server() -> Iterator[SimServer]:
    """The simulator for the whole session."""
    with SimServer() as server:
        yield server


@pytest.fixture(
    params=[
        pytest.param("sim", id="sim"),
        pytest.param("kube-apiserver", marks=pytest.mark.kube_apiserver, id="kube-apiserver"),
    ]
)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend name of a ``cluster`` test."""
    name: str = request.param
    return name


@pytest.fixture
def backend_server(backend: str, request: pytest.FixtureRequest) -> KubeApiServer | SimServer:
    """The session server of this test's backend."""
    server: KubeApiServer | SimServer
    server = request.getfixturevalue("sim_server" if backend == "sim" else "kube_apiserver")
    return server


@dataclass
class Cluster:
    """What a test gets: a backend, its kubeconfig, an open REST client and helpers.

    Attributes
    ----------
    backend : str
        ``"sim"`` or ``"kube-apiserver"``.
    kubeconfig : Path
        Token (+ CA for TLS) kubeconfig of the server.
    rest : RestClient
        Open for the duration of the test.
    namespace : str
        A namespace created for this test.
    server : KubeApiServer or SimServer
        The server object (for backend-specific operations).
    """

    backend: str
    kubeconfig: Path
    rest: RestClient
    namespace: str
    server: KubeApiServer | SimServer
    test_id: str = field(default_factory=lambda: uuid.uuid4().hex[:10])

    def unique_name(self, prefix: str = "t") -> str:
        """Return a DNS-1123 name no other test (or earlier run) uses."""
        return f"{prefix}-{uuid.uuid4().hex[:10]}"

    @property
    def labels(self) -> dict[str, str]:
        """Labels identifying this test's objects (used by teardown for nodes)."""
        return {TEST_LABEL: self.test_id}

    async def create_node(self, name: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """Create a Ready node labelled with :attr:`labels` (deleted at teardown)."""
        labels = {**self.labels, **kwargs.pop("labels", {})}
        return await self.rest.create_node(
            name or self.unique_name("node"), labels=labels, **kwargs
        )

    async def create_pod(self, name: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """Create a pod in :attr:`namespace`."""
        return await self.rest.create_pod(self.namespace, name or self.unique_name("pod"), **kwargs)

    async def expire_history(self) -> None:
        """Make every resourceVersion issued so far too old for a watch (-> 410 Gone).

        kube-apiserver: compact etcd and restart kube-apiserver (its watch caches restart at the
        current revision); blocks the loop for ~4 s. Simulator: its admin endpoint.
        """
        if isinstance(self.server, KubeApiServer):
            self.server.compact_etcd()
            self.server.restart_apiserver()
            await self.rest.reconnect()
        else:
            await self.rest.request("POST", "/admin/compact")

    async def cleanup(self) -> None:
        """Delete this test's pods (grace 0) and nodes; ignore objects already gone."""
        pods = await self.rest.list(f"/api/v1/namespaces/{self.namespace}/pods")
        for pod in pods.get("items", []):
            path = f"/api/v1/namespaces/{self.namespace}/pods/{pod['metadata']['name']}"
            await _delete_quietly(self.rest, path, grace=0)
        selector = f"{TEST_LABEL}={self.test_id}"
        nodes = await self.rest.list("/api/v1/nodes", label_selector=selector)
        for node in nodes.get("items", []):
            await _delete_quietly(self.rest, f"/api/v1/nodes/{node['metadata']['name']}")


async def _delete_quietly(rest: RestClient, path: str, grace: int | None = None) -> None:
    try:
        await rest.delete(path, grace_period_seconds=grace)
    except StatusError as exc:
        if exc.status != 404:
            raise


async def _open_cluster(backend: str, server: KubeApiServer | SimServer) -> Cluster:
    rest = RestClient.from_kubeconfig(server.kubeconfig)
    namespace = f"t-{uuid.uuid4().hex[:10]}"
    try:
        await rest.create_namespace(namespace)
    except BaseException:
        await rest.close()
        raise
    return Cluster(
        backend=backend, kubeconfig=server.kubeconfig, rest=rest, namespace=namespace, server=server
    )


@pytest.fixture
async def cluster(
    backend: str, backend_server: KubeApiServer | SimServer
) -> AsyncIterator[Cluster]:
    """A :class:`Cluster` on each selected backend (the test runs once per backend)."""
    handle = await _open_cluster(backend, backend_server)
    try:
        yield handle
        await handle.cleanup()
    finally:
        await handle.rest.close()


@pytest.fixture
def fresh_sim_server() -> Iterator[SimServer]:
    """A simulator of this test's own (fault injection must not leak into other tests)."""
    with SimServer() as server:
        yield server


@pytest.fixture
async def sim_cluster(fresh_sim_server: SimServer) -> AsyncIterator[Cluster]:
    """A :class:`Cluster` on a fresh simulator, for ``sim_only`` fault-injection tests."""
    handle = await _open_cluster("sim", fresh_sim_server)
    try:
        yield handle
    finally:
        await handle.rest.close()
