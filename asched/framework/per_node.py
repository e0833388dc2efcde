"""The per-node plugin form, for prototypes: one Python call per node, run only where needed.

A plugin may answer one node at a time instead of all rows at once:

* ``filter_node(state, pod, node) -> Status``: success, or the rejection with its reason;
* ``score_node(state, pod, node) -> int``: the node's final score, 0..100 (a
  ``normalize`` method, when the plugin has one, is applied to the scores afterwards).

``node`` is a :class:`Node`, a read-only view of one table row built for the call.
:class:`PerNode` adapts such a plugin to the vectorised protocols. It is slower than a
vectorised plugin by the cost of a Python call and a view per node, so it runs on the
fewest rows that decide the outcome:

* Filter: only the rows that passed every other filter (the candidates); the others
  are already rejected, so its answer there cannot change anything;
* Score: only the rows taking part in scoring (the feasible, sampled ones).

Its answers depend on the other plugins' answers, so it is never cached across pods
(``row_local`` is False whatever the plugin says).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows
from asched.cluster.records import NodeInfo, PodInfo, Taint
from asched.cluster.table import NodeTable
from asched.framework.cycle_state import SCORED_ROWS, CycleState
from asched.framework.status import Status

BoolMask = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Node:
    """One node as a per-node plugin sees it. Quantities in canonical units (cpu in
    millicores, memory and storage in bytes); ``requested`` sums the pods counted on it
    (assumed ones included), and its ``pods`` entry is their number. ``annotations`` are
    the node's when the plugin declares ``reads_annotations=True``, else empty."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    allocatable: Mapping[str, int]
    requested: Mapping[str, int]
    annotations: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def at(cls, table: NodeTable, row: int) -> Node:
        """The view of ``row`` (which must hold a node)."""
        info: NodeInfo = table.node_at(row)
        requested = {axis: int(table.requested[i][row]) for i, axis in enumerate(table.axes)}
        allocatable = {axis: int(table.allocatable[i][row]) for i, axis in enumerate(table.axes)}
        return cls(
            info.name,
            info.labels,
            info.taints,
            bool(table.unschedulable[row]),
            allocatable,
            requested,
            info.annotations,
        )


class NodeFilter(Protocol):
    """The per-node Filter form."""

    @property
    def name(self) -> str: ...

    def filter_node(self, state: CycleState, pod: PodInfo, node: Node) -> Status:
        """Success when ``node`` can host ``pod``, else the rejection and its reason."""


class NodeScore(Protocol):
    """The per-node Score form."""

    @property
    def name(self) -> str: ...

    def score_node(self, state: CycleState, pod: PodInfo, node: Node) -> int:
        """The node's score for ``pod``, in 0..100."""


def _indices(rows: Rows) -> npt.NDArray[np.intp]:
    if isinstance(rows, slice):
        return np.arange(rows.start, rows.stop, dtype=np.intp)
    return rows


class PerNode:
    """A per-node plugin seen through the vectorised protocols (see the module docstring).

    Every other attribute (``pre_filter``, ``events``, ``reserve``, ...) is the plugin's own.
    """

    row_local: Final = False
    #: the runtime passes the candidate rows to :meth:`filter_candidates`
    candidates_only: Final = True

    def __init__(self, plugin: Any) -> None:
        self.plugin = plugin
        self.name: str = plugin.name
        self.normalizes: bool = callable(getattr(plugin, "normalize", None))

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.plugin, attribute)

    def filter(self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows) -> BoolMask:
        return self.filter_candidates(state, pod, table, rows, None)

    def filter_candidates(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        rows: Rows,
        candidates: BoolMask | None,
    ) -> BoolMask:
        """The mask over ``rows``; only rows that are live and (when given) ``candidates``
        are asked, the others pass (they are decided elsewhere)."""
        selected = _indices(rows)
        asked = table.alive[selected]
        if candidates is not None:
            asked = asked & candidates
        out = np.ones(len(selected), dtype=np.bool_)
        filter_node = self.plugin.filter_node
        for index in np.flatnonzero(asked).tolist():
            status = filter_node(state, pod, Node.at(table, int(selected[index])))
            out[index] = status.ok
        return out

    def explain(self, state: CycleState, pod: PodInfo, table: NodeTable, row: int) -> Status:
        status: Status = self.plugin.filter_node(state, pod, Node.at(table, row))
        return status

    def score(
        self, state: CycleState, pod: PodInfo, table: NodeTable, rows: Rows
    ) -> npt.NDArray[np.int64]:
        """Scores of the rows taking part (``SCORED_ROWS``; every live row when unset), 0
        elsewhere (those rows are not compared)."""
        selected = _indices(rows)
        taking: BoolMask | None = state.get(SCORED_ROWS)
        asked = table.alive[selected] if taking is None else taking[selected]
        out = np.zeros(len(selected), dtype=np.int64)
        score_node = self.plugin.score_node
        for index in np.flatnonzero(asked).tolist():
            out[index] = score_node(state, pod, Node.at(table, int(selected[index])))
        return out

    def normalize(
        self, state: CycleState, scores: npt.NDArray[np.int64], taking_part: BoolMask
    ) -> npt.NDArray[np.int64]:
        normalized: npt.NDArray[np.int64] = self.plugin.normalize(state, scores, taking_part)
        return normalized
