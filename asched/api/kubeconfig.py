"""Which kubeconfig ``asched run`` uses, and a check that it is one, before connecting.

Resolution order (kubectl's and kube-scheduler's, first match wins):

1. ``--kubeconfig FILE``;
2. ``clientConnection.kubeconfig`` of the KubeSchedulerConfiguration;
3. the in-cluster service account, when ``KUBERNETES_SERVICE_HOST`` is set;
4. ``$KUBECONFIG``: the first entry of its colon-separated list that exists (kubectl
   merges all the entries; asched reads only that first file);
5. ``~/.kube/config``.

An explicitly named file (1, 2) must exist: a typo is an error, not a reason to fall
through to another cluster. When nothing matches, the error lists what was tried.

:func:`check_kubeconfig` reads the chosen file through :mod:`asched.textfile` and checks
what kubernetes-asyncio would otherwise trip over with a traceback: a document that is not
a mapping (or is another kind, such as a KubeSchedulerConfiguration), a missing or
undefined ``current-context``, a context naming an undefined cluster or user, a cluster
without a server. Every failure is one :class:`~asched.errors.InputError` naming the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from asched import textfile
from asched.errors import InputError

SERVICE_HOST_ENV: Final = "KUBERNETES_SERVICE_HOST"
KUBECONFIG_ENV: Final = "KUBECONFIG"


@dataclass(frozen=True, slots=True)
class KubeconfigSource:
    """Where the client configuration comes from.

    Attributes
    ----------
    path : Path or None
        The kubeconfig file; None means the in-cluster service account.
    origin : str
        How it was chosen, for logs: ``--kubeconfig``, ``clientConnection.kubeconfig``,
        ``in-cluster``, ``$KUBECONFIG`` or ``~/.kube/config``.
    """

    path: Path | None
    origin: str


def resolve_kubeconfig(
    explicit: str | None,
    configured: str | None,
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> KubeconfigSource:
    """Pick the kubeconfig by the order in the module docstring.

    Parameters
    ----------
    explicit : str or None
        ``--kubeconfig``.
    configured : str or None
        ``clientConnection.kubeconfig`` (empty means unset).
    environ : mapping, optional
        The environment (default ``os.environ``).
    home : Path, optional
        The home directory (default ``Path.home()``).

    Raises
    ------
    InputError
        Nothing was found (the message lists what was tried). An explicitly named file is
        returned as it is: :func:`check_kubeconfig` reports it if it is missing.
    """
    env = os.environ if environ is None else environ
    for origin, value in (("--kubeconfig", explicit), ("clientConnection.kubeconfig", configured)):
        if value:  # checked when read: a missing file is an error, never a fall-through
            return KubeconfigSource(Path(value).expanduser(), origin)
    tried = ["--kubeconfig (not given)", "clientConnection.kubeconfig (not set)"]
    if env.get(SERVICE_HOST_ENV):
        return KubeconfigSource(None, "in-cluster")
    tried.append(f"in-cluster (${SERVICE_HOST_ENV} not set)")
    listed = env.get(KUBECONFIG_ENV, "")
    entries = [entry for entry in listed.split(os.pathsep) if entry]
    for entry in entries:
        path = Path(entry).expanduser()
        if path.exists():
            return KubeconfigSource(path, f"${KUBECONFIG_ENV}")
    if entries:
        tried.append(f"${KUBECONFIG_ENV} ({listed}: no such file)")
    else:
        tried.append(f"${KUBECONFIG_ENV} (not set)")
    default = (home if home is not None else Path.home()) / ".kube" / "config"
    if default.exists():
        return KubeconfigSource(default, "~/.kube/config")
    tried.append(f"{default} (no such file)")
    raise InputError(f"no kubeconfig found; tried {', '.join(tried)}")


def _named(document: Mapping[str, Any], section: str, key: str, name: str) -> dict[str, Any]:
    """``section`` as ``{name: entry[key]}``; malformed entries raise naming the file."""
    entries = document.get(section)
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise InputError(f"{name}: {section}: must be a list")
    named: dict[str, Any] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise InputError(f"{name}: {section}[{index}]: must be an object with a name")
        body = entry.get(key)
        if body is not None and not isinstance(body, Mapping):
            raise InputError(f"{name}: {section}[{index}].{key}: must be an object")
        named[entry["name"]] = body or {}
    return named


def check_kubeconfig(path: str | os.PathLike[str]) -> None:
    """Raise InputError, naming ``path``, unless it is a usable kubeconfig.

    Only the structure is checked (see the module docstring); kubernetes-asyncio reads it.
    """
    name = os.fspath(path)
    document = textfile.parse_yaml(
        textfile.read_text(name, "the kubeconfig"), name, unique_keys=False
    )
    if not isinstance(document, Mapping):
        got = "empty" if document is None else f"a {type(document).__name__}"
        raise InputError(f"{name}: not a kubeconfig (the document is {got}, not an object)")
    kind = document.get("kind")
    if kind is not None and kind != "Config":
        raise InputError(f"{name}: not a kubeconfig (kind {kind!r}, expected 'Config')")
    contexts = _named(document, "contexts", "context", name)
    defined = ", ".join(contexts) or "none"
    current = document.get("current-context")
    if not current:
        raise InputError(f"{name}: current-context is not set (contexts: {defined})")
    if current not in contexts:
        raise InputError(
            f"{name}: current-context {current!r} is not defined (contexts: {defined})"
        )
    context = contexts[current]
    cluster_name = context.get("cluster")
    clusters = _named(document, "clusters", "cluster", name)
    if cluster_name not in clusters:
        raise InputError(f"{name}: context {current!r}: cluster {cluster_name!r} is not defined")
    if not clusters[cluster_name].get("server"):
        raise InputError(f"{name}: cluster {cluster_name!r} has no server")
    user_name = context.get("user")
    if user_name and user_name not in _named(document, "users", "user", name):
        raise InputError(f"{name}: context {current!r}: user {user_name!r} is not defined")
