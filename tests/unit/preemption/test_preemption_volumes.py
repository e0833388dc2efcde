"""DefaultPreemption's vectorised search with the volume filters active.

The volume filters (VolumeRestrictions, NodeVolumeLimits, VolumeZone, VolumeBinding) look
across rows, but they see the other pods only through their volumes
(``filter_reads_only_pod_volumes``): taking off a victim without volumes cannot change
their answer. So a preemptor with a volume keeps the vectorised search, and only the nodes
where a what-if moves a pod with volumes (a lower-priority pod with volumes on it, a pod
of at least the preemptor's priority with volumes nominated there) are answered node by
node. Nodes have 1000m cpu; the preemptor asks for 600m at priority 100 and mounts the GCE
disk ``d0`` read-write (two pods mounting one disk on one node conflict unless both
mount it read-only: upstream's VolumeRestrictions, isVolumeConflict).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from asched.cluster.volumes import BIND_COMPLETED_ANNOTATION
from asched.config.types import DefaultPreemptionArgs
from asched.explain.engine import table_of
from asched.framework.builtin.default_preemption import DefaultPreemption
from asched.framework.cycle_state import CycleState
from asched.framework.runtime import Framework
from tests.builders import (
    cluster_inputs,
    engine_table,
    make_node,
    make_pod,
    pod_info,
    profile_with,
    with_pod_fields,
)
from tests.unit.volumes.limits._support import claim, csi_node, pv, pvc, snapshot

PROFILE = profile_with(
    filter=["NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeZone"]
)


def _disk(name: str) -> dict[str, Any]:
    return {"name": name, "gcePersistentDisk": {"pdName": name}}


def _pod(name: str, node: str, cpu: str, priority: int, disk: str = "") -> dict[str, Any]:
    volumes = [_disk(disk)] if disk else []
    return make_pod(name, node_name=node, cpu=cpu, priority=priority, volumes=volumes)


@pytest.mark.parametrize(
    ("bound", "nominated", "search", "candidates"),
    [
        # n0: low (800m) off leaves 1000m >= 600m; n1 the same with low1. No pod with
        # volumes moves: the volume filters are asked once per node.
        pytest.param(
            [_pod("low0", "n0", "800m", 0), _pod("low1", "n1", "800m", 0)],
            [],
            "resources",
            {"n0": ["default/low0"], "n1": ["default/low1"]},
            id="victims without volumes",
        ),
        # n0's victim mounts d0: with it on, VolumeRestrictions rejects n0; off, the
        # preemptor fits (1000m - 0 >= 600m) and it is the victim. n0 is answered node by
        # node; n1 as before.
        pytest.param(
            [_pod("low0", "n0", "800m", 0, "d0"), _pod("low1", "n1", "800m", 0)],
            [],
            "resources+exact",
            {"n0": ["default/low0"], "n1": ["default/low1"]},
            id="a victim holding the preemptor's disk",
        ),
        # n0: high (priority 100, not a victim) mounts d0: the conflict stays whatever
        # preemption takes off; no candidate there. n1 as before.
        pytest.param(
            [
                _pod("high0", "n0", "100m", 100, "d0"),
                _pod("low0", "n0", "800m", 0),
                _pod("low1", "n1", "800m", 0),
            ],
            [],
            "resources",
            {"n1": ["default/low1"]},
            id="a conflict no victim can lift",
        ),
        # a pod of priority 100 with d0 is nominated to n1: the nominated pass counts it,
        # so d0 conflicts there (and its 300m leaves 1000 - 300 = 700m >= 600m, so the
        # cpu alone would not have stopped n1): n1 is answered node by node, no candidate.
        pytest.param(
            [_pod("low0", "n0", "800m", 0), _pod("low1", "n1", "800m", 0)],
            [with_pod_fields(_pod("nom", "", "300m", 100, "d0"), nominated_node="n1")],
            "resources+exact",
            {"n0": ["default/low0"]},
            id="a nominated pod with the disk",
        ),
    ],
)
def test_volume_what_ifs(
    bound: list[dict[str, Any]],
    nominated: list[dict[str, Any]],
    search: str,
    candidates: dict[str, list[str]],
) -> None:
    nodes = [make_node(f"n{i}", cpu="1000m", memory="10Gi", pods="10") for i in range(2)]
    infos, by_node, _, extras = cluster_inputs(nodes, bound)
    me = pod_info(make_pod("me", cpu="600m", priority=100, volumes=[_disk("d0")]))
    table = engine_table(infos, by_node, extras, nominated=[pod_info(p) for p in nominated])
    plugin = DefaultPreemption(DefaultPreemptionArgs(0, 10))
    rows = [int(r) for r in table.order()]
    found = plugin.search(CycleState(), me, table, Framework(PROFILE), rows, len(rows))
    assert plugin.last_search == search
    got = {table.name_of(c.row): [v.key for v in c.victims] for c in found.candidates}
    assert got == candidates
    # the node-by-node answers put the table back as it was
    assert sorted(table.pods) == sorted(p.key for pods in by_node.values() for p in pods)


EBS = "ebs.csi.aws.com"


@pytest.mark.parametrize(
    ("limit", "search", "candidates"),
    [
        # no node limits the EBS driver: NodeVolumeLimits compares the attachments with
        # nothing, VolumeBinding and VolumeZone read no pods, and the pod has no inline
        # disk or ReadWriteOncePod claim (VolumeRestrictions skips): no what-if changes
        # a volume filter, so the nominated pod's claim is no reason to go node by node
        pytest.param(
            None, "resources", {"n0": ["default/low0"], "n1": ["default/low1"]}, id="no limit"
        ),
        # n1 limits EBS to 1 attachment: counted, the nominated pod's volume (vol-2) and
        # the preemptor's (vol-1) make 2 > 1, so n1 is no candidate; answered node by node
        pytest.param(1, "resources+exact", {"n0": ["default/low0"]}, id="a limit on n1"),
    ],
)
def test_pods_that_cannot_change_the_volume_filters(
    limit: int | None, search: str, candidates: dict[str, list[str]]
) -> None:
    nodes = [make_node(f"n{i}", cpu="1000m", memory="10Gi", pods="10") for i in range(2)]
    low = [_pod("low0", "n0", "800m", 0), _pod("low1", "n1", "800m", 0)]
    storage: list[object] = [
        pv("pv-1", in_tree=("kubernetes.io/aws-ebs", "vol-1")),
        pv("pv-2", in_tree=("kubernetes.io/aws-ebs", "vol-2")),
        *(
            # bound claims, as upstream's pvc.yaml template writes them
            dataclasses.replace(
                claim(f"c{i}", volume=f"pv-{i}", modes=["ReadOnlyMany"]),
                annotations={BIND_COMPLETED_ANNOTATION: "true"},
            )
            for i in (1, 2)
        ),
    ]
    if limit is not None:
        storage += [csi_node("n0", {}), csi_node("n1", {EBS: limit})]
    table = table_of(snapshot(nodes, low, storage))
    nominated = make_pod("nom", cpu="100m", priority=100, volumes=[pvc("c2")])
    table.nominations.set(pod_info(with_pod_fields(nominated, nominated_node="n1")), "n1")
    me = pod_info(make_pod("me", cpu="600m", priority=100, volumes=[pvc("c1")]))
    profile = profile_with(
        filter=[
            "NodeResourcesFit",
            "VolumeRestrictions",
            "NodeVolumeLimits",
            "VolumeZone",
            "VolumeBinding",
        ]
    )
    answers = []
    for vectorise in (True, False):
        plugin = DefaultPreemption(DefaultPreemptionArgs(0, 10))
        plugin.vectorise = vectorise
        rows = [int(r) for r in table.order()]
        found = plugin.search(CycleState(), me, table, Framework(profile), rows, len(rows))
        assert plugin.last_search == (search if vectorise else "exact")
        answers.append({table.name_of(c.row): [v.key for v in c.victims] for c in found.candidates})
    assert answers == [candidates, candidates]  # and the exact search agrees
