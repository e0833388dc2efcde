"""The Filter runners of :class:`~asched.framework.runtime.Framework` (a mixin).

They enforce the array contract (docs/plugins.md, "The extension points") on every call:
a Filter must return ``bool`` of the selected rows' shape; a violation raises
:class:`~asched.errors.PluginContractError` (the check is O(n) and always on).

Two kinds of run: the masks over many rows (:meth:`FilterRuns.filter_mask`, on every
decision), and the explanations of a rejection (:meth:`FilterRuns.first_failure`, the
one rule for "which filter rejects this row, and why", and the cold-path
:meth:`FilterRuns.first_failures` over every row). Separate from PreFilter and Score:
these answer per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from asched.cluster.columns import Rows, size_of
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.errors import PluginContractError
from asched.framework.contain import PluginFailure, explained, explained_rows
from asched.framework.cycle_state import CycleState
from asched.framework.interface import (
    BoolMask,
    ExplainsRows,
    FilterPlugin,
    FiltersCandidates,
    PreFilterOutcome,
    ResourceFit,
)
from asched.framework.plugin_lists import SKIP_SETS
from asched.framework.selectors import name_in
from asched.framework.status import Status

#: (active, row-local, cross-row) Filter plugins for one skip set
FilterSplit = tuple[list[FilterPlugin], list[FilterPlugin], list[FilterPlugin]]


class FilterRuns:
    """Filter and the explanations of its rejections, over the attributes declared here
    (the Framework builds them, :mod:`asched.framework.plugin_lists`)."""

    filter: list[FilterPlugin]
    #: the first Filter plugin declaring the resource-fit capability, if any
    resource_fit: ResourceFit | None
    #: Filter plugins that answer only on the rows still in play (the per-node form)
    _candidate_filters: dict[str, FiltersCandidates]
    #: the plugin lists per skip set (:meth:`_filters_for`)
    _filter_lists: dict[frozenset[str], FilterSplit]

    def allowed_mask(self, table: NodeTable, outcome: PreFilterOutcome) -> BoolMask | None:
        """Rows a PreFilter node-name result leaves in play, or None for all."""
        if outcome.allowed is None:
            return None
        return name_in(table, tuple(outcome.allowed), table.rows)

    def _filters_for(self, state: CycleState) -> FilterSplit:
        """(active, row-local, cross-row) Filter plugins for the cycle's PreFilter skips:
        a few skip sets recur, so each is split once (the public methods hand out copies)."""
        key = frozenset(state.skip_filter)
        found = self._filter_lists.get(key)
        if found is None:
            active = [p for p in self.filter if p.name not in key]
            found = (
                active,
                [p for p in active if p.row_local],
                [p for p in active if not p.row_local],
            )
            if len(self._filter_lists) < SKIP_SETS:
                self._filter_lists[key] = found
        return found

    def active_filters(self, state: CycleState) -> list[FilterPlugin]:
        return list(self._filters_for(state)[0])

    def active_resource_fit(self, state: CycleState) -> ResourceFit | None:
        """:attr:`resource_fit`, unless its PreFilter skipped its Filter for this pod."""
        fit = self.resource_fit
        return None if fit is None or fit.name in state.skip_filter else fit

    def local_filters(self, state: CycleState) -> list[FilterPlugin]:
        """Active filters whose answer for a row depends on that row only (cacheable)."""
        return list(self._filters_for(state)[1])

    def cycle_filters(self, state: CycleState) -> list[FilterPlugin]:
        """Active filters that look across rows (computed afresh every cycle)."""
        return list(self._filters_for(state)[2])

    def run_filter(
        self,
        plugin: FilterPlugin,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        rows: Rows,
        candidates: BoolMask | None = None,
    ) -> BoolMask:
        """``plugin``'s mask over ``rows``, checked. ``candidates`` (over ``rows``): the rows
        still in play; a plugin that only answers there (the per-node form) is asked only
        about them, any other plugin about every row."""
        try:
            narrow = self._candidate_filters.get(plugin.name)
            if candidates is not None and narrow is not None:
                mask = narrow.filter_candidates(state, pod, table, rows, candidates)
            else:
                mask = plugin.filter(state, pod, table, rows)
        except Exception as exc:
            raise PluginFailure("Filter", plugin.name, exc) from exc
        if mask.dtype != np.bool_ or mask.shape != (size_of(rows),):
            raise PluginContractError(
                plugin.name,
                f"returned a {mask.dtype} mask of shape {mask.shape}, "
                f"expected bool of shape ({size_of(rows)},)",
            )
        return mask

    def filter_mask(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        rows: Rows,
        plugins: list[FilterPlugin],
        start: BoolMask | None = None,
    ) -> BoolMask:
        """Live rows among ``rows`` (and in ``start``, when given) that pass every plugin
        in ``plugins``."""
        passing: BoolMask = table.alive[rows] if start is None else table.alive[rows] & start
        if start is None:
            passing = passing.copy()
        for plugin in plugins:
            passing &= self.run_filter(plugin, state, pod, table, rows, passing)
        return passing

    def explain_rejection(
        self, plugin: FilterPlugin, state: CycleState, pod: PodInfo, table: NodeTable, row: int
    ) -> Status:
        """Why ``plugin`` rejects row ``row``: its ``explain``, checked and tagged with its
        name. A plugin that raises is a :class:`PluginFailure` naming it (the decision's
        guard reports it as that plugin's error, not the caller's)."""
        try:
            answer = plugin.explain(state, pod, table, row)
        except Exception as exc:
            raise PluginFailure("Filter", plugin.name, exc) from exc
        return explained(plugin.name, answer)

    def first_failure(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        row: int,
        plugins: Sequence[FilterPlugin] | None = None,
    ) -> Status:
        """The one rule for "which filter rejects row ``row``, and why": the first of
        ``plugins`` (default: the active filters, in order) that rejects it, explained
        (:meth:`explain_rejection`); success when none does."""
        selected = np.array([row], dtype=np.intp)
        for plugin in self.active_filters(state) if plugins is None else plugins:
            if not self.run_filter(plugin, state, pod, table, selected)[0]:
                return self.explain_rejection(plugin, state, pod, table, row)
        return Status.success()

    def first_failures(
        self,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        outcome: PreFilterOutcome,
        within: BoolMask | None = None,
    ) -> dict[int, Status]:
        """Cold path: for every live row that fails, the first failing plugin's status.

        ``within`` (bool, ``(table.size,)``): only these rows (what a sampled decision
        examined); the others are not explained."""
        live = table.alive[table.rows].copy()
        if within is not None:
            live &= within
        failures: dict[int, Status] = {}
        allowed = self.allowed_mask(table, outcome)
        if allowed is not None:
            absent = Status.unresolvable(outcome.absent_reason, plugin=outcome.restricted_by[-1])
            for row in np.flatnonzero(live & ~allowed):
                failures[int(row)] = absent
            live &= allowed
        for plugin in self.active_filters(state):
            rejected = live & ~self.run_filter(plugin, state, pod, table, table.rows, live)
            rows = np.flatnonzero(rejected)
            many = len(rows) > 1 and isinstance(plugin, ExplainsRows)
            try:
                if many:
                    statuses = cast(ExplainsRows, plugin).explain_rows(state, pod, table, rows)
                else:
                    statuses = [plugin.explain(state, pod, table, int(r)) for r in rows]
            except Exception as exc:
                raise PluginFailure("Filter", plugin.name, exc) from exc
            if many:  # (explain's answers are checked one by one below)
                statuses = explained_rows(plugin.name, statuses, len(rows))
            tagged: dict[int, Status] = {}
            for index, status in zip(rows.tolist(), statuses, strict=True):
                same = tagged.get(id(status))
                if same is None:
                    same = tagged[id(status)] = explained(plugin.name, status)
                failures[index] = same
            live &= ~rejected
        return failures
