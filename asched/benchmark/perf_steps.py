"""The ordered steps before the measured pods of a scheduler_perf workload.

A workload whose ops before the measured ``createPods`` are more than "create pods and
wait for them" (a ``sleep``, a ``deletePods``, pods not waited for) runs them in order,
with upstream's meaning (``runCreatePodsOp``, ``runDeletePodsOp``, ``runSleepOp`` of
scheduler_perf.go):

* :class:`CreatePods`: the pods are created; with ``wait`` the step ends when every one
  of them is seen bound, without it at once (``skipWaitToCompletion``);
* :class:`Sleep`: a pause of ``seconds``;
* :class:`DeletePods`: the pods of a namespace (and label selector) as listed when the
  step starts are deleted with default delete options (graceful, as upstream), one every
  ``1 / per_second`` seconds or all at once (``per_second`` 0); with ``wait`` the step
  ends when the calls are done, without it the deleting goes on in the background until
  the measured phase ends.

:class:`StepsWorkload` is a :class:`~asched.benchmark.workload.Workload` that carries
them; the runner runs its steps in place of the init pods. asched-format workloads never
have steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asched.benchmark.workload import PodGroup, Workload


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePods:
    """Create ``group``'s pods (op ``op``); ``wait``: until every one is bound."""

    op: int
    group: PodGroup
    wait: bool = True

    @property
    def name_prefix(self) -> str:
        """The pods are named ``<prefix>-<index>``: unique per op."""
        return f"init-op{self.op}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Sleep:
    """Pause for ``seconds`` (op ``op``)."""

    op: int
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class DeletePods:
    """Delete the pods of ``namespace`` matching ``label_selector`` ("" for all), one
    every ``1 / per_second`` seconds (0: all at once); ``wait``: before the next step."""

    op: int
    namespace: str
    label_selector: str = ""
    per_second: int = 0
    wait: bool = True


Step = CreatePods | Sleep | DeletePods


@dataclass(frozen=True, slots=True, kw_only=True)
class StepsWorkload(Workload):
    """A workload whose steps before measuring run in order (see the module docstring);
    ``init_pods`` stays empty, the steps' pods count as init pods."""

    steps: tuple[Step, ...] = ()

    @property
    def n_init(self) -> int:
        """Pods created before measuring (waited for or not)."""
        return sum(s.group.count for s in self.steps if isinstance(s, CreatePods))

    def _pod_groups(self) -> list[PodGroup]:
        groups = [s.group for s in self.steps if isinstance(s, CreatePods)]
        return [*groups, *Workload._pod_groups(self)]

    def to_json(self) -> dict[str, Any]:
        """The workload's ``--json`` record, with its steps."""
        return {**Workload.to_json(self), "steps": [describe(s) for s in self.steps]}


def describe(step: Step) -> dict[str, Any]:
    """One step as recorded in ``--json`` output."""
    if isinstance(step, CreatePods):
        return {
            "op": step.op,
            "createPods": step.group.count,
            "namespace": step.group.namespace,
            "wait": step.wait,
        }
    if isinstance(step, Sleep):
        return {"op": step.op, "sleep_seconds": step.seconds}
    return {
        "op": step.op,
        "deletePods": step.namespace,
        "label_selector": step.label_selector,
        "per_second": step.per_second,
        "wait": step.wait,
    }
