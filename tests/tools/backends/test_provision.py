"""Provisioning logic that does not need a ten-minute build: locking, the cache key, which
binaries a cache lacks, the manifest, progress and error reports.

The build itself is exercised by the first run of the kube-apiserver tests (cold cache) and by
``asched kube-apiserver provision``; here a fake build step stands in for ``go build`` (it
writes the binaries into a fake output folder and installs them with the real install step),
so the serialisation of concurrent callers and the manifest are checked in milliseconds.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from pathlib import Path

import pytest

from asched.tools.backends import provision as prov
from asched.tools.backends.errors import ProvisionError

ALL = prov.BINARIES


@pytest.fixture
def private_cache(tmp_path, monkeypatch) -> Path:
    """Point the cache at an empty temp dir (never the shared ~/.cache/asched)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "asched"


@pytest.fixture
def module_copy(tmp_path, monkeypatch) -> Path:
    """A private copy of the Go module, so a test may edit its sources."""
    copy = tmp_path / "module"
    shutil.copytree(prov.MODULE_DIR, copy)
    monkeypatch.setattr(prov, "MODULE_DIR", copy)
    return copy


def _fake_build(calls: list[str]):
    def build(directory: Path, version: str) -> None:
        calls.append(directory.name)
        time.sleep(0.3)  # long enough for the other callers to reach the lock
        output = directory.parent / "fake-bin"
        output.mkdir(parents=True, exist_ok=True)
        for name in ALL:
            (output / name).write_text(f"#!/bin/sh\n# built {name}\n")
        prov._install(output, directory, version, {"go": "fake"}, time.monotonic())

    return build


def _manifest(**changes: object) -> dict[str, object]:
    return {
        "kubernetes": prov.KUBERNETES_VERSION,
        "source_sha256": prov.source_digest(),
        "binaries": list(ALL),
        **changes,
    }


