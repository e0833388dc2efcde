"""The hollow provisioner over HTTP: a claim of a hollow driver's class gets a PV on the node
the scheduler selected, within CSIStorageCapacity when the driver tracks capacity."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Api
from .storage import (
    CLAIMS,
    CLASSES,
    CSI_DRIVERS,
    HOLLOW,
    PVS,
    capacity,
    claim,
    create,
    storage_class,
    wait_for_event,
    wait_until,
)

SELECTED = "volume.kubernetes.io/selected-node"
CAPACITIES = "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities"


def _bound(obj: dict[str, Any]) -> bool:
    return (obj.get("status") or {}).get("phase") == "Bound"


async def _driver(api: Api, *, tracks_capacity: bool) -> None:
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": HOLLOW},
        "spec": {"storageCapacity": tracks_capacity},
    }
    await create(api, CSI_DRIVERS, body)


async def _select_node(api: Api, name: str, node: str) -> None:
    """The scheduler's PreBind for dynamic provisioning: the selected-node annotation."""
    reply = await api.patch(f"{CLAIMS}/{name}", {"metadata": {"annotations": {SELECTED: node}}})
    assert reply.status == 200, reply.body


async def test_provisions_on_the_selected_node(api: Api):
    await create(api, CLASSES, storage_class("hollow", wait=True))
    made = await create(api, CLAIMS, claim("data", "3Gi", storage_class="hollow"))
    await wait_for_event(api, "data", "WaitForFirstConsumer")
    assert (await api.get(PVS)).body["items"] == []  # nothing until a node is selected
    await _select_node(api, "data", "node-1")
    bound = await wait_until(api, CLAIMS, "data", _bound)
    uid = made["metadata"]["uid"]
    assert bound["spec"]["volumeName"] == f"pvc-{uid}"
    annotations = bound["metadata"]["annotations"]
    # kube-controller-manager v1.37's annotations (1.23+ both; v1.20 the beta one only)
    assert annotations["volume.beta.kubernetes.io/storage-provisioner"] == HOLLOW
    assert annotations["volume.kubernetes.io/storage-provisioner"] == HOLLOW
    assert annotations["pv.kubernetes.io/bind-completed"] == "yes"
    assert bound["status"]["capacity"] == {"storage": "3Gi"}
    volume = await wait_until(api, PVS, f"pvc-{uid}", _bound)
    assert volume["spec"]["capacity"] == {"storage": "3Gi"}
    assert volume["spec"]["storageClassName"] == "hollow"
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Delete"  # the class default
    assert volume["spec"]["claimRef"]["uid"] == uid
    assert volume["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == HOLLOW
    # the hollow node-1 carries kubernetes.io/hostname=node-1
    assert volume["spec"]["nodeAffinity"] == {
        "required": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}
                    ]
                }
            ]
        }
    }
    started = await wait_for_event(api, "data", "Provisioning")
    assert (
        started["message"] == 'External provisioner is provisioning volume for claim "default/data"'
    )
    succeeded = await wait_for_event(api, "data", "ProvisioningSucceeded")
    assert succeeded["message"] == f"Successfully provisioned volume pvc-{uid}"


@pytest.mark.parametrize(
    ("capacities", "request_size", "left"),
    [
        # node-1 has 10Gi; 4Gi is taken: 10 - 4 = 6Gi left, node-0's untouched
        pytest.param(
            [("cap-0", "node-0", "10Gi"), ("cap-1", "node-1", "10Gi")],
            "4Gi",
            {"cap-0": "10Gi", "cap-1": "6Gi"},
            id="decremented on the selected node only",
        ),
        # exactly what is left: 4 - 4 = 0
        pytest.param(
            [("cap-1", "node-1", "4Gi")], "4Gi", {"cap-1": "0"}, id="the last of the capacity"
        ),
    ],
)
async def test_capacity_is_respected_and_decremented(api: Api, capacities, request_size, left):
    await _driver(api, tracks_capacity=True)
    await create(api, CLASSES, storage_class("hollow", wait=True))
    for name, node, amount in capacities:
        await create(api, CAPACITIES, capacity(name, "hollow", amount, node))
    await create(api, CLAIMS, claim("data", request_size, storage_class="hollow"))
    await _select_node(api, "data", "node-1")
    await wait_until(api, CLAIMS, "data", _bound)
    for name, amount in left.items():
        assert (await api.get(f"{CAPACITIES}/{name}")).body["capacity"] == amount


