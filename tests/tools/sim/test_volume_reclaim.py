"""``volume_reclaim.deletion``: a Released volume of policy Delete, as kube-controller-manager
v1.37 treats it (observed on v1.20, read in v1.37's source), plus the simulator's hollow volumes."""

from __future__ import annotations

from typing import Any

import pytest

from asched.tools.sim.controllers import volume_reclaim


def _pv(provisioned_by: str | None = None, **source: Any) -> dict[str, Any]:
    annotations = {"pv.kubernetes.io/provisioned-by": provisioned_by} if provisioned_by else {}
    return {"metadata": {"name": "pv-a", "annotations": annotations}, "spec": source}


@pytest.mark.parametrize(
    ("volume", "expected"),
    [
        pytest.param(
            _pv("local.hollow.asched.io", csi={"driver": "local.hollow.asched.io"}),
            volume_reclaim.DELETE,
            id="hollow",
        ),
        pytest.param(
            _pv("ebs.csi.aws.com", csi={}), volume_reclaim.KEEP, id="external provisioner"
        ),
        pytest.param(
            _pv(hostPath={"path": "/tmp/a"}), volume_reclaim.DELETE, id="hostPath in /tmp"
        ),
        pytest.param(
            _pv(hostPath={"path": "/tmp/"}),
            "host_path deleter only supports /tmp/.+ but received provided /tmp/",
            id="hostPath /tmp itself",
        ),
        pytest.param(
            _pv("kubernetes.io/host-path", hostPath={"path": "/data"}),
            "host_path deleter only supports /tmp/.+ but received provided /data",
            id="in-tree provisioned hostPath elsewhere",
        ),
        pytest.param(
            _pv(csi={"driver": "x.y"}),
            'error getting deleter volume plugin for volume "pv-a": no deletable volume plugin '
            "matched",
            id="no deleter",
        ),
    ],
)
def test_deletion(volume, expected):
    assert volume_reclaim.deletion(volume) == expected
