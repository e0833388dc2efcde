"""Why no node fits, as explain says it: the FitError message and what preemption would do.

:class:`Unfit` holds what upstream's FitError reads (each row's rejecting status, the
reasons counted, PreFilter's message) and builds the message with its PostFilter part;
:func:`preemption` asks the profile's DefaultPreemption what it would do (offset 0, so
the answer is deterministic), :func:`preemption_of` is that answer as explain shows it.
The evaluation itself is :mod:`asched.explain.engine`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.engine.result import Preemption, Victim
from asched.framework import diagnosis
from asched.framework.builtin.default_preemption import DefaultPreemption
from asched.framework.cycle_state import CycleState
from asched.framework.interface import PostFilterResult
from asched.framework.runtime import Framework
from asched.framework.status import Code, Status


@dataclass(frozen=True, slots=True)
class Unfit:
    """Why no node fits, as preemption and the FitError message read it.

    ``statuses``: row -> the status that rejected it (PreFilter's for every row, or each
    row's first failing filter, an extender's rejection included); ``reasons``: those
    statuses' reasons, counted in the message; ``pre_filter_message``: PreFilter's;
    ``pod`` and ``table``: the pod and where it was evaluated (the PostFilter part of a
    gang member's message needs them).
    """

    framework: Framework
    statuses: dict[int, Status]
    n_all: int
    reasons: tuple[str, ...] = ()
    pre_filter_message: str = ""
    pod: PodInfo | None = None
    table: NodeTable | None = None

    def message(self, preemption: Preemption | None) -> str:
        """The FitError message, with PostFilter's part when it failed: preemption's, or
        for a gang member every PostFilter's in turn, as the cycle runs them."""
        return diagnosis.fit_error_message(
            self.n_all,
            self.reasons,
            pre_filter_message=self.pre_filter_message,
            post_filter_message=self._post_filter_message(preemption),
        )

    def _post_filter_message(self, preemption: Preemption | None) -> str:
        """The cycle's PostFilter part (``Framework.run_post_filter``): the PostFilters in
        order until one succeeds or ends it (Unresolvable, Error), DefaultPreemption's
        answer being ``preemption``. Only a gang member's differs from preemption's: then
        Coscheduling's PostFilter says the gang is rejected (its effects are on this
        evaluation's own gang host: nothing waits, nothing is kept)."""
        pod, table = self.pod, self.table
        if pod is None or table is None or not pod.gang:
            return _suffix(preemption)
        code, message = Code.UNSCHEDULABLE, ""
        for plugin in self.framework.post_filter:
            if isinstance(plugin, DefaultPreemption):
                if preemption is None:
                    continue
                code, message = preemption.code, preemption.message
            else:
                result = plugin.post_filter(CycleState(), pod, table, self.statuses, self.framework)
                code, message = result.status.code, result.status.message
            if code in (Code.SUCCESS, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.ERROR):
                break
        return "" if code == Code.SUCCESS else message


def of_pre_filter(
    framework: Framework,
    live: Sequence[int],
    status: Status,
    pod: PodInfo | None = None,
    table: NodeTable | None = None,
) -> Unfit:
    """The :class:`Unfit` of a pod PreFilter rejected with ``status`` on every live row."""
    return Unfit(framework, dict.fromkeys(live, status), len(live), (), status.message, pod, table)


def default_preemption(framework: Framework) -> DefaultPreemption | None:
    """The profile's DefaultPreemption, if it has one."""
    return next((p for p in framework.post_filter if isinstance(p, DefaultPreemption)), None)


def preemption(
    table: NodeTable, pod: PodInfo, framework: Framework, statuses: Mapping[int, Status]
) -> Preemption | None:
    """What DefaultPreemption would do (offset 0: deterministic), if the profile has it."""
    plugin = default_preemption(framework)
    if plugin is None:
        return None
    return preemption_of(
        plugin.post_filter(CycleState(), pod, table, statuses, framework, offset=0)
    )


def preemption_of(result: PostFilterResult) -> Preemption:
    """DefaultPreemption's answer as explain shows it."""
    node = result.nominated_node or None
    victims = tuple(Victim(v.key, node or "", v.priority) for v in result.victims)
    message = "" if result.status.ok else result.status.message
    return Preemption(result.status.code, node, victims, result.num_pdb_violations, message)


def _suffix(preemption: Preemption | None) -> str:
    """The FailedScheduling message's PostFilter part: preemption's message, if it failed."""
    return "" if preemption is None else preemption.message
