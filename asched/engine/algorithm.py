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

from asched.cluster.names import NodeName
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.engine import class_fill, selection
from asched.engine.class_run import Normalized, Run
from asched.engine.equivalence import ClassCache, ClassEntry
from asched.engine.feasible import feasible_rows, with_cycle_filters
from asched.framework import diagnosis
from asched.framework.cycle_state import SCORED_ROWS, CycleState, copy_state
from asched.framework.interface import PreFilterOutcome
from asched.framework.pre_state import PreState
from asched.framework.runtime import Framework
from asched.framework.score_runs import weighted
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
        prepared = self._pre_filter_and_score(
            pod, keep_pre_state=keep_pre_state, pre_state=pre_state
        )
        if isinstance(prepared, Decision):  # PreFilter rejected the pod, or PreScore erred
            return prepared
        state, outcome, kept = prepared
        return self._filter_and_sample(
            pod, state, outcome, kept, nominated=nominated, sample=sample, within=within
        )

    def _pre_filter_and_score(
        self, pod: PodInfo, *, keep_pre_state: bool, pre_state: PreState | None
    ) -> tuple[CycleState, PreFilterOutcome, PreState | None] | Decision:
        """PreFilter and PreScore for :meth:`candidates` (or the kept ``pre_state`` when it
        still holds): the cycle state, PreFilter's outcome and the copy to keep, or the
        failed decision when PreFilter rejects the pod or PreScore errs."""
        table = self.table
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
        return state, outcome, kept

    def _filter_and_sample(
        self,
        pod: PodInfo,
        state: CycleState,
        outcome: PreFilterOutcome,
        kept: PreState | None,
        *,
        nominated: bool,
        sample: bool,
        within: npt.NDArray[np.bool_] | None,
    ) -> Decision:
        """The rest of :meth:`candidates` once PreFilter and PreScore passed: the class
        entry, the rows left by the Filters and the nominated pods, sampled with
        ``sample``, and the undecided decision over them (Unschedulable when none is
        left)."""
        table = self.table
        entry = self._class_entry(state, pod)
        nominated_failures: dict[int, Status] = {}
        feasible, plain, nominated_only = feasible_rows(
            self.framework,
            table,
            state,
            pod,
            outcome,
            entry,
            within,
            nominated_failures,
            nominated=nominated,
        )
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
        feasible = with_cycle_filters(self.framework, self.table, state, pod, entry.feasible)
        totals = self.totals(state, pod, entry, feasible)
        masked = np.where(feasible, totals, -1)
        return int(masked.max()) if masked.size else -1, totals

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
                    class_fill.refresh(self.framework, table, state, pod, entry, changed)
                entry.mark = table.change_mark
                return entry
        self.cache.misses += 1
        entry = ClassEntry(table.epoch, table.change_mark, np.zeros(0, dtype=np.bool_))
        class_fill.compute(self.framework, table, state, pod, entry, None)  # sets every array
        if key is not None:  # an unbatchable pod's rows are its own
            self.cache.put(key, entry)
        return entry

    def _observe(self, point: str, status: Status, started: float) -> None:
        self.framework.timed(point, status, started)
