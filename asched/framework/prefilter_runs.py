"""The PreFilter runners of :class:`~asched.framework.runtime.Framework` (a mixin).

PreFilter follows upstream's RunPreFilterPlugins
(pkg/scheduler/framework/runtime/framework.go): Skip disables the plugin's Filter for the
pod; UnschedulableAndUnresolvable stops at once; Unschedulable is remembered while the
others still run; node-name results are intersected.

Also here, since both follow what PreFilter left in the cycle state: the
PreFilterExtensions hooks (upstream's RunPreFilterExtensionAddPod and RemovePod, which
preemption's exact search calls per what-if), and whether PreFilter's and PreScore's
state may be reused (:mod:`asched.framework.pre_state`). Separate from the Filter
runners because PreFilter runs once per pod, before any row is looked at.
"""

from __future__ import annotations

from asched.cluster.bounds import OUT_OF_RANGE_PLUGIN
from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework.contain import failed
from asched.framework.cycle_state import CycleState
from asched.framework.interface import PreFilterOutcome, PreFilterPlugin
from asched.framework.plugin_lists import Hook, Scope
from asched.framework.status import Code, Status


class PreFilterRuns:
    """PreFilter, its hooks and the pre-state reuse, over the attributes declared here
    (the Framework builds them, :mod:`asched.framework.plugin_lists`)."""

    pre_filter: list[PreFilterPlugin]
    #: every PreFilter has hooks or declares it never reads the pods
    #: (:meth:`pre_filter_extensible`)
    _extensible: bool
    #: each PreFilter and PreScore plugin's word on what it reads; None: never reused
    _pre_state_scopes: list[Scope] | None
    #: ``(name, hook)`` per hooked plugin, bound once (a search calls them per change)
    _add_hooks: list[tuple[str, Hook]]
    _remove_hooks: list[tuple[str, Hook]]

    def run_pre_filter(self, state: CycleState, pod: PodInfo, table: NodeTable) -> PreFilterOutcome:
        """PreFilter in profile order, after the pod-level range gate: a pod whose requests
        are beyond what asched schedules (:mod:`asched.cluster.bounds`) is rejected
        everywhere before any plugin sees its clamped amounts."""
        if pod.out_of_range:
            return PreFilterOutcome(
                Status.unresolvable(pod.out_of_range, plugin=OUT_OF_RANGE_PLUGIN)
            )
        remembered: Status | None = None
        allowed: frozenset[str] | None = None
        restricted_by: list[str] = []
        for plugin in self.pre_filter:
            try:  # inline: a try costs nothing until it raises (this runs every decision)
                result = plugin.pre_filter(state, pod, table)
            except Exception as exc:
                return PreFilterOutcome(failed(pod, "PreFilter", exc, plugin.name))
            status = result.status
            if status.code == Code.SKIP:
                state.skip_filter.add(plugin.name)
                continue
            if status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return PreFilterOutcome(status.with_plugin(plugin.name))
            if status.code == Code.UNSCHEDULABLE:
                remembered = status.with_plugin(plugin.name)
            elif not status.ok:
                return PreFilterOutcome(Status(Code.ERROR, status.reasons, plugin.name))
            if result.node_names is not None:
                names = frozenset(result.node_names)
                allowed = names if allowed is None else allowed & names
                restricted_by.append(plugin.name)
                if not allowed:
                    outcome = PreFilterOutcome(Status(), frozenset(), tuple(restricted_by))
                    reason = outcome.absent_reason
                    return PreFilterOutcome(Status.unresolvable(reason, plugin=plugin.name))
        if remembered is not None:
            return PreFilterOutcome(remembered)
        return PreFilterOutcome(Status.success(), allowed, tuple(restricted_by))

    def pre_state_reusable(self, state: CycleState, pod: PodInfo) -> bool:
        """Whether ``state`` (as PreFilter and PreScore left it for ``pod``) may stand for
        a fresh run while the table's ``shared_generation`` and ``epoch`` hold: every
        PreFilter and PreScore plugin says its answers for ``pod`` do not follow the
        plain pods on the nodes (:mod:`asched.framework.pre_state`)."""
        scopes = self._pre_state_scopes
        if scopes is None:
            return False
        try:
            return not any(follows(state, pod) for follows in scopes)
        except Exception:  # a plugin's word that cannot be had: run them afresh
            return False

    def pre_filter_extensible(self) -> bool:
        """Whether every PreFilter plugin either has hooks (:class:`PreFilterExtensions`)
        or declares that it never reads the pods on the nodes (:data:`READS_PODS`)."""
        return self._extensible

    def run_pre_filter_add_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, added: PodInfo, row: int
    ) -> Status:
        """Upstream's RunPreFilterExtensionAddPod, every hooked plugin (skipped ones too:
        a pod added may end their Skip), keeping the skip set; the first answer neither
        Success nor Skip (an exception: Error) stops it and is returned."""
        return self._run_hooks(
            self._add_hooks, "PreFilterExtensionAddPod", state, pod, table, added, row
        )

    def run_pre_filter_remove_pod(
        self, state: CycleState, pod: PodInfo, table: NodeTable, removed: PodInfo, row: int
    ) -> Status:
        """Upstream's RunPreFilterExtensionRemovePod; as :meth:`run_pre_filter_add_pod`."""
        return self._run_hooks(
            self._remove_hooks, "PreFilterExtensionRemovePod", state, pod, table, removed, row
        )

    @staticmethod
    def _run_hooks(
        hooks: list[tuple[str, Hook]],
        point: str,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        changed: PodInfo,
        row: int,
    ) -> Status:
        skipped = state.skip_filter
        for name, hook in hooks:
            try:
                status = hook(state, pod, table, changed, row)
            except Exception as exc:
                return failed(pod, point, exc, name)
            code = status.code
            if code == Code.SKIP:
                skipped.add(name)
            elif code == Code.SUCCESS:
                skipped.discard(name)
            else:
                return status.with_plugin(name)
        return Status.success()
