"""The ordered steps before the measured pods of a scheduler_perf workload.

A workload whose ops before the measured ``createPods`` are more than "create pods and
wait for them" (a ``sleep``, a ``deletePods``, pods not waited for) runs them in order,
with upstream's meaning (``runCreatePodsOp``, ``runDeletePodsOp``, ``runSleepOp`` of
scheduler_perf.go):

* :class:`CreatePods`: the pods are created; with ``wait`` the step ends when every one
  of them is seen bound, without it at once (``skipWaitToCompletion``);
* :class:`Sleep`: a pause of ``seconds``;
* :class:`CreateAny`: objects rendered from a template file (``createAny``), created as
  written (a ``generateName`` is left to the API server) in the op's namespace; the runner
  finds each kind's collection by API discovery (:mod:`asched.tools.bench.perf_objects`);
* :class:`UpdateAny`: objects rendered from a template file (``updateAny``), each PUT
  (to its subresources when the op names some) and then PUT to its ``status``, one every
  ``1 / per_second`` seconds or all at once;
* :class:`Barrier`: wait until every pod the earlier ops created (in the op's namespaces,
  matching its label selector) is scheduled, or attempted;
* :class:`DeletePods`: the pods of a namespace (and label selector) as listed when the
  step starts are deleted with default delete options (graceful, as upstream), one every
  ``1 / per_second`` seconds or all at once (``per_second`` 0); with ``wait`` the step
  ends when the calls are done, without it the deleting goes on in the background until
  the workload's last op is done.

:class:`StepsWorkload` is a :class:`~asched.tools.bench.workload.Workload` that carries
them; the runner runs its steps in place of the init pods, and its ``after`` steps once
the measured phase has ended. asched-format workloads never have steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from asched.tools.bench.workload import PodGroup, Workload


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePods:
    """Create the pods of ``groups`` (op ``op``; several groups when its template renders
    differently per index), in order; ``wait``: until every one is bound."""

    op: int
    groups: tuple[PodGroup, ...]
    wait: bool = True

    @property
    def count(self) -> int:
        return sum(g.count for g in self.groups)

    @property
    def namespace(self) -> str:
        return self.groups[0].namespace if self.groups else ""

    @property
    def name_prefix(self) -> str:
        """The pods are named ``<prefix>-<index>``: unique per op."""
        return f"init-op{self.op}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Barrier:
    """Wait until every pod of ``namespaces`` matching ``label_selector`` ("" for all) is
    bound (``stage`` Scheduled) or attempted (``stage`` Attempted: bound, or carrying a
    ``PodScheduled`` condition, which a gated pod gets from the API server on create and
    an unschedulable one from the scheduler). scheduler_perf's ``barrier``."""

    op: int
    namespaces: tuple[str, ...]
    stage: Literal["Scheduled", "Attempted"] = "Scheduled"
    label_selector: str = ""


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
    """Create ``objects`` (op ``op``, rendered from ``template``) in ``namespace`` ("":
    cluster-scoped kinds only, as upstream checks)."""

    op: int
    template: str
    objects: tuple[Mapping[str, Any], ...]
    namespace: str = ""

    @property
    def namespaces(self) -> list[str]:
        """The namespaces the objects go to (the runner creates them first)."""
        return [self.namespace] if self.namespace else []


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateAny:
    """Update ``objects`` (op ``op``, rendered from ``template``) in ``namespace`` (""
    for cluster-scoped kinds): each is PUT (to ``subresources`` when given), then PUT to
    its ``status``; one every ``1 / per_second`` seconds, or all at once (0)."""

    op: int
    template: str
    objects: tuple[Mapping[str, Any], ...]
    namespace: str = ""
    per_second: int = 0
    subresources: tuple[str, ...] = ()

    @property
    def namespaces(self) -> list[str]:
        return [self.namespace] if self.namespace else []


Step = CreatePods | Sleep | DeletePods | CreateAny | UpdateAny | Barrier


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
        return sum(s.count for s in self.steps if isinstance(s, CreatePods))

    def _pod_groups(self) -> list[PodGroup]:
        groups = [
            g for s in (*self.steps, *self.after) if isinstance(s, CreatePods) for g in s.groups
        ]
        return [*groups, *Workload._pod_groups(self)]

    def namespaces(self) -> list[str]:
        """Every namespace the pods and ``createAny`` objects go to, in first-use order."""
        extra = [str(o["metadata"]["name"]) for o in self.namespace_objects]
        extra += [
            ns
            for s in (*self.steps, *self.after)
            if isinstance(s, CreateAny | UpdateAny)
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
            "createPods": step.count,
            "namespace": step.namespace,
            "wait": step.wait,
        }
    if isinstance(step, Sleep):
        return {"op": step.op, "sleep_seconds": step.seconds}
    if isinstance(step, Barrier):
        record: dict[str, Any] = {
            "op": step.op,
            "barrier": step.stage,
            "namespaces": list(step.namespaces),
        }
        if step.label_selector:
            record["label_selector"] = step.label_selector
        return record
    if isinstance(step, CreateAny):
        kinds = [str(o.get("kind")) for o in step.objects]
        return {"op": step.op, "createAny": kinds, "namespaces": step.namespaces}
    if isinstance(step, UpdateAny):
        return {
            "op": step.op,
            "updateAny": [str(o.get("kind")) for o in step.objects],
            "namespaces": step.namespaces,
            "per_second": step.per_second,
            "subresources": list(step.subresources),
        }
    return {
        "op": step.op,
        "deletePods": step.namespace,
        "label_selector": step.label_selector,
        "per_second": step.per_second,
        "wait": step.wait,
    }
