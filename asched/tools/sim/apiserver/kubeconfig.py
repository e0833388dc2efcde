"""The kubeconfig ``asched sim`` hands to its clients, written atomically.

Test fixtures poll for the file and read it as soon as it appears, so it is written to a
temporary file in the same directory and renamed into place: a reader sees either no
file or a complete one, never a partial write. The file holds the bearer token, so it is
created with mode 0600. A path that cannot be written (a directory, a parent that is a
file, a read-only place) is an :class:`~asched.errors.InputError` naming the file.
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from asched.errors import InputError

JSON = dict[str, Any]
NAME = "asched-sim"


def render(url: str, token: str, ca_pem: bytes | None = None, namespace: str = "default") -> JSON:
    """A one-cluster, one-user kubeconfig for ``url``."""
    cluster: JSON = {"server": url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": NAME, "cluster": cluster}],
        "users": [{"name": NAME, "user": {"token": token}}],
        "contexts": [
            {"name": NAME, "context": {"cluster": NAME, "user": NAME, "namespace": namespace}}
        ],
        "current-context": NAME,
        "preferences": {},
    }


def _cannot_write(path: Path, exc: OSError) -> InputError:
    return InputError(f"kubeconfig {path}: cannot write it: {exc.strerror or exc}")


def check_writable(path: Path) -> None:
    """Raise InputError unless a kubeconfig can be written to ``path`` (nothing is left behind).

    Checked before the server listens, so a bad path fails at once; :func:`write_atomically`
    still reports a failure that happens later.
    """
    if path.is_dir():
        raise InputError(f"kubeconfig {path}: cannot write it: Is a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(prefix=f".{path.name}.", dir=path.parent):
            pass
    except OSError as exc:
        raise _cannot_write(path, exc) from None


def write_atomically(path: Path, config: JSON) -> None:
    """Write ``config`` as YAML to ``path`` via a temporary file and a rename.

    Raises
    ------
    InputError
        When the file cannot be written (naming it).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            yaml.safe_dump(config, stream, sort_keys=False)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _cannot_write(path, exc) from None
        raise
