"""TaintToleration (Filter, PreScore, Score): taints repel pods that do not tolerate them.

Upstream: pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go. Filter: a
node with an untolerated NoSchedule/NoExecute taint is rejected
(UnschedulableAndUnresolvable), the reason naming the first such taint in the node's
order. Score: the number of untolerated PreferNoSchedule taints, considering only the
pod's tolerations with effect PreferNoSchedule or empty; normalized in reverse (fewer is
better), weight 3.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Final

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    NodeInfo,
    PodInfo,
    tolerates,
)
from asched.cluster.table import NodeTable
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEvent
from asched.framework.interface import BoolMask, Handle, RowFilter, RowScore, ScoreArray
from asched.framework.normalize import default_normalize
from asched.framework.spec import API_VERSION, declare
from asched.framework.status import Status

NAME: Final = "TaintToleration"
HARD_EFFECTS: Final = frozenset({NO_SCHEDULE, NO_EXECUTE})
SOFT_EFFECTS: Final = frozenset({PREFER_NO_SCHEDULE})
_PREFER_KEY: Final = f"{NAME}/prefer"


class TaintToleration:
    name: Final = NAME
    #: the cluster events that may undo its rejection (upstream's EventsToRegister)
    events: Final = frozenset({ClusterEvent.NODE_ADD, ClusterEvent.NODE_TAINT})
    row_local: Final = True
    normalizes: Final = True

    def sign(self, pod: PodInfo) -> Hashable:
        return pod.tolerations

    def queueing_hint(self, event: ClusterEvent, pod: PodInfo, changed: object) -> bool:
        """A new or retainted node helps only if the pod tolerates its hard taints."""
        if not isinstance(changed, NodeInfo):
            return True
        return all(
            tolerates(pod.tolerations, taint)
            for taint in changed.taints
            if taint.effect in HARD_EFFECTS
        )

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        masks = table.taints.untolerated(pod.tolerations, HARD_EFFECTS)
        if not any(masks):
            return np.ones(size_of(rows), dtype=np.bool_)
        clean: BoolMask = ~table.taints.any_of(masks, rows)
        return clean

    def row_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> RowFilter:
        """:meth:`filter` for one row."""
        masks = table.taints.untolerated(pod.tolerations, HARD_EFFECTS)
        if not any(masks):
            return lambda row: True
        words = table.taints.words
        return lambda row: _row_count(words, masks, row) == 0

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        for taint in table.taints.row_taints.get(row, ()):
            if taint.effect in HARD_EFFECTS and not tolerates(pod.tolerations, taint):
                reason = f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
                return Status.unresolvable(reason, plugin=NAME)
        return Status.success()

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether PreFilter or PreScore follow the plain pods on the nodes
        (:mod:`asched.framework.pre_state`): the pod's tolerations and the nodes' taints."""
        return False

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Status:
        prefer = tuple(t for t in pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE))
        state.write(_PREFER_KEY, table.taints.untolerated(prefer, SOFT_EFFECTS))
        return Status.success()

    def score(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> ScoreArray:
        if state.get(_PREFER_KEY) is None:  # PreScore not enabled
            self.pre_score(state, pod, table)
        return table.taints.count_of(state.read(_PREFER_KEY), rows)

    def row_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> RowScore:
        """:meth:`score` for one row."""
        if state.get(_PREFER_KEY) is None:  # PreScore not enabled
            self.pre_score(state, pod, table)
        masks = state.read(_PREFER_KEY)
        if not any(masks):
            return lambda row: 0
        words = table.taints.words
        return lambda row: _row_count(words, masks, row)

    def normalize(self, state: CycleState, scores: ScoreArray, taking_part: BoolMask) -> ScoreArray:
        return default_normalize(scores, taking_part, reverse=True)


def _row_count(words: list[npt.NDArray[np.uint64]], masks: tuple[int, ...], row: int) -> int:
    """How many taints in ``masks`` row ``row`` carries (``TaintColumns.count_of`` for
    one row; > 0 is ``any_of``)."""
    return sum(
        (int(word[row]) & mask).bit_count() for word, mask in zip(words, masks, strict=True) if mask
    )


def factory(args: object | None, handle: Handle | None) -> TaintToleration:
    return TaintToleration()


SPEC: Final = declare(TaintToleration, api_version=API_VERSION, factory=factory)
