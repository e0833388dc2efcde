"""Provisioning logic that does not need a 4-minute build: locking, error reports, the cache key,
which binaries a cache lacks and the manifest that says so.

The build itself is exercised by the first run of the kube-apiserver tests (cold cache) and by
``asched kube-apiserver provision``; here a fake build step stands in for ``make`` (it writes
the binaries into a fake ``_output/bin`` and installs them with the real install step) so the
serialisation of concurrent callers and the manifest can be checked in milliseconds.
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


ALL = ("kube-apiserver", "kube-scheduler", "kube-controller-manager")
KCM = ("kube-controller-manager",)
#: The manifest a cache built before kube-controller-manager was added has (no "binaries").
LEGACY_MANIFEST = {
    "kubernetes": "v1.20.2",
    "debian_source": "kubernetes 1.20.5+really1.20.2",
    "go": "go version go1.19.8 linux/amd64",
    "build_seconds": 258.6,
    "built_at": "2026-11-24T12:40:43Z",
}


def _fake_build(calls: list[tuple[str, ...]]):
    def build(directory: Path, names) -> None:
        calls.append(tuple(names))
        time.sleep(0.3)  # long enough for the other caller to reach the lock
        tree = directory.parent / "fake-src"
        (tree / "_output" / "bin").mkdir(parents=True, exist_ok=True)
        for name in names:
            (tree / "_output" / "bin" / name).write_text(f"#!/bin/sh\n# built {name}\n")
        prov._install(tree, directory, time.monotonic(), names)

    return build


def _write_cache(directory: Path, manifest: object | None, files: dict[str, int]) -> None:
    """Fill ``directory``: ``files`` maps a binary to its mode; the manifest (if any) last."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, mode in files.items():
        (directory / name).write_text("#!/bin/sh\n# cached\n")
        (directory / name).chmod(mode)
    if manifest is not None:
        text = manifest if isinstance(manifest, str) else json.dumps(manifest)
        (directory / "manifest.json").write_text(text)


def test_cache_is_keyed_by_version(private_cache):
    assert prov.cache_dir() == private_cache / "kubernetes-v1.20.2"
    assert prov.read_manifest() is None
    assert prov.missing_binaries() == ALL


CURRENT = {**LEGACY_MANIFEST, "binaries": sorted(ALL)}
EXECUTABLE = dict.fromkeys(ALL, 0o755)
LEGACY_FILES = {"kube-apiserver": 0o755, "kube-scheduler": 0o755}


@pytest.mark.parametrize(
    ("manifest", "files", "missing"),
    [
        pytest.param(None, {}, ALL, id="empty cache: everything"),
        pytest.param(None, EXECUTABLE, ALL, id="binaries without a manifest: an unfinished build"),
        pytest.param("{not json", EXECUTABLE, ALL, id="unreadable manifest: everything"),
        pytest.param(
            LEGACY_MANIFEST, LEGACY_FILES, KCM, id="manifest without a list: the two it vouches for"
        ),
        pytest.param(
            LEGACY_MANIFEST,
            EXECUTABLE,
            KCM,
            # kube-controller-manager copied in, then the build died before the manifest:
            # the manifest is written last, so the copy does not count
            id="legacy manifest, controller manager copied but not listed",
        ),
        pytest.param(CURRENT, EXECUTABLE, (), id="all listed and executable: nothing"),
        pytest.param(
            CURRENT,
            {**EXECUTABLE, "kube-controller-manager": 0o644},
            KCM,
            id="listed but not executable",
        ),
        pytest.param(
            {**LEGACY_MANIFEST, "binaries": ["kube-apiserver"]},
            EXECUTABLE,
            ("kube-scheduler", "kube-controller-manager"),
            id="the list decides, not the files",
        ),
    ],
)
def test_missing_binaries(private_cache, manifest, files, missing):
    _write_cache(prov.cache_dir(), manifest, files)

    assert prov.missing_binaries() == missing
    assert (prov.read_manifest() is None) is bool(missing)


def test_concurrent_callers_build_once(private_cache, monkeypatch):
    calls: list[tuple[str, ...]] = []
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
    assert calls == [ALL]  # a fresh machine builds all three in one make
    assert len(results) == 3
    assert {r.kube_apiserver for r in results} == {
        private_cache / "kubernetes-v1.20.2" / "kube-apiserver"
    }


def test_partial_cache_without_manifest_is_rebuilt(private_cache, monkeypatch):
    directory = prov.cache_dir()
    directory.mkdir(parents=True)
    (directory / "kube-apiserver").write_text("half-copied")
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(prov, "_build", _fake_build(calls))

    binaries = prov.provision()

    assert calls == [ALL]
    assert binaries.kube_apiserver.read_text() == "#!/bin/sh\n# built kube-apiserver\n"
    assert prov.read_manifest() is not None


def test_legacy_cache_gets_only_the_controller_manager_built_once(private_cache, monkeypatch):
    # the cache of a machine provisioned before kube-controller-manager was added: two
    # concurrent callers make it once, and the cached binaries are kept as they are
    _write_cache(prov.cache_dir(), LEGACY_MANIFEST, LEGACY_FILES)
    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(prov, "_build", _fake_build(calls))
    results: list[prov.Binaries] = []
    threads = [threading.Thread(target=lambda: results.append(prov.provision())) for _ in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    manifest = prov.read_manifest()
    assert calls == [KCM]
    assert len(results) == 2
    binaries = results[0]
    assert binaries.kube_controller_manager == prov.cache_dir() / "kube-controller-manager"
    assert binaries.kube_controller_manager.read_text().endswith(
        "# built kube-controller-manager\n"
    )
    assert binaries.kube_apiserver.read_text().endswith("# cached\n")  # not rebuilt
    assert manifest is not None
    assert manifest["binaries"] == sorted(ALL)
    builds = manifest["builds"]
    assert [b["binaries"] for b in builds] == [["kube-apiserver", "kube-scheduler"], list(KCM)]
    assert builds[0] == {
        "binaries": ["kube-apiserver", "kube-scheduler"],
        "seconds": 258.6,
        "built_at": "2026-11-24T12:40:43Z",
    }
    # build_seconds: the legacy build's 258.6 s plus the fake one's (~0 s)
    assert manifest["build_seconds"] == round(258.6 + builds[1]["seconds"], 1)
    assert manifest["built_at"] == builds[1]["built_at"]
    assert not list(prov.cache_dir().glob(".*.tmp"))  # every staging file was renamed


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
