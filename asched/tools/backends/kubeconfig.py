"""Write and read the minimal kubeconfig files the test backends hand to clients.

Why: both backends (the simulator and the genuine kube-apiserver) describe themselves to tests,
benchmarks, kubectl and kube-scheduler through a kubeconfig file, and the REST client reads one
back. Only the fields the backends use are supported: one cluster (``server``, optional
``certificate-authority-data`` or ``certificate-authority``, ``insecure-skip-tls-verify``) and one
user with a bearer ``token`` (or none), selected by ``current-context``.

Invariant: files are written atomically (temp file + rename) with mode 0600, since they hold the
token.
"""

from __future__ import annotations

import base64
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from asched.errors import InputError


@dataclass(frozen=True, slots=True, kw_only=True)
class KubeconfigEntry:
    """The resolved current context of a kubeconfig.

    Attributes
    ----------
    server : str
        ``https://127.0.0.1:PORT`` or ``http://...``.
    ca_pem : bytes | None
        PEM certificates to verify the server with; None means the system trust store.
    token : str | None
        Bearer token; None for an unauthenticated server.
    insecure_skip_tls_verify : bool
        True only when the kubeconfig asks for it.
    """

    server: str
    ca_pem: bytes | None = None
    token: str | None = None
    insecure_skip_tls_verify: bool = False

    def __repr__(self) -> str:  # never print the token
        token = "<set>" if self.token else None
        return f"KubeconfigEntry(server={self.server!r}, token={token})"


def write_kubeconfig(
    path: Path, *, server: str, ca_pem: bytes | None, token: str | None, name: str = "asched"
) -> Path:
    """Write a one-context kubeconfig to ``path`` atomically (mode 0600) and return ``path``."""
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode("ascii")
    user: dict[str, Any] = {"token": token} if token else {}
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
        "preferences": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, staging = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as out:
            yaml.safe_dump(document, out, sort_keys=False)
        os.chmod(staging, 0o600)
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
    return path


def read_kubeconfig(path: Path | str) -> KubeconfigEntry:
    """Resolve the current context of the kubeconfig at ``path``.

    Raises
    ------
    InputError
        When the file is missing, not YAML, or lacks the current context's cluster or server.
    """
    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: cannot read kubeconfig: {exc}") from exc
    if not isinstance(document, dict):
        raise InputError(f"{path}: not a kubeconfig (top level is not a mapping)")
    contexts = _by_name(document, "contexts", "context")
    current = document.get("current-context") or next(iter(contexts), None)
    if current not in contexts:
        raise InputError(f"{path}: current-context {current!r} is not defined")
    context = contexts[current]
    cluster = _by_name(document, "clusters", "cluster").get(str(context.get("cluster")))
    if not cluster or not cluster.get("server"):
        raise InputError(f"{path}: context {current!r} has no cluster with a server")
    user = _by_name(document, "users", "user").get(str(context.get("user")), {})
    ca_pem: bytes | None = None
    if cluster.get("certificate-authority-data"):
        ca_pem = base64.b64decode(cluster["certificate-authority-data"])
    elif cluster.get("certificate-authority"):
        ca_file = path.parent / str(cluster["certificate-authority"])
        ca_pem = ca_file.read_bytes()
    token = user.get("token")
    if token is None and user.get("tokenFile"):
        token = (path.parent / str(user["tokenFile"])).read_text().strip()
    return KubeconfigEntry(
        server=str(cluster["server"]).rstrip("/"),
        ca_pem=ca_pem,
        token=str(token) if token else None,
        insecure_skip_tls_verify=bool(cluster.get("insecure-skip-tls-verify", False)),
    )


def _by_name(document: dict[str, Any], section: str, key: str) -> dict[str, dict[str, Any]]:
    entries = document.get(section) or []
    return {
        str(entry.get("name")): dict(entry.get(key) or {})
        for entry in entries
        if isinstance(entry, dict)
    }
