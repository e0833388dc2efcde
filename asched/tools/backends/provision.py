"""Provision the genuine Kubernetes v1.37 components and etcd, built from Go modules.

Why this exists: the contract tests, the live tests and the side-by-side benchmarks need the
real control plane as the source of truth, at the version users run. Nothing ships it on these
machines, but the Go module proxy serves ``k8s.io/kubernetes`` and every staging module, so
asched carries a small Go module (``asched/tools/backends/kube``: ``go.mod``, ``go.sum`` and one
``main`` per component, each calling upstream's own command constructor; no upstream source
is copied) and builds it once per version with ``go build``:

- kube-apiserver, kube-controller-manager, kube-scheduler (``k8s.io/kubernetes/cmd/*/app``);
- kubectl (``k8s.io/kubectl/pkg/cmd``): the tests use this one, never one found on PATH;
- etcd, etcdctl, etcdutl (``go.etcd.io/etcd``, at the version kubeadm v1.37 deploys).

Invariants:

- The cache directory ``~/.cache/asched/kubernetes-v1.37.2/`` holds the binaries and a
  ``manifest.json`` written *last*; a directory without the manifest is an unfinished build.
- The manifest records the digest of the Go module's files (:func:`source_digest`): a cache
  built from other sources (an edited ``main.go``, a bumped ``go.mod``) is rebuilt, and the
  rebuild is incremental because Go's own caches persist under ``~/.cache/asched/go/``.
- A binary counts only when the manifest lists it and its file is executable.
- An exclusive ``flock`` on ``kubernetes-v1.37.2.lock`` serialises builders: concurrent
  callers build once, the others wait and then take the fast path.
- The fast path (everything cached) reads a few small files and runs no subprocess.
- A long build says what it is doing: the module download, then the compile with a count of
  packages done out of the total, at least every :data:`PROGRESS_SECONDS`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from asched.tools.backends.errors import ProvisionError

logger = logging.getLogger(__name__)

KUBERNETES_VERSION: Final = "v1.37.2"
#: The etcd release k8s.io/kubernetes v1.37 pins its client to (kubeadm's DefaultEtcdVersion).
ETCD_VERSION: Final = "v3.7.0"
#: The Go toolchain the module is built with when the machine has none (or an older one).
GO_TOOLCHAIN: Final = "go1.26.8"
#: What one build makes, each from ``cmd/<name>`` of the Go module.
BINARIES: Final = (
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubectl",
    "etcd",
    "etcdctl",
    "etcdutl",
)
#: The Go module, shipped inside the package (package data).
MODULE_DIR: Final = Path(__file__).parent / "kube"
#: The older minors asched supports (docs/deploy.md), newest first: built on demand from a
#: module generated like the shipped one (the same mains; ``go.mod`` replaces the staging
#: modules k8s.io/kubernetes lists at that version), never in CI by default.
OLDER_VERSIONS: Final = ("v1.36.3", "v1.35.4", "v1.34.4")
SUPPORTED_VERSIONS: Final = (KUBERNETES_VERSION, *OLDER_VERSIONS)
#: Picks the version the test fixtures and ``--backend kube-apiserver`` start.
VERSION_VARIABLE: Final = "ASCHED_KUBE_VERSION"
#: Seconds between two progress lines of a build step that prints nothing of its own.
PROGRESS_SECONDS: Final = 15.0
_GO_PROXY: Final = "https://proxy.golang.org"
_LOG_TAIL_LINES: Final = 40


@dataclass(frozen=True, slots=True, kw_only=True)
class Binaries:
    """Absolute paths of the provisioned executables (all in ``cache_dir``)."""

    kube_apiserver: Path
    kube_scheduler: Path
    kube_controller_manager: Path
    kubectl: Path
    etcd: Path
    etcdctl: Path
    etcdutl: Path
    cache_dir: Path
    version: str = KUBERNETES_VERSION


def selected_version() -> str:
    """Return the version named by ``$ASCHED_KUBE_VERSION``, else :data:`KUBERNETES_VERSION`.

    Raises
    ------
    ProvisionError
        When the variable names a version asched does not support.
    """
    version = os.environ.get(VERSION_VARIABLE, "").strip() or KUBERNETES_VERSION
    if version not in SUPPORTED_VERSIONS:
        raise ProvisionError(
            "select version",
            f"{VERSION_VARIABLE}={version}: supported are {', '.join(SUPPORTED_VERSIONS)}",
        )
    return version


def minor_of(version: str) -> int:
    """Return the minor of a ``v1.N.P`` version (37 for v1.37.2)."""
    return int(version.removeprefix("v").split(".")[1])


def cache_root() -> Path:
    """Return the asched cache root (``$XDG_CACHE_HOME/asched`` or ``~/.cache/asched``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "asched"


def cache_dir(version: str = KUBERNETES_VERSION) -> Path:
    """Return the directory holding the binaries of one Kubernetes version."""
    return cache_root() / f"kubernetes-{version}"


def go_cache_dirs() -> tuple[Path, Path]:
    """Return ``(GOMODCACHE, GOCACHE)``: Go's module and build caches, shared by versions."""
    root = cache_root() / "go"
    return root / "mod", root / "build"


def module_source(module: Path | None = None) -> dict[str, bytes]:
    """Return the Go module's files (``go.mod``, ``go.sum``, every ``.go``) by relative path.

    ``module`` defaults to :data:`MODULE_DIR`.
    """
    module = module or MODULE_DIR
    files = [module / "go.mod", module / "go.sum", *sorted(module.rglob("*.go"))]
    return {path.relative_to(module).as_posix(): path.read_bytes() for path in files}


def source_digest(module: Path | None = None, version: str = KUBERNETES_VERSION) -> str:
    """Return the sha256 over the module's files and their paths (the cache's source key).

    An older version's key covers the mains and the version (its ``go.mod`` is made from
    them, and its ``go.sum`` by ``go mod tidy``), so that the fast path needs no network.
    """
    digest = hashlib.sha256()
    files = module_source(module)
    if version != KUBERNETES_VERSION:
        files = {n: c for n, c in files.items() if n.endswith(".go")}
        files["version"] = version.encode()
    for name, content in files.items():
        digest.update(f"{name}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()


def read_manifest(version: str = KUBERNETES_VERSION) -> dict[str, object] | None:
    """Return the manifest of a finished, current build of every binary, or None."""
    manifest = _load_manifest(cache_dir(version))
    if manifest is None or missing_binaries(version):
        return None
    return manifest


def missing_binaries(version: str = KUBERNETES_VERSION) -> tuple[str, ...]:
    """Return the names in :data:`BINARIES` the cache does not hold (all of them when stale).

    A binary is held when the manifest, built from the current sources, lists it and its file
    is executable.
    """
    directory = cache_dir(version)
    manifest = _load_manifest(directory)
    if manifest is None or manifest.get("source_sha256") != source_digest(version=version):
        return BINARIES
    listed = manifest.get("binaries")
    names = frozenset(n for n in listed if isinstance(n, str)) if isinstance(listed, list) else ()
    return tuple(
        name for name in BINARIES if name not in names or not os.access(directory / name, os.X_OK)
    )


def _load_manifest(directory: Path) -> dict[str, object] | None:
    try:
        data = json.loads((directory / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def binaries_in(directory: Path, version: str = KUBERNETES_VERSION) -> Binaries:
    """Return the :class:`Binaries` of a cache directory (not checked)."""
    return Binaries(
        kube_apiserver=directory / "kube-apiserver",
        kube_scheduler=directory / "kube-scheduler",
        kube_controller_manager=directory / "kube-controller-manager",
        kubectl=directory / "kubectl",
        etcd=directory / "etcd",
        etcdctl=directory / "etcdctl",
        etcdutl=directory / "etcdutl",
        cache_dir=directory,
        version=version,
    )


def provision(*, version: str = KUBERNETES_VERSION) -> Binaries:
    """Make sure every binary of ``version`` is built and cached; build them if not.

    Blocking. A cold build on 2 cores takes 10 to 15 minutes (bench/RESULTS.md has the
    measured figures); a warm one (sources changed, Go's caches kept) about a minute; a
    cached one a few milliseconds.

    Raises
    ------
    ProvisionError
        When a step fails; the message names the step and ends with the tail of its log.
    """
    if version not in SUPPORTED_VERSIONS:
        raise ProvisionError(
            "select version",
            f"{version} is not supported; supported are {', '.join(SUPPORTED_VERSIONS)}",
        )
    directory = cache_dir(version)
    if missing_binaries(version):
        directory.parent.mkdir(parents=True, exist_ok=True)
        with _exclusive_lock(directory.parent / f"kubernetes-{version}.lock"):
            if missing_binaries(version):  # another process may have built them meanwhile
                _build(directory, version)
    return binaries_in(directory, version)


@contextlib.contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            logger.info("waiting for another provisioning run to release %s", path)
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def version_ldflags(version: str = KUBERNETES_VERSION) -> str:
    """Return the ``-ldflags`` that stamp the version as upstream's release build does.

    Without them every component reports ``v0.0.0-master``, and kubectl and client-go's
    skew checks misread the server.
    """
    major, minor = version.removeprefix("v").split(".")[:2]
    flags = ["-s", "-w"]  # no symbol table or DWARF: a third smaller, nothing lost for us
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        for key, value in (
            ("gitVersion", version),
            ("gitMajor", major),
            ("gitMinor", minor),
            ("gitTreeState", "clean"),
        ):
            flags.append(f"-X {package}.{key}={value}")
    return " ".join(flags)


def _build(directory: Path, version: str = KUBERNETES_VERSION) -> None:
    """Build every binary of ``version`` into ``directory`` and write the manifest (last)."""
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix=f"build-{version}-", dir=directory.parent))
    log = directory.parent / f"build-{version}.log"
    log.write_text("")
    try:
        go = find_go(log)
        module = work / "module"
        files = module_source()
        if version != KUBERNETES_VERSION:
            files = {n: c for n, c in files.items() if n.endswith(".go")}
            files["go.mod"] = generated_go_mod(version).encode()
        for name, content in files.items():
            (module / name).parent.mkdir(parents=True, exist_ok=True)
            (module / name).write_bytes(content)
        env = _go_env()
        logger.info(
            "building Kubernetes %s (%s) from Go modules with %s (log %s)",
            version,
            ", ".join(BINARIES),
            go,
            log,
        )
        logger.info("[1/3] downloading the modules into %s", env["GOMODCACHE"])
        phase = time.monotonic()
        if version == KUBERNETES_VERSION:
            _run("go mod download", [str(go), "mod", "download"], log, cwd=module, env=env)
        else:  # the generated go.mod has no go.sum yet: tidy resolves and records it
            tidy = {**env, "GOFLAGS": "-mod=mod"}
            _run("go mod tidy", [str(go), "mod", "tidy"], log, cwd=module, env=tidy)
        download_seconds = time.monotonic() - phase
        total = _count_packages(go, module, env, log)
        logger.info("[2/3] compiling %d packages (10 to 15 minutes on 2 cores when cold)", total)
        phase = time.monotonic()
        output = work / "bin"
        output.mkdir()
        argv = [
            str(go),
            "build",
            "-v",
            "-trimpath",
            "-ldflags",
            version_ldflags(version),
            "-o",
            str(output) + "/",
            "./cmd/...",
        ]
        counter = _PackageCounter(total)
        _run("go build", argv, log, cwd=module, env=env, on_line=counter.line)
        compile_seconds = time.monotonic() - phase
        logger.info("[3/3] caching the binaries in %s", directory)
        _install(
            output,
            directory,
            version,
            {
                "download_seconds": round(download_seconds, 1),
                "compile_seconds": round(compile_seconds, 1),
                "go": _go_version(go),
            },
            started,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    logger.info("built Kubernetes %s in %.0f s", version, time.monotonic() - started)


def generated_go_mod(version: str) -> str:
    """Return the ``go.mod`` of an older version (:func:`go_mod_for` of upstream's, read from
    the Go module proxy)."""
    url = f"{_GO_PROXY}/k8s.io/kubernetes/@v/{version}.mod"
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            upstream = response.read().decode()
    except OSError as exc:
        raise ProvisionError("fetch go.mod", f"{url}: {exc}") from exc
    return go_mod_for(version, upstream, source=url)


def go_mod_for(version: str, upstream: str, *, source: str = "go.mod") -> str:
    """Return our ``go.mod`` for ``version`` from k8s.io/kubernetes' own (``upstream``): its
    ``go`` directive, k8s.io/kubernetes at ``version``, etcd's server, ctl and utl at the
    version it pins its etcd client to, and a replace of every staging module it replaces
    with ``./staging``, at ``v0.N.P``."""
    go_directive = "1.26.0"
    etcd = ""
    staging: list[str] = []
    for raw in upstream.splitlines():
        line = raw.strip()
        if line.startswith("go "):
            go_directive = line.split()[1]
        elif line.startswith("go.etcd.io/etcd/client/v3 "):
            etcd = line.split()[1]
        elif line.startswith("k8s.io/") and "=> ./staging/" in line:
            staging.append(line.split()[0])
    if not etcd or not staging:
        raise ProvisionError("generate go.mod", f"{source} names no etcd client or staging module")
    staging_version = "v0." + version.removeprefix("v1.")
    lines = [
        "module asched.dev/kube",
        "",
        f"go {go_directive}",
        "",
        "require (",
        f"\tk8s.io/kubernetes {version}",
        *(f"\tgo.etcd.io/etcd/{m}/v3 {etcd}" for m in ("server", "etcdctl", "etcdutl")),
        ")",
        "",
        "replace (",
        *(f"\t{m} => {m} {staging_version}" for m in staging),
        ")",
        "",
    ]
    return "\n".join(lines)


def _go_env() -> dict[str, str]:
    mod, build = go_cache_dirs()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GO") or k == "GOPROXY"}
    env.update(
        GOMODCACHE=str(mod),
        GOCACHE=str(build),
        GOPATH=str(cache_root() / "go" / "path"),
        GOFLAGS="-mod=readonly",
        GOTOOLCHAIN="local",
        CGO_ENABLED="0",
    )
    return env


class _PackageCounter:
    """Counts the package lines ``go build -v`` prints; logs progress now and then."""

    def __init__(self, total: int) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.last = time.monotonic()

    def line(self, text: str) -> None:
        if not text or text.startswith(("#", "go:")) or " " in text.strip():
            return
        self.done += 1
        now = time.monotonic()
        if now - self.last >= PROGRESS_SECONDS:
            self.last = now
            logger.info(
                "      compiled %d of about %d packages (%.0f %%)",
                self.done,
                self.total,
                min(100.0, 100.0 * self.done / self.total),
            )


def _count_packages(go: Path, module: Path, env: dict[str, str], log: Path) -> int:
    """Return how many packages ``./cmd/...`` depends on (the compile's progress total)."""
    lines: list[str] = []
    argv = [str(go), "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"]
    _run(
        "go list", [*argv, "./cmd/..."], log, cwd=module, env=env, on_line=lines.append, quiet=True
    )
    return sum(1 for line in lines if line.strip())


def find_go(log: Path) -> Path:
    """Return a Go toolchain new enough for the module (``go 1.26.0``).

    The machine's own (PATH, ``/usr/local/go/bin``) when it is new enough, else the one
    downloaded earlier into the cache, else :data:`GO_TOOLCHAIN` fetched from the Go module
    proxy (``golang.org/toolchain``, the archive ``GOTOOLCHAIN`` itself downloads).
    """
    candidates = [shutil.which("go"), "/usr/local/go/bin/go", str(_toolchain_dir() / "bin" / "go")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK) and _new_enough(Path(candidate)):
            return Path(candidate)
    logger.info("no Go >= 1.26 found; fetching %s from %s", GO_TOOLCHAIN, _GO_PROXY)
    return _fetch_toolchain(log)


def _toolchain_dir() -> Path:
    return cache_root() / "go" / "toolchain" / GO_TOOLCHAIN


def _new_enough(go: Path) -> bool:
    words = _go_version(go).split()
    if len(words) < 3 or not words[2].startswith("go1."):
        return False
    parts = words[2].removeprefix("go").split(".")
    try:
        return (int(parts[0]), int(parts[1])) >= (1, 26)
    except (ValueError, IndexError):
        return False


def _fetch_toolchain(log: Path) -> Path:
    target = _toolchain_dir()
    url = f"{_GO_PROXY}/golang.org/toolchain/@v/v0.0.1-{GO_TOOLCHAIN}.linux-amd64.zip"
    archive = target.parent / f"{GO_TOOLCHAIN}.zip"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(url, timeout=120) as response, archive.open("wb") as out:
            shutil.copyfileobj(response, out)
        staging = Path(tempfile.mkdtemp(dir=target.parent))
        with zipfile.ZipFile(archive) as bundle:
            prefix = f"golang.org/toolchain@v0.0.1-{GO_TOOLCHAIN}.linux-amd64/"
            for info in bundle.infolist():
                if not info.filename.startswith(prefix) or info.is_dir():
                    continue
                path = staging / info.filename.removeprefix(prefix)
                path.parent.mkdir(parents=True, exist_ok=True)
                with bundle.open(info) as source, path.open("wb") as out:
                    shutil.copyfileobj(source, out)
                path.chmod((info.external_attr >> 16) & 0o777 or 0o644)
        shutil.rmtree(target, ignore_errors=True)
        staging.replace(target)
    except (OSError, zipfile.BadZipFile) as exc:
        with log.open("a") as out:
            out.write(f"fetching {url}: {exc}\n")
        raise ProvisionError(
            "fetch Go",
            f"no Go >= 1.26 on this machine and {url} could not be fetched: {exc}",
        ) from exc
    finally:
        archive.unlink(missing_ok=True)
    return target / "bin" / "go"


def _run(
    step: str,
    argv: Sequence[str],
    log: Path,
    *,
    cwd: Path,
    env: dict[str, str],
    on_line: Callable[[str], None] | None = None,
    quiet: bool = False,
) -> None:
    """Run ``argv``, appending its output to ``log`` (and each line to ``on_line``).

    A step silent for :data:`PROGRESS_SECONDS` gets a "still running" line, so that nothing
    sits mute for minutes. Raises ProvisionError on failure.
    """
    started = time.monotonic()
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(argv)}\n")
        out.flush()
        try:
            proc = subprocess.Popen(
                list(argv),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",
                cwd=cwd,
                env=env,
            )
        except OSError as exc:
            raise ProvisionError(step, f"cannot run {argv[0]}: {exc}") from exc
        assert proc.stdout is not None
        with proc:
            last = started
            for line in proc.stdout:
                if not quiet:
                    out.write(line)
                if on_line is not None:
                    on_line(line.rstrip("\n"))
                now = time.monotonic()
                if on_line is None and now - last >= PROGRESS_SECONDS:
                    last = now
                    logger.info("      %s: %.0f s so far", step, now - started)
        code = proc.wait()
    if code != 0:
        raise ProvisionError(step, f"{argv[0]} exited with status {code} (log {log})", _tail(log))


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-_LOG_TAIL_LINES:])


