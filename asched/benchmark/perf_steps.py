"""The ordered steps before the measured pods of a scheduler_perf workload.

A workload whose ops before the measured ``createPods`` are more than "create pods and
wait for them" (a ``sleep``, a ``deletePods``, pods not waited for) runs them in order,
with upstream's meaning (``runCreatePodsOp``, ``runDeletePodsOp``, ``runSleepOp`` of
scheduler_perf.go):

* :class:`CreatePods`: the pods are created; with ``wait`` the step ends when every one
  of them is seen bound, without it at once (``skipWaitToCompletion``);
* :class:`Sleep`: a pause of ``seconds``;
* :class:`CreateAny`: objects from a template file (``createAny``), created as written
  (a ``generateName`` is left to the API server); kinds :data:`CREATE_ANY_KINDS` only;
* :class:`DeletePods`: the pods of a namespace (and label selector) as listed when the
  step starts are deleted with default delete options (graceful, as upstream), one every
  ``1 / per_second`` seconds or all at once (``per_second`` 0); with ``wait`` the step
  ends when the calls are done, without it the deleting goes on in the background until
  the workload's last op is done.

:class:`StepsWorkload` is a :class:`~asched.benchmark.workload.Workload` that carries
them; the runner runs its steps in place of the init pods, and its ``after`` steps once
the measured phase has ended. asched-format workloads never have steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from asched.benchmark.workload import PodGroup, Workload

#: The kinds ``createAny`` can create: the runner knows their collections, and asched's
#: scheduling reads them (Services: PodTopologySpread's system-default constraints).
CREATE_ANY_KINDS: Final = frozenset({"Service", "Namespace", "PriorityClass"})


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
class AttemptedBarrier:
    """Wait until every pod the earlier ops created (in ``namespaces``) has been attempted:
    it is bound, or carries a ``PodScheduled`` condition (a gated pod gets one from the
    API server on create; an unschedulable one from the scheduler). scheduler_perf's
    ``barrier`` with ``stageRequirement: Attempted``."""

    op: int
    namespaces: tuple[str, ...]


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


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateAny:
    """Create ``objects`` (op ``op``), each with its namespace set where it has one."""

    op: int
    objects: tuple[Mapping[str, Any], ...]

    @property
    def namespaces(self) -> list[str]:
        """The namespaces the objects go to (the runner creates them first)."""
        found = (str((o.get("metadata") or {}).get("namespace") or "") for o in self.objects)
        return [ns for ns in dict.fromkeys(found) if ns]


Step = CreatePods | Sleep | DeletePods | CreateAny | AttemptedBarrier


@dataclass(frozen=True, slots=True, kw_only=True)
class StepsWorkload(Workload):
    """A workload whose steps before measuring run in order (see the module docstring);
    ``init_pods`` stays empty, the steps' pods count as init pods."""

    steps: tuple[Step, ...] = ()
    #: the ops after the measured pods, run once the measured phase has ended
    after: tuple[Step, ...] = ()
    #: Namespace objects from a ``createNamespaces`` template (labelled namespaces): the
    #: runner creates them, as they are, before the workload's other namespaces
    namespace_objects: tuple[Mapping[str, Any], ...] = ()

    @property
    def n_init(self) -> int:
        """Pods created before measuring (waited for or not)."""
        return sum(s.group.count for s in self.steps if isinstance(s, CreatePods))

    def _pod_groups(self) -> list[PodGroup]:
        groups = [s.group for s in (*self.steps, *self.after) if isinstance(s, CreatePods)]
        return [*groups, *Workload._pod_groups(self)]

    def namespaces(self) -> list[str]:
        """Every namespace the pods and ``createAny`` objects go to, in first-use order."""
        extra = [str(o["metadata"]["name"]) for o in self.namespace_objects]
        extra += [
            ns
            for s in (*self.steps, *self.after)
            if isinstance(s, CreateAny)
            for ns in s.namespaces
        ]
        return list(dict.fromkeys([*extra, *Workload.namespaces(self)]))

    def to_json(self) -> dict[str, Any]:
        """The workload's ``--json`` record, with its steps."""
        return {
            **Workload.to_json(self),
            "steps": [describe(s) for s in self.steps],
            "after_measuring": [describe(s) for s in self.after],
            "labelled_namespaces": [str(o["metadata"]["name"]) for o in self.namespace_objects],
        }


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
    if isinstance(step, AttemptedBarrier):
        return {"op": step.op, "barrier": "Attempted", "namespaces": list(step.namespaces)}
    if isinstance(step, CreateAny):
        kinds = [str(o.get("kind")) for o in step.objects]
        return {"op": step.op, "createAny": kinds, "namespaces": step.namespaces}
    return {
        "op": step.op,
        "deletePods": step.namespace,
        "label_selector": step.label_selector,
        "per_second": step.per_second,
        "wait": step.wait,
    }
