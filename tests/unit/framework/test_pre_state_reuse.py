"""A kept PreFilter and PreScore state stands for a fresh run exactly when it still holds.

An extender conclusion reuses the decision's PreFilter and PreScore state while the
table's ``shared_generation`` and ``epoch`` hold (:mod:`asched.framework.pre_state`). A
random history of table changes runs between a decision that keeps its state and the
conclusion-style second decision (``within`` the rows the decision kept, no sampling):
plain pods counted and taken off, pods with anti-affinity or affinity terms, node label
changes, nodes added. After each, the second decision with the kept state and one run
afresh must agree on the rows left and on every score total; the kept state must be
used whenever it holds, and it must hold after plain pods alone.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.engine.algorithm import Algorithm, Decision
from asched.framework.cycle_state import CycleState
from asched.framework.interface import PRE_FILTER_SUCCESS, PreFilterResult
from asched.framework.registry import in_tree
from asched.framework.runtime import Framework
from asched.framework.spec import declare
from asched.tools.bench import templates
from tests.builders import default_profile, make_pod, profile_with
from tests.configs import default_config

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node(rng: np.random.Generator, name: str) -> dict[str, Any]:
    raw = templates.node(name, zone=f"z{rng.integers(3)}", cpu="8", memory="32Gi", pods="110")
    raw["metadata"]["labels"]["tier"] = str(rng.choice(["a", "b"]))
    if rng.random() < 0.2:
        raw["spec"]["taints"] = [{"key": "soft", "value": "x", "effect": "PreferNoSchedule"}]
    return raw


def term(app: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


def pod(rng: np.random.Generator, name: str, kind: str) -> PodInfo:
    """A pod of ``kind``: plain; with required anti-affinity to app=web (by zone); with
    preferred affinity to app=db; with a hard zone spread over app=web."""
    app = str(rng.choice(["web", "db", "batch"]))
    extra: dict[str, Any] = {}
    if kind == "anti":
        extra["pod_anti_affinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [term("web", ZONE)]
        }
    elif kind == "preferred":
        extra["pod_affinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": term("db", HOST)}
            ]
        }
    elif kind == "spread":
        extra["topology_spread"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ]
    raw = make_pod(name, cpu="100m", memory="64Mi", labels={"app": app}, **extra)
    return decode_pod(raw)


def second_decision(
    algorithm: Algorithm, decided: Decision, kept: bool
) -> tuple[Decision, np.ndarray | None]:
    """The conclusion's decision over the first one's candidates, with the kept state
    or afresh; and its score totals over what it left (None when nothing is left)."""
    assert decided.candidates is not None
    within = np.zeros(algorithm.table.size, dtype=np.bool_)  # nodes added since: not kept
    within[: decided.candidates.size] = decided.candidates
    decision = algorithm.candidates(
        decided.pod,
        nominated=False,
        sample=False,
        within=within,
        pre_state=decided.pre_state if kept else None,
    )
    if decision.candidates is None or decision.entry is None:
        return decision, None
    totals = algorithm.totals(decision.state, decision.pod, decision.entry, decision.candidates)
    return decision, totals


@pytest.mark.parametrize("seed", range(8))
def test_the_kept_state_answers_as_a_fresh_run(seed: int) -> None:
    rng = np.random.default_rng(seed)
    table = NodeTable(capacity=4)
    profile = default_config().profiles[0]
    algorithm = Algorithm(Framework(profile), table, percentage=100, seed=seed)
    for index in range(10):
        table.upsert_node(decode_node(node(rng, f"n{index}")))
    placed: list[str] = []
    serial = 0

    def place(kind: str) -> None:
        nonlocal serial
        serial += 1
        other = pod(rng, f"p{serial}", kind)
        if table.add_pod(other, f"n{rng.integers(table.n_nodes)}"):
            placed.append(other.key)

    for _ in range(6):
        place(str(rng.choice(["plain", "anti", "preferred"])))
    reused = held = plain_only_rounds = 0
    for round_ in range(40):
        me = pod(rng, f"me{round_}", str(rng.choice(["plain", "plain", "anti", "spread"])))
        first = algorithm.candidates(me, keep_pre_state=True)
        if first.candidates is None:
            continue
        plain_only = True
        for _ in range(int(rng.integers(0, 4))):
            action = rng.random()
            if action < 0.55:
                place("plain")
            elif action < 0.7 and placed:
                table.remove_pod(placed.pop(int(rng.integers(len(placed)))))
                plain_only = False  # may be a pod with terms
            elif action < 0.8:
                place(str(rng.choice(["anti", "preferred"])))
                plain_only = False
            elif action < 0.9:
                name = f"n{rng.integers(table.n_nodes)}"
                table.upsert_node(decode_node(node(rng, name)))  # labels may change
                plain_only = False
            else:
                table.upsert_node(decode_node(node(rng, f"n{table.n_nodes}")))
                plain_only = False
        holds = first.pre_state is not None and first.pre_state.holds(table)
        before = algorithm.pre_state_reuses
        with_kept, kept_totals = second_decision(algorithm, first, kept=True)
        assert algorithm.pre_state_reuses - before == int(holds)
        fresh, fresh_totals = second_decision(algorithm, first, kept=False)
        assert with_kept.status.code == fresh.status.code, (seed, round_)
        if fresh.candidates is None:
            assert with_kept.candidates is None
            continue
        assert with_kept.candidates is not None
        np.testing.assert_array_equal(with_kept.candidates, fresh.candidates)
        assert kept_totals is not None
        assert fresh_totals is not None
        mask = fresh.candidates
        np.testing.assert_array_equal(kept_totals[mask], fresh_totals[mask])
        reused += holds
        if plain_only and first.pre_state is not None:
            plain_only_rounds += 1
            held += holds
    assert reused > 0  # the kept state was used, not only declined
    assert held == plain_only_rounds  # plain pods alone never invalidate it


class Quiet:
    """An out-of-tree PreFilter plugin that lets every pod through and says nothing of
    what it reads (it has no ``pre_state_follows_pods``)."""

    name: Final = "Quiet"

    def pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterResult:
        return PRE_FILTER_SUCCESS


def test_a_plugin_without_a_word_keeps_nothing() -> None:
    """A profile whose PreFilter or PreScore plugin does not say what it reads (an
    out-of-tree one) never keeps its state: the conclusion runs them afresh. The same
    profile without it keeps it."""
    rng = np.random.default_rng(0)
    default = default_profile().resolved
    for pre_filter, kept in ((default.pre_filter, True), ((*default.pre_filter, "Quiet"), False)):
        profile = profile_with(
            filter=default.filter,
            score=default.score,
            pre_filter=pre_filter,
            pre_score=default.pre_score,
        )
        framework = Framework(profile, registry=in_tree().adding(declare(Quiet, api_version="1.0")))
        table = NodeTable(capacity=4)
        algorithm = Algorithm(framework, table, percentage=100, seed=0)
        table.upsert_node(decode_node(node(rng, "n0")))
        decided = algorithm.candidates(pod(rng, "me", "plain"), keep_pre_state=True)
        assert (decided.pre_state is not None) == kept


@pytest.mark.parametrize(
    ("kind", "kept"),
    [
        ("plain", True),  # every plugin reads the pod and shared state only
        ("anti", False),  # InterPodAffinity counts the pods its terms match
        ("spread", False),  # PodTopologySpread counts the pods its constraint selects
    ],
)
def test_which_pods_keep_their_state(kind: str, kept: bool) -> None:
    rng = np.random.default_rng(1)
    table = NodeTable(capacity=4)
    algorithm = Algorithm(Framework(default_config().profiles[0]), table, percentage=100)
    for index in range(3):
        table.upsert_node(decode_node(node(rng, f"n{index}")))
    decided = algorithm.candidates(pod(rng, "me", kind), keep_pre_state=True)
    assert (decided.pre_state is not None) == kept
