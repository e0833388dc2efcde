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

The gates and the scheduler configuration are checked here; each op is then validated
into its typed form (:mod:`asched.tools.bench.perf_ops`), a malformed field an
:class:`~asched.errors.InputError` naming the op, and placed by
:class:`~asched.tools.bench.perf_builder.Builder`, which refuses what it cannot run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from asched.tools.bench import perf_config, perf_ops
from asched.tools.bench.perf_builder import Builder
from asched.tools.bench.perf_config import PerfWorkload, TestCase
from asched.tools.bench.perf_templates import Unsupported as Unsupported
from asched.tools.bench.workload import Workload

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


def translate(case: TestCase, workload: PerfWorkload) -> Workload:
    """``workload`` of ``case`` as an asched workload.

    Raises
    ------
    Unsupported
        The workload uses an op, field, gate or shape the runner cannot honour.
    PerfConfigError
        A parameter is undefined, mistyped or unused.
    InputError
        A field of an op is malformed, or a template file is missing or not an object of
        the expected kind.
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
    context = perf_ops.Context(name=name, default_pod_template=case.default_pod_template)
    builder = Builder(context)
    for op in perf_config.expand(case, workload):
        builder.add(op)
    return builder.workload()
