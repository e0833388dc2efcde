"""A decision's PreFilter and PreScore state, kept for the extender conclusion to reuse.

An extender consultation decides a pod twice: in the cycle (the in-tree half, up to the
names sent) and when the extenders have answered (:mod:`asched.extenders.consult`),
against the table as it is by then. Between the two, other pods were decided and
assumed, ~15 of them at 10 ms of extender latency. The second half used to run PreFilter
and PreScore afresh: about a tenth of a consulted pod's CPU, for answers that are
almost always the first half's.

Those answers depend on the pod, the plugins' args and the table. The table's
:attr:`~asched.cluster.table.NodeTable.shared_generation` counts every change but one:
a *plain* pod (no affinity terms, no volumes) counted on a node or taken off it. So when
it has not moved (nor the ``epoch``), a fresh PreFilter and PreScore would answer as the
first half did for every plugin whose answers for this pod do not depend on the plain
pods on the nodes. Each in-tree plugin with a PreFilter or PreScore says so for a pod
(:class:`PreStateScope`); a plugin that does not (any out-of-tree one) makes every
conclusion of its profile run them afresh, as before.

The kept state is a copy taken right after PreScore (:func:`copy_state`), before the
Filters could write to it, and it is used once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework.cycle_state import CycleState
from asched.framework.interface import PreFilterOutcome


@runtime_checkable
class PreStateScope(Protocol):
    """An in-tree plugin's word on what its PreFilter and PreScore read (internal: not
    part of :mod:`asched.plugin`)."""

    def pre_state_follows_pods(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether this plugin's PreFilter or PreScore answer for ``pod`` (``state``: as
        they left it, skip sets included) may change when a plain pod is counted on a
        node or taken off. False promises that it reads the pod, the plugin's args and
        only table state whose changes move ``NodeTable.shared_generation``."""
        ...


@dataclass(frozen=True, slots=True)
class PreState:
    """PreFilter's and PreScore's answers for a pod, as of ``epoch`` and ``generation``
    (the table's ``epoch`` and ``shared_generation`` when they ran)."""

    state: CycleState
    outcome: PreFilterOutcome
    epoch: int
    generation: int

    def holds(self, table: NodeTable) -> bool:
        """Whether a fresh PreFilter and PreScore would answer the same now."""
        return self.epoch == table.epoch and self.generation == table.shared_generation