def _go_version(go: Path) -> str:
    try:
        result = subprocess.run(
            [str(go), "version"],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "GOTOOLCHAIN": "local"},
        )
    except OSError:
        return ""
    return result.stdout.strip()


def _install(
    output: Path, directory: Path, version: str, build: dict[str, object], started: float
) -> None:
    """Move the built binaries into the cache, then (last) write the manifest."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "manifest.json").unlink(missing_ok=True)  # the old one vouches for nothing now
    for name in BINARIES:
        source = output / name
        if not source.is_file():
            raise ProvisionError("install", f"go build succeeded but {source} does not exist")
        source.chmod(0o755)
        source.replace(directory / name)
    manifest = {
        "kubernetes": version,
        "etcd": ETCD_VERSION if version == KUBERNETES_VERSION else "as go.mod pins it",
        "source_sha256": source_digest(version=version),
        "binaries": list(BINARIES),
        "build_seconds": round(time.monotonic() - started, 1),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "bytes": sum((directory / name).stat().st_size for name in BINARIES),
        **build,
    }
    staging = directory / ".manifest.json.tmp"
    staging.write_text(json.dumps(manifest, indent=2) + "\n")
    staging.replace(directory / "manifest.json")


def main() -> int:
    """``python -m asched.tools.backends.provision``: build (or find) the binaries, print where.

    Needs only the standard library, so that CI can build before any virtualenv exists.
    """
    logging.basicConfig(level=logging.INFO, format="asched: %(message)s")
    try:
        version = selected_version()
        binaries = provision(version=version)
    except ProvisionError as exc:
        logger.error("%s", exc)
        return 1
    manifest = read_manifest(version) or {}
    for name in BINARIES:
        print(f"{name:<24} {binaries.cache_dir / name}")
    print(f"built in {manifest.get('build_seconds')} s ({manifest.get('built_at')})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
