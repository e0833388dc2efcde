"""The table's attachment columns: kept on add/remove pod, on storage changes, exactly."""

from __future__ import annotations

import numpy as np

from asched.cluster.decode import decode_node
from asched.cluster.table import NodeTable
from asched.cluster.volumes import READ_WRITE_ONCE_POD, CSINode, VolumeCatalog
from tests.builders import make_node, make_pod, pod_info
from tests.unit.volumes.limits._support import claim, ebs, gce, pv, pvc, rbd, storage_class

EBS = "ebs.csi.aws.com"


def _table(*names: str, capacity: int = 64) -> NodeTable:
    table = NodeTable(capacity=capacity)
    for name in names:
        table.upsert_node(decode_node(make_node(name)))
    return table


def _columns(table: NodeTable) -> tuple[object, ...]:
    """Everything the plugins read, by node name (zero counts and free rows dropped)."""
    att = table.attachments
    live = {row: table.name_of(row) for row in range(table.size) if table.alive[row]}
    counts = {
        (d, name): int(c[row])
        for d, c in att.counts.items()
        for row, name in live.items()
        if c[row]
    }
    limits = {
        (d, name): int(c[row])
        for d, c in att.limits.items()
        for row, name in live.items()
        if c[row] >= 0
    }
    return (
        counts,
        limits,
        {name for row, name in live.items() if att.has_csi_node[row]},
        {u: {live[r]: n for r, n in rows.items()} for u, rows in att.users.items()},
        dict(att.claim_refs),
        {k: {live[r]: list(v) for r, v in rows.items()} for k, rows in att.disks.items()},
    )


def _recounted(table: NodeTable) -> tuple[object, ...]:
    """The columns of a fresh table holding the same nodes, pods and catalog."""
    fresh = NodeTable(capacity=table.capacity)
    fresh.volumes = table.volumes
    for row in range(table.size):
        if table.alive[row]:
            fresh.upsert_node(table.node_at(row))
    for placed in table.pods.values():
        fresh.add_pod(placed.info, table.name_of(placed.row))
    columns = _columns(fresh)
    fresh.volumes = VolumeCatalog()  # stop listening to the original's catalog
    return columns


def test_add_and_forget_restore_every_column() -> None:
    table = _table("n1", "n2")
    table.volumes.put_claim(claim("c1", volume="pv1", modes=[READ_WRITE_ONCE_POD]))
    table.volumes.put_pv(pv("pv1", csi=(EBS, "h1")))
    table.volumes.put_csi_node(CSINode("n1", limits={EBS: 3}))
    first = pod_info(make_pod("a", volumes=[pvc("c1"), gce("pd", read_only=True)]))
    table.add_pod(first, "n1")
    before = _columns(table)
    # a second pod on n1 with the same claim: the volume is attached once; the claim has
    # two references; the disk has a read-write user now
    second = pod_info(make_pod("b", volumes=[pvc("c1"), gce("pd")]))
    table.add_pod(second, "n1")
    att = table.attachments
    assert att.count_of(EBS, table.size).tolist() == [1, 0]
    assert att.users[f"{EBS}/h1"] == {0: 2}
    assert att.claim_refs == {"default/c1": 2}
    assert att.disks[("gce-pd", "pd")] == {0: [1, 1]}
    table.remove_pod(second.key)
    assert _columns(table) == before
    table.remove_pod(first.key)
    assert att.count_of(EBS, table.size).tolist() == [0, 0]
    assert (att.users, att.claim_refs, att.disks) == ({}, {}, {})


def test_a_claim_bound_later_is_recounted() -> None:
    # the claim is pending (counted by its class with a handle of its own); once bound,
    # it is the PV's volume, the one the other pod already attaches: 2 -> 1 on n1
    table = _table("n1")
    catalog = table.volumes
    catalog.put_class(storage_class("sc", EBS))
    catalog.put_pv(pv("pv1", csi=(EBS, "h1")))
    catalog.put_claim(claim("bound", volume="pv1"))
    catalog.put_claim(claim("pending", storage_class="sc"))
    table.add_pod(pod_info(make_pod("a", volumes=[pvc("bound")])), "n1")
    table.add_pod(pod_info(make_pod("b", volumes=[pvc("pending")])), "n1")
    assert table.attachments.count_of(EBS, 1).tolist() == [2]
    catalog.put_claim(claim("pending", storage_class="sc", volume="pv1"))
    assert table.attachments.count_of(EBS, 1).tolist() == [1]
    assert _columns(table) == _recounted(table)


