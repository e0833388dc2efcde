"""What the PV controller does with a Released volume whose policy is ``Delete``: a pure rule.

kube-controller-manager (v1.20 observed beside the genuine API server; v1.37's source reads the
same) runs the volume's
deleter: the in-tree hostPath deleter removes paths under ``/tmp/`` and refuses any other;
volumes of no deletable plugin fail; an external provisioner's volumes are left to it. The
simulator adds its hollow provisioner's volumes, which it deletes (:mod:`asched.tools.sim.controllers.provisioner`).
Messages are kube-controller-manager's.
"""

from __future__ import annotations

import re
from typing import Any, Final

from asched.tools.sim.controllers import provisioner

JSON = dict[str, Any]

#: provisioner names of in-tree volume plugins.
IN_TREE_PREFIX: Final = "kubernetes.io/"
#: hostPath volumes the in-tree deleter removes (it refuses any other path).
_TMP_PATH: Final = re.compile(r"/tmp/.+")
DELETE: Final = "delete"
KEEP: Final = "keep"


def deletion(volume: JSON) -> str:
    """For a Released ``Delete`` volume: :data:`DELETE` it, :data:`KEEP` it (an external
    provisioner's), or the message it is ``Failed`` with (any other string)."""
    spec = volume["spec"]
    annotations = volume["metadata"].get("annotations") or {}
    by = str(annotations.get(provisioner.PROVISIONED_BY, ""))
    host_path = spec.get("hostPath")
    if provisioner.is_hollow(by):
        return DELETE
    if by and not by.startswith(IN_TREE_PREFIX):
        return KEEP
    if host_path is not None:
        path = str(host_path.get("path", ""))
        if _TMP_PATH.fullmatch(path):
            return DELETE
        return f"host_path deleter only supports /tmp/.+ but received provided {path}"
    name = volume["metadata"]["name"]
    return (
        f'error getting deleter volume plugin for volume "{name}": '
        "no deletable volume plugin matched"
    )
