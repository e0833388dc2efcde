"""``asched explain`` on a gang member: the gang's verdict, as the running scheduler gives it.

Under a profile that enables Coscheduling, explain builds the framework with the
scheduler's gang host (:class:`~asched.gangs.host.GangRuntime`) over the snapshot's
gangs, and runs the whole-gang admission the cycle runs before deciding a member. Every
case is a snapshot (nodes, a PodGroup or a Workload, the other members, pending unless
said) and the member ``m0`` explained; members ask 1 CPU each.

Room for a gang of 1-CPU members is the sum over the nodes of ``cpu // 1``: a 2-CPU node
takes 2, a 500m node none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from rich.console import Console

from asched.cluster.gangs import POD_GROUP_LABEL
from asched.cluster.snapshot import build_snapshot
from asched.config.types import Profile
from asched.engine.result import Evaluation, GangVerdict
from asched.errors import ApiError
from asched.explain import live
from asched.explain.engine import evaluate
from asched.explain.gangs import NEVER_BINDS, ExplainHandle
from asched.explain.live import LiveReadError
from asched.explain.render import gang_line, render
from asched.framework.status import Code
from tests.builders import bound_pod, make_node, make_pod, pod_info
from tests.configs import load_config

Raw = dict[str, Any]

SCHEDULER = "gangs"
#: scheduler-plugins' documented profile: Coscheduling everywhere it plugs in
COSCHEDULING: Raw = {
    "schedulerName": SCHEDULER,
    "plugins": {
        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
        "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
    },
}


def profile_of(entry: Raw) -> Profile:
    config = load_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [entry],
        }
    )
    return config.profiles[0]


GANG_PROFILE = profile_of(COSCHEDULING)
PLAIN_PROFILE = profile_of({"schedulerName": SCHEDULER})


def pod_group(name: str, min_member: int) -> Raw:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minMember": min_member},
    }


def workload(name: str, group: str, min_count: int) -> Raw:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha1",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"podGroups": [{"name": group, "policy": {"gang": {"minCount": min_count}}}]},
    }


def member(name: str, group: str = "big", *, node: str = "", workload_ref: str = "") -> Raw:
    """A 1-CPU pod of the PodGroup ``group`` (or, ``workload_ref`` given as
    ``workload/podGroup``, of that Workload's group); bound to ``node`` when given."""
    labels = {POD_GROUP_LABEL: group} if group and not workload_ref else {}
    raw = make_pod(name, cpu="1", labels=labels, node_name=node)
    raw["spec"]["schedulerName"] = SCHEDULER
    if workload_ref:
        name_, pod_group_ = workload_ref.split("/")
        raw["spec"]["workloadRef"] = {"name": name_, "podGroup": pod_group_}
    return raw


@dataclass(frozen=True)
class Case:
    nodes: Sequence[Raw]
    objects: Sequence[Raw]
    pod: Raw
    gang: GangVerdict | None
    selected: str | None
    message: str | None
    #: node -> its verdict for the member alone: True (feasible) or its reasons
    nodes_verdicts: dict[str, bool | tuple[str, ...]]
    profile: Profile = GANG_PROFILE


def verdicts(evaluation: Evaluation) -> dict[str, bool | tuple[str, ...]]:
    return {
        name: True if verdict.feasible else verdict.reasons
        for name, verdict in evaluation.nodes.items()
    }


REJECTED_AFTER_POST_FILTER = (
    "PodGroup default/big gets rejected due to Pod m0 is unschedulable even after PostFilter"
)

CASES = [
    # room: n1 4 + n2 2 = 6 >= 3 missing: admitted, and m0 goes on as a lone pod would
    # (to n1, the emptier: LeastAllocated cpu (4 - 1) * 100 // 4 = 75 against 50 on n2)
    pytest.param(
        Case(
            nodes=[make_node("n1", cpu="4"), make_node("n2", cpu="2")],
            objects=[pod_group("big", 3), member("m1"), member("m2")],
            pod=member("m0"),
            gang=GangVerdict("default/big", 3, 3, 0, True, None),
            selected="n1",
            message=None,
            nodes_verdicts={"n1": True, "n2": True},
        ),
        id="a gang that fits: admitted, a node selected",
    ),
    # one member bound on n1 (1 of its 2 CPU): 2 missing, room n1 1 + n2 0 = 1 < 2
    pytest.param(
        Case(
            nodes=[make_node("n1", cpu="2"), make_node("n2", cpu="500m")],
            objects=[pod_group("big", 3), member("m1", node="n1"), member("m2")],
            pod=member("m0"),
            gang=GangVerdict(
                "default/big",
                3,
                3,
                1,
                False,
                "pod group default/big has 1 of 3 members placed: the 2 missing cannot be "
                "placed together (room for 1)",
            ),
            selected=None,
            message="0/2 nodes are available: pod group default/big has 1 of 3 members "
            "placed: the 2 missing cannot be placed together (room for 1). "
            + REJECTED_AFTER_POST_FILTER,
            nodes_verdicts={"n1": True, "n2": ("Insufficient cpu",)},
        ),
        id="placed members count: 1 of 3 placed, room for 1 of the 2 missing",
    ),
    # 3 missing, room n1 2 (2 CPU // 1) + n2 0 (500m // 1) = 2 < 3: refused; m0 alone
    # would fit n1 (its verdict is kept), n2 lacks cpu
    pytest.param(
        Case(
            nodes=[make_node("n1", cpu="2"), make_node("n2", cpu="500m")],
            objects=[pod_group("big", 3), member("m1"), member("m2")],
            pod=member("m0"),
            gang=GangVerdict(
                "default/big",
                3,
                3,
                0,
                False,
                "pod group default/big has 0 of 3 members placed: the 3 missing cannot be "
                "placed together (room for 2)",
            ),
            selected=None,
            message="0/2 nodes are available: pod group default/big has 0 of 3 members "
            "placed: the 3 missing cannot be placed together (room for 2). "
            + REJECTED_AFTER_POST_FILTER,
            nodes_verdicts={"n1": True, "n2": ("Insufficient cpu",)},
        ),
        id="a gang too big for the room: refused, the nodes' own verdicts kept",
    ),
    # 2 pods name the group (m0 and m1) < minMember 3: Coscheduling's PreFilter refuses
    pytest.param(
        Case(
            nodes=[make_node("n1", cpu="4")],
            objects=[pod_group("big", 3), member("m1")],
            pod=member("m0"),
            gang=GangVerdict(
                "default/big",
                3,
                2,
                0,
                False,
                "pod group default/big has 2 of 3 members: pre-filter pod m0 cannot find "
                "enough sibling pods, current pods number: 2, minMember of group: 3",
            ),
            selected=None,
            message="0/1 nodes are available: pod group default/big has 2 of 3 members: "
            "pre-filter pod m0 cannot find enough sibling pods, current pods number: 2, "
            "minMember of group: 3. " + REJECTED_AFTER_POST_FILTER,
            nodes_verdicts={
                "n1": (
                    "pod group default/big has 2 of 3 members: pre-filter pod m0 cannot find "
                    "enough sibling pods, current pods number: 2, minMember of group: 3",
                )
            },
        ),
        id="too few members created: Coscheduling's PreFilter says so",
    ),
    # minMember 0: the CRD's schema refuses it; the member is told which field
    pytest.param(
        Case(
            nodes=[make_node("n1", cpu="4")],
            objects=[pod_group("big", 0), member("m1")],
            pod=member("m0"),
            gang=GangVerdict(
                "default/big",
                0,
                2,
                0,
                False,
                "pod group default/big: PodGroup default/big: spec.minMember: must be at "
                "least 1, got 0",
            ),
            selected=None,
            # Coscheduling's PostFilter knows no such group either
            message="0/1 nodes are available: pod group default/big: PodGroup default/big: "
            "spec.minMember: must be at least 1, got 0. can not find pod group",
            nodes_verdicts={
                "n1": (
                    "pod group default/big: PodGroup default/big: spec.minMember: must be at "
                    "least 1, got 0",
                )
            },
        ),
        id="an invalid PodGroup: the reason names the field",
    ),
    # a pod of no gang beside a gang that cannot be placed: its answer is a lone pod's
    pytest.param(
        Case(
            nodes=[make_node("n1", cpu="2"), make_node("n2", cpu="500m")],
            objects=[pod_group("big", 3), member("m1"), member("m2"), member("m3")],
            pod=member("m0", group=""),
            gang=None,
            selected="n1",
            message=None,
            nodes_verdicts={"n1": True, "n2": ("Insufficient cpu",)},
        ),
        id="a pod of no gang is unaffected",
    ),
    # Workload train, pod group workers, minCount 2: room n1 2 >= 2
    pytest.param(
        Case(
            nodes=[make_node("n1", cpu="2")],
            objects=[workload("train", "workers", 2), member("m1", workload_ref="train/workers")],
            pod=member("m0", workload_ref="train/workers"),
            gang=GangVerdict("default/train/workers", 2, 2, 0, True, None),
            selected="n1",
            message=None,
            nodes_verdicts={"n1": True},
        ),
        id="a Workload's gang: admitted",
    ),
    # minCount 3: room n1 2 < 3
    pytest.param(
        Case(
            nodes=[make_node("n1", cpu="2")],
            objects=[
                workload("train", "workers", 3),
                member("m1", workload_ref="train/workers"),
                member("m2", workload_ref="train/workers"),
            ],
            pod=member("m0", workload_ref="train/workers"),
            gang=GangVerdict(
                "default/train/workers",
                3,
                3,
                0,
                False,
                "pod group default/train/workers has 0 of 3 members placed: the 3 missing "
                "cannot be placed together (room for 2)",
            ),
            selected=None,
            message="0/1 nodes are available: pod group default/train/workers has 0 of 3 "
            "members placed: the 3 missing cannot be placed together (room for 2). PodGroup "
            "default/train/workers gets rejected due to Pod m0 is unschedulable even after "
            "PostFilter",
            nodes_verdicts={"n1": True},
        ),
        id="a Workload's gang too big for the room: refused",
    ),
    # the scheduler reads no gang without Coscheduling: a member is a lone pod there
    pytest.param(
        Case(
            nodes=[make_node("n1", cpu="2"), make_node("n2", cpu="500m")],
            objects=[pod_group("big", 3), member("m1"), member("m2")],
            pod=member("m0"),
            gang=None,
            selected="n1",
            message=None,
            nodes_verdicts={"n1": True, "n2": ("Insufficient cpu",)},
            profile=PLAIN_PROFILE,
        ),
        id="a profile without Coscheduling knows no gang",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_gang_verdict(case: Case) -> None:
    snapshot = build_snapshot([*case.nodes, *case.objects])
    evaluation = evaluate(snapshot, pod_info(case.pod), case.profile)
    assert evaluation.gang == case.gang
    assert evaluation.selected == case.selected
    assert evaluation.message == case.message
    assert verdicts(evaluation) == case.nodes_verdicts
    if case.selected is None:
        assert evaluation.top == ()


def test_the_json_carries_the_gang_only_when_there_is_one() -> None:
    snapshot = build_snapshot(
        [make_node("n1", cpu="2"), pod_group("big", 3), member("m1"), member("m2")]
    )
    answer = evaluate(snapshot, pod_info(member("m0")), GANG_PROFILE).to_json()
    # room n1 2 < 3 missing
    assert answer["gang"] == {
        "key": "default/big",
        "minMember": 3,
        "members": 3,
        "placed": 0,
        "admitted": False,
        "reason": "pod group default/big has 0 of 3 members placed: the 3 missing cannot be "
        "placed together (room for 2)",
    }
    lone = evaluate(snapshot, pod_info(member("p", group="")), GANG_PROFILE).to_json()
    assert "gang" not in lone


def test_a_snapshot_explains_each_pod_as_it_was() -> None:
    # the pod explained joins its gang for that answer only: explaining x then y from one
    # snapshot counts m1, m2 and the pod explained each time (3 members), not x and y both
    snapshot = build_snapshot(
        [make_node("n1", cpu="8"), pod_group("big", 4), member("m1"), member("m2")]
    )
    first = evaluate(snapshot, pod_info(member("x")), GANG_PROFILE)
    second = evaluate(snapshot, pod_info(member("y")), GANG_PROFILE)
    assert first.gang is not None
    assert second.gang is not None
    assert (first.gang.members, second.gang.members) == (3, 3)
    assert set(snapshot.gangs.members["default/big"]) == {"default/m1", "default/m2"}


def test_snapshot_indexes_gangs_and_every_member() -> None:
    other = bound_pod("n1")
    snapshot = build_snapshot(
        [
            make_node("n1"),
            pod_group("big", 2),
            pod_group("bad", 0),
            workload("train", "workers", 2),
            # upstream's own PodGroup (KEP-4671, v1beta1): not what Coscheduling reads
            {**pod_group("native", 2), "apiVersion": "scheduling.k8s.io/v1beta1"},
            member("bound", node="n1"),
            member("pending"),
            {**member("done", node="n1"), "status": {"phase": "Succeeded"}},
            member("w", workload_ref="train/workers"),
            other,
        ]
    )
    gangs = snapshot.gangs
    assert sorted(gangs.gangs) == ["default/big", "default/train/workers"]
    assert gangs.why_invalid("default/bad") == (
        "PodGroup default/bad: spec.minMember: must be at least 1, got 0"
    )
    # bound and pending members (not the finished one); pods stays the bound pods
    assert sorted(gangs.members["default/big"]) == ["default/bound", "default/pending"]
    assert gangs.finished == {"default/big": {"default/done": "Succeeded"}}
    assert list(gangs.members["default/train/workers"]) == ["default/w"]
    assert [p.name for p in snapshot.pods] == ["bound", other["metadata"]["name"]]


@pytest.mark.parametrize(
    ("gang", "line"),
    [
        pytest.param(
            GangVerdict("default/big", 3, 3, 0, True, None),
            "pod group default/big: 0 of 3 members placed (3 pods name it): admitted",
            id="admitted",
        ),
        pytest.param(
            GangVerdict(
                "default/big",
                6,
                6,
                0,
                False,
                "pod group default/big has 0 of 6 members placed: the 6 missing cannot be "
                "placed together (room for 5)",
            ),
            "pod group default/big: 0 of 6 members placed (6 pods name it): refused: the 6 "
            "missing cannot be placed together (room for 5)",
            id="refused: the reason without the count it repeats",
        ),
        pytest.param(
            GangVerdict("default/big", 0, 1, 0, False, "pod group default/big not found"),
            "pod group default/big: 0 members placed (1 pods name it): refused: pod group "
            "default/big not found",
            id="no PodGroup: no count, the reason whole",
        ),
    ],
)
def test_gang_line(gang: GangVerdict, line: str) -> None:
    assert gang_line(gang) == line


def test_table_output_has_the_gang_line_above_the_tables() -> None:
    snapshot = build_snapshot(
        [make_node("n1", cpu="2"), pod_group("big", 3), member("m1"), member("m2")]
    )
    console = Console(width=400, record=True, color_system=None)
    render(evaluate(snapshot, pod_info(member("m0")), GANG_PROFILE), console)
    lines = console.export_text().splitlines()
    assert lines[0] == (
        "gang: pod group default/big: 0 of 3 members placed (3 pods name it): refused: the 3 "
        "missing cannot be placed together (room for 2)"
    )
    assert lines[1].startswith("default/m0 with profile gangs: 1 of 1 nodes feasible")
    assert lines[-1].startswith("unschedulable: 0/1 nodes are available: pod group default/big")


async def test_the_handle_never_binds() -> None:
    status = await ExplainHandle(None).bind(pod_info(member("m0")), "n1")
    assert status.code == Code.ERROR
    assert status.message == NEVER_BINDS


class Server:
    """A read-only server answering LISTs from ``answers`` (path -> items, or the
    ApiError to raise)."""

    host = "https://api.test"

    def __init__(self, answers: dict[str, list[Raw] | ApiError]) -> None:
        self.answers = answers

    async def get_json(self, path: str, params: Any = None) -> Any:
        raise AssertionError(f"no GET expected: {path}")

    async def list_all(
        self, path: str, *, page_size: int = 500, params: Any = None
    ) -> tuple[list[Any], str]:
        answer = self.answers[path]
        if isinstance(answer, ApiError):
            raise answer
        return [dict(item) for item in answer], "1"


PODGROUPS, WORKLOADS = (c for c in live.COLLECTIONS if c.optional)
NOT_FOUND = ApiError(404, "NotFound", "GET /apis/scheduling.x-k8s.io/v1alpha1/podgroups: 404")
FORBIDDEN = ApiError(
    403,
    "Forbidden",
    "GET /apis/scheduling.x-k8s.io/v1alpha1/podgroups: podgroups.scheduling.x-k8s.io is "
    'forbidden: User "bob" cannot list resource "podgroups"',
)


def test_the_gang_collections_are_where_the_scheduler_watches() -> None:
    assert (PODGROUPS.path, PODGROUPS.kind, PODGROUPS.api_version) == (
        "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
        "PodGroup",
        "scheduling.x-k8s.io/v1alpha1",
    )
    assert (WORKLOADS.path, WORKLOADS.kind, WORKLOADS.api_version) == (
        "/apis/scheduling.k8s.io/v1alpha1/workloads",
        "Workload",
        "scheduling.k8s.io/v1alpha1",
    )
    # every other collection is served everywhere: not optional
    assert [c.resource for c in live.COLLECTIONS if c.optional] == ["podgroups", "workloads"]


@pytest.mark.parametrize(
    ("answer", "items", "error"),
    [
        pytest.param([{"metadata": {"name": "big"}}], 1, None, id="served: listed"),
        pytest.param(NOT_FOUND, 0, None, id="not served (404): none, no error"),
        pytest.param(
            FORBIDDEN,
            0,
            "forbidden: cannot list podgroups (needed for gang scheduling (Coscheduling)): "
            'podgroups.scheduling.x-k8s.io is forbidden: User "bob" cannot list resource '
            '"podgroups"',
            id="forbidden: still an error",
        ),
    ],
)
async def test_an_optional_collection(
    answer: list[Raw] | ApiError, items: int, error: str | None
) -> None:
    server = Server({PODGROUPS.path: answer})
    if error is not None:
        with pytest.raises(LiveReadError) as caught:
            await live.list_collection(server, PODGROUPS, PODGROUPS.path, PODGROUPS.api_version)
        assert str(caught.value) == error
        return
    listed = await live.list_collection(server, PODGROUPS, PODGROUPS.path, PODGROUPS.api_version)
    assert len(listed) == items
    assert all(item["kind"] == "PodGroup" for item in listed)


async def test_a_non_optional_collection_not_served_is_an_error() -> None:
    nodes = live.COLLECTIONS[0]
    server = Server({nodes.path: ApiError(404, "NotFound", "GET /api/v1/nodes: gone")})
    with pytest.raises(LiveReadError):
        await live.list_collection(server, nodes, nodes.path, nodes.api_version)