async def test_no_capacity_fails_and_clears_the_selected_node(api: Api):
    await _driver(api, tracks_capacity=True)
    await create(api, CLASSES, storage_class("hollow", wait=True))
    # 1Gi on node-1 cannot hold 2Gi; node-0's 10Gi is not on the selected node
    await create(api, CAPACITIES, capacity("cap-1", "hollow", "1Gi", "node-1"))
    await create(api, CAPACITIES, capacity("cap-0", "hollow", "10Gi", "node-0"))
    await create(api, CLAIMS, claim("data", "2Gi", storage_class="hollow"))
    await _select_node(api, "data", "node-1")
    failed = await wait_for_event(api, "data", "ProvisioningFailed")
    assert failed["type"] == "Warning"
    assert failed["message"].startswith(
        'failed to provision volume with StorageClass "hollow": rpc error: code = ResourceExhausted'
    )
    pending = await wait_until(
        api, CLAIMS, "data", lambda obj: SELECTED not in obj["metadata"]["annotations"]
    )
    assert pending["status"]["phase"] == "Pending"
    assert (await api.get(PVS)).body["items"] == []
    assert (await api.get(f"{CAPACITIES}/cap-1")).body["capacity"] == "1Gi"
    # the scheduler retries on a node with room: node-0
    await _select_node(api, "data", "node-0")
    await wait_until(api, CLAIMS, "data", _bound)
    assert (await api.get(f"{CAPACITIES}/cap-0")).body["capacity"] == "8Gi"  # 10 - 2


async def test_capacity_ignored_when_the_driver_does_not_track_it(api: Api):
    await _driver(api, tracks_capacity=False)
    await create(api, CLASSES, storage_class("hollow", wait=True))
    await create(api, CAPACITIES, capacity("cap-1", "hollow", "1Gi", "node-1"))
    await create(api, CLAIMS, claim("data", "5Gi", storage_class="hollow"))
    await _select_node(api, "data", "node-1")
    await wait_until(api, CLAIMS, "data", _bound)
    assert (await api.get(f"{CAPACITIES}/cap-1")).body["capacity"] == "1Gi"


async def test_deleting_the_claim_deletes_the_volume_and_returns_capacity(api: Api):
    await _driver(api, tracks_capacity=True)
    await create(api, CLASSES, storage_class("hollow", wait=True))
    await create(api, CAPACITIES, capacity("cap-1", "hollow", "10Gi", "node-1"))
    made = await create(api, CLAIMS, claim("data", "4Gi", storage_class="hollow"))
    await _select_node(api, "data", "node-1")
    await wait_until(api, CLAIMS, "data", _bound)
    assert (await api.get(f"{CAPACITIES}/cap-1")).body["capacity"] == "6Gi"
    since = (await api.get(PVS)).body["metadata"]["resourceVersion"]
    assert (await api.delete(f"{CLAIMS}/data")).status == 200
    events = await api.watch(
        f"{PVS}?watch=1&resourceVersion={since}",
        until=lambda seen: seen[-1]["type"] == "DELETED",
    )
    assert events[-1]["object"]["metadata"]["name"] == f"pvc-{made['metadata']['uid']}"
    await wait_until(api, CAPACITIES, "cap-1", lambda obj: obj["capacity"] == "10Gi")


async def test_non_hollow_provisioner_only_annotates(api: Api):
    await create(api, CLASSES, storage_class("ebs", "ebs.csi.aws.com"))
    await create(api, CLAIMS, claim("data", storage_class="ebs"))
    event = await wait_for_event(api, "data", "ExternalProvisioning")
    assert event["message"] == (  # kube-controller-manager v1.37's words
        "Waiting for a volume to be created either by the external provisioner "
        "'ebs.csi.aws.com' or manually by the system administrator. If volume creation is "
        "delayed, please verify that the provisioner is running and correctly registered."
    )
    annotations = (await api.get(f"{CLAIMS}/data")).body["metadata"]["annotations"]
    assert annotations["volume.beta.kubernetes.io/storage-provisioner"] == "ebs.csi.aws.com"
    assert annotations["volume.kubernetes.io/storage-provisioner"] == "ebs.csi.aws.com"
    assert (await api.get(PVS)).body["items"] == []


async def test_immediate_claim_provisioned_once_capacity_appears(api: Api):
    # Immediate: no node; any capacity of the class will do once there is one that fits
    await _driver(api, tracks_capacity=True)
    await create(api, CLASSES, storage_class("hollow"))
    await create(api, CLAIMS, claim("data", "2Gi", storage_class="hollow"))
    failed = await wait_for_event(api, "data", "ProvisioningFailed")
    assert "ResourceExhausted" in failed["message"]
    await create(api, CAPACITIES, capacity("cap", "hollow", "5Gi"))
    bound = await wait_until(api, CLAIMS, "data", _bound)
    volume = (await api.get(f"{PVS}/{bound['spec']['volumeName']}")).body
    assert "nodeAffinity" not in volume["spec"]  # no node was selected
    assert (await api.get(f"{CAPACITIES}/cap")).body["capacity"] == "3Gi"  # 5 - 2
