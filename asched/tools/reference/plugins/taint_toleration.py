"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule scores.

Upstream: pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go.

Filter: the first node taint (in node order) with effect NoSchedule or NoExecute that
no pod toleration tolerates rejects the node. Score: the number of PreferNoSchedule
taints not tolerated by the pod's tolerations whose effect is PreferNoSchedule or
empty; normalized in reverse (fewer untolerated taints, higher score).
"""

from __future__ import annotations

from typing import Final

from asched.cluster.records import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, tolerates
from asched.framework.status import Status
from asched.tools.reference.cycle import Cycle, NodeState
from asched.tools.reference.plugins.base import Plugin

FILTERED_EFFECTS: Final = (NO_SCHEDULE, NO_EXECUTE)


class TaintToleration(Plugin):
    """Filter, Score (reverse DefaultNormalizeScore)."""

    name = "TaintToleration"
    normalization = "reverse"

    def filter(self, cycle: Cycle, node: NodeState) -> Status:
        for taint in node.info.taints:
            if taint.effect in FILTERED_EFFECTS and not tolerates(cycle.pod.tolerations, taint):
                return Status.unresolvable(
                    f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
                )
        return Status.success()

    def score(self, cycle: Cycle, node: NodeState) -> int:
        preferring = tuple(t for t in cycle.pod.tolerations if t.effect in ("", PREFER_NO_SCHEDULE))
        return sum(
            1
            for taint in node.info.taints
            if taint.effect == PREFER_NO_SCHEDULE and not tolerates(preferring, taint)
        )
