"""The resource-fit capability is declared, not looked up by name.

A profile without NodeResourcesFit whose stand-in filter declares
:class:`~asched.framework.interface.ResourceFit` gets the stand-in's checks in the
engine's vectorised paths: the nominated-pods pass (upstream: RunFilterPluginsWithNominatedPods) and preemption's
resource search (upstream: SelectVictimsOnNode). The stand-in, CpuOnlyFit, compares the pod count and
cpu only, so memory a pod asks for is never a reason.

Nodes: n1 and n2, 1 CPU and 1Gi each.
"""

from __future__ import annotations

from typing import Any, Final

import pytest

from asched.cluster.columns import Rows, size_of
from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import PodInfo
from asched.cluster.resources import CPU
from asched.cluster.table import NodeTable
from asched.config.types import DefaultPreemptionArgs
from asched.engine.algorithm import Algorithm
from asched.framework.builtin.default_preemption import DefaultPreemption
from asched.framework.cycle_state import CycleState
from asched.framework.interface import BoolMask, ResourceFit
from asched.framework.registry import installed
from asched.framework.resource_fit import Check, ResourceNeed, resource_checks
from asched.framework.runtime import Framework
from asched.framework.spec import declare
from asched.framework.status import Status
from tests.builders import default_profile, make_node, make_pod, profile_with, with_pod_fields

STAND_IN: Final = "CpuOnlyFit"
ANTI_NOTHING = {
    # a cross-row filter that never rejects: sends the nominated pass down the table path
    "requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"absent": "x"}}, "topologyKey": "kubernetes.io/hostname"}
    ]
}


class CpuOnlyFit:
    """A Filter that declares the capability and checks the pod count and cpu only."""

    name: Final = STAND_IN
    row_local: Final = True

    def resource_checks(self, pod: PodInfo, table: NodeTable) -> tuple[Check, ...]:
        return tuple(c for c in resource_checks(pod, table, lambda _: False) if c.resource == CPU)

    def _need(self, pod: PodInfo, table: NodeTable) -> ResourceNeed:
        return ResourceNeed.of(table, self.resource_checks(pod, table))

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        return self._need(pod, table).fits(table.free, size_of(rows), rows)

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        reasons = self._need(pod, table).reasons(table.free, row)
        return Status.unschedulable(*reasons, plugin=STAND_IN) if reasons else Status.success()


def _framework() -> Framework:
    """The default profile with NodeResourcesFit disabled and CpuOnlyFit in its place."""
    default = default_profile().resolved
    filters = tuple(STAND_IN if n == "NodeResourcesFit" else n for n in default.filter)
    scores = tuple((n, w) for n, w in default.score if n != "NodeResourcesFit")
    profile = profile_with(filter=filters, score=scores, post_filter=default.post_filter)
    framework = Framework(
        profile, registry=installed().adding(declare(CpuOnlyFit, api_version="1.0"))
    )
    assert "NodeResourcesFit" not in framework.plugins
    return framework


def _table(*pods: tuple[str, str, int, str]) -> NodeTable:
    """n1 and n2; ``pods`` are (name, cpu, priority, node)."""
    table = NodeTable()
    for name in ("n1", "n2"):
        table.upsert_node(decode_node(make_node(name, cpu="1", memory="1Gi")))
    for name, cpu, priority, node in pods:
        table.add_pod(decode_pod(make_pod(name, cpu=cpu, priority=priority, node_name=node)), node)
    return table


def test_the_framework_finds_the_declared_capability() -> None:
    framework = _framework()
    assert isinstance(framework.plugins[STAND_IN], ResourceFit)
    assert framework.resource_fit is framework.plugins[STAND_IN]


@pytest.mark.parametrize("path", ["vectorised", "table"])
@pytest.mark.parametrize(
    ("cpu", "memory", "expected", "n1_reasons"),
    [
        # n1: 1000m - the nominee's 600m = 400m < 500m, the stand-in rejects it there;
        # n2: 1000m - busy 600m = 400m < 500m, rejected outright
        pytest.param("500m", None, set(), ("Insufficient cpu",), id="cpu held by the nominee"),
        # 300m fits beside the nominee (900m on n1) and beside busy (900m on n2); the
        # nominee's 600Mi + 900Mi > 1Gi would fail NodeResourcesFit, not the stand-in
        pytest.param("300m", "900Mi", {"n1", "n2"}, None, id="memory is not the stand-in's"),
    ],
)
def test_the_nominated_pass_uses_the_declared_checks(
    path: str, cpu: str, memory: str | None, expected: set[str], n1_reasons: Any
) -> None:
    table = _table(("busy", "600m", 0, "n2"))
    nominee = decode_pod(
        with_pod_fields(
            make_pod("nominee", cpu="600m", memory="600Mi", priority=100), nominated_node="n1"
        )
    )
    table.nominations.set(nominee, "n1")
    extra = {"pod_anti_affinity": ANTI_NOTHING} if path == "table" else {}
    pod = decode_pod(make_pod("incoming", cpu=cpu, memory=memory, priority=50, **extra))
    decision = Algorithm(_framework(), table, percentage=100, seed=1).schedule(pod)
    assert decision.feasible == len(expected)
    assert (decision.node in expected) if expected else decision.node is None
    n1 = decision.failures().get(table.index["n1"])
    if n1_reasons is None:
        assert n1 is None
    else:
        assert n1 is not None
        assert (n1.plugin, n1.reasons) == (STAND_IN, n1_reasons)
        assert decision.message() == "0/2 nodes are available: 2 Insufficient cpu."


@pytest.mark.parametrize(
    ("cpu", "victims", "statuses"),
    [
        # n1 without low (800m): 1000m >= 500m, low is the victim; n2 without small
        # (100m) still holds high's 800m: 200m < 500m. The 2Gi of memory asked for is
        # beyond every node, but the stand-in does not compare memory.
        pytest.param("500m", ("default/low",), {}, id="candidate on n1"),
        # 1200m > 1000m on n1 even when empty, and > 200m on n2: no candidate, each
        # visited node's reason is the stand-in's
        pytest.param(
            "1200m",
            (),
            {"n1": ("Insufficient cpu",), "n2": ("Insufficient cpu",)},
            id="no candidate",
        ),
    ],
)
def test_preemption_searches_with_the_declared_checks(
    cpu: str, victims: tuple[str, ...], statuses: dict[str, tuple[str, ...]]
) -> None:
    table = _table(
        ("low", "800m", 0, "n1"), ("high", "800m", 1000, "n2"), ("small", "100m", 0, "n2")
    )
    framework = _framework()
    pod = decode_pod(make_pod("preemptor", cpu=cpu, memory="2Gi", priority=100))
    decision = Algorithm(framework, table, percentage=100, seed=1).schedule(pod)
    assert decision.node is None
    plugin = DefaultPreemption(DefaultPreemptionArgs())
    result = plugin.post_filter(CycleState(), pod, table, decision.statuses(), framework, offset=0)
    assert plugin.last_search == "resources"
    assert tuple(p.key for p in result.victims) == victims
    if victims:
        assert result.nominated_node == "n1"
    search = plugin.search(CycleState(), pod, table, framework, [0, 1], 2)
    found = {table.name_of(r): (s.plugin, s.reasons) for r, s in search.statuses.items()}
    assert found == {node: (STAND_IN, reasons) for node, reasons in statuses.items()}
