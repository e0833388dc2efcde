"""Upstream's checkBindings on the watched objects: bound, wait, or fail with its message.

The host here is an in-memory :class:`VolumeHost` (a catalog, node labels and whether
the pod exists); the HTTP side is tested in ``test_prebind_live.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from asched.cluster.records import PodInfo
from asched.cluster.volumes import VolumeCatalog
from asched.framework.builtin.volume_binding.prebind import _Failed, check_bindings
from tests.builders import make_pod, pod_info
from tests.unit.volumes.binding._objects import claim, fill, local_affinity, pv

POD = pod_info(make_pod("p"))


class MemoryHost:
    def __init__(self, objects, *, pod_exists: bool = True) -> None:
        self.catalog = fill(VolumeCatalog(), objects)
        self._pod_exists = pod_exists

    def node_labels(self, node: str) -> Mapping[str, str] | None:
        return {"kubernetes.io/hostname": node} if node == "n1" else None

    def pod_exists(self, pod: PodInfo) -> bool:
        return self._pod_exists

    async def replace(self, resource: str, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        raise AssertionError("not used")


def bound_pv(version: str = "7", uid: str = "uid-c1", **kwargs: Any) -> dict:
    return pv("pv-1", claim=("default", "c1", uid), phase="Bound", version=version, **kwargs)


STATIC = [
    # the PV controller bound the claim: done
    pytest.param([bound_pv(), claim("c1", volume="pv-1", bound=True)], "7", True, id="bound"),
    # claim not bound yet: wait
    pytest.param([bound_pv(), claim("c1")], "7", False, id="claim not bound yet"),
    # the watch has not shown our write (version 7 < written 8): wait
    pytest.param([bound_pv("7"), claim("c1", volume="pv-1", bound=True)], "8", False, id="stale"),
    # unbindVolume() dropped the claimRef's uid: final
    pytest.param(
        [bound_pv(uid=""), claim("c1")],
        "7",
        'ClaimRef got reset for pv "pv-1"',
        id="claimRef reset",
    ),
    pytest.param(
        [bound_pv(affinity=local_affinity("n2")), claim("c1")],
        "7",
        'pv "pv-1" node affinity doesn\'t match node "n1": no matching NodeSelectorTerms',
        id="node affinity no longer met",
    ),
    pytest.param(
        [claim("c1")],
        "7",
        'failed to check binding: PersistentVolume "pv-1" not found',
        id="PV deleted",
    ),
]


@pytest.mark.parametrize(("objects", "written", "want"), STATIC)
def test_static_binding(objects, written, want) -> None:
    host = MemoryHost(objects)
    bindings = [("pv-1", "default/c1", written)]
    if isinstance(want, bool):
        assert check_bindings(host, POD, "n1", bindings, []) is want
    else:
        with pytest.raises(_Failed) as caught:
            check_bindings(host, POD, "n1", bindings, [])
        assert str(caught.value) == want


PROVISIONED = [
    pytest.param(
        [claim("c1", selected_node="n1", volume="pv-1", bound=True), pv("pv-1")],
        True,
        id="provisioned and bound",
    ),
    pytest.param([claim("c1", selected_node="n1")], False, id="not provisioned yet"),
    pytest.param(
        [claim("c1", selected_node="n1", volume="pv-9")], False, id="PV not seen yet: wait"
    ),
    pytest.param(
        [claim("c1")],
        'selectedNode annotation reset for PVC "c1"',
        id="annotations gone",
    ),
    pytest.param(
        [claim("c1", selected_node="n2")],
        'provisioning failed for PVC "c1"',
        id="another node selected",
    ),
    pytest.param(
        [claim("c1", selected_node="n1", volume="pv-1"), pv("pv-1", affinity=local_affinity("n2"))],
        'pv "pv-1" node affinity doesn\'t match node "n1": no matching NodeSelectorTerms',
        id="provisioned on the wrong node",
    ),
]


@pytest.mark.parametrize(("objects", "want"), PROVISIONED)
def test_provisioning(objects, want) -> None:
    host = MemoryHost(objects)
    if isinstance(want, bool):
        assert check_bindings(host, POD, "n1", [], [("default/c1", "1")]) is want
    else:
        with pytest.raises(_Failed) as caught:
            check_bindings(host, POD, "n1", [], [("default/c1", "1")])
        assert str(caught.value) == want


def test_pod_gone_and_node_gone() -> None:
    with pytest.raises(_Failed, match='pod does not exist any more: pod "p" not found'):
        check_bindings(MemoryHost([], pod_exists=False), POD, "n1", [], [])
    with pytest.raises(_Failed, match='failed to get node "n9"'):
        check_bindings(MemoryHost([]), POD, "n9", [], [])
