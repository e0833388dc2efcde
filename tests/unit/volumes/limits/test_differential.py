"""Differential tests of the three volume plugins.

Hypothesis builds small clusters with storage: nodes with zone/region labels (GA or
legacy) and sometimes a CSINode (limits for two CSI drivers, sometimes none), claims
bound to CSI or in-tree PVs (with zone labels, one or several zones), pending claims of
Immediate or WaitForFirstConsumer classes, claims bound to missing PVs, ReadWriteOncePod
claims; bound pods and an incoming pod with claims, ephemeral volumes and inline GCE PD,
AWS EBS, RBD and iSCSI disks (read-only or not), with priorities so that preemption
what-ifs remove volume users. Both implementations evaluate the pod with the three
plugins (and sometimes DefaultPreemption): the whole Evaluation must be equal.

A second property drives one table through random pod additions and removals and
storage changes: its attachment columns always equal a recount from scratch. Derandomized.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, note, settings, strategies as st

from asched.cluster.decode import decode_node
from asched.cluster.table import NodeTable
from asched.cluster.volumes import (
    IMMEDIATE,
    READ_WRITE_MANY,
    READ_WRITE_ONCE,
    READ_WRITE_ONCE_POD,
    WAIT_FOR_FIRST_CONSUMER,
    CSINode,
    VolumeCatalog,
)
from asched.tools.reference import evaluate as reference_evaluate
from tests.builders import make_node, make_pod, pod_info, profile_with
from tests.unit.volumes.limits._support import (
    claim,
    ebs,
    ephemeral,
    gce,
    iscsi,
    pv,
    pvc,
    rbd,
    snapshot,
    storage_class,
)
from tests.unit.volumes.limits.test_attachments import _columns, _recounted

DRIVERS = ("ebs.csi.aws.com", "pd.csi.storage.gke.io", "kubernetes.io/aws-ebs")
ZONES = ("a", "b", "c")
NODES = ("n0", "n1", "n2", "n3")
CLAIMS = tuple(f"c{i}" for i in range(8))
PLUGINS = ["VolumeRestrictions", "NodeVolumeLimits", "VolumeZone"]
Raw = dict[str, Any]


@st.composite
def node_labels(draw: st.DrawFn) -> dict[str, str]:
    labels: dict[str, str] = {}
    legacy = draw(st.booleans())
    zone_key = "failure-domain.beta.kubernetes.io/zone" if legacy else "topology.kubernetes.io/zone"
    if draw(st.integers(0, 3)):
        labels[zone_key] = draw(st.sampled_from(ZONES))
    if draw(st.booleans()):
        labels["topology.kubernetes.io/region"] = draw(st.sampled_from(("r1", "r2")))
    return labels


@st.composite
def storage(draw: st.DrawFn) -> list[object]:
    out: list[object] = [
        storage_class("wait", DRIVERS[0], WAIT_FOR_FIRST_CONSUMER),
        storage_class("now", draw(st.sampled_from(DRIVERS)), IMMEDIATE),
        storage_class("intree", "kubernetes.io/aws-ebs", WAIT_FOR_FIRST_CONSUMER),
    ]
    for index, name in enumerate(CLAIMS):
        modes = [draw(st.sampled_from((READ_WRITE_ONCE, READ_WRITE_MANY, READ_WRITE_ONCE_POD)))]
        shape = draw(st.integers(0, 5))
        if shape == 5:
            continue  # the claim does not exist
        if shape <= 2:  # bound to a PV
            labels = {}
            if draw(st.booleans()):
                key = draw(
                    st.sampled_from(
                        ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
                    )
                )
                zones = draw(st.lists(st.sampled_from(ZONES), min_size=1, max_size=2, unique=True))
                labels[key] = "__".join(zones)
            if draw(st.integers(0, 3)) == 0:
                labels["topology.kubernetes.io/region"] = draw(st.sampled_from(("r1", "r2")))
            handle = f"h{draw(st.integers(0, 4))}"
            if shape == 0:
                record = pv(f"pv{index}", labels, in_tree=("kubernetes.io/aws-ebs", handle))
            else:
                record = pv(f"pv{index}", labels, csi=(draw(st.sampled_from(DRIVERS[:2])), handle))
            if draw(st.integers(0, 6)):
                out.append(record)  # else: bound to a missing PV
            out.append(claim(name, volume=f"pv{index}", modes=modes, storage_class="wait"))
        else:  # pending
            cls = draw(st.sampled_from(("wait", "now", "intree", "missing", None)))
            out.append(claim(name, storage_class=cls, modes=modes))
    return out


@st.composite
def volumes(draw: st.DrawFn, pod_name: str) -> list[Raw]:
    out: list[Raw] = []
    for index in range(draw(st.integers(0, 3))):
        kind = draw(st.integers(0, 6))
        ro = draw(st.booleans())
        if kind <= 2:
            out.append(pvc(draw(st.sampled_from(CLAIMS)), f"v{index}"))
        elif kind == 3:
            out.append(gce(draw(st.sampled_from(("p1", "p2"))), read_only=ro, name=f"v{index}"))
        elif kind == 4:
            out.append(ebs(draw(st.sampled_from(("h1", "h2"))), read_only=ro, name=f"v{index}"))
        elif kind == 5:
            monitors = draw(st.lists(st.sampled_from("abc"), min_size=1, max_size=2, unique=True))
            raw = rbd(monitors, "pool", draw(st.sampled_from(("i1", "i2"))), read_only=ro)
            raw["name"] = f"v{index}"
            out.append(raw)
        else:
            raw = iscsi(draw(st.sampled_from(("iqn.a", "iqn.b"))), read_only=ro)
            raw["name"] = f"v{index}"
            out.append(raw)
    if draw(st.integers(0, 5)) == 0:
        out.append(ephemeral("eph"))
    return out


def _pod(name: str, vols: list[Raw], priority: int, node: str = "") -> Raw:
    raw = make_pod(name, volumes=vols, node_name=node, priority=priority)
    raw["metadata"]["uid"] = f"uid-{name}"
    return raw


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Any, Any, Any, int]:
    count = draw(st.integers(1, len(NODES)))
    nodes = [make_node(name, labels=draw(node_labels())) for name in NODES[:count]]
    records = draw(storage())
    for name in NODES[:count]:
        if draw(st.integers(0, 3)):
            limits = {d: draw(st.one_of(st.none(), st.integers(0, 3))) for d in DRIVERS[:2]}
            records.append(CSINode(name, limits=limits))
    pods = []
    for index in range(draw(st.integers(0, 6))):
        name = f"p{index}"
        node = draw(st.sampled_from(NODES[:count]))
        pods.append(_pod(name, draw(volumes(name)), draw(st.integers(0, 2)), node))
    incoming = _pod("me", draw(volumes("me")), 3)
    # ephemeral claims: owned by their pod, or not
    for raw in [*pods, incoming]:
        for volume in raw["spec"].get("volumes", ()):
            if "ephemeral" in volume and draw(st.integers(0, 3)):
                owner = raw["metadata"]["uid"] if draw(st.integers(0, 4)) else "someone-else"
                name = f"{raw['metadata']['name']}-{volume['name']}"
                records.append(claim(name, storage_class="wait", owners=[owner]))
    post = ["DefaultPreemption"] if draw(st.booleans()) else []
    profile = profile_with(filter=PLUGINS, post_filter=post)
    return snapshot(nodes, pods, records), pod_info(incoming), profile, draw(st.integers(0, 99))


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenarios())
def test_vectorised_volume_plugins_match_the_reference(scenario) -> None:
    from asched.explain.engine import evaluate as vectorised_evaluate

    snap, pod, profile, seed = scenario
    catalog = snap.volumes
    note(f"pod {pod.volumes}")
    note(
        f"claims {catalog.claims}\npvs {catalog.pvs}\ncsi nodes {catalog.csi_nodes}\nclasses {catalog.classes}"
    )
    want = reference_evaluate(snap, pod, profile, seed=seed)
    got = vectorised_evaluate(snap, pod, profile, seed=seed)
    assert got.to_json() == want.to_json()
    assert got == want


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[object], list[tuple[str, Any]]]:
    records = draw(storage())
    steps: list[tuple[str, Any]] = []
    for index in range(draw(st.integers(1, 25))):
        action = draw(st.integers(0, 5))
        if action <= 1:
            name = f"p{index}"
            raw = _pod(name, draw(volumes(name)), 0)
            steps.append(("add", (pod_info(raw), draw(st.sampled_from(NODES)))))
        elif action == 2:
            steps.append(("remove", f"default/p{draw(st.integers(0, index))}"))
        elif action == 3:
            steps.append(("storage", draw(storage())))
        elif action == 4:
            limits = {d: draw(st.one_of(st.none(), st.integers(0, 3))) for d in DRIVERS[:2]}
            steps.append(("csinode", CSINode(draw(st.sampled_from(NODES)), limits=limits)))
        else:
            steps.append(("node", draw(st.sampled_from(NODES))))
    return records, steps


def _put(catalog: VolumeCatalog, records: list[object]) -> None:
    from asched.cluster.volumes import PersistentVolume, PersistentVolumeClaim, StorageClass

    for record in records:
        if isinstance(record, PersistentVolumeClaim):
            catalog.put_claim(record)
        elif isinstance(record, PersistentVolume):
            catalog.put_pv(record)
        elif isinstance(record, StorageClass):
            catalog.put_class(record)
        elif isinstance(record, CSINode):
            catalog.put_csi_node(record)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(histories())
def test_attachment_columns_equal_a_recount(history) -> None:
    records, steps = history
    table = NodeTable(capacity=2)
    _put(table.volumes, records)
    for name in NODES[:2]:
        table.upsert_node(decode_node(make_node(name)))
    for action, arg in steps:
        if action == "add":
            table.add_pod(*arg)
        elif action == "remove":
            table.remove_pod(arg)
        elif action == "storage":
            # claims may bind, move to another PV or class, or disappear
            for key in list(table.volumes.claims)[::2]:
                table.volumes.remove_claim(key)
            _put(table.volumes, arg)
        elif action == "csinode":
            if arg.name in table.volumes.csi_nodes:
                table.volumes.remove_csi_node(arg.name)
            else:
                table.volumes.put_csi_node(arg)
        elif arg in table.index:
            table.remove_node(arg)
        else:
            table.upsert_node(decode_node(make_node(arg)))
        assert _columns(table) == _recounted(table)
