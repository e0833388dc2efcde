"""Preemption's what-ifs: the two :class:`~asched.framework.preemption.Trial` forms the
exact search runs with.

A fit check asks the profile's whole filter chain about one row of the table as it is
after some of the row's pods were taken off, some put back, and the nominated pods of at
least the preemptor's priority added for a first pass (upstream:
pkg/scheduler/framework/runtime/framework.go, RunFilterPluginsWithNominatedPods). Filters
read the table, so every change is made in a what-if of it
(:meth:`~asched.cluster.table.NodeTable.what_if`, one per row visited, closed by
``restore``: the table is as it was and its generations and change log never moved);
what differs is the PreFilter state:

* :class:`FreshTrial` runs PreFilter afresh, over the whole table, for every check (and
  for each of a check's two passes). Always right; it costs a PreFilter per check.
* :class:`IncrementalTrial` runs PreFilter once per preemptor, on the table before the
  search (the ``base`` state), copies that state when a row is visited
  (:func:`~asched.framework.cycle_state.copy_state`), and keeps the copy equal to what
  PreFilter would compute by calling the plugins' hooks for every pod removed or added
  (:class:`~asched.framework.interface.PreFilterExtensions`, upstream's AddPod and
  RemovePod). It applies only when every PreFilter either has hooks or never reads the
  pods on the nodes, and the base PreFilter succeeded (then the status and the node
  names PreFilter gives are the same on every what-if; see the hooks' contract). A hook
  that fails (an answer other than Success or Skip, or an exception: logged once), or a
  change of the table's structure (a new resource axis: ``epoch``), sends the rest of the
  search back to running PreFilter afresh, as :class:`FreshTrial` does.

:func:`trial_for` picks the form.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.cluster.what_if import WhatIf
from asched.framework.cycle_state import CycleState, copy_state
from asched.framework.interface import FilterRunner, PreFilterExtensionRunner, PreFilterOutcome
from asched.framework.status import Status

Hook = Callable[[CycleState, PodInfo, NodeTable, PodInfo, int], Status]


def nominated_on(pod: PodInfo, table: NodeTable, row: int) -> list[PodInfo]:
    """Pods nominated to ``row``'s node, of at least ``pod``'s priority, not counted yet."""
    return [
        p
        for p in table.nominations.on_node(table.name_of(row))
        if p.key != pod.key and p.priority >= pod.priority and p.key not in table.pods
    ]


def two_passes(
    pod: PodInfo,
    table: NodeTable,
    row: int,
    add: Callable[[PodInfo, int], None],
    remove: Callable[[PodInfo, int], None],
    one_pass: Callable[[int], Status],
) -> Status:
    """Does ``pod`` pass every Filter on ``row`` (``one_pass(row)``, on the table as it
    is then)?

    Nominated pods of at least its priority on that node are counted (``add``) for a
    first pass, and taken off again (``remove``); when they were and it passed, a second
    pass runs without them (upstream: RunFilterPluginsWithNominatedPods).
    """
    extra = nominated_on(pod, table, row)
    if not extra:
        return one_pass(row)
    added: list[PodInfo] = []
    try:
        for other in extra:
            add(other, row)
            added.append(other)
        first = one_pass(row)
    finally:
        for other in added:
            remove(other, row)
    return first if not first.ok else one_pass(row)


def _filters(
    framework: FilterRunner,
    state: CycleState,
    pod: PodInfo,
    table: NodeTable,
    row: int,
    outcome: PreFilterOutcome,
    allowed: np.ndarray | None,
) -> Status:
    """The Filter half of a pass: the node-name restriction, then every active filter."""
    if allowed is not None and not allowed[row]:
        return Status.unresolvable(outcome.absent_reason, plugin=outcome.restricted_by[-1])
    return framework.first_failure(state, pod, table, row)


class FreshTrial:
    """PreFilter afresh for every fit check (see the module docstring)."""

    def __init__(self, framework: FilterRunner, pod: PodInfo, table: NodeTable) -> None:
        self._framework = framework
        self._pod = pod
        self._table = table
        self._what_if: WhatIf | None = None

    def start(self, row: int) -> None:
        pass

    def remove(self, victim: PodInfo, row: int) -> None:
        self._scratch().remove_pod(victim.key)

    def add(self, victim: PodInfo, row: int) -> None:
        self._scratch().add_pod(victim, self._table.name_of(row))

    def _scratch(self) -> WhatIf:
        """The row's what-if, opened at its first change and closed by :meth:`restore`."""
        if self._what_if is None or not self._what_if.open:
            self._what_if = self._table.what_if().__enter__()
        return self._what_if

    def fits(self, row: int) -> Status:
        return two_passes(self._pod, self._table, row, self.add, self.remove, self._pass)

    def _pass(self, row: int) -> Status:
        """One pass of the filter chain on ``row``, PreFilter run afresh over the table."""
        state = CycleState()
        outcome = self._framework.run_pre_filter(state, self._pod, self._table)
        if not outcome.status.ok:
            return outcome.status
        allowed = self._framework.allowed_mask(self._table, outcome)
        return _filters(self._framework, state, self._pod, self._table, row, outcome, allowed)

    def restore(self, row: int) -> None:
        """Close the row's what-if: every pod taken off or added is back as it was."""
        if self._what_if is not None:
            self._what_if.close()
            self._what_if = None


