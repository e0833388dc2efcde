"""The translation of a scheduler_perf workload's ops, in order, into a workload.

:class:`Builder` takes the ops of the config one at a time: it refuses an op that cannot
run where it stands, validates the others into their typed ops
(:mod:`asched.tools.bench.perf_ops`) and decides where each goes: node groups, init pods,
the churn, the measured pods, or an ordered step (:mod:`asched.tools.bench.perf_steps`)
run before measuring or once the measured phase has ended. Which of the last two is the
builder's :class:`Phase`, changed in one place (when the measured pods are seen) and
recorded with every step, so the steps before and after the measured pods are told apart
by what they carry rather than by which list happened to be current. What it cannot
honour in order (nodes after pods, a second measured span, an op while churning, ...) it
refuses with :class:`Unsupported`.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Final, NoReturn

from asched.errors import InputError
from asched.tools.bench import perf_ops, perf_steps
from asched.tools.bench.perf_config import Op
from asched.tools.bench.perf_groups import (
    DEFAULT_NODE,
    DEFAULT_POD,
    bound_volumes,
    churn_object,
    named,
    node_group,
    pod_group,
)
from asched.tools.bench.perf_node_ops import LabelStrategy
from asched.tools.bench.perf_ops import (
    BarrierOp,
    ChurnOp,
    Context,
    CreateAnyOp,
    CreateNamespacesOp,
    CreateNodesOp,
    CreatePodSetsOp,
    CreatePodsOp,
    DeletePodsOp,
    PerfOp,
    SleepOp,
    StartCollectingOp,
    StopCollectingOp,
    UpdateAnyOp,
)
from asched.tools.bench.perf_templates import (
    OpRef,
    Unsupported,
    op_name,
    plain_template,
    render_each,
    rendered_runs,
)
from asched.tools.bench.workload import Churn, NodeGroup, PodGroup, Workload

DRA_OPCODES: Final = frozenset(
    {"allocResourceClaims", "createResourceClaims", "createResourceDriver"}
)
#: the ops that may follow the measured pods (run after the measured phase ends)
AFTER_MEASURED: Final = frozenset(
    {"createPods", "createPodSets", "createAny", "updateAny", "sleep", "deletePods", "barrier"}
)
_WHY: Final = {
    "waitForPodGroups": "workload-aware PodGroups (waitForPodGroups)",
    "createPodGroups": "workload-aware PodGroups (createPodGroups)",
}


class Phase(enum.Enum):
    """Where an op runs relative to the measured pods."""

    #: no measured pods yet: unmeasured pods are init pods, steps run before measuring
    BEFORE = "before"
    #: the measured pods are created: steps run once the measured phase has ended
    AFTER = "after"


class Builder:
    """The workload named ``context.name`` so far; :meth:`add` each op, then
    :meth:`workload`."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.name = context.name
        self.phase = Phase.BEFORE
        self.nodes: list[NodeGroup] = []
        self.init: list[PodGroup] = []
        self.measured: list[PodGroup] = []
        self.churn: Churn | None = None
        #: every op run as a step, in order, with the phase it runs in
        self.steps: list[tuple[Phase, perf_steps.Step]] = []
        #: the op index of the measured createPods (or createPodSets)
        self.measured_op: int | None = None
        #: the open startCollectingMetrics op (None: no measured span open)
        self.window: StartCollectingOp | None = None
        #: an op the fixed init phase cannot honour (sleep, deletePods, skip-wait pods)
        self.timed = False
        #: Namespace objects of createNamespaces ops with a template
        self.namespace_objects: list[dict[str, Any]] = []
        #: pods created and not waited for so far
        self.unwaited = False

    def add(self, op: Op) -> None:
        """Place ``op`` after the ones added before it.

        An op that cannot run where it stands (nodes after pods, a sleep while churning,
        any op but createPods and barriers in a measured span, ...) is refused before its
        fields are read: the reason given is its place, whatever its fields say. Only then
        is it validated into its typed op and placed.

        Raises
        ------
        Unsupported
            The op, or the op where it is, is beyond what the runner can run.
        InputError
            A field of the op is malformed; a template file of the op is missing or not
            the kind of object it must be.
        """
        self._admit(op)
        typed = perf_ops.parse(op, self.context)
        if isinstance(typed, StartCollectingOp):
            self._start_collecting(typed)
        elif isinstance(typed, StopCollectingOp):
            self._stop_collecting(typed)
        elif self.window is not None:
            self._in_window(typed)
        else:
            self._run(typed)

    def _admit(self, op: OpRef) -> None:
        """Refuse ``op`` for where it stands (its index and opcode, and the ops before)."""
        if op.opcode == "startCollectingMetrics":
            if self.measured or self.window is not None:
                raise Unsupported(f"{op_name(op)}: a second span of measured ops")
        elif op.opcode == "stopCollectingMetrics":
            return
        elif self.window is not None:
            self._admit_in_window(op, self.window)
        else:
            if self.phase is Phase.AFTER and op.index != self.measured_op:
                self._admit_after_measured(op)
            if op.opcode not in perf_ops.TYPED_OPCODES:
                _refuse(op)
            if op.opcode == "createNodes" and (
                self._steps_in(self.phase) or self.churn is not None
            ):
                raise Unsupported(f"{op_name(op)}: nodes created after pods, sleep or churn")
            if op.opcode in ("sleep", "deletePods", "createAny", "updateAny"):
                self._not_churning(op)
            if op.opcode == "churn" and self.churn is not None:
                raise Unsupported(f"{op_name(op)}: a second churn op")

    def _admit_in_window(self, op: OpRef, start: StartCollectingOp) -> None:
        """Between start and stopCollectingMetrics: one createPods (the measured pods)
        and barriers on them."""
        if op.opcode == "barrier":
            return
        if op.opcode != "createPods":
            raise Unsupported(
                f"{op_name(op)} between {op_name(start)} and stopCollectingMetrics: only "
                "one createPods (and barriers) run there (the measured phase creates the "
                "measured pods and waits for them; it runs no other op while measuring)"
            )
        if self.measured:
            raise Unsupported(
                f"{op_name(op)}: a second createPods between {op_name(start)} and "
                "stopCollectingMetrics"
            )

    def _admit_after_measured(self, op: OpRef) -> None:
        if op.opcode not in AFTER_MEASURED:
            raise Unsupported(
                f"{op_name(op)} after the measured createPods: only "
                f"{', '.join(sorted(AFTER_MEASURED))} run there"
            )
        if self.churn is not None:
            raise Unsupported(
                f"{op_name(op)} after the measured createPods of a churning workload "
                "(the churn stops with the measured phase)"
            )
        self.timed = True

    def _run(self, op: PerfOp) -> None:
        match op:
            case CreateNodesOp():
                self._nodes(op)
            case CreateNamespacesOp():
                self._namespaces(op)
            case CreatePodsOp():
                self._pods(op)
            case CreatePodSetsOp():
                for pods in op.pods:
                    self._pods(pods)
            case ChurnOp():
                self._churn(op)
            case BarrierOp():
                self._barrier(op)
            case SleepOp():
                self._step(perf_steps.Sleep(op=op.index, seconds=op.seconds))
                self.timed = True
            case DeletePodsOp():
                self._delete_pods(op)
            case CreateAnyOp():
                self._create_any(op)
            case UpdateAnyOp():
                self._update_any(op)
            case _:
                _refuse(op)

    def _step(self, step: perf_steps.Step) -> None:
        """Run ``step`` in order, before measuring or after, as the current phase says."""
        self.steps.append((self.phase, step))

    def _steps_in(self, phase: Phase) -> tuple[perf_steps.Step, ...]:
        return tuple(step for when, step in self.steps if when is phase)

    def _nodes(self, op: CreateNodesOp) -> None:
        if op.count == 0:
            return
        runs = (
            rendered_runs(op.template, "Node", op, op.count)
            if op.template
            else [(op.count, dict(DEFAULT_NODE))]
        )
        if len(runs) > 1 and isinstance(op.strategy, LabelStrategy):
            raise Unsupported(
                f"{op_name(op)}: labelNodePrepareStrategy with a node template rendered "
                "differently per .Index"
            )
        for number, (run, base) in enumerate(runs):
            suffix = f"-{number}" if len(runs) > 1 else ""
            self.nodes.append(node_group(op, base, run, suffix))

    def _namespaces(self, op: CreateNamespacesOp) -> None:
        # Plain namespaces: the runner creates every namespace its pods use.
        if op.template is None:
            return
        base = plain_template(op.template, "Namespace", op)
        for i in range(op.count):
            meta = {**(base or {}).get("metadata", {}), "name": f"{op.prefix}-{i}"}
            meta.pop("generateName", None)
            self.namespace_objects.append({**(base or {}), "metadata": meta})
        self.timed = True

    def _pods(self, op: CreatePodsOp) -> None:
        if op.steady_state:
            raise Unsupported(
                f"{op_name(op)}: steadyState (keeping count pods for a duration, deleting "
                "scheduled ones and creating new ones: the runner's phases have no such loop)"
            )
        volumes = bound_volumes(op)
        if op.count == 0:
            return
        runs = (
            rendered_runs(op.template, "Pod", op, op.count)
            if op.template
            else [(op.count, dict(DEFAULT_POD))]
        )
        groups = tuple(
            named(pod_group(base, count=run, namespace=op.namespace, op=op, volumes=volumes))
            for run, base in runs
        )
        if op.collect_metrics:
            if self.measured_op not in (None, op.index):
                raise Unsupported(f"{op_name(op)}: a second createPods with collectMetrics")
            self.measured_op = op.index
            self.measured.extend(groups)
            self.phase = Phase.AFTER
            return
        if self.churn is not None:
            raise Unsupported(f"{op_name(op)}: unmeasured pods created while churning")
        if self.phase is Phase.BEFORE:
            self.init.extend(groups)
        wait = not op.skip_wait
        self._step(perf_steps.CreatePods(op=op.index, groups=groups, wait=wait))
        if not wait:
            self.timed = self.unwaited = True

    def _delete_pods(self, op: DeletePodsOp) -> None:
        self._step(
            perf_steps.DeletePods(
                op=op.index,
                namespace=op.namespace,
                label_selector=op.label_selector,
                per_second=op.per_second,
                wait=op.wait,
            )
        )
        self.timed = True

    def _create_any(self, op: CreateAnyOp) -> None:
        created = tuple(render_each(op.template, op, op.count))
        for obj in created:
            meta = dict(obj.get("metadata") or {})
            if (
                op.count > 1
                and meta.get("name")
                and all((o.get("metadata") or {}).get("name") == meta["name"] for o in created)
            ):
                raise InputError(
                    f"{self.name}: {op_name(op)}.count: {op.count} objects from a template "
                    f"with the fixed name {meta['name']}"
                )
        self._step(
            perf_steps.CreateAny(
                op=op.index, template=op.template.name, objects=created, namespace=op.namespace
            )
        )
        self.timed = True

    def _update_any(self, op: UpdateAnyOp) -> None:
        updated = tuple(render_each(op.template, op, op.count))
        for index, obj in enumerate(updated):
            if not (obj.get("metadata") or {}).get("name"):
                raise InputError(
                    f"{op.template.name}: {op_name(op)} object {index} has no metadata.name"
                )
        self._step(
            perf_steps.UpdateAny(
                op=op.index,
                template=op.template.name,
                objects=updated,
                namespace=op.namespace,
                per_second=op.per_second,
                subresources=op.subresources,
            )
        )
        self.timed = True

    def _start_collecting(self, op: StartCollectingOp) -> None:
        if op.selects_by_label:
            raise Unsupported(f"{op_name(op)}: metrics of pods chosen by a label selector")
        self.window = op

    def _in_window(self, op: PerfOp) -> None:
        """An op admitted between start and stopCollectingMetrics: a barrier, or the
        measured pods (a waited createPods, run as one with collectMetrics)."""
        assert self.window is not None
        start = self.window
        if isinstance(op, BarrierOp):
            self._barrier(op)
            return
        assert isinstance(op, CreatePodsOp)  # (the only other op admitted there)
        if op.skip_wait:
            raise Unsupported(f"{op_name(op)}: measured pods not waited for")
        if start.namespaces and op.namespace not in start.namespaces:
            raise Unsupported(
                f"{op_name(op)}: pods in {op.namespace}, outside the namespaces "
                f"{op_name(start)} collects ({', '.join(start.namespaces)})"
            )
        self._pods(dataclasses.replace(op, collect_metrics=True))

    def _stop_collecting(self, op: StopCollectingOp) -> None:
        if self.window is None:
            raise Unsupported(f"{op_name(op)}: no startCollectingMetrics before it")
        if not self.measured:
            raise Unsupported(f"{op_name(op)}: no pods created since {op_name(self.window)}")
        self.window = None

    def _not_churning(self, op: OpRef) -> None:
        if self.churn is not None:
            raise Unsupported(f"{op_name(op)}: while churning (churn runs with the measured pods)")

    def _churn(self, op: ChurnOp) -> None:
        if op.mode == "create" and op.number > 0:
            raise Unsupported(f"{op_name(op)}: churn create with a limit (number: {op.number})")
        self.churn = Churn(
            mode="recreate" if op.mode == "recreate" else "create",
            interval=max(op.interval_ms, 10) / 1000.0,
            number=max(op.number, 1),
            objects=tuple(churn_object(op, path) for path in op.templates),
        )

    def _barrier(self, op: BarrierOp) -> None:
        selector, namespaces = op.label_selector, op.namespaces
        if op.stage == "Scheduled" and not self.unwaited and not selector and not namespaces:
            # every pod so far was waited for until bound: the barrier holds by construction
            return
        self._not_churning(op)
        if self.window is not None and op.stage == "Attempted":
            raise Unsupported(f"{op_name(op)}: an Attempted barrier on the measured pods")
        if self.window is not None:
            return  # the measured phase waits for every measured pod anyway
        created = tuple(
            dict.fromkeys(
                step.namespace
                for step in self._steps_in(self.phase)
                if isinstance(step, perf_steps.CreatePods)
            )
        )
        self._step(
            perf_steps.Barrier(
                op=op.index,
                namespaces=namespaces or created,
                stage="Attempted" if op.stage == "Attempted" else "Scheduled",
                label_selector=selector,
            )
        )
        self.timed = True
        if op.stage == "Scheduled" and not selector and not namespaces:
            self.unwaited = False

    def workload(self) -> Workload:
        """The workload of the ops added; a steps workload when some op runs in order.

        Raises
        ------
        Unsupported
            A measured span left open, or no measured pods.
        """
        if self.window is not None:
            raise Unsupported(f"{op_name(self.window)}: no stopCollectingMetrics after it")
        if not self.measured:
            raise Unsupported("no createPods op with collectMetrics: true")
        if self.timed:
            return perf_steps.StepsWorkload(
                name=self.name,
                description=f"scheduler_perf {self.name}",
                upstream=self.name,
                nodes=tuple(self.nodes),
                measured_pods=tuple(self.measured),
                churn=self.churn,
                steps=self._steps_in(Phase.BEFORE),
                after=self._steps_in(Phase.AFTER),
                namespace_objects=tuple(self.namespace_objects),
            )
        return Workload(
            name=self.name,
            description=f"scheduler_perf {self.name}",
            upstream=self.name,
            nodes=tuple(self.nodes),
            init_pods=tuple(self.init),
            measured_pods=tuple(self.measured),
            churn=self.churn,
        )


def _refuse(op: OpRef) -> NoReturn:
    """Refuse an op the translation has no way to run."""
    if op.opcode in DRA_OPCODES:
        raise Unsupported(f"{op_name(op)}: dynamic resource allocation (DRA) is out of scope")
    raise Unsupported(f"{op_name(op)}: {_WHY.get(op.opcode, 'not supported yet')}")
