"""Provision genuine kube-apiserver, kube-scheduler and kube-controller-manager v1.20.2, and etcd.

Why this exists: the contract tests and the side-by-side benchmarks need the real API server as
the source of truth, and on these machines nothing but Debian ships it, as a *source* package
(``kubernetes`` ``1.20.5+really1.20.2``, the whole upstream v1.20.2 tree with ``vendor/``) that
Debian's Go builds offline. The recipe is measured in ``/work/shared/reference/real-apiserver.md``:

1. ``apt-get install`` Go, Debian's reflect2 1.0.2 sources, etcd, make, rsync, openssl.
2. ``apt-get source --download-only`` through a private deb-src list (``Dir::Etc::SourceParts``),
   so ``/etc/apt`` is never touched.
3. Unpack the orig tarball, apply ``debian/patches/series``.
4. Replace ``vendor/github.com/modern-go/reflect2`` (1.0.1 breaks map iteration on Go >= 1.18).
5. ``make WHAT="cmd/kube-apiserver cmd/kube-scheduler cmd/kube-controller-manager"`` (upstream
   make generates the openapi code): one make on a fresh machine.
6. Copy the binaries into the cache and delete the 2 GB work tree.

Invariants:

- The cache directory ``~/.cache/asched/kubernetes-v1.20.2/`` holds the binaries and a
  ``manifest.json`` written *last*; a directory without the manifest is an unfinished build.
- A binary is cached only when the manifest lists it (``"binaries"``) and the file is executable.
  A manifest without the list predates kube-controller-manager and vouches for kube-apiserver
  and kube-scheduler only (:data:`LEGACY_BINARIES`). Steps 1-6 then run again for just the
  missing binaries (a second make of only those), and the manifest is rewritten, again last,
  listing the union and keeping the earlier build's record under ``"builds"``.
- An exclusive ``flock`` on ``kubernetes-v1.20.2.lock`` serialises builders: concurrent callers
  build once, the others wait and then take the fast path.
- The fast path (binaries cached) runs no subprocess unless etcd is missing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from asched.backends.errors import ProvisionError

logger = logging.getLogger(__name__)

KUBERNETES_VERSION = "v1.20.2"
DEBIAN_SOURCE_PACKAGE = "kubernetes"
DEBIAN_SOURCE_VERSION = "1.20.5+really1.20.2"
BINARIES = ("kube-apiserver", "kube-scheduler", "kube-controller-manager")
#: What a manifest without a ``"binaries"`` list (written before kube-controller-manager was
#: built too) vouches for.
LEGACY_BINARIES = ("kube-apiserver", "kube-scheduler")
APT_PACKAGES = (
    "golang-go",
    "golang-github-modern-go-reflect2-dev",
    "etcd-server",
    "etcd-client",
    "rsync",
    "make",
    "openssl",
    "patch",
)
REFLECT2_GOCODE = Path("/usr/share/gocode/src/github.com/modern-go/reflect2")
_ETCD_DIRS = (Path("/usr/bin"), Path("/usr/local/bin"))
_LOG_TAIL_LINES = 40


@dataclass(frozen=True, slots=True, kw_only=True)
class Binaries:
    """Absolute paths of the provisioned executables."""

    kube_apiserver: Path
    kube_scheduler: Path
    kube_controller_manager: Path
    etcd: Path
    etcdctl: Path
    cache_dir: Path


def cache_root() -> Path:
    """Return the asched cache root (``$XDG_CACHE_HOME/asched`` or ``~/.cache/asched``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "asched"


def cache_dir(version: str = KUBERNETES_VERSION) -> Path:
    """Return the directory holding the binaries of one Kubernetes version."""
    return cache_root() / f"kubernetes-{version}"


def read_manifest(version: str = KUBERNETES_VERSION) -> dict[str, object] | None:
    """Return the manifest of a finished build of every binary, or None (empty, partial, older)."""
    manifest = _load_manifest(cache_dir(version))
    if manifest is None or missing_binaries(version):
        return None
    return manifest


def missing_binaries(version: str = KUBERNETES_VERSION) -> tuple[str, ...]:
    """Return the names in :data:`BINARIES` the cache does not hold (all of them when empty).

    A binary is held when the manifest lists it and its file is executable.
    """
    directory = cache_dir(version)
    listed = _listed_binaries(_load_manifest(directory))
    return tuple(
        name for name in BINARIES if name not in listed or not os.access(directory / name, os.X_OK)
    )


def _load_manifest(directory: Path) -> dict[str, object] | None:
    try:
        data = json.loads((directory / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _listed_binaries(manifest: dict[str, object] | None) -> frozenset[str]:
    if manifest is None:
        return frozenset()
    listed = manifest.get("binaries", LEGACY_BINARIES)
    if not isinstance(listed, list | tuple):
        return frozenset()
    return frozenset(name for name in listed if isinstance(name, str))


def find_etcd() -> tuple[Path, Path] | None:
    """Return ``(etcd, etcdctl)`` when both are installed, else None."""
    found: list[Path] = []
    for name in ("etcd", "etcdctl"):
        which = shutil.which(name)
        candidates = [Path(which)] if which else []
        candidates += [d / name for d in _ETCD_DIRS]
        path = next((p for p in candidates if os.access(p, os.X_OK)), None)
        if path is None:
            return None
        found.append(path)
    return found[0], found[1]


def provision(*, version: str = KUBERNETES_VERSION) -> Binaries:
    """Make sure the Kubernetes binaries and etcd exist; build the missing binaries.

    Blocking; takes about 5-7 minutes on 2 cores the first time (about 5 for a cache that lacks
    only kube-controller-manager) and well under a second once the binaries are cached.

    Raises
    ------
    ProvisionError
        When a step fails; the message names the step and ends with the tail of its log.
    """
    if version != KUBERNETES_VERSION:
        raise ProvisionError("select version", f"only {KUBERNETES_VERSION} can be built here")
    directory = cache_dir(version)
    if missing_binaries(version):
        directory.parent.mkdir(parents=True, exist_ok=True)
        with _exclusive_lock(directory.parent / f"kubernetes-{version}.lock"):
            missing = missing_binaries(version)  # another process may have built them meanwhile
            if missing:
                _build(directory, missing)
    etcd = find_etcd()
    if etcd is None:
        logger.info("etcd is not installed; installing etcd-server and etcd-client")
        with _exclusive_lock(directory.parent / "apt.lock"):
            log = directory.parent / "apt-etcd.log"
            _apt_install(("etcd-server", "etcd-client"), log)
        etcd = find_etcd()
        if etcd is None:
            raise ProvisionError("find etcd", "etcd or etcdctl still missing after apt-get install")
    return Binaries(
        kube_apiserver=directory / "kube-apiserver",
        kube_scheduler=directory / "kube-scheduler",
        kube_controller_manager=directory / "kube-controller-manager",
        etcd=etcd[0],
        etcdctl=etcd[1],
        cache_dir=directory,
    )


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


def _build(directory: Path, names: Sequence[str]) -> None:
    """Build ``names`` (a subset of :data:`BINARIES`) in one make and add them to the cache."""
    started = time.monotonic()
    work = directory.parent / f"build-{KUBERNETES_VERSION}"
    work.mkdir(parents=True, exist_ok=True)
    log = work / "build.log"
    logger.info(
        "building %s %s from Debian source in %s (log %s)",
        ", ".join(names),
        KUBERNETES_VERSION,
        work,
        log,
    )
    logger.info("[1/6] apt-get update + install %s", " ".join(APT_PACKAGES))
    _apt_install(APT_PACKAGES, log)
    logger.info("[2/6] apt-get source %s (%s)", DEBIAN_SOURCE_PACKAGE, DEBIAN_SOURCE_VERSION)
    downloads = _download_source(work, log)
    logger.info("[3/6] unpacking the source and applying debian/patches/series")
    tree = _unpack(work, downloads, log)
    logger.info("[4/6] replacing vendored reflect2 with Debian's copy")
    _replace_reflect2(tree)
    what = " ".join(f"cmd/{name}" for name in names)
    logger.info("[5/6] make WHAT='%s' (about 3-6 minutes)", what)
    _make(tree, work, log, names)
    logger.info("[6/6] caching the binaries in %s", directory)
    _install(tree, directory, started, names)
    shutil.rmtree(work, ignore_errors=True)
    logger.info(
        "built %s %s in %.0f s", ", ".join(names), KUBERNETES_VERSION, time.monotonic() - started
    )


def _run(step: str, argv: Sequence[str], log: Path, **kwargs: object) -> None:
    """Run ``argv``, appending its output to ``log``; raise ProvisionError on failure.

    Lines starting with ``+++`` (upstream make's progress markers) are logged at INFO.
    """
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
                **kwargs,  # type: ignore[call-overload]
            )
        except OSError as exc:
            raise ProvisionError(step, f"cannot run {argv[0]}: {exc}") from exc
        assert proc.stdout is not None
        with proc:
            for line in proc.stdout:
                out.write(line)
                if line.startswith("+++"):
                    logger.info("%s", line.rstrip())
        code = proc.wait()
    if code != 0:
        raise ProvisionError(step, f"{argv[0]} exited with status {code} (log {log})", _tail(log))


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-_LOG_TAIL_LINES:])


