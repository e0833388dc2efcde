"""The PV index and the node masks stay current: PVs that change class, get claimed,
are deleted or added, and nodes that are relabelled, change the next pod's answer."""

from __future__ import annotations

from asched.cluster.decode import decode_node
from asched.cluster.pv_index import index_of
from asched.cluster.volume_decode import decode_persistent_volume, decode_storage_capacity
from asched.config.types import VolumeBindingArgs
from asched.explain.engine import table_of
from asched.framework.builtin.volume_binding import VolumeBinding
from asched.framework.cycle_state import CycleState
from tests.builders import make_node, make_pod, pod_info, pvc_volume
from tests.unit.volumes.binding._objects import (
    capacity,
    claim,
    csi_driver,
    local_affinity,
    pv,
    storage_class,
    storage_snapshot,
)

ZONE = "topology.kubernetes.io/zone"
POD = pod_info(make_pod("p", volumes=[pvc_volume("c1")]))


def node(name: str, zone: str) -> dict:
    return make_node(name, labels={"kubernetes.io/hostname": name, ZONE: zone})


def feasible(plugin: VolumeBinding, table) -> list[bool]:
    state = CycleState()
    assert plugin.pre_filter(state, POD, table).status.ok
    return plugin.filter(state, POD, table, table.rows).tolist()


def test_relabelled_node_updates_a_general_affinity_mask() -> None:
    # pv-z: zone b AND a disk label (a two-expression term: the general, cached mask path)
    affinity = {
        "required": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": ZONE, "operator": "In", "values": ["b"]},
                        {"key": "disk", "operator": "Exists"},
                    ]
                }
            ]
        }
    }
    objects = [storage_class("wait"), claim("c1"), pv("pv-z", affinity=affinity)]
    table = table_of(storage_snapshot([node("n1", "a"), node("n2", "b")], objects))
    plugin = VolumeBinding(VolumeBindingArgs())
    assert feasible(plugin, table) == [False, False]
    relabelled = make_node("n2", labels={"kubernetes.io/hostname": "n2", ZONE: "b", "disk": "ssd"})
    table.upsert_node(decode_node(relabelled))  # a changed row, same epoch
    assert feasible(plugin, table) == [False, True]
    table.upsert_node(decode_node(make_node("n3", labels={ZONE: "b", "disk": "hdd"})))
    assert feasible(plugin, table) == [False, True, True]  # a new row (new epoch)


def test_pv_changes_reach_the_index() -> None:
    objects = [storage_class("wait"), claim("c1"), pv("pv-1", affinity=local_affinity("n1"))]
    table = table_of(storage_snapshot([node("n1", "a"), node("n2", "a")], objects))
    plugin = VolumeBinding(VolumeBindingArgs())
    catalog = table.volumes
    assert feasible(plugin, table) == [True, False]
    # claimed by someone else: no longer free
    catalog.put_pv(
        decode_persistent_volume(
            pv("pv-1", affinity=local_affinity("n1"), claim=("default", "x"), version="2")
        )
    )
    assert feasible(plugin, table) == [False, False]
    # moved to another class, then a new PV for n2 arrives
    catalog.put_pv(decode_persistent_volume(pv("pv-1", storage_class_name="other", version="3")))
    catalog.put_pv(decode_persistent_volume(pv("pv-2", affinity=local_affinity("n2"))))
    assert feasible(plugin, table) == [False, True]
    assert set(index_of(catalog).classes["other"].slot_of) == {"pv-1"}
    # deleted: nothing left
    catalog.remove_pv("pv-2")
    assert feasible(plugin, table) == [False, False]
    # a bigger PV for both nodes' values (In [n1, n2]) comes back
    catalog.put_pv(decode_persistent_volume(pv("pv-3", "9Gi", affinity=local_affinity("n1", "n2"))))
    assert feasible(plugin, table) == [True, True]


def test_affinity_and_capacity_changes_reach_the_index() -> None:
    objects = [
        storage_class("wait"),
        claim("c1"),
        pv("pv-a", "5Gi", affinity=local_affinity("n1")),
        pv("pv-b", "2Gi", affinity=local_affinity("n1")),
    ]
    table = table_of(storage_snapshot([node("n1", "a"), node("n2", "a")], objects))
    plugin = VolumeBinding(VolumeBindingArgs())
    catalog = table.volumes
    assert feasible(plugin, table) == [True, False]
    # pv-a moves to n2 (its listing under n1 is dropped), pv-b grows to 9Gi
    catalog.put_pv(
        decode_persistent_volume(pv("pv-a", "5Gi", affinity=local_affinity("n2"), version="2"))
    )
    catalog.put_pv(
        decode_persistent_volume(pv("pv-b", "9Gi", affinity=local_affinity("n1"), version="2"))
    )
    assert feasible(plugin, table) == [True, True]
    # on n1 only pv-b is left; both go: the smallest fitting PV of n2 is pv-a (5Gi)
    state = CycleState()
    assert plugin.pre_filter(state, POD, table).status.ok
    plugin.filter(state, POD, table, table.rows)
    assert plugin.reserve(state, POD, "n2").ok
    assert catalog.pvs["pv-a"].claim_ref is not None
    assert catalog.pvs["pv-b"].claim_ref is None
    # pv-a shrinks below pv-b's listing order but stays the only PV of n2
    plugin.unreserve(state, POD, "n2")
    catalog.put_pv(
        decode_persistent_volume(pv("pv-a", "1Gi", affinity=local_affinity("n1"), version="3"))
    )
    state = CycleState()
    assert plugin.pre_filter(state, POD, table).status.ok
    assert plugin.filter(state, POD, table, table.rows).tolist() == [True, False]
    assert plugin.reserve(state, POD, "n1").ok
    # n1 now has pv-a (1Gi) and pv-b (9Gi): the smallest that fits 1Gi is pv-a
    assert catalog.pvs["pv-a"].claim_ref is not None


def test_capacity_changes_reach_the_cached_masks() -> None:
    objects = [
        storage_class("provision", provisioner="example.com/p"),
        csi_driver("example.com/p", capacity=True),
        claim("c1", storage_class_name="provision"),
        capacity("cap-1", "provision", "10Gi", {"kubernetes.io/hostname": "n1"}),
    ]
    table = table_of(storage_snapshot([node("n1", "a"), node("n2", "a")], objects))
    plugin = VolumeBinding(VolumeBindingArgs())
    assert feasible(plugin, table) == [True, False]
    # a pool appears for n2 (the cached answer for this class and size must not be reused)
    table.volumes.put_capacity(
        decode_storage_capacity(
            capacity("cap-2", "provision", "10Gi", {"kubernetes.io/hostname": "n2"})
        )
    )
    assert feasible(plugin, table) == [True, True]
    # n1's pool shrinks below the claim's request (512Mi < 1Gi)
    table.volumes.put_capacity(
        decode_storage_capacity(
            capacity("cap-1", "provision", "512Mi", {"kubernetes.io/hostname": "n1"})
        )
    )
    assert feasible(plugin, table) == [False, True]
    # n2 loses its hostname label: the cached mask is updated on that row
    table.upsert_node(decode_node(make_node("n2", labels={ZONE: "a"})))
    assert feasible(plugin, table) == [False, False]
