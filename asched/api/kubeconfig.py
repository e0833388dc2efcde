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

Command-line tools run by an operator (``asched explain``, the ``kubectl asched`` plugin)
resolve as kubectl does instead (:func:`resolve_kubectl`): ``--kubeconfig FILE`` alone;
else *every* existing file of ``$KUBECONFIG``, merged (:func:`read_kubeconfigs`: the first
file to define a name wins, and the first to set ``current-context``); else
``~/.kube/config``; else the in-cluster service account. ``--context`` picks a context of
the merged view (:func:`check_kubeconfig`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
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


#: The namespace file of the in-cluster service account (kubectl's default namespace there).
IN_CLUSTER_NAMESPACE: Final = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


@dataclass(frozen=True, slots=True)
class KubectlSource:
    """The kubeconfig files an operator's tool reads, merged in order.

    Attributes
    ----------
    paths : tuple of Path
        The files, first wins; empty means the in-cluster service account.
    origin : str
        How they were chosen: ``--kubeconfig``, ``$KUBECONFIG``, ``~/.kube/config`` or
        ``in-cluster``.
    """

    paths: tuple[Path, ...]
    origin: str

    @property
    def kubeconfig(self) -> str | None:
        """The files as one ``os.pathsep`` list (what the client loads); None in-cluster."""
        return os.pathsep.join(map(str, self.paths)) if self.paths else None


def resolve_kubectl(
    explicit: str | None,
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> KubectlSource:
    """Pick the kubeconfig files as kubectl does (client-go's loading rules).

    ``--kubeconfig`` (``explicit``) is used alone, and must exist (checked when read).
    Else ``$KUBECONFIG``: its existing entries, all of them (missing ones are skipped, as
    kubectl skips them); when it is set, ``~/.kube/config`` is not consulted. Else
    ``~/.kube/config``. When no file is left, the in-cluster service account if
    ``$KUBERNETES_SERVICE_HOST`` is set.

    Raises
    ------
    InputError
        Nothing was found; the message lists what was tried.
    """
    env = os.environ if environ is None else environ
    if explicit:
        return KubectlSource((Path(explicit).expanduser(),), "--kubeconfig")
    listed = env.get(KUBECONFIG_ENV, "")
    entries = [Path(entry).expanduser() for entry in listed.split(os.pathsep) if entry]
    if entries:
        existing = tuple(path for path in entries if path.exists())
        if existing:
            return KubectlSource(existing, f"${KUBECONFIG_ENV}")
        tried = f"${KUBECONFIG_ENV} ({listed}: no such file)"
    else:
        default = (home if home is not None else Path.home()) / ".kube" / "config"
        if default.exists():
            return KubectlSource((default,), "~/.kube/config")
        tried = f"${KUBECONFIG_ENV} (not set), {default} (no such file)"
    if env.get(SERVICE_HOST_ENV):
        return KubectlSource((), "in-cluster")
    raise InputError(
        f"no kubeconfig found; tried --kubeconfig (not given), {tried}, "
        f"in-cluster (${SERVICE_HOST_ENV} not set)"
    )


def in_cluster_namespace(path: Path = IN_CLUSTER_NAMESPACE) -> str | None:
    """The service account's namespace in a pod (None when the file is not there)."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return text or None


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


@dataclass(frozen=True, slots=True)
class KubeconfigView:
    """One kubeconfig, or several merged the way kubectl merges a ``$KUBECONFIG`` list.

    Merging (client-go's ``ClientConfigLoadingRules.Load``): for contexts, clusters and
    users the first file that defines a name wins; the first file that sets
    ``current-context`` wins. Entries map a name to its body (``context``, ``cluster``
    or ``user``).
    """

    source: str
    contexts: dict[str, dict[str, Any]]
    clusters: dict[str, dict[str, Any]]
    users: dict[str, dict[str, Any]]
    current_context: str | None


@dataclass(frozen=True, slots=True)
class ContextChoice:
    """The context a client uses: its name and its namespace (None when it sets none)."""

    name: str
    namespace: str | None


def read_kubeconfigs(paths: Sequence[str | os.PathLike[str]]) -> KubeconfigView:
    """Read and merge ``paths`` in order (see :class:`KubeconfigView`); errors name the file."""
    names = [os.fspath(path) for path in paths]
    view = KubeconfigView(os.pathsep.join(names), {}, {}, {}, None)
    current: str | None = None
    for name in names:
        document = textfile.parse_yaml(
            textfile.read_text(name, "the kubeconfig"), name, unique_keys=False
        )
        if not isinstance(document, Mapping):
            got = "empty" if document is None else f"a {type(document).__name__}"
            raise InputError(f"{name}: not a kubeconfig (the document is {got}, not an object)")
        kind = document.get("kind")
        if kind is not None and kind != "Config":
            raise InputError(f"{name}: not a kubeconfig (kind {kind!r}, expected 'Config')")
        for section, key, merged in (
            ("contexts", "context", view.contexts),
            ("clusters", "cluster", view.clusters),
            ("users", "user", view.users),
        ):
            for entry, body in _named(document, section, key, name).items():
                merged.setdefault(entry, body)
        current = current or document.get("current-context") or None
    return dataclasses.replace(view, current_context=current)


def check_kubeconfig(path: str | os.PathLike[str], *, context: str | None = None) -> ContextChoice:
    """Raise InputError, naming ``path``, unless it is a usable kubeconfig; return the
    context a client will use (``context``, else the ``current-context``).

    ``path`` may be a ``os.pathsep``-separated list, merged as kubectl merges
    ``$KUBECONFIG`` (:func:`read_kubeconfigs`). Only the structure is checked (see the
    module docstring); kubernetes-asyncio reads it.
    """
    view = read_kubeconfigs(os.fspath(path).split(os.pathsep))
    name = view.source
    defined = ", ".join(view.contexts) or "none"
    if context is not None:
        if context not in view.contexts:
            raise InputError(f"{name}: context {context!r} is not defined (contexts: {defined})")
        current = context
    else:
        if not view.current_context:
            raise InputError(f"{name}: current-context is not set (contexts: {defined})")
        current = view.current_context
        if current not in view.contexts:
            raise InputError(
                f"{name}: current-context {current!r} is not defined (contexts: {defined})"
            )
    body = view.contexts[current]
    cluster_name = body.get("cluster")
    if cluster_name not in view.clusters:
        raise InputError(f"{name}: context {current!r}: cluster {cluster_name!r} is not defined")
    if not view.clusters[cluster_name].get("server"):
        raise InputError(f"{name}: cluster {cluster_name!r} has no server")
    user_name = body.get("user")
    if user_name and user_name not in view.users:
        raise InputError(f"{name}: context {current!r}: user {user_name!r} is not defined")
    namespace = body.get("namespace")
    return ContextChoice(current, namespace if isinstance(namespace, str) and namespace else None)
