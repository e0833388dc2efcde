"""One scheduling decision over the whole NodeTable, with no Python loop over nodes.

:meth:`Algorithm.schedule` runs PreFilter, then the Filters over every row (reusing the
pod class's cached rows where it can), samples ``percentageOfNodesToScore`` the way
upstream does, scores the candidates, and picks uniformly among the best totals. It is
synchronous: callers run it between pop and reserve with no ``await`` in between, so
the table it reads cannot change under it.

Failure diagnosis (which plugin rejected which node, and the ``0/N nodes are available``
message) is not computed here: :meth:`Decision.message` computes it on demand.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from asched.cluster.columns import Rows, size_of
from asched.cluster.names import NodeName
from asched.cluster.nominations import PODS_HELD
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.engine import row_recompute, selection
from asched.engine.class_run import Normalized, Run
from asched.engine.equivalence import ClassCache, ClassEntry
from asched.framework import diagnosis, pod_reads
from asched.framework.cycle_state import SCORED_ROWS, CycleState, copy_state
from asched.framework.interface import PreFilterOutcome
from asched.framework.pre_state import PreState
from asched.framework.resource_fit import ResourceNeed
from asched.framework.runtime import Framework, check_range, weighted
from asched.framework.status import Code, Status

#: Recompute a cached class fully when more than this fraction of rows changed.
_INCREMENTAL_LIMIT = 0.25


@dataclass(slots=True)
class Decision:
    """The outcome of one attempt.

    ``row``/``node`` are set on success. On failure ``status`` carries the code (a
    PreFilter rejection, a FitError as Unschedulable, or an Error) and ``message()``
    formats upstream's text.
    """

    pod: PodInfo
    status: Status
    row: int | None = None
    node: NodeName | None = None
    feasible: int = 0
    examined: int = 0
    state: CycleState = field(default_factory=CycleState)
    pre_filter: PreFilterOutcome | None = None
    _algorithm: Algorithm | None = None
    _failures: dict[int, Status] | None = None
    #: rows that fail only once the pods nominated there are counted, and why
    nominated_failures: dict[int, Status] = field(default_factory=dict)
    #: rows an extender rejected, and why (counted where no in-tree plugin rejected)
    extender_failures: dict[int, Status] = field(default_factory=dict)
    #: the rows to choose among (bool, ``(table.size,)``) while undecided, else None
    candidates: npt.NDArray[np.bool_] | None = None
    #: the pod class's cached row-local answers the decision read
    entry: ClassEntry | None = None
    #: the candidates are the pod's nominated node alone (upstream's shortcut)
    nominated_only: bool = False
    #: the candidates are the class entry's feasible rows as they are (no cross-row
    #: filter, PreFilter node names, nomination or sampling took any away): a
    #: :class:`~asched.engine.class_run.Run` of the class may choose among them
    plain: bool = False
    #: PreFilter's and PreScore's state, kept when asked for and reusable
    #: (:mod:`asched.framework.pre_state`), for an extender conclusion
    pre_state: PreState | None = None

    @property
    def scheduled(self) -> bool:
        return self.row is not None

    def failures(self) -> dict[int, Status]:
        """Cold path: per failing row, the first rejecting plugin's status."""
        if self._failures is None:
            algo = self._algorithm
            if algo is None or self.pre_filter is None or not self.pre_filter.status.ok:
                self._failures = {}
            else:
                self._failures = algo.framework.first_failures(
                    self.state, self.pod, algo.table, self.pre_filter
                )
                for row, status in self.nominated_failures.items():
                    self._failures.setdefault(row, status)
            for row, status in self.extender_failures.items():
                self._failures.setdefault(row, status)
        return self._failures

    def statuses(self) -> dict[int, Status]:
        """Cold path: every failing live row's Filter status (PreFilter's for all rows
        when PreFilter rejected the pod), what PostFilter reads."""
        outcome = self.pre_filter
        algo = self._algorithm
        if algo is not None and outcome is not None and not outcome.status.ok:
            rows = np.flatnonzero(algo.table.alive[algo.table.rows])
            return dict.fromkeys(rows.tolist(), outcome.status)
        return self.failures()

    def message(self, post_filter: str = "") -> str:
        """Upstream's FitError / PreFilter message for a failed attempt ("" on success).

        ``post_filter`` is PostFilter's message when it did not help (preemption's).
        """
        if self.scheduled:
            return ""
        if self.status.code == Code.ERROR:
            return self.status.message
        algo = self._algorithm
        n_all = algo.table.n_nodes if algo is not None else 0
        if n_all == 0:
            return diagnosis.NO_NODES
        if self.pre_filter is not None and not self.pre_filter.status.ok:
            return diagnosis.fit_error_message(
                n_all,
                pre_filter_message=self.pre_filter.status.message,
                post_filter_message=post_filter,
            )
        reasons = [r for status in self.failures().values() for r in status.reasons]
        return diagnosis.fit_error_message(n_all, reasons, post_filter_message=post_filter)


