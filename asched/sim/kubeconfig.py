"""The kubeconfig ``asched sim`` hands to its clients, written atomically.

Test fixtures poll for the file and read it as soon as it appears, so it is written to a
temporary file in the same directory and renamed into place: a reader sees either no
file or a complete one, never a partial write. The file holds the bearer token, so it is
created with mode 0600.
"""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

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


def write_atomically(path: Path, config: JSON) -> None:
    """Write ``config`` as YAML to ``path`` via a temporary file and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            yaml.safe_dump(config, stream, sort_keys=False)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