def _write_cache(directory: Path, manifest: object | None, files: dict[str, int]) -> None:
    """Fill ``directory``: ``files`` maps a binary to its mode; the manifest (if any) last."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, mode in files.items():
        (directory / name).write_text("#!/bin/sh\n# cached\n")
        (directory / name).chmod(mode)
    if manifest is not None:
        text = manifest if isinstance(manifest, str) else json.dumps(manifest)
        (directory / "manifest.json").write_text(text)


EXECUTABLE = dict.fromkeys(ALL, 0o755)


def test_cache_is_keyed_by_version(private_cache):
    assert prov.cache_dir() == private_cache / f"kubernetes-{prov.KUBERNETES_VERSION}"
    assert prov.go_cache_dirs() == (private_cache / "go" / "mod", private_cache / "go" / "build")
    assert prov.read_manifest() is None
    assert prov.missing_binaries() == ALL


@pytest.mark.parametrize(
    ("manifest", "files", "missing"),
    [
        pytest.param(None, {}, ALL, id="empty cache: everything"),
        pytest.param(None, EXECUTABLE, ALL, id="binaries without a manifest: an unfinished build"),
        pytest.param("{not json", EXECUTABLE, ALL, id="unreadable manifest: everything"),
        pytest.param(lambda: _manifest(), EXECUTABLE, (), id="all listed and executable: nothing"),
        pytest.param(
            lambda: _manifest(source_sha256="0" * 64),
            EXECUTABLE,
            ALL,
            id="built from other sources: everything",
        ),
        pytest.param(
            lambda: _manifest(),
            {**EXECUTABLE, "kubectl": 0o644},
            ("kubectl",),
            id="listed but not executable",
        ),
        pytest.param(
            lambda: _manifest(binaries=["kube-apiserver"]),
            EXECUTABLE,
            ALL[1:],
            id="the list decides, not the files",
        ),
        pytest.param(
            lambda: _manifest(binaries="kube-apiserver"), EXECUTABLE, ALL, id="a list that is not"
        ),
    ],
)
def test_missing_binaries(private_cache, manifest, files, missing):
    _write_cache(prov.cache_dir(), manifest() if callable(manifest) else manifest, files)

    assert prov.missing_binaries() == missing
    assert (prov.read_manifest() is None) is bool(missing)


def test_edited_sources_invalidate_the_cache(private_cache, module_copy):
    _write_cache(prov.cache_dir(), _manifest(), EXECUTABLE)
    assert prov.missing_binaries() == ()

    main = module_copy / "cmd" / "kubectl" / "main.go"
    main.write_text(main.read_text() + "\n// edited\n")

    assert prov.missing_binaries() == ALL


def test_the_digest_covers_paths_as_well_as_contents(module_copy):
    before = prov.source_digest()
    (module_copy / "cmd" / "etcd" / "main.go").rename(module_copy / "cmd" / "etcd" / "other.go")

    assert prov.source_digest() != before


def test_concurrent_callers_build_once(private_cache, monkeypatch):
    calls: list[str] = []
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
    assert calls == [f"kubernetes-{prov.KUBERNETES_VERSION}"]  # one build for three callers
    assert len(results) == 3
    assert {r.kubectl for r in results} == {prov.cache_dir() / "kubectl"}
    manifest = prov.read_manifest()
    assert manifest is not None
    assert manifest["binaries"] == list(ALL)
    assert manifest["source_sha256"] == prov.source_digest()
    assert manifest["bytes"] == sum((prov.cache_dir() / n).stat().st_size for n in ALL)
    assert not list(prov.cache_dir().glob(".*.tmp"))  # every staging file was renamed


def test_the_fast_path_runs_no_subprocess(private_cache, monkeypatch):
    _write_cache(prov.cache_dir(), _manifest(), EXECUTABLE)

    def refuse(*args, **kwargs):
        raise AssertionError(f"a subprocess on the fast path: {args}")

    monkeypatch.setattr(prov.subprocess, "Popen", refuse)
    monkeypatch.setattr(prov.subprocess, "run", refuse)

    assert prov.provision().etcd == prov.cache_dir() / "etcd"


def test_a_failed_install_leaves_no_manifest(private_cache, tmp_path):
    _write_cache(prov.cache_dir(), _manifest(), EXECUTABLE)
    output = tmp_path / "out"
    output.mkdir()
    (output / "kube-apiserver").write_text("only one")  # go build made one binary of seven

    with pytest.raises(ProvisionError, match="kube-controller-manager does not exist"):
        prov._install(output, prov.cache_dir(), prov.KUBERNETES_VERSION, {}, time.monotonic())

    assert prov.read_manifest() is None  # the old manifest vouches for nothing now
    assert prov.missing_binaries() == ALL


def test_unknown_version_is_refused(private_cache):
    with pytest.raises(ProvisionError, match=r"v1\.30\.0 is not supported; supported are v1\.37"):
        prov.provision(version="v1.30.0")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(None, prov.KUBERNETES_VERSION, id="unset: the newest"),
        pytest.param("", prov.KUBERNETES_VERSION, id="empty: the newest"),
        pytest.param(prov.OLDER_VERSIONS[-1], prov.OLDER_VERSIONS[-1], id="the oldest supported"),
    ],
)
def test_the_version_variable_picks_a_supported_version(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv(prov.VERSION_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(prov.VERSION_VARIABLE, value)

    assert prov.selected_version() == expected


def test_an_unsupported_version_variable_names_the_supported_ones(monkeypatch):
    monkeypatch.setenv(prov.VERSION_VARIABLE, "v1.20.2")

    with pytest.raises(
        ProvisionError, match=r"ASCHED_KUBE_VERSION=v1\.20\.2: supported are v1\.37"
    ):
        prov.selected_version()


def test_an_older_versions_cache_key_ignores_the_shipped_go_mod(module_copy):
    older = prov.OLDER_VERSIONS[0]
    before = prov.source_digest(version=older)
    (module_copy / "go.mod").write_text("module edited\n")

    assert prov.source_digest(version=older) == before  # its go.mod is generated
    assert prov.source_digest(version=older) != prov.source_digest(version=prov.OLDER_VERSIONS[1])


def test_version_ldflags_stamp_both_version_packages():
    flags = prov.version_ldflags("v1.37.2").split()

    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        assert f"{package}.gitVersion=v1.37.2" in flags
        assert f"{package}.gitMajor=1" in flags
        assert f"{package}.gitMinor=37" in flags


def test_every_binary_has_a_main_in_the_module():
    mains = {path.parent.name for path in prov.MODULE_DIR.glob("cmd/*/main.go")}

    assert mains == set(ALL)


def test_failed_step_names_the_step_and_shows_the_log_tail(tmp_path):
    log = tmp_path / "build.log"
    script = "for i in $(seq 1 100); do echo line $i; done; echo boom >&2; exit 3"

    with pytest.raises(ProvisionError) as caught:
        prov._run(
            "go build", ["sh", "-c", script], log, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}
        )

    message = str(caught.value)
    assert caught.value.step == "go build"
    assert "'go build' failed" in message
    assert "exited with status 3" in message
    assert message.rstrip().endswith("boom")
    assert "line 100" in message
    assert "line 1\n" not in message  # only the tail
    assert "line 1\n" in log.read_text()  # the whole output is in the log


def test_a_silent_step_reports_that_it_still_runs(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(prov, "PROGRESS_SECONDS", 0.2)
    script = "for i in 1 2 3 4 5 6; do echo tick; sleep 0.1; done"

    with caplog.at_level(logging.INFO, logger=prov.__name__):
        prov._run(
            "go mod download",
            ["sh", "-c", script],
            tmp_path / "log",
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin"},
        )

    assert any(
        "go mod download: " in r.getMessage() and "so far" in r.getMessage() for r in caplog.records
    )


def test_the_compile_counts_packages_out_of_the_total(monkeypatch, caplog):
    monkeypatch.setattr(prov, "PROGRESS_SECONDS", 0.0)
    counter = prov._PackageCounter(4)

    with caplog.at_level(logging.INFO, logger=prov.__name__):
        for line in (
            "k8s.io/api/core/v1",
            "# k8s.io/broken",
            "main.go:3: undefined: x",
            "k8s.io/kubernetes/cmd/kube-apiserver/app",
        ):
            counter.line(line)

    assert counter.done == 2  # the header and the error line are not packages
    assert [r.getMessage().split("(")[-1] for r in caplog.records] == ["25 %)", "50 %)"]


def test_missing_program_is_a_provision_error(tmp_path):
    with pytest.raises(ProvisionError, match="cannot run no-such-program"):
        prov._run("fetch", ["no-such-program"], tmp_path / "log", cwd=tmp_path, env={})


@pytest.mark.parametrize(
    ("version", "enough"),
    [
        pytest.param("go version go1.26.8 linux/amd64", True, id="the machine's"),
        pytest.param("go version go1.27.0 linux/amd64", True, id="newer"),
        pytest.param("go version go1.25.9 linux/amd64", False, id="too old for go 1.26.0"),
        pytest.param("", False, id="no output"),
        pytest.param("go version devel +abc linux/amd64", False, id="unparsable"),
    ],
)
def test_a_go_older_than_the_module_needs_is_not_used(monkeypatch, version, enough):
    monkeypatch.setattr(prov, "_go_version", lambda go: version)

    assert prov._new_enough(Path("/usr/bin/go")) is enough


UPSTREAM_GO_MOD = """module k8s.io/kubernetes

go 1.24.0

require (
\tgo.etcd.io/etcd/client/v3 v3.6.4
\tk8s.io/api v0.0.0
)

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/streaming => ./staging/src/k8s.io/streaming
)
"""


def test_an_older_go_mod_pins_what_upstream_replaces():
    text = prov.go_mod_for("v1.34.4", UPSTREAM_GO_MOD)

    assert "\ngo 1.24.0\n" in text
    assert "\tk8s.io/kubernetes v1.34.4\n" in text
    assert "\tgo.etcd.io/etcd/server/v3 v3.6.4\n" in text  # the etcd its client is at
    assert "\tk8s.io/api => k8s.io/api v0.34.4\n" in text
    assert "\tk8s.io/streaming => k8s.io/streaming v0.34.4\n" in text
    assert text.count(" => ") == 2


def test_an_upstream_go_mod_without_staging_is_refused():
    with pytest.raises(ProvisionError, match="names no etcd client or staging module"):
        prov.go_mod_for("v1.34.4", "module k8s.io/kubernetes\n\ngo 1.24.0\n")