class IncrementalTrial(FreshTrial):
    """PreFilter once, its state kept up to date by the hooks (see the module docstring).

    ``base`` and ``outcome``: PreFilter's state and (successful) outcome for ``pod`` on
    the table as it is when the search starts; ``base`` is only read. The table's changes
    are :class:`FreshTrial`'s; each is followed by the hooks while the trial is live.
    """

    def __init__(
        self,
        framework: FilterRunner,
        hooks: PreFilterExtensionRunner,
        pod: PodInfo,
        table: NodeTable,
        base: CycleState,
        outcome: PreFilterOutcome,
    ) -> None:
        super().__init__(framework, pod, table)
        self._hooks = hooks
        self._base = base
        self._outcome = outcome
        self._allowed = framework.allowed_mask(table, outcome)
        self._epoch = table.epoch
        #: the visited row's state; None: PreFilter afresh (between rows, or the trial
        #: is no longer live)
        self._state: CycleState | None = None
        #: False once a hook failed or the table's structure changed: fresh from then on
        self._live = True

    def start(self, row: int) -> None:
        self._live = self._live and self._table.epoch == self._epoch
        self._state = copy_state(self._base) if self._live else None

    def remove(self, victim: PodInfo, row: int) -> None:
        super().remove(victim, row)
        self._follow(self._hooks.run_pre_filter_remove_pod, victim, row)

    def add(self, victim: PodInfo, row: int) -> None:
        super().add(victim, row)
        self._follow(self._hooks.run_pre_filter_add_pod, victim, row)

    def _follow(self, hook: Hook, changed: PodInfo, row: int) -> None:
        state = self._state
        if state is None:
            return
        if (
            self._table.epoch != self._epoch
            or not hook(state, self._pod, self._table, changed, row).ok
        ):
            self._state = None
            self._live = False

    def _pass(self, row: int) -> Status:
        state = self._state
        if state is None:
            return super()._pass(row)
        return _filters(
            self._framework, state, self._pod, self._table, row, self._outcome, self._allowed
        )

    def restore(self, row: int) -> None:
        super().restore(row)
        self._state = None  # the row is over: the next one starts from ``base`` again


def trial_for(
    framework: FilterRunner,
    pod: PodInfo,
    table: NodeTable,
    base: CycleState,
    outcome: PreFilterOutcome,
    *,
    incremental: bool = True,
) -> FreshTrial | IncrementalTrial:
    """The incremental form when it applies (and ``incremental``), else the fresh one.

    ``base``/``outcome``: PreFilter's state and outcome for ``pod`` on ``table`` now.
    """
    if (
        incremental
        and outcome.status.ok
        and isinstance(framework, PreFilterExtensionRunner)
        and framework.pre_filter_extensible()
    ):
        return IncrementalTrial(framework, framework, pod, table, base, outcome)
    return FreshTrial(framework, pod, table)