def _apt_env() -> dict[str, str]:
    return {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}


def _apt_install(packages: Sequence[str], log: Path) -> None:
    if shutil.which("apt-get") is None:
        raise ProvisionError("apt-get install", "apt-get not found: a Debian machine is needed")
    _run("apt-get update", ["apt-get", "update", "-q"], log, env=_apt_env())
    argv = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages]
    _run("apt-get install", argv, log, env=_apt_env())


def _deb_src_stanza() -> str:
    """Return a deb822 ``deb-src`` stanza mirroring the machine's Debian ``deb`` entry."""
    codename = _os_release().get("VERSION_CODENAME", "bookworm")
    for sources in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for stanza in sources.read_text().split("\n\n"):
            fields = _deb822_fields(stanza)
            if (
                "deb" in fields.get("Types", "").split()
                and codename in fields.get("Suites", "").split()
            ):
                lines = [
                    "Types: deb-src",
                    f"URIs: {fields['URIs']}",
                    f"Suites: {codename}",
                    f"Components: {fields.get('Components', 'main')}",
                ]
                if "Signed-By" in fields:
                    lines.append(f"Signed-By: {fields['Signed-By']}")
                return "\n".join(lines) + "\n"
    return (
        "Types: deb-src\nURIs: http://deb.debian.org/debian\n"
        f"Suites: {codename}\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    )


def _deb822_fields(stanza: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in stanza.splitlines():
        if line.startswith("#") or ":" not in line or line[:1].isspace():
            continue
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def _os_release() -> dict[str, str]:
    try:
        text = Path("/etc/os-release").read_text()
    except OSError:
        return {}
    pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
    return {key: value.strip('"') for key, _, value in pairs}


def _download_source(work: Path, log: Path) -> Path:
    """Download the Debian source package into ``work/download`` and return that directory."""
    apt_dir = work / "apt"
    parts, lists = apt_dir / "sources.list.d", apt_dir / "lists"
    (lists / "partial").mkdir(parents=True, exist_ok=True)
    parts.mkdir(parents=True, exist_ok=True)
    (parts / "asched-deb-src.sources").write_text(_deb_src_stanza())
    options = [
        "-o",
        "Dir::Etc::SourceList=/dev/null",
        "-o",
        f"Dir::Etc::SourceParts={parts}",
        "-o",
        f"Dir::State::Lists={lists}",
        "-o",
        f"Dir::Cache::pkgcache={apt_dir / 'pkgcache.bin'}",
        "-o",
        f"Dir::Cache::srcpkgcache={apt_dir / 'srcpkgcache.bin'}",
    ]
    downloads = work / "download"
    downloads.mkdir(exist_ok=True)
    _run("apt-get update (deb-src)", ["apt-get", *options, "update", "-q"], log, env=_apt_env())
    # Only one version is in the suite (the Debian revision moves with point releases, e.g.
    # -1.1+deb12u1), so ask for the package and check the upstream version when unpacking.
    argv = ["apt-get", *options, "source", "--download-only", "-q", DEBIAN_SOURCE_PACKAGE]
    _run("apt-get source", argv, log, env=_apt_env(), cwd=downloads)
    return downloads


def _unpack(work: Path, downloads: Path, log: Path) -> Path:
    upstream = DEBIAN_SOURCE_VERSION
    origs = sorted(downloads.glob(f"{DEBIAN_SOURCE_PACKAGE}_{upstream}.orig.tar.*"))
    debian = sorted(downloads.glob(f"{DEBIAN_SOURCE_PACKAGE}_{upstream}-*.debian.tar.*"))
    if len(origs) != 1 or len(debian) != 1:
        found = ", ".join(p.name for p in downloads.iterdir())
        raise ProvisionError("unpack", f"expected one orig and one debian tarball, found: {found}")
    tree = work / "src"
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir()
    _run(
        "unpack orig tarball", ["tar", "-xf", str(origs[0]), "--strip-components=1"], log, cwd=tree
    )
    _run("unpack debian tarball", ["tar", "-xf", str(debian[0])], log, cwd=tree)
    series = tree / "debian" / "patches" / "series"
    patches = series.read_text().splitlines() if series.is_file() else []
    for entry in patches:
        words = entry.split("#", 1)[0].split()
        if not words:
            continue
        name, options = words[0], words[1:] or ["-p1"]
        patch = tree / "debian" / "patches" / name
        argv = ["patch", *options, "--forward", "--batch", "-i", str(patch)]
        _run(f"apply patch {name}", argv, log, cwd=tree)
    logger.info("applied %d Debian patches", sum(1 for e in patches if e.split("#", 1)[0].strip()))
    return tree


def _replace_reflect2(tree: Path) -> None:
    vendored = tree / "vendor" / "github.com" / "modern-go" / "reflect2"
    sources = [
        path
        for path in sorted(REFLECT2_GOCODE.glob("*"))
        if path.suffix in (".go", ".s") and not path.name.endswith("_test.go")
    ]
    if not sources:
        raise ProvisionError("replace reflect2", f"no .go files in {REFLECT2_GOCODE}")
    shutil.rmtree(vendored, ignore_errors=True)
    vendored.mkdir(parents=True)
    for path in sources:
        shutil.copyfile(path, vendored / path.name)


def _make(tree: Path, work: Path, log: Path, names: Sequence[str]) -> None:
    env = {key: value for key, value in os.environ.items() if key != "GOPATH"}
    env.update(
        CGO_ENABLED="0",
        GOPROXY="off",
        GOFLAGS="",
        GOCACHE=str(work / "gocache"),  # deleted with the work tree
        KUBE_GIT_VERSION=KUBERNETES_VERSION,
        KUBE_GIT_TREE_STATE="clean",
    )
    argv = ["make", "WHAT=" + " ".join(f"cmd/{name}" for name in names)]
    _run(f"make {' '.join(names)}", argv, log, cwd=tree, env=env)


def _install(tree: Path, directory: Path, started: float, names: Sequence[str]) -> None:
    """Copy ``names`` into the cache, then (last) rewrite the manifest to list them too."""
    directory.mkdir(parents=True, exist_ok=True)
    built = tree / "_output" / "bin"
    for name in names:
        source = built / name
        if not source.is_file():
            raise ProvisionError("install", f"make succeeded but {source} does not exist")
        staging = directory / f".{name}.tmp"
        shutil.copyfile(source, staging)
        staging.chmod(0o755)
        staging.replace(directory / name)
    build: dict[str, object] = {
        "binaries": sorted(names),
        "seconds": round(time.monotonic() - started, 1),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    staging = directory / ".manifest.json.tmp"
    staging.write_text(json.dumps(_next_manifest(directory, names, build), indent=2) + "\n")
    staging.replace(directory / "manifest.json")


def _go_version() -> str:
    try:
        result = subprocess.run(["go", "version"], capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return result.stdout.strip()


def _next_manifest(
    directory: Path, names: Sequence[str], build: dict[str, object]
) -> dict[str, object]:
    """Return the manifest after ``build`` made ``names``: the binaries still cached plus these.

    ``build_seconds`` is the sum over the builds that made the cached binaries; ``builds`` keeps
    each build's binaries, seconds and time (a legacy manifest's own build becomes the first).
    """
    previous = _load_manifest(directory)
    kept = sorted(
        name
        for name in _listed_binaries(previous)
        if name in BINARIES and name not in names and os.access(directory / name, os.X_OK)
    )
    builds: list[object] = []
    if previous is not None and kept:
        earlier = previous.get("builds")
        if isinstance(earlier, list):
            builds.extend(earlier)
        else:
            builds.append(
                {
                    "binaries": sorted(_listed_binaries(previous)),
                    "seconds": previous.get("build_seconds"),
                    "built_at": previous.get("built_at"),
                }
            )
    builds.append(build)
    seconds = [b.get("seconds") for b in builds if isinstance(b, dict)]
    return {
        "kubernetes": KUBERNETES_VERSION,
        "debian_source": f"{DEBIAN_SOURCE_PACKAGE} {DEBIAN_SOURCE_VERSION}",
        "go": _go_version(),
        "binaries": sorted({*kept, *names}),
        "build_seconds": round(sum(s for s in seconds if isinstance(s, int | float)), 1),
        "built_at": build["built_at"],
        "builds": builds,
    }