def _selection(changed: list[int]) -> Rows:
    """The changed rows as a slice when contiguous (views, no gathers), else an index array."""
    low, high = min(changed), max(changed)
    if high - low + 1 == len(changed) or len(set(changed)) == high - low + 1:
        return slice(low, high + 1)
    return np.unique(np.asarray(changed, dtype=np.intp))


class Algorithm:
    """Decisions for one profile over one table. Keeps the rotating start index and caches."""

    def __init__(
        self,
        framework: Framework,
        table: NodeTable,
        *,
        percentage: int = 0,
        seed: int | None = None,
        cache_entries: int = 8,
        extender_filters: bool = False,
        extender_scores: bool = False,
        runs: bool = True,
    ) -> None:
        self.framework = framework
        #: keep runs of a class between choices (False: a pass every time, the reference)
        self.runs = runs
        #: some extender filters / prioritizes: upstream then samples as if scoring
        self.extender_filters = extender_filters
        self.extender_scores = extender_scores
        self.table = table
        self.percentage = percentage
        self.rng = np.random.default_rng(seed)
        self.sampler = selection.Sampler()
        self.cache = ClassCache(cache_entries)
        #: the last plain choice's totals and best rows (:mod:`asched.engine.class_run`)
        self._run: Run | None = None
        #: the class entry of the last pass: a run starts at a class's second pass in a
        #: row (keeping one costs copies and a list of the best rows: a stream of pods
        #: that all differ would pay them for nothing)
        self._passed: ClassEntry | None = None
        #: choices made from a run without a pass over the table, and passes (counters)
        self.run_steps = 0
        self.run_passes = 0
        #: decisions that reused a kept PreFilter and PreScore state (:class:`PreState`)
        self.pre_state_reuses = 0

    def schedule(self, pod: PodInfo) -> Decision:
        """Find the node for ``pod``; see the module docstring."""
        decision = self.candidates(pod)
        if decision.status.ok and decision.candidates is not None:
            self.choose(decision, decision.candidates)
        return decision

    def candidates(
        self,
        pod: PodInfo,
        *,
        nominated: bool = True,
        sample: bool = True,
        within: npt.NDArray[np.bool_] | None = None,
        keep_pre_state: bool = False,
        pre_state: PreState | None = None,
    ) -> Decision:
        """The first half of :meth:`schedule`: PreFilter, PreScore, the Filters and the
        sampling, without choosing.

        On success ``decision.candidates`` holds the rows to choose among (bool, shape
        ``(table.size,)``) and ``decision.feasible`` their number; when none is left the
        status is Unschedulable. ``nominated=False`` skips upstream's nominated-node
        shortcut (the pod's nominated node alone when it fits); ``sample=False`` keeps
        every feasible row and leaves the rotating start index where it is.

        ``within`` (bool, ``(table.size,)``; with ``sample=False``): only these rows are
        candidates, and the cross-row Filters and the nominated pods' check run on them
        alone (what an extender conclusion needs: the nodes the extenders accepted).
        PreFilter and PreScore still see the whole table, so ``candidates`` is exactly
        the unrestricted answer AND ``within``. The failure details of such a decision
        (``nominated_failures``) cover those rows only: explain a failure with an
        unrestricted decision.

        ``keep_pre_state``: keep a copy of PreFilter's and PreScore's state in
        ``decision.pre_state`` when it may be reused (:mod:`asched.framework.pre_state`);
        ``pre_state``: such a copy, which stands for PreFilter and PreScore when it still
        holds (it is then this call's own: pass it once).
        """
        table = self.table
        if table.n_nodes == 0:
            status = Status.unresolvable(diagnosis.NO_NODES)
            return Decision(pod, status, state=CycleState(), _algorithm=self)
        kept: PreState | None = None
        if pre_state is not None and pre_state.holds(table):
            state, outcome = pre_state.state, pre_state.outcome  # used once, by this call
            self.pre_state_reuses += 1
        else:
            state = CycleState()
            started = time.perf_counter()
            outcome = self.framework.run_pre_filter(state, pod, table)
            self._observe("PreFilter", outcome.status, started)
            if not outcome.status.ok:
                return Decision(
                    pod, outcome.status, state=state, pre_filter=outcome, _algorithm=self
                )
            started = time.perf_counter()
            pre_score = self.framework.run_pre_score(state, pod, table)
            self._observe("PreScore", pre_score, started)
            if pre_score.code == Code.ERROR:
                return Decision(pod, pre_score, state=state, pre_filter=outcome, _algorithm=self)
            if keep_pre_state and self.framework.pre_state_reusable(state, pod):
                kept = PreState(copy_state(state), outcome, table.epoch, table.shared_generation)
        entry = self._class_entry(state, pod)
        if within is None:
            feasible = self._with_cycle_filters(state, pod, entry.feasible)
            plain = feasible is entry.feasible
        else:
            feasible = self._with_cycle_filters(
                state, pod, entry.feasible & within, only_feasible=True
            )
            plain = False
        allowed = self.framework.allowed_mask(table, outcome)
        if allowed is not None:
            feasible = feasible & allowed
            plain = False
        nominated_failures: dict[int, Status] = {}
        nominated_only = False
        if len(table.nominations):
            feasible = self._with_nominated(state, pod, feasible, nominated_failures)
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
        if sample:
            found = self.sampler.sample(table, feasible, self._wanted())
            mask, count, examined = found.mask, found.count, found.examined
            plain = plain and mask is feasible  # every feasible row kept
        else:
            mask, count, examined = feasible, int(np.count_nonzero(feasible)), table.n_nodes
        decision = Decision(
            pod,
            Status.success(),
            state=state,
            pre_filter=outcome,
            _algorithm=self,
            feasible=count,
            examined=examined,
            nominated_failures=nominated_failures,
            candidates=mask,
            entry=entry,
            nominated_only=nominated_only,
            plain=plain,
            pre_state=kept,
        )
        if count == 0:
            decision.status = Status.unschedulable(plugin="")
            decision.candidates = None
        return decision

    def choose(
        self,
        decision: Decision,
        mask: npt.NDArray[np.bool_],
        extra: npt.NDArray[np.int64] | None = None,
    ) -> None:
        """Choose among the rows of ``mask`` (at least one) for a :meth:`candidates`
        decision: the only one, else the best weighted total (normalized over ``mask``,
        plus ``extra`` per row when given: the extenders' scores), ties broken at random.
        Sets ``decision.row`` and ``decision.node``."""
        assert decision.entry is not None
        count = int(np.count_nonzero(mask))
        if count == 1:
            row = int(np.flatnonzero(mask)[0])
        elif (
            self.runs
            and extra is None
            and decision.plain
            and mask is decision.candidates
            and not self.framework.cycle_scores(decision.state)
        ):
            row = self._choose_in_run(decision, mask)
        else:
            totals = self.totals(decision.state, decision.pod, decision.entry, mask)
            if extra is not None:
                totals += extra
            row, _ = selection.select_host(totals, mask, self.rng)
        decision.row = row
        # (name_of returns a str while asched.explain keys its verdicts by str)
        decision.node = NodeName(self.table.name_of(row))

    def totals(
        self,
        state: CycleState,
        pod: PodInfo,
        entry: ClassEntry,
        taking_part: npt.NDArray[np.bool_],
    ) -> npt.NDArray[np.int64]:
        """Weighted score totals over all rows, normalizing over ``taking_part``."""
        fw = self.framework
        total, _ = self._local_totals(state, entry, taking_part)
        for plugin, weight in fw.cycle_scores(state):
            raw = fw.run_score(plugin, state, pod, self.table, self.table.rows)
            total += weighted(fw.normalized(plugin, state, raw, taking_part), weight)
        return total

    def _local_totals(
        self, state: CycleState, entry: ClassEntry, taking_part: npt.NDArray[np.bool_]
    ) -> tuple[npt.NDArray[np.int64], list[Normalized]]:
        """The row-local part of :meth:`totals` (``SCORED_ROWS`` written), with each
        normalizing plugin's part of it."""
        fw = self.framework
        state.write(SCORED_ROWS, taking_part)
        total = entry.fixed_total.copy()
        parts: list[Normalized] = []
        for plugin, weight in fw.local_scores(state):
            if plugin.normalizes:
                raw = entry.raw[plugin.name]
                scores = fw.normalized(plugin, state, raw, taking_part)
                total += weighted(scores, weight)
                parts.append(Normalized(plugin, weight, raw, scores))
        return total, parts

    def _choose_in_run(self, decision: Decision, mask: npt.NDArray[np.bool_]) -> int:
        """:meth:`choose` for a plain decision with no cross-row score: from the class's
        run when it can be brought up to date from the changed rows, else by the pass,
        which starts a new run when the class's last choice was a pass too
        (:mod:`asched.engine.class_run`)."""
        entry = decision.entry
        assert entry is not None
        table = self.table
        run = self._run
        if run is not None and run.entry is entry and run.epoch == table.epoch:
            changed = table.changed_rows_since(run.mark)
            if changed is not None and run.advance(mask, changed):
                decision.state.write(SCORED_ROWS, mask)
                run.mark = table.change_mark
                self.run_steps += 1
                return selection.pick(run.top, self.rng)
        self._run = None
        self.run_passes += 1
        totals, parts = self._local_totals(decision.state, entry, mask)
        row, top = selection.select_host(totals, mask, self.rng)
        repeated, self._passed = self._passed is entry, entry
        if repeated and int(totals[row]) >= 0:  # (select_host's masked fallback is not kept)
            for part in parts:  # the run keeps its own copies: the entry's are refreshed
                part.raw = part.raw.copy()  # in place, and a plugin may hand back its input
                if np.may_share_memory(part.scores, entry.raw[part.plugin.name]):
                    part.scores = part.scores.copy()
            best = int(totals[row])
            self._run = Run(
                entry,
                table.epoch,
                table.change_mark,
                mask.copy(),
                totals,
                parts,
                best,
                top.tolist(),
            )
        return row

    def best_total(self, state: CycleState, pod: PodInfo) -> tuple[int, npt.NDArray[np.int64]]:
        """The best total over *all* feasible rows (for regret), and the totals array."""
        entry = self._class_entry(state, pod)
        feasible = self._with_cycle_filters(state, pod, entry.feasible)
        totals = self.totals(state, pod, entry, feasible)
        masked = np.where(feasible, totals, -1)
        return int(masked.max()) if masked.size else -1, totals

    def _with_nominated(
        self,
        state: CycleState,
        pod: PodInfo,
        feasible: npt.NDArray[np.bool_],
        rejected: dict[int, Status],
    ) -> npt.NDArray[np.bool_]:
        """``feasible``, minus the rows that fail once the pods nominated there with at
        least ``pod``'s priority are counted (the first pass of upstream's
        RunFilterPluginsWithNominatedPods, pkg/scheduler/framework/runtime/framework.go;
        the second pass, without them, is ``feasible`` itself).

        The nominated pods are added to the table for the check and removed after it,
        which restores every row exactly. Cross-row plugins see the nominated pods of
        all checked rows at once (upstream adds only the checked node's): a documented
        simplification. When no cross-row filter reads the pods for this pod
        (:func:`~asched.framework.pod_reads.pods_matter`), only what the nominated pods
        hold can change an answer: :meth:`_with_reserved`, without touching the table.
        """
        table = self.table
        if not self._pods_matter(state, pod):
            return self._with_reserved(state, pod, feasible, rejected)
        blocking = table.nominations.blocking(pod)
        if not blocking:
            return feasible
        rows: list[int] = []
        added: list[str] = []
        try:
            for node, pods in blocking.items():
                row = table.row_of(node)
                if row is None or not feasible[row]:
                    continue
                fresh = [p for p in pods if p.key not in table.pods]
                if not fresh:
                    continue
                rows.append(row)
                for other in fresh:
                    table.add_pod(other, node)
                    added.append(other.key)
            if not rows:
                return feasible
            state = CycleState()
            outcome = self.framework.run_pre_filter(state, pod, table)
            selected = np.asarray(rows, dtype=np.intp)
            passing = np.zeros(len(rows), dtype=np.bool_)
            if outcome.status.ok:
                passing = self.framework.filter_mask(
                    state, pod, table, selected, self.framework.active_filters(state)
                )
                for row in selected[~passing].tolist():
                    rejected[row] = self.framework.first_failure(state, pod, table, row)
            else:
                rejected.update(dict.fromkeys(rows, outcome.status))
        finally:
            for key in added:
                table.remove_pod(key)
        out = feasible.copy()
        out[selected] &= passing
        return out

    def _pods_matter(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether a filter other than the resource fit may answer otherwise with the
        nominated pods counted: NodePorts for a pod with host ports, or a cross-row filter
        that reads the pods for this pod."""
        cross = self.framework.cycle_filters(state)
        return bool(pod.host_ports) or (
            bool(cross) and pod_reads.pods_matter(cross, state, pod, self.table)
        )

    def _with_reserved(
        self,
        state: CycleState,
        pod: PodInfo,
        feasible: npt.NDArray[np.bool_],
        rejected: dict[int, Status],
    ) -> npt.NDArray[np.bool_]:
        """The vectorised form of :meth:`_with_nominated` when only the resource-fit filter
        (:class:`~asched.framework.interface.ResourceFit`) depends on the pods of a row:
        what the nominated pods hold (kept summed per node) is taken from the free columns
        of their rows and the fit is checked again there."""
        table = self.table
        fit = self.framework.active_resource_fit(state)
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

    def _with_cycle_filters(
        self,
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
        plugins = self.framework.cycle_filters(state)
        if not plugins:
            return feasible
        table = self.table
        rows: Rows = table.rows
        if only_feasible:
            rows = np.flatnonzero(feasible)
            if not rows.size:
                return feasible
        started = time.perf_counter()
        passing = self.framework.filter_mask(state, pod, table, rows, plugins, start=feasible[rows])
        self._observe("Filter", Status.success(), started)
        if not only_feasible:
            return passing
        out = np.zeros_like(feasible)
        out[rows] = passing
        return out

    def _wanted(self) -> int:
        n_all = self.table.n_nodes
        if not self.framework.score and not self.extender_filters and not self.extender_scores:
            return 1
        pct = self.framework.profile.percentage_of_nodes_to_score
        return selection.num_feasible_nodes_to_find(n_all, self.percentage if pct is None else pct)

    def _class_entry(self, state: CycleState, pod: PodInfo) -> ClassEntry:
        table = self.table
        key = self.framework.signature(state, pod)
        entry = None if key is None else self.cache.get(key)
        if entry is not None and entry.epoch == table.epoch:
            changed = table.changed_rows_since(entry.mark)
            if changed is not None and len(changed) <= _INCREMENTAL_LIMIT * table.size:
                if changed:
                    self.cache.hits += 1
                    self._refresh(state, pod, entry, changed)
                entry.mark = table.change_mark
                return entry
        self.cache.misses += 1
        entry = ClassEntry(table.epoch, table.change_mark, np.zeros(0, dtype=np.bool_))
        self._compute(state, pod, entry, None)  # sets every array
        if key is not None:  # an unbatchable pod's rows are its own
            self.cache.put(key, entry)
        return entry

    def _refresh(
        self, state: CycleState, pod: PodInfo, entry: ClassEntry, changed: list[int]
    ) -> None:
        """Recompute ``entry`` on the ``changed`` rows: in Python when they are few and
        every row-local plugin has a scalar form (:mod:`asched.engine.row_recompute`),
        else vectorised."""
        rows = set(changed)
        if len(rows) <= row_recompute.SCALAR_ROWS:
            forms = row_recompute.forms(self.framework, state, pod, self.table)
            if forms is not None:
                filters, scores = forms
                started = time.perf_counter()
                feasible = row_recompute.refilter(self.table, entry, sorted(rows), filters)
                self._observe("Filter", Status.success(), started)
                started = time.perf_counter()
                row_recompute.rescore(entry, feasible, scores)
                self._observe("Score", Status.success(), started)
                return
        self._compute(state, pod, entry, _selection(changed))

    def _compute(
        self, state: CycleState, pod: PodInfo, entry: ClassEntry, rows: Rows | None
    ) -> None:
        """Fill ``entry`` for ``rows`` (None: every row, replacing its arrays) from the
        row-local plugins."""
        fw, table = self.framework, self.table
        selected = table.rows if rows is None else rows
        started = time.perf_counter()
        # a fresh array over the selection (filter_mask never returns a view)
        feasible = fw.filter_mask(state, pod, table, selected, fw.local_filters(state))
        if rows is None:
            entry.feasible = feasible
        else:
            entry.feasible[rows] = feasible
        self._observe("Filter", Status.success(), started)
        started = time.perf_counter()
        fixed: npt.NDArray[np.int64] | None = None
        for plugin, weight in fw.local_scores(state):
            raw = fw.run_score(plugin, state, pod, table, selected)
            if rows is None:
                entry.raw[plugin.name] = raw
            else:
                entry.raw[plugin.name][rows] = raw
            if not plugin.normalizes:  # its raw score is final: checked once per fill
                check_range(plugin, raw, feasible)
                if fixed is None:
                    fixed = raw * weight  # a copy even for weight 1: raw is kept above
                else:
                    fixed += weighted(raw, weight)
        if fixed is None:
            fixed = np.zeros(size_of(selected), dtype=np.int64)
        if rows is None:
            entry.fixed_total = fixed
        else:
            entry.fixed_total[rows] = fixed
        self._observe("Score", Status.success(), started)

    def _observe(self, point: str, status: Status, started: float) -> None:
        self.framework.timed(point, status, started)
