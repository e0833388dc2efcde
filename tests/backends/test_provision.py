"""Provisioning logic that does not need a 4-minute build: locking, error reports, the cache key.

The build itself is exercised by the first run of the kube-apiserver tests (cold cache) and by
``asched kube-apiserver provision``; here a fake build step stands in for ``make`` so the
serialisation of concurrent callers can be checked in milliseconds.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from asched.backends import provision as prov
from asched.backends.errors import ProvisionError


@pytest.fixture
def private_cache(tmp_path, monkeypatch) -> Path:
    """Point the cache at an empty temp dir (never the shared ~/.cache/asched)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    # etcd comes from apt; keep these tests away from apt-get on machines without it.
    monkeypatch.setattr(prov, "find_etcd", lambda: (Path("/bin/true"), Path("/bin/true")))
    return tmp_path / "asched"


def _fake_build(calls: list[float]):
    def build(directory: Path) -> None:
        calls.append(time.monotonic())
        time.sleep(0.3)  # long enough for the other caller to reach the lock
        directory.mkdir(parents=True, exist_ok=True)
        for name in prov.BINARIES:
            (directory / name).write_text("#!/bin/sh\n")
            (directory / name).chmod(0o755)
        (directory / "manifest.json").write_text(json.dumps({"kubernetes": "v1.20.2"}))

    return build


def test_cache_is_keyed_by_version(private_cache):
    assert prov.cache_dir() == private_cache / "kubernetes-v1.20.2"
    assert prov.read_manifest() is None


def test_concurrent_callers_build_once(private_cache, monkeypatch):
    calls: list[float] = []
    monkeypatch.setattr(prov, "_build", _fake_build(calls))
    results: list[prov.Binaries] = []
    errors: list[BaseException] = []

    def call() -> None:
        try:
            results.append(prov.provision())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert errors == []
    assert len(calls) == 1
    assert len(results) == 3
    assert {r.kube_apiserver for r in results} == {
        private_cache / "kubernetes-v1.20.2" / "kube-apiserver"
    }


def test_partial_cache_without_manifest_is_rebuilt(private_cache, monkeypatch):
    directory = prov.cache_dir()
    directory.mkdir(parents=True)
    (directory / "kube-apiserver").write_text("half-copied")
    calls: list[float] = []
    monkeypatch.setattr(prov, "_build", _fake_build(calls))

    binaries = prov.provision()

    assert len(calls) == 1
    assert binaries.kube_apiserver.read_text() == "#!/bin/sh\n"


def test_unknown_version_is_refused(private_cache):
    with pytest.raises(ProvisionError, match=r"only v1\.20\.2 can be built here"):
        prov.provision(version="v1.30.0")


def test_failed_step_names_the_step_and_shows_the_log_tail(tmp_path):
    log = tmp_path / "build.log"
    script = "for i in $(seq 1 100); do echo line $i; done; echo boom >&2; exit 3"

    with pytest.raises(ProvisionError) as caught:
        prov._run("make kube-apiserver kube-scheduler", ["sh", "-c", script], log)

    message = str(caught.value)
    assert caught.value.step == "make kube-apiserver kube-scheduler"
    assert "'make kube-apiserver kube-scheduler' failed" in message
    assert "exited with status 3" in message
    assert message.rstrip().endswith("boom")
    assert "line 100" in message
    assert "line 1\n" not in message  # only the tail
    assert "line 1\n" in log.read_text()  # the whole output is in the log


def test_missing_program_is_a_provision_error(tmp_path):
    with pytest.raises(ProvisionError, match="cannot run no-such-program"):
        prov._run("fetch", ["no-such-program"], tmp_path / "log")
