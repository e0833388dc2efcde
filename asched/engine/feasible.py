"""The rows one decision may choose among, beyond the pod class's cached row-local
answers: the cross-row Filters of the cycle, PreFilter's node names, the nominated pods
and upstream's nominated-node shortcut.

It is separate from :mod:`asched.engine.algorithm` (PreFilter, sampling, the scores and
the choice) because this is the Filter stage of a decision that cannot be cached per
pod class: it is asked again for every pod, from what the cycle's PreFilter computed.
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.engine.equivalence import ClassEntry
from asched.engine.nominated import with_nominated
from asched.framework.cycle_state import CycleState
from asched.framework.interface import PreFilterOutcome
from asched.framework.runtime import Framework
from asched.framework.status import Status


def feasible_rows(
    framework: Framework,
    table: NodeTable,
    state: CycleState,
    pod: PodInfo,
    outcome: PreFilterOutcome,
    entry: ClassEntry,
    within: npt.NDArray[np.bool_] | None,
    rejected: dict[int, Status],
    *,
    nominated: bool,
) -> tuple[npt.NDArray[np.bool_], bool, bool]:
    """The rows :meth:`~asched.engine.algorithm.Algorithm.candidates` samples from
    (bool, ``(table.size,)``, never the entry's own array): the entry's feasible rows
    (AND ``within``) AND the cross-row Filters AND PreFilter's node names, less the rows
    the nominated pods fill (why in ``rejected``), or the pod's nominated node alone
    (upstream's shortcut, with ``nominated``). Also whether they are the entry's rows as
    they are (``plain``) and whether they are the nominated node alone."""
    if within is None:
        feasible = with_cycle_filters(framework, table, state, pod, entry.feasible)
        plain = feasible is entry.feasible
    else:
        feasible = with_cycle_filters(
            framework, table, state, pod, entry.feasible & within, only_feasible=True
        )
        plain = False
    allowed = framework.allowed_mask(table, outcome)
    if allowed is not None:
        feasible = feasible & allowed
        plain = False
    nominated_only = False
    if len(table.nominations):
        feasible = with_nominated(framework, table, state, pod, feasible, rejected)
        row = table.row_of(table.nominations.node_of(pod.key) or pod.nominated_node_name)
        if nominated and row is not None and feasible[row]:
            # upstream tries the nominated node first and takes it when it fits
            only = np.zeros_like(feasible)
            only[row] = True
            feasible = only
            nominated_only = True
        plain = plain and feasible is entry.feasible
    if feasible is entry.feasible:  # the cache's own array, refreshed in place later:
        feasible = feasible.copy()  # the decision (kept across awaits) gets its own
    return feasible, plain, nominated_only


def with_cycle_filters(
    framework: Framework,
    table: NodeTable,
    state: CycleState,
    pod: PodInfo,
    feasible: npt.NDArray[np.bool_],
    *,
    only_feasible: bool = False,
) -> npt.NDArray[np.bool_]:
    """``feasible`` (the cached row-local answer) AND the cross-row filters of this
    cycle, asked about every row, or (``only_feasible``) about the rows of ``feasible``
    alone: every plugin answers per row from what its PreFilter computed over the
    whole table."""
    plugins = framework.cycle_filters(state)
    if not plugins:
        return feasible
    rows: Rows = table.rows
    if only_feasible:
        rows = np.flatnonzero(feasible)
        if not rows.size:
            return feasible
    started = time.perf_counter()
    passing = framework.filter_mask(state, pod, table, rows, plugins, start=feasible[rows])
    framework.timed("Filter", Status.success(), started)
    if not only_feasible:
        return passing
    out = np.zeros_like(feasible)
    out[rows] = passing
    return out
