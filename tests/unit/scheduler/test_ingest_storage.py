"""Storage watch events into the volume catalog, and the parked pods they move.

The ingest applies PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities through :func:`asched.cluster.storage.apply` (the same path as a
snapshot); an object that does not decode is counted, recorded in ``catalog.invalid``
with its field path, and leaves the catalog; an added or updated object moves the pods
parked by a plugin that declared its event.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_pod

from asched import metrics
from asched.api.watch import Relisted, WatchEvent
from asched.cluster import storage
from asched.cluster.decode import decode_pod
from asched.cluster.table import NodeTable
from asched.framework.events import ClusterEvent
from asched.framework.status import Status
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.ingest import STORAGE_EVENTS, Ingest
from asched.scheduler.ledger import Ledger
from tests.unit.volumes.binding._objects import capacity, claim, csi_driver, pv, storage_class

OURS = "asched"
VOLUME_BINDING = "VolumeBinding"


def build() -> tuple[Ingest, SchedulingQueue]:
    table = NodeTable()
    queue = SchedulingQueue(
        clock=lambda: 100.0,
        initial_backoff=0.0,
        max_backoff=0.0,
        interests={VOLUME_BINDING: frozenset({ClusterEvent.PV_ADD, ClusterEvent.PVC_UPDATE})},
    )
    return Ingest(table, Ledger(table), queue, {OURS}), queue


def csi_node(name: str, count: Any) -> dict[str, Any]:
    return {
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": [{"name": "d.csi", "nodeID": name, "allocatable": {"count": count}}]},
    }


def undecodable() -> float:
    sample = metrics.REGISTRY.get_sample_value(
        "asched_undecodable_objects_total", {"kind": "persistentvolumes"}
    )
    return sample or 0.0


def test_every_storage_kind_has_its_events() -> None:
    assert set(STORAGE_EVENTS) == set(storage.BY_RESOURCE)


@pytest.mark.parametrize(
    ("resource", "raw", "store", "key"),
    [
        pytest.param("persistentvolumes", pv("pv-1"), "pvs", "pv-1", id="PersistentVolume"),
        pytest.param("persistentvolumeclaims", claim("data"), "claims", "default/data", id="claim"),
        pytest.param("storageclasses", storage_class("wait"), "classes", "wait", id="StorageClass"),
        pytest.param("csinodes", csi_node("n1", 3), "csi_nodes", "n1", id="CSINode"),
        pytest.param(
            "csidrivers", csi_driver("d.csi", capacity=True), "csi_drivers", "d.csi", id="CSIDriver"
        ),
        pytest.param(
            "csistoragecapacities",
            capacity("cap-1", "wait", "10Gi", {"zone": "a"}),
            "capacities",
            "kube-system/cap-1",
            id="CSIStorageCapacity",
        ),
    ],
)
def test_added_then_deleted(resource: str, raw: dict[str, Any], store: str, key: str) -> None:
    ingest, _ = build()
    catalog = ingest.table.volumes
    ingest.apply(WatchEvent(resource, "ADDED", raw))
    assert key in getattr(catalog, store)
    ingest.apply(WatchEvent(resource, "DELETED", raw))
    assert key not in getattr(catalog, store)


def test_an_undecodable_pv_leaves_the_catalog_with_its_field_named() -> None:
    ingest, _ = build()
    catalog = ingest.table.volumes
    ingest.apply(WatchEvent("persistentvolumes", "ADDED", pv("pv-1")))
    broken = pv("pv-1", version="2")
    broken["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": "not a list"}}
    before = undecodable()
    ingest.apply(WatchEvent("persistentvolumes", "MODIFIED", broken))
    # the last good copy is not kept: the PV is no longer what the cluster says it is
    assert "pv-1" not in catalog.pvs
    reason = catalog.invalid["persistentvolumes", "pv-1"]
    assert reason.startswith("PersistentVolume pv-1: spec.nodeAffinity.required")
    assert undecodable() == before + 1
    # a good copy again clears the record
    ingest.apply(WatchEvent("persistentvolumes", "MODIFIED", pv("pv-1", version="3")))
    assert "pv-1" in catalog.pvs
    assert ("persistentvolumes", "pv-1") not in catalog.invalid


def test_a_csinode_with_a_negative_count_is_recorded_not_raised() -> None:
    ingest, _ = build()
    ingest.apply(WatchEvent("csinodes", "ADDED", csi_node("n1", -1)))
    assert "n1" not in ingest.table.volumes.csi_nodes
    assert "spec.drivers[0].allocatable.count" in ingest.table.volumes.invalid["csinodes", "n1"]


def parked(queue: SchedulingQueue, name: str) -> None:
    raw = make_pod(name, cpu="100m", memory="64Mi")
    raw["spec"]["schedulerName"] = OURS
    queue.add(decode_pod(raw))
    qp = queue.pop()
    assert qp is not None
    queue.requeue(qp, Status.unschedulable("no PV", plugin=VOLUME_BINDING))
    assert queue.where(qp.key) == "unschedulable"


@pytest.mark.parametrize(
    ("events", "moved"),
    [
        # VolumeBinding declared PV_ADD and PVC_UPDATE (see build)
        pytest.param([("ADDED", "persistentvolumes", pv("pv-1"))], True, id="PV added: moves"),
        pytest.param(
            [("ADDED", "persistentvolumeclaims", claim("data"))],
            False,
            id="claim added: not declared",
        ),
        pytest.param(
            [
                ("ADDED", "persistentvolumeclaims", claim("data")),
                ("MODIFIED", "persistentvolumeclaims", claim("data", version="2")),
            ],
            True,
            id="claim updated: moves",
        ),
        pytest.param(
            [("DELETED", "persistentvolumes", pv("pv-1"))],
            False,
            id="PV deleted: helps nobody",
        ),
    ],
)
def test_storage_events_move_the_pods_waiting_for_them(
    events: list[tuple[str, str, dict[str, Any]]], moved: bool
) -> None:
    ingest, queue = build()
    parked(queue, "web-0")
    for kind, resource, raw in events:
        ingest.apply(WatchEvent(resource, kind, raw))  # type: ignore[arg-type]
    assert (queue.where("default/web-0") == "active") is moved


def test_a_relist_replaces_the_kind_whole() -> None:
    ingest, queue = build()
    parked(queue, "web-0")
    ingest.apply(WatchEvent("persistentvolumes", "ADDED", pv("gone")))
    ingest.apply(WatchEvent("persistentvolumes", "ADDED", pv("kept")))
    queue.move(ClusterEvent.FORCE_ACTIVATE)
    popped = queue.pop()
    assert popped is not None
    queue.requeue(popped, Status.unschedulable("no PV", plugin=VOLUME_BINDING))
    ingest.apply(Relisted("persistentvolumes", [pv("kept", version="5"), pv("new")]))
    assert sorted(ingest.table.volumes.pvs) == ["kept", "new"]
    assert ingest.table.volumes.pvs["kept"].resource_version == "5"
    # a relist may have brought new PVs: the pods waiting for one are moved
    assert queue.where("default/web-0") == "active"
