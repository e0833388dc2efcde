"""The pod signature is what the row-local plugins sign (upstream's SignPlugin idea).

Pods with equal fragments share one cached class entry; a row-local plugin that does
not sign, or a None fragment, makes a pod unbatchable: computed afresh, never cached,
and decided exactly as a batched pod would be.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable

import numpy as np
import pytest

from asched.cluster.decode import decode_node, decode_pod
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.engine.algorithm import Algorithm
from asched.framework.cycle_state import CycleState
from asched.framework.registry import in_tree
from asched.framework.runtime import Framework
from asched.framework.spec import declare
from asched.framework.status import Status
from asched.plugin import testing
from tests.configs import default_config


class PassesAll:
    """A row-local Filter that rejects nothing; signs only pods not labelled ``odd``."""

    name = "PassesAll"
    row_local = True

    def filter(self, state, pod, nodes, rows):
        return np.ones(len(nodes.alive[rows]), dtype=np.bool_)

    def explain(self, state, pod, nodes, row):
        return Status.success()


class SignsSome(PassesAll):
    name = "SignsSome"

    def sign(self, pod: PodInfo) -> Hashable | None:
        return None if "odd" in pod.labels else ()


def framework_with(extra: type | None) -> Framework:
    profile = default_config().profiles[0]
    registry = in_tree()
    if extra is not None:
        registry = registry.adding(declare(extra, api_version="1.0"))
        resolved = dataclasses.replace(
            profile.resolved, filter=(*profile.resolved.filter, extra.name)
        )
        profile = dataclasses.replace(profile, resolved=resolved)
    return Framework(profile, registry=registry)


def table() -> NodeTable:
    nodes = NodeTable()
    for index in range(40):  # a pod's 3 changed rows stay under the 25% recompute limit
        nodes.upsert_node(decode_node(testing.node(f"n{index}", cpu=str(2 + index % 3))))
    return nodes


def pods() -> list[PodInfo]:
    shapes = [("500m", {}), ("1", {}), ("500m", {"odd": "yes"})]
    return [
        decode_pod(
            testing.pod(f"p{i}", requests={"cpu": shapes[i % 3][0]}, labels=shapes[i % 3][1])
        )
        for i in range(24)
    ]


def run(extra: type | None) -> tuple[list[str | None], Algorithm]:
    nodes = table()
    algorithm = Algorithm(framework_with(extra), nodes, percentage=100, seed=7)
    placed = []
    for pod in pods():
        decision = algorithm.schedule(pod)
        placed.append(decision.node)
        if decision.node is not None:
            nodes.add_pod(pod, decision.node)
    return placed, algorithm


@pytest.mark.parametrize(
    ("extra", "misses"),
    [
        # 3 shapes (two cpu sizes; the odd label is read by no in-tree row-local plugin)
        # -> 2 distinct signatures; each built once per table epoch (no structural change)
        pytest.param(None, 2, id="every plugin signs: one entry per signature"),
        # PassesAll does not sign: all 24 pods are unbatchable
        pytest.param(PassesAll, 24, id="an unsigned row-local plugin"),
        # SignsSome: 8 odd pods unbatchable + 2 signatures for the rest
        pytest.param(SignsSome, 10, id="a None fragment"),
    ],
)
def test_batching_follows_the_signatures(extra, misses) -> None:
    placed, algorithm = run(extra)
    assert algorithm.cache.misses == misses
    baseline, _ = run(None)
    assert placed == baseline  # unbatchable pods are decided exactly as batched ones


def test_a_signature_covers_the_skips_of_the_cycle() -> None:
    framework = framework_with(None)
    pod = decode_pod(testing.pod("p", requests={"cpu": "1"}))
    plain, skipped = CycleState(), CycleState()
    skipped.skip_filter.add("NodeAffinity")
    assert framework.signature(plain, pod) != framework.signature(skipped, pod)
    assert framework.signature(plain, pod) == framework.signature(CycleState(), pod)