def test_a_new_csi_node_migrates_in_tree_volumes() -> None:
    # without a CSINode an inline EBS volume is not counted; with one it counts under
    # ebs.csi.aws.com, and the limit column is written
    table = _table("n1", "n2")
    table.add_pod(pod_info(make_pod("a", volumes=[ebs("vol-1")])), "n1")
    assert table.attachments.count_of(EBS, 2).tolist() == [0, 0]
    table.volumes.put_csi_node(CSINode("n1", limits={EBS: 5}))
    assert table.attachments.count_of(EBS, 2).tolist() == [1, 0]
    assert table.attachments.limit_of(EBS, 2).tolist() == [5, -1]
    table.volumes.remove_csi_node("n1")
    assert table.attachments.count_of(EBS, 2).tolist() == [0, 0]
    assert table.attachments.limit_of(EBS, 2).tolist() == [-1, -1]


def test_pv_and_class_changes_recount_their_dependents() -> None:
    table = _table("n1")
    catalog = table.volumes
    catalog.put_claim(claim("c", volume="pv1", storage_class="sc"))
    table.add_pod(pod_info(make_pod("a", volumes=[pvc("c")])), "n1")
    # the PV does not exist and the class neither: nothing counted
    assert table.attachments.users == {}
    catalog.put_class(storage_class("sc", "other.csi"))
    assert table.attachments.count_of("other.csi", 1).tolist() == [1]
    catalog.put_pv(pv("pv1", csi=(EBS, "h")))
    assert table.attachments.count_of(EBS, 1).tolist() == [1]
    assert table.attachments.count_of("other.csi", 1).tolist() == [0]
    catalog.remove_pv("pv1")
    assert table.attachments.count_of("other.csi", 1).tolist() == [1]
    assert _columns(table) == _recounted(table)


def test_removing_a_node_clears_its_row_and_its_pods_come_back() -> None:
    table = _table("n1", "n2")
    table.volumes.put_csi_node(CSINode("n2", limits={EBS: 1}))
    pod = pod_info(make_pod("a", volumes=[rbd(["m"], "p", "i"), ebs("vol-1")]))
    table.add_pod(pod, "n2")
    with_pod = _columns(table)
    table.remove_node("n2")
    att = table.attachments
    assert (att.users, att.disks) == ({}, {})
    assert att.limit_of(EBS, table.size).tolist() == [-1, -1]
    assert not att.has_csi_node[: table.size].any()
    table.upsert_node(decode_node(make_node("n2")))  # the orphan is counted again
    assert _columns(table) == with_pod


def test_growing_keeps_the_columns() -> None:
    table = _table("n1", capacity=1)
    table.volumes.put_csi_node(CSINode("n1", limits={EBS: 2}))
    table.volumes.put_csi_node(CSINode("n3", limits={EBS: 7}))
    table.add_pod(pod_info(make_pod("a", volumes=[ebs("vol-1")])), "n1")
    for name in ("n2", "n3"):
        table.upsert_node(decode_node(make_node(name)))
    assert table.capacity >= 3
    att = table.attachments
    assert att.count_of(EBS, 3).tolist() == [1, 0, 0]
    assert att.limit_of(EBS, 3).tolist() == [2, -1, 7]
    assert att.has_csi_node[:3].tolist() == [True, False, True]


def test_replacing_the_catalog_recounts() -> None:
    # pods added before the catalog (as the explain engine does) are recounted
    table = _table("n1")
    table.add_pod(pod_info(make_pod("a", volumes=[pvc("c")])), "n1")
    catalog = VolumeCatalog()
    catalog.put_claim(claim("c", volume="pv1"))
    catalog.put_pv(pv("pv1", csi=(EBS, "h")))
    catalog.put_csi_node(CSINode("n1", limits={EBS: 4}))
    table.volumes = catalog
    assert table.attachments.count_of(EBS, 1).tolist() == [1]
    assert table.attachments.limit_of(EBS, 1).tolist() == [4]
    np.testing.assert_array_equal(table.attachments.has_csi_node[:1], [True])
    catalog.remove_claim("default/c")  # the new catalog's changes reach the table
    assert table.attachments.count_of(EBS, 1).tolist() == [0]
