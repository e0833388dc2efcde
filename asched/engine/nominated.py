"""The nominated pods' pass of one decision: the feasible rows that still fit once the
pods nominated there (with at least the pod's priority) are counted.

It is separate from :mod:`asched.engine.algorithm` because it is a concern of its own,
run only when some pod is nominated: it either counts the nominated pods in a what-if of
the table for a check with the whole filter chain, or, when only the
resource fit can answer otherwise, checks the free columns less what they hold.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from asched.cluster.nominations import PODS_HELD
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework import pod_reads
from asched.framework.cycle_state import CycleState
from asched.framework.resource_fit import ResourceNeed
from asched.framework.runtime import Framework
from asched.framework.status import Status


def with_nominated(
    framework: Framework,
    table: NodeTable,
    state: CycleState,
    pod: PodInfo,
    feasible: npt.NDArray[np.bool_],
    rejected: dict[int, Status],
) -> npt.NDArray[np.bool_]:
    """``feasible``, minus the rows that fail once the pods nominated there with at
    least ``pod``'s priority are counted (the first pass of upstream's
    RunFilterPluginsWithNominatedPods, pkg/scheduler/framework/runtime/framework.go;
    the second pass, without them, is ``feasible`` itself).

    The nominated pods are counted in a what-if of the table for the check
    (:meth:`~asched.cluster.table.NodeTable.what_if`), which restores every row exactly
    and leaves no trace in the table's generations and change log. Cross-row plugins see the nominated pods of
    all checked rows at once (upstream adds only the checked node's): a documented
    simplification. When no cross-row filter reads the pods for this pod
    (:func:`~asched.framework.pod_reads.pods_matter`), only what the nominated pods
    hold can change an answer: :func:`_with_reserved`, without touching the table.
    """
    if not _pods_matter(framework, table, state, pod):
        return _with_reserved(framework, table, state, pod, feasible, rejected)
    blocking = table.nominations.blocking(pod)
    if not blocking:
        return feasible
    rows: list[int] = []
    with table.what_if() as scratch:
        for node, pods in blocking.items():
            row = table.row_of(node)
            if row is None or not feasible[row]:
                continue
            fresh = [p for p in pods if p.key not in table.pods]
            if not fresh:
                continue
            rows.append(row)
            for other in fresh:
                scratch.add_pod(other, node)
        if not rows:
            return feasible
        state = CycleState()
        outcome = framework.run_pre_filter(state, pod, table)
        selected = np.asarray(rows, dtype=np.intp)
        passing = np.zeros(len(rows), dtype=np.bool_)
        if outcome.status.ok:
            passing = framework.filter_mask(
                state, pod, table, selected, framework.active_filters(state)
            )
            for row in selected[~passing].tolist():
                rejected[row] = framework.first_failure(state, pod, table, row)
        else:
            rejected.update(dict.fromkeys(rows, outcome.status))
    out = feasible.copy()
    out[selected] &= passing
    return out


def _pods_matter(framework: Framework, table: NodeTable, state: CycleState, pod: PodInfo) -> bool:
    """Whether a filter other than the resource fit may answer otherwise with the
    nominated pods counted: NodePorts for a pod with host ports, or a cross-row filter
    that reads the pods for this pod."""
    cross = framework.cycle_filters(state)
    return bool(pod.host_ports) or (bool(cross) and pod_reads.pods_matter(cross, state, pod, table))


def _with_reserved(
    framework: Framework,
    table: NodeTable,
    state: CycleState,
    pod: PodInfo,
    feasible: npt.NDArray[np.bool_],
    rejected: dict[int, Status],
) -> npt.NDArray[np.bool_]:
    """The vectorised form of :func:`with_nominated` when only the resource-fit filter
    (:class:`~asched.framework.interface.ResourceFit`) depends on the pods of a row:
    what the nominated pods hold (kept summed per node) is taken from the free columns
    of their rows and the fit is checked again there."""
    fit = framework.active_resource_fit(state)
    if fit is None:
        return feasible
    held = table.nominations.held(pod)
    rows_held = [
        (row, amounts)
        for node, amounts in held.items()
        if (row := table.index.get(node)) is not None and feasible[row]
    ]
    if not rows_held:
        return feasible
    rows = np.fromiter((row for row, _ in rows_held), dtype=np.intp, count=len(rows_held))
    need = ResourceNeed.of(table, fit.resource_checks(pod, table))
    n = len(rows_held)

    free = {}
    for axis in need.axes:
        key = PODS_HELD if axis == need.pods_axis else table.axes[axis]
        taken = np.fromiter((a.get(key, 0) for _, a in rows_held), np.int64, n)
        free[axis] = table.free[axis][rows] - taken
    codes = need.pattern(free, n)
    failing = np.flatnonzero(codes)
    statuses = need.statuses(codes[failing], fit.name)
    for index, status in zip(failing.tolist(), statuses, strict=True):
        rejected[int(rows[index])] = status
    out = feasible.copy()
    out[rows] &= codes == 0
    return out
