"""A scheduler_perf workload as the :class:`~asched.tools.bench.workload.Workload` asched runs.

The runner has four phases: nodes, init pods (all bound before measuring), churn (while
measuring) and measured pods. An upstream workload whose ops have that shape translates
one to one:

* ``createNodes`` ops (any number, first) become node groups built from their node
  template file (one strategy per op, the first given of nodeAllocatable, labelNodePrepare
  and uniqueNodeLabel, as upstream; ``labelNodePrepareStrategy``: values round-robin;
  ``uniqueNodeLabelStrategy``: the node's name; ``nodeAllocatableStrategy.nodeAllocatable``
  patched into ``status.allocatable``; with ``nodeAllocatableStrategy`` a CSINode per
  node, its drivers' ``allocatable.count`` from ``csiNodeAllocatable`` and the
  migrated-plugins annotation from ``migratedPlugins``, as upstream's
  ``NodeAllocatableStrategy`` creates it);
* ``createNamespaces`` (plain namespaces) anywhere before the measured pods;
* ``createPods`` without ``collectMetrics`` become init pods, in namespace
  ``namespace-<op index>`` unless the op names one, built from the pod template file;
  with ``skipWaitToCompletion`` they are not waited for; with
  ``persistentVolumeClaimTemplatePath`` (and ``persistentVolumeTemplatePath``) each pod
  gets a claim and a PV bound to each other, created before it
  (:mod:`asched.tools.bench.volume_objects`);
* ``sleep``, ``deletePods`` (namespace, labelSelector, deletePodsPerSecond,
  skipWaitToCompletion), ``createAny`` (any kind; the runner maps it by API discovery),
  ``updateAny`` and barriers after pods not waited for, before the measured pods: the
  workload then runs its ops before measuring as ordered steps
  (:mod:`asched.tools.bench.perf_steps`);
* ``createNamespaces`` with a template: labelled namespaces ``<prefix>-<i>``;
* ``createPodSets``: its ``createPodsOp`` once per namespace ``<namespacePrefix>-<i>``;
* at most one ``churn`` (create without a limit, or recreate) of Node, Pod and Service
  templates;
* ``barrier`` (stage Scheduled) after pods that were all waited for is kept implicitly:
  the runner binds every init pod before measuring;
* one ``createPods`` with ``collectMetrics: true``, or ``startCollectingMetrics`` (no
  label selector; its namespaces, when given, hold the pods), one waited ``createPods``,
  barriers, ``stopCollectingMetrics``: the same measured phase; createPods,
  createPodSets, createAny, updateAny, sleep, deletePods and barrier ops after it run, in
  order, once the measured phase has ended (not in a churning workload).

Pod, node, createAny and updateAny templates are rendered with Go ``text/template``
(:mod:`asched.tools.bench.go_template`) once per object, as upstream renders them: a
template that reads ``.Index`` gives one object per index (runs of alike objects share a
group), one that does not is rendered once.

Everything else is refused with :class:`Unsupported` naming the op and why (never skipped,
never run as something else): a start/stopCollectingMetrics span holding anything but one
waited ``createPods`` and barriers, ops after the measured pods other than those above,
steady-state pods, pod templates naming claims the config does not create, generic
ephemeral volumes, dynamic resource allocation, templates beyond the ``text/template``
subset (or with actions where upstream does not render), custom scheduler configurations
and feature gates that change scheduling semantics.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from asched.errors import InputError
from asched.tools.bench import perf_config, perf_steps
from asched.tools.bench.perf_config import Op, PerfWorkload, TestCase
from asched.tools.bench.perf_templates import (
    Unsupported as Unsupported,
    op_name,
    plain_template,
    read_plain,
    render_each,
    rendered_runs,
)
from asched.tools.bench.volume_spec import BoundVolumes, CSINodeSpec
from asched.tools.bench.workload import Churn, ChurnObject, NodeGroup, PodGroup, Workload

#: Feature gates that only toggle upstream's internals (queueing, async API calls,
#: batching): accepted whatever their value, since asched's scheduling semantics are the
#: same either way. Any other gate is refused with its name.
INTERNAL_FEATURE_GATES: Final = frozenset(
    {
        "SchedulerQueueingHints",
        "SchedulerAsyncPreemption",
        "SchedulerAsyncAPICalls",
        "SchedulerPopFromBackoffQ",
        "OpportunisticBatching",
    }
)
#: Gates of behaviour asched always has (upstream's GA, locked on by v1.33): accepted
#: at that value, refused at the other (asched cannot switch them off).
FIXED_FEATURE_GATES: Final[Mapping[str, bool]] = {
    "NodeInclusionPolicyInPodTopologySpread": True,
}
DRA_OPCODES: Final = frozenset(
    {"allocResourceClaims", "createResourceClaims", "createResourceDriver"}
)
#: upstream's churn interval when the op gives none, milliseconds
DEFAULT_CHURN_INTERVAL_MS: Final = 500


def translate(case: TestCase, workload: PerfWorkload) -> Workload:
    """``workload`` of ``case`` as an asched workload.

    Raises
    ------
    Unsupported
        The workload uses an op, field, gate or shape the runner cannot honour.
    PerfConfigError
        A parameter is undefined, mistyped or unused.
    InputError
        A template file is missing or not an object of the expected kind.
    """
    name = perf_config.full_name(case, workload)
    gates = {**case.feature_gates, **workload.feature_gates}
    refused = sorted(
        g
        for g, value in gates.items()
        if g not in INTERNAL_FEATURE_GATES and FIXED_FEATURE_GATES.get(g) is not value
    )
    if refused:
        accepted = [
            *sorted(INTERNAL_FEATURE_GATES),
            *(f"{g}={str(v).lower()}" for g, v in sorted(FIXED_FEATURE_GATES.items())),
        ]
        raise Unsupported(
            f"feature gate {', '.join(refused)}: changes scheduling semantics asched does not "
            f"switch (accepted gates: {', '.join(accepted)})"
        )
    if case.scheduler_config_path is not None:
        raise Unsupported(
            f"schedulerConfigPath {case.scheduler_config_path.name}: a custom "
            "kube-scheduler configuration"
        )
    ops = perf_config.expand(case, workload)
    builder = _Builder(case, name)
    for op in ops:
        builder.add(op)
    return builder.workload(workload)


class _Builder:
    def __init__(self, case: TestCase, name: str) -> None:
        self.case = case
        self.name = name
        self.nodes: list[NodeGroup] = []
        self.init: list[PodGroup] = []
        self.measured: list[PodGroup] = []
        self.churn: Churn | None = None
        self.node_prefixes: set[str] = set()
        #: the ops before the measured pods, in order; run as steps when ``timed``
        self.steps: list[perf_steps.Step] = []
        #: the ops after the measured pods (``steps`` points here once they are seen)
        self.after: list[perf_steps.Step] = []
        self.before = self.steps
        #: the op index of the measured createPods (or createPodSets)
        self.measured_op: int | None = None
        #: the open startCollectingMetrics op and its namespaces (None: no window open)
        self.window: tuple[Op, tuple[str, ...]] | None = None
        #: an op the fixed init phase cannot honour (sleep, deletePods, skip-wait pods)
        self.timed = False
        #: Namespace objects of createNamespaces ops with a template
        self.namespace_objects: list[dict[str, Any]] = []
        #: pods created and not waited for so far
        self.unwaited = False

    def add(self, op: Op) -> None:
        if op.opcode == "startCollectingMetrics":
            self._start_collecting(op)
            return
        if op.opcode == "stopCollectingMetrics":
            self._stop_collecting(op)
            return
        if self.window is not None:
            self._in_window(op)
            return
        if self.measured and op.index != self.measured_op:
            if op.opcode not in _AFTER_MEASURED:
                raise Unsupported(
                    f"{op_name(op)} after the measured createPods: only "
                    f"{', '.join(sorted(_AFTER_MEASURED))} run there"
                )
            if self.churn is not None:
                raise Unsupported(
                    f"{op_name(op)} after the measured createPods of a churning workload "
                    "(the churn stops with the measured phase)"
                )
            self.timed = True
        if op.opcode in DRA_OPCODES:
            raise Unsupported(f"{op_name(op)}: dynamic resource allocation (DRA) is out of scope")
        handler = {
            "createNodes": self._nodes,
            "createNamespaces": self._namespaces,
            "createPods": self._pods,
            "churn": self._churn,
            "barrier": self._barrier,
            "sleep": self._sleep,
            "deletePods": self._delete_pods,
            "createAny": self._create_any,
            "updateAny": self._update_any,
            "createPodSets": self._pod_sets,
        }.get(op.opcode)
        if handler is None:
            raise Unsupported(f"{op_name(op)}: {_WHY.get(op.opcode, 'not supported yet')}")
        handler(op)

    def _nodes(self, op: Op) -> None:
        if self.steps or self.churn is not None:
            raise Unsupported(f"{op_name(op)}: nodes created after pods, sleep or churn")
        count = int(op.get("count", 0))
        if count == 0:
            return
        path = op.get("nodeTemplatePath")
        runs = rendered_runs(path, "Node", op, count) if path else [(count, dict(_DEFAULT_NODE))]
        if len(runs) > 1 and node_strategy(op) == "labelNodePrepareStrategy":
            raise Unsupported(
                f"{op_name(op)}: labelNodePrepareStrategy with a node template rendered "
                "differently per .Index"
            )
        for number, (run, base) in enumerate(runs):
            suffix = f"-{number}" if len(runs) > 1 else ""
            self._node_group(op, base, run, suffix)

    def _node_group(self, op: Op, base: Mapping[str, Any], count: int, suffix: str) -> None:
        # upstream applies one strategy per op, the first given in this order:
        # nodeAllocatableStrategy, labelNodePrepareStrategy, uniqueNodeLabelStrategy
        chosen = node_strategy(op)
        spread: dict[str, tuple[str, ...]] = {}
        if chosen == "labelNodePrepareStrategy":
            key, values = _label_strategy(op, op.get(chosen))
            spread[key] = values
        unique = op.get("uniqueNodeLabelStrategy")
        unique_key = None
        if chosen == "uniqueNodeLabelStrategy":
            if not isinstance(unique, Mapping) or not isinstance(unique.get("labelKey"), str):
                raise InputError(
                    f"{self.name}: {op_name(op)}.uniqueNodeLabelStrategy: needs labelKey"
                )
            unique_key = unique["labelKey"]
        patch = _allocatable_patch(op)
        csi_node = _csi_node(op)
        fixed = (base.get("metadata") or {}).get("name")
        prefix = f"{_generate_name(base, 'scheduler-perf')}-{op.index}{suffix}"
        if fixed:
            if count != 1:
                raise Unsupported(
                    f"{op_name(op)}: {count} nodes from a template with the fixed name {fixed}"
                )
            patch = {**(patch or {}), "metadata": {"name": fixed}}
            prefix = f"{prefix}-fixed"
        self.nodes.append(
            NodeGroup(
                count=count,
                name_prefix=prefix,
                base=base,
                spread_labels=spread,
                unique_label=unique_key,
                hostname_label=True,
                patch=patch,
                csi_node=csi_node,
            )
        )

    def _namespaces(self, op: Op) -> None:
        # Plain namespaces: the runner creates every namespace its pods use.
        path = op.get("namespaceTemplatePath")
        if path is None:
            return
        base = plain_template(path, "Namespace", op)
        prefix = op.get("prefix") or f"namespace-{op.index}"
        for i in range(int(op.get("count", 0))):
            meta = {**(base or {}).get("metadata", {}), "name": f"{prefix}-{i}"}
            meta.pop("generateName", None)
            self.namespace_objects.append({**(base or {}), "metadata": meta})
        self.timed = True

    def _pod_sets(self, op: Op) -> None:
        """``count`` createPods ops, the i-th in namespace ``<namespacePrefix>-<i>``."""
        inner = op.get("createPodsOp")
        prefix = op.get("namespacePrefix")
        if not isinstance(inner, Mapping) or not isinstance(prefix, str) or not prefix:
            raise InputError(f"{self.name}: {op_name(op)}: needs namespacePrefix and createPodsOp")
        for i in range(int(op.get("count", 0))):
            self._pods(Op(op.index, "createPods", {**inner, "namespace": f"{prefix}-{i}"}))

    def _pods(self, op: Op) -> None:
        if op.get("steadyState"):
            raise Unsupported(
                f"{op_name(op)}: steadyState (keeping count pods for a duration, deleting "
                "scheduled ones and creating new ones: the runner's phases have no such loop)"
            )
        path = op.get("podTemplatePath") or self.case.default_pod_template
        count = int(op.get("count", 0))
        namespace = str(op.get("namespace") or f"namespace-{op.index}")
        volumes = self._bound_volumes(op)
        if count == 0:
            return
        runs = rendered_runs(path, "Pod", op, count) if path else [(count, dict(_DEFAULT_POD))]
        groups = tuple(
            _named(_pod_group(base, count=run, namespace=namespace, op=op, volumes=volumes))
            for run, base in runs
        )
        if op.get("collectMetrics"):
            if self.measured_op not in (None, op.index):
                raise Unsupported(f"{op_name(op)}: a second createPods with collectMetrics")
            self.measured_op = op.index
            self.measured.extend(groups)
            self.steps = self.after
        else:
            if self.churn is not None:
                raise Unsupported(f"{op_name(op)}: unmeasured pods created while churning")
            wait = not op.get("skipWaitToCompletion")
            if not self.measured:
                self.init.extend(groups)
            self.steps.append(perf_steps.CreatePods(op=op.index, groups=groups, wait=wait))
            if not wait:
                self.timed = self.unwaited = True

    def _bound_volumes(self, op: Op) -> BoundVolumes | None:
        """A PV and a claim per pod from the op's templates (upstream's ``getPodStrategy``:
        without a claim template the pods are plain, whatever the PV template says)."""
        claim_path = op.get("persistentVolumeClaimTemplatePath")
        if claim_path is None:
            return None
        pv_path = op.get("persistentVolumeTemplatePath")
        if pv_path is None:
            raise InputError(
                f"{self.name}: {op_name(op)}.persistentVolumeTemplatePath: required with "
                "persistentVolumeClaimTemplatePath (each pod gets a PV bound to its claim)"
            )
        pv = plain_template(pv_path, "PersistentVolume", op)
        claim = plain_template(claim_path, "PersistentVolumeClaim", op)
        assert pv is not None  # (the path is given)
        assert claim is not None
        return BoundVolumes(persistent_volume=pv, claim=claim)

    def _sleep(self, op: Op) -> None:
        self._not_churning(op)
        seconds = op.get("duration")
        if not isinstance(seconds, (int, float)) or seconds < 0:
            raise InputError(f"{self.name}: {op_name(op)}.duration: needs a duration like 1s")
        self.steps.append(perf_steps.Sleep(op=op.index, seconds=float(seconds)))
        self.timed = True

    def _delete_pods(self, op: Op) -> None:
        self._not_churning(op)
        namespace = op.get("namespace")
        if not isinstance(namespace, str) or not namespace:
            raise InputError(f"{self.name}: {op_name(op)}.namespace: required")
        selector = op.get("labelSelector") or {}
        if not isinstance(selector, Mapping):
            raise InputError(f"{self.name}: {op_name(op)}.labelSelector: must be a map")
        rate = int(op.get("deletePodsPerSecond") or 0)
        if rate < 0:
            raise InputError(
                f"{self.name}: {op_name(op)}.deletePodsPerSecond: must be >= 0, got {rate}"
            )
        self.steps.append(
            perf_steps.DeletePods(
                op=op.index,
                namespace=namespace,
                label_selector=",".join(f"{k}={v}" for k, v in selector.items()),
                per_second=rate,
                wait=not op.get("skipWaitToCompletion"),
            )
        )
        self.timed = True

    def _create_any(self, op: Op) -> None:
        self._not_churning(op)
        path, count, namespace = self._any_fields(op)
        created = tuple(render_each(path, op, count))
        for obj in created:
            meta = dict(obj.get("metadata") or {})
            if (
                count > 1
                and meta.get("name")
                and all((o.get("metadata") or {}).get("name") == meta["name"] for o in created)
            ):
                raise InputError(
                    f"{self.name}: {op_name(op)}.count: {count} objects from a template with "
                    f"the fixed name {meta['name']}"
                )
        self.steps.append(
            perf_steps.CreateAny(
                op=op.index, template=Path(path).name, objects=created, namespace=namespace
            )
        )
        self.timed = True

    def _update_any(self, op: Op) -> None:
        self._not_churning(op)
        path, count, namespace = self._any_fields(op)
        updated = tuple(render_each(path, op, count))
        for index, obj in enumerate(updated):
            if not (obj.get("metadata") or {}).get("name"):
                raise InputError(
                    f"{Path(path).name}: {op_name(op)} object {index} has no metadata.name"
                )
        subresources = op.get("subresources") or []
        if not isinstance(subresources, list) or not all(
            isinstance(x, str) and x for x in subresources
        ):
            raise InputError(f"{self.name}: {op_name(op)}.subresources: must be a list of names")
        self.steps.append(
            perf_steps.UpdateAny(
                op=op.index,
                template=Path(path).name,
                objects=updated,
                namespace=namespace,
                per_second=int(op.get("updatePerSecond") or 0),
                subresources=tuple(subresources),
            )
        )
        self.timed = True

    def _any_fields(self, op: Op) -> tuple[Path, int, str]:
        """createAny's and updateAny's template path, count (1 by default) and namespace."""
        path = op.get("templatePath")
        if path is None:
            raise InputError(f"{self.name}: {op_name(op)}.templatePath: required")
        namespace = op.get("namespace") or ""
        if not isinstance(namespace, str):
            raise InputError(f"{self.name}: {op_name(op)}.namespace: must be a name")
        return Path(path), int(op.get("count", 1)), namespace

    def _start_collecting(self, op: Op) -> None:
        if self.measured or self.window is not None:
            raise Unsupported(f"{op_name(op)}: a second span of measured ops")
        if op.get("labelSelector"):
            raise Unsupported(f"{op_name(op)}: metrics of pods chosen by a label selector")
        namespaces = op.get("namespaces") or []
        if not isinstance(namespaces, list) or not all(isinstance(n, str) for n in namespaces):
            raise InputError(f"{self.name}: {op_name(op)}.namespaces: must be a list of names")
        self.window = (op, tuple(namespaces))

    def _in_window(self, op: Op) -> None:
        """An op between start and stopCollectingMetrics: one waited createPods (the
        measured pods, as a createPods with collectMetrics) and barriers on them."""
        assert self.window is not None
        start, namespaces = self.window
        if op.opcode == "barrier":
            self._barrier(op)
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
        if op.get("skipWaitToCompletion"):
            raise Unsupported(f"{op_name(op)}: measured pods not waited for")
        namespace = op.get("namespace") or f"namespace-{op.index}"
        if namespaces and namespace not in namespaces:
            raise Unsupported(
                f"{op_name(op)}: pods in {namespace}, outside the namespaces "
                f"{op_name(start)} collects ({', '.join(namespaces)})"
            )
        self._pods(Op(op.index, op.opcode, {**op.fields, "collectMetrics": True}))

    def _stop_collecting(self, op: Op) -> None:
        if self.window is None:
            raise Unsupported(f"{op_name(op)}: no startCollectingMetrics before it")
        if not self.measured:
            raise Unsupported(f"{op_name(op)}: no pods created since {op_name(self.window[0])}")
        self.window = None

    def _not_churning(self, op: Op) -> None:
        if self.churn is not None:
            raise Unsupported(f"{op_name(op)}: while churning (churn runs with the measured pods)")

    def _churn(self, op: Op) -> None:
        if self.churn is not None:
            raise Unsupported(f"{op_name(op)}: a second churn op")
        mode = op.get("mode")
        number = int(op.get("number", 0))
        if mode == "create" and number > 0:
            raise Unsupported(f"{op_name(op)}: churn create with a limit (number: {number})")
        if mode == "recreate" and number < 1:
            raise InputError(f"{self.name}: {op_name(op)}.number: must be >= 1 in recreate mode")
        namespace = str(op.get("namespace") or f"namespace-{op.index}")
        objects: list[ChurnObject] = []
        for path in op.get("templatePaths") or ():
            raw = read_plain(path, op)
            kind = raw.get("kind")
            if kind == "Node":
                prefix = f"{_generate_name(raw, 'node-churn')}-{op.index}"
                group = NodeGroup(count=1, name_prefix=prefix, base=raw)
                objects.append(ChurnObject(kind="Node", node=group))
            elif kind == "Pod":
                pod = _pod_group(raw, count=1, namespace=namespace, op=op)
                objects.append(ChurnObject(kind="Pod", pod=pod))
            elif kind == "Service":
                objects.append(ChurnObject(kind="Service"))
            else:
                raise Unsupported(f"{op_name(op)}: churn of {kind} objects ({Path(path).name})")
        interval = int(op.get("intervalMilliseconds") or DEFAULT_CHURN_INTERVAL_MS)
        self.churn = Churn(
            mode="recreate" if mode == "recreate" else "create",
            interval=max(interval, 10) / 1000.0,
            number=max(number, 1),
            objects=tuple(objects),
        )

    def _barrier(self, op: Op) -> None:
        stage = op.get("stageRequirement", "Scheduled")  # (the parser checks the value)
        selector = op.get("labelSelector") or {}
        if not isinstance(selector, Mapping):
            raise InputError(f"{self.name}: {op_name(op)}.labelSelector: must be a map")
        namespaces = op.get("namespaces") or []
        if not isinstance(namespaces, list) or not all(isinstance(n, str) for n in namespaces):
            raise InputError(f"{self.name}: {op_name(op)}.namespaces: must be a list of names")
        if stage == "Scheduled" and not self.unwaited and not selector and not namespaces:
            # every pod so far was waited for until bound: the barrier holds by construction
            return
        self._not_churning(op)
        if self.window is not None and stage == "Attempted":
            raise Unsupported(f"{op_name(op)}: an Attempted barrier on the measured pods")
        if self.window is not None:
            return  # the measured phase waits for every measured pod anyway
        created = tuple(
            dict.fromkeys(s.namespace for s in self.steps if isinstance(s, perf_steps.CreatePods))
        )
        self.steps.append(
            perf_steps.Barrier(
                op=op.index,
                namespaces=tuple(namespaces) or created,
                stage="Attempted" if stage == "Attempted" else "Scheduled",
                label_selector=",".join(f"{k}={v}" for k, v in selector.items()),
            )
        )
        self.timed = True
        if stage == "Scheduled" and not selector and not namespaces:
            self.unwaited = False

    def workload(self, workload: PerfWorkload) -> Workload:
        if self.window is not None:
            raise Unsupported(f"{op_name(self.window[0])}: no stopCollectingMetrics after it")
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
                steps=tuple(self.before),
                after=tuple(self.after),
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


#: the ops that may follow the measured pods (run after the measured phase ends)
_AFTER_MEASURED: Final = frozenset(
    {"createPods", "createPodSets", "createAny", "updateAny", "sleep", "deletePods", "barrier"}
)
_WHY: Final = {
    "waitForPodGroups": "workload-aware PodGroups (waitForPodGroups)",
    "createPodGroups": "workload-aware PodGroups (createPodGroups)",
}

_DEFAULT_NODE: Final[Mapping[str, Any]] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"generateName": "scheduler-perf-"},
    "spec": {},
    "status": {
        "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "conditions": [{"status": "True", "type": "Ready"}],
        "phase": "Running",
    },
}
_DEFAULT_POD: Final[Mapping[str, Any]] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"generateName": "pod-"},
    "spec": {
        "containers": [
            {
                "image": "registry.k8s.io/pause:3.10",
                "name": "pause",
                "ports": [{"containerPort": 80}],
                "resources": {
                    "limits": {"cpu": "100m", "memory": "500Mi"},
                    "requests": {"cpu": "100m", "memory": "500Mi"},
                },
            }
        ]
    },
}


#: createNodes' node strategies in upstream's order of precedence (getNodePreparer uses
#: the first one given and ignores the others)
NODE_STRATEGIES: Final = (
    "nodeAllocatableStrategy",
    "labelNodePrepareStrategy",
    "uniqueNodeLabelStrategy",
)


def node_strategy(op: Op) -> str | None:
    """The one node strategy of a createNodes op that upstream applies, or None."""
    return next((name for name in NODE_STRATEGIES if op.get(name) is not None), None)


def _generate_name(raw: Mapping[str, Any], default: str) -> str:
    meta = raw.get("metadata") or {}
    text = str(meta.get("generateName") or default).rstrip("-")
    return text[:24] or default


def _label_strategy(op: Op, strategy: Any) -> tuple[str, tuple[str, ...]]:
    where = f"{op_name(op)}.labelNodePrepareStrategy"
    if not isinstance(strategy, Mapping) or not isinstance(strategy.get("labelKey"), str):
        raise InputError(f"{where}: needs labelKey and labelValues")
    values = strategy.get("labelValues")
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise InputError(f"{where}.labelValues: must be a non-empty list of strings")
    return strategy["labelKey"], tuple(values)


def _allocatable_patch(op: Op) -> dict[str, Any] | None:
    strategy = op.get("nodeAllocatableStrategy")
    if strategy is None:
        return None
    where = f"{op_name(op)}.nodeAllocatableStrategy"
    if not isinstance(strategy, Mapping):
        raise InputError(f"{where}: must be a map")
    allocatable = strategy.get("nodeAllocatable") or {}
    if not isinstance(allocatable, Mapping):
        raise InputError(f"{where}.nodeAllocatable: must be a map of resource to quantity")
    return {"status": {"allocatable": {str(k): str(v) for k, v in allocatable.items()}}}


def _csi_node(op: Op) -> CSINodeSpec | None:
    """The CSINode upstream's ``NodeAllocatableStrategy`` gives every node: one whenever
    the strategy is given (its drivers from ``csiNodeAllocatable``, possibly none; the
    migrated-plugins annotation from ``migratedPlugins``, possibly empty)."""
    strategy = op.get("nodeAllocatableStrategy")
    if not isinstance(strategy, Mapping):
        return None
    where = f"{op_name(op)}.nodeAllocatableStrategy"
    raw_drivers = strategy.get("csiNodeAllocatable") or {}
    if not isinstance(raw_drivers, Mapping):
        raise InputError(f"{where}.csiNodeAllocatable: must be a map of CSI driver to {{count}}")
    drivers: dict[str, int | None] = {}
    for driver, resources in raw_drivers.items():
        count = resources.get("count") if isinstance(resources, Mapping) else None
        valid = resources is None or isinstance(resources, Mapping)
        if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
            valid = False
        if not valid or (count is not None and count < 0):
            raise InputError(
                f"{where}.csiNodeAllocatable.{driver}: must be {{count: <integer >= 0>}}, "
                f"got {resources!r}"
            )
        drivers[str(driver)] = count
    plugins = strategy.get("migratedPlugins") or []
    if not isinstance(plugins, list) or not all(isinstance(p, str) for p in plugins):
        raise InputError(f"{where}.migratedPlugins: must be a list of in-tree plugin names")
    return CSINodeSpec(drivers=drivers, migrated_plugins=tuple(plugins))


def _named(group: PodGroup) -> PodGroup:
    """``group`` keeping its template's ``metadata.name`` (a run of one pod rendered with
    a name of its own, as upstream's event_handling templates name theirs:
    ``pod-blocker-{{ .Index }}``), which later ops (updateAny) refer to."""
    name = ((group.base or {}).get("metadata") or {}).get("name")
    if not name or group.count != 1:
        return group
    return dataclasses.replace(group, patch={**(group.patch or {}), "metadata": {"name": name}})


def _pod_group(
    base: Mapping[str, Any],
    *,
    count: int,
    namespace: str,
    op: Op,
    volumes: BoundVolumes | None = None,
) -> PodGroup:
    """A pod group from a template's object; a bare ``spec.priority`` becomes the group's
    priority (the runner creates its PriorityClass: the API server's Priority admission
    refuses a bare priority). ``volumes``: a PV and claim per pod, whose volume replaces
    the template's."""
    spec = base.get("spec") or {}
    if spec.get("priorityClassName"):
        raise Unsupported(
            f"{op_name(op)}: priorityClassName {spec['priorityClassName']} (a PriorityClass "
            "the config does not create)"
        )
    priority = spec.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise InputError(f"{op_name(op)}: spec.priority must be an integer, got {priority!r}")
    own = spec.get("volumes") or () if volumes is None else ()
    if any("persistentVolumeClaim" in v for v in own):
        raise Unsupported(
            f"{op_name(op)}: pods whose template names claims (the config creates none; "
            "persistentVolumeClaimTemplatePath does)"
        )
    if any("ephemeral" in v for v in own):
        raise Unsupported(
            f"{op_name(op)}: generic ephemeral volumes (no controller creates their claims)"
        )
    if spec.get("resourceClaims"):
        raise Unsupported(f"{op_name(op)}: dynamic resource allocation (DRA) is out of scope")
    return PodGroup(
        count=count, namespace=namespace, base=dict(base), priority=priority, bound_volumes=volumes
    )
