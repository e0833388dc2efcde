"""One ``asched bench run``: build the cluster, run the scheduler, measure, replay, report.

Phases, in order (each waits on the observer's watch, never on a poll of the API)::

    backend up ─ observer LIST+WATCH ─ namespaces, priority classes, storage classes
      ─ nodes (+ status) ─ CSINodes, local PVs ─ scheduler process starts ─ init pods created and all bound (or one warm-up pod)
      ─ [measure-start] churn + measured pods created (64 in flight) ─ all bound
      ─ [measure-end] scheduler stopped (SIGTERM)
      ─ ceiling: fresh pods bound round-robin by the trivial binder
      ─ replay (quality, over-commit) ─ result

A scheduler_perf workload with ordered steps (:mod:`asched.tools.bench.perf_steps`: pods
waited for or not, sleeps, deletions, barriers, createAny and updateAny objects) runs them in place of the init
pods (after the warm-up pod when none of them waits for pods), and its ``after`` steps
once the measured phase has ended, before the scheduler stops; deletions left running in
the background are cancelled then.

A pod with claims is created after them by the same create worker (its pre-bound claim
and PV, or its unbound claims: :func:`asched.tools.bench.loadgen.pod_chains`); the counts
are of pods.

The measured phase ends when every measured pod is seen bound, or after the timeout, or
when no measured pod was bound for ``stall`` seconds (the result then has
``completed=False`` and the run fails). A workload with ``settleSeconds`` (gangs that
cannot all fit) also ends it, without failing (``settled=True``), once every measured pod
exists, no measured pod was bound for that long and, when asched exports the gauge, no
pod waits at Permit (a wait that only its timeout can end keeps the phase going).

Gangs: the PodGroup CRD is installed if absent (and waited for until Established), the
PodGroups are created before the clock starts, their member pods with the measured pods;
:mod:`asched.tools.bench.gang_figures` computes the gang figures afterwards. Processes we start are stopped by PID; on an
existing cluster the objects we created are deleted at the end (``keep`` to skip).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import itertools
import logging
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import uvloop

from asched.config.load import load_config
from asched.errors import AschedError
from asched.framework.registry import installed
from asched.tools.backends.kubeconfig import read_kubeconfig
from asched.tools.backends.process import Child
from asched.tools.backends.rest import RestClient
from asched.tools.bench import (
    ceiling,
    gang_figures,
    gang_objects,
    gang_observe,
    loadgen,
    objects,
    perf_objects,
    perf_steps,
    procstat,
    quality,
    report,
    volume_objects,
)
from asched.tools.bench.backend import Backend, BackendName
from asched.tools.bench.extender_child import (
    ExtenderChild,
    ExtenderOptions,
    call_figures,
    pods_on_rejected_nodes,
)
from asched.tools.bench.fast_create import FastCreator
from asched.tools.bench.loadgen import CreateStats
from asched.tools.bench.observe import PHASE_LABEL, Observer
from asched.tools.bench.progress import Display
from asched.tools.bench.quality import ReplayOrder
from asched.tools.bench.results import Invariants, Phase, RunResult, SchedulerInfo
from asched.tools.bench.schedulers import (
    COSCHEDULING,
    KUBE_SCHEDULER_VERSION,
    SCHEDULER_NAME,
    AschedProcess,
    KubeSchedulerProcess,
    Profiler,
    SchedulerUnderTest,
    asched_config,
)
from asched.tools.bench.workload import PodGroup, Workload

logger = logging.getLogger(__name__)

SchedulerKind = Literal["asched", "kube-scheduler"]
CeilingMode = Literal["bind", "pipeline", "none"]
CEILING_NAMESPACE = "bench-ceiling"
DEFAULT_CEILING_PODS = 10_000


class BenchmarkError(AschedError):
    """A benchmark could not run (a phase before measuring failed); names the phase."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """How to run a workload (the flags of ``asched bench run``)."""

    workload: Workload
    backend: BackendName = "sim"
    kubeconfig: Path | None = None
    snapshot: Path | None = None
    sim_tls: bool = False
    scheduler: SchedulerKind = "asched"
    percentage: int = 0
    in_flight: int = 64
    max_inflight_binds: int = 64
    seed: int = 1
    ceiling: CeilingMode = "bind"
    ceiling_pods: int | None = None
    quality: bool = True
    replay_order: ReplayOrder = "queue"
    existing_nodes: bool = False
    keep: bool = False
    profiler: Profiler | None = None
    profile_out: Path | None = None
    timeout: float | None = None
    stall: float = 120.0
    workdir: Path | None = None
    progress: bool | None = None
    extender: ExtenderOptions | None = None
    #: throughput sample width in seconds; None: scheduler_perf's 1 s, finer for short phases
    sample_interval: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "snapshot": str(self.snapshot) if self.snapshot else None,
            "sim_tls": self.sim_tls,
            "scheduler": self.scheduler,
            "percentage_of_nodes_to_score": self.percentage,
            "in_flight_creates": self.in_flight,
            "max_inflight_binds": self.max_inflight_binds,
            "seed": self.seed,
            "ceiling": self.ceiling,
            "quality": self.quality,
            "replay_order": self.replay_order,
            "profiler": self.profiler,
            "extender": self.extender.to_json() if self.extender is not None else None,
            "sample_interval": self.sample_interval,
        }


def run(options: RunOptions) -> RunResult:
    """Run the workload; blocking. Logs of the processes stay in ``options.workdir``."""
    _check_node_storage(options)
    started_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    wall = time.monotonic()
    workdir = options.workdir or Path(tempfile.mkdtemp(prefix="asched-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    name: BackendName = "existing" if options.kubeconfig is not None else options.backend
    if name == "sim" and options.scheduler == "kube-scheduler" and not options.sim_tls:
        # client-go sends no bearer token over plain HTTP: kube-scheduler needs HTTPS.
        options = replace(options, sim_tls=True)
    backend = Backend(
        name,
        kubeconfig=options.kubeconfig,
        snapshot=options.snapshot,
        tls=options.sim_tls,
        controller_manager=options.workload.needs_pv_controller,
    )
    extender = ExtenderChild(options.extender, workdir) if options.extender is not None else None
    with backend, extender or contextlib.nullcontext():
        try:
            result = uvloop.run(_Run(options, backend, workdir, extender).main())
        except BaseExceptionGroup as group:
            # The observer's TaskGroup wraps whatever a phase raised: unwrap a lone error.
            if len(group.exceptions) == 1 and isinstance(group.exceptions[0], AschedError):
                raise group.exceptions[0] from None
            raise
    result.started_at = started_at
    result.wall_seconds = time.monotonic() - wall
    result.harness_cpu_seconds = procstat.self_cpu_seconds()
    if options.workdir is None and result.ok and options.profiler is None:
        shutil.rmtree(workdir, ignore_errors=True)
        result.scheduler.log = ""  # removed with the work dir: --workdir keeps the logs
    return result


def _check_node_storage(options: RunOptions) -> None:
    """Refuse per-node storage (CSINodes, local PVs) when the workload's nodes are not
    created: they belong to nodes named by the workload, which a snapshot or the
    cluster's own nodes replace (the pods would wait for PVs that never come)."""
    replaced = (
        "--snapshot"
        if options.snapshot is not None
        else "--existing-nodes"
        if options.existing_nodes
        else None
    )
    if replaced is None:
        return
    workload = options.workload
    for index, group in enumerate(workload.nodes):
        if group.csi_node is not None or group.local_volumes is not None:
            what = "localVolumes" if group.local_volumes is not None else "csiNode"
            raise BenchmarkError(
                f"{workload.source or workload.name}: nodes[{index}].{what}: per-node storage "
                f"needs the workload's own nodes, which {replaced} replaces"
            )


class _Run:
    """The phases of one run (see the module docstring). Owns the processes it starts."""

    def __init__(
        self,
        options: RunOptions,
        backend: Backend,
        workdir: Path,
        extender: ExtenderChild | None = None,
    ) -> None:
        self.options = options
        self.workload = options.workload
        self.backend = backend
        self.workdir = workdir
        self.extender = extender
        self.extender_calls: dict[str, Any] = {}
        self.display = Display(enabled=options.progress)
        self.scheduler: SchedulerUnderTest = self._make_scheduler()
        #: the gangs' objects: kube-scheduler runs its own gang scheduling (v1beta1
        #: PodGroups), asched Coscheduling over scheduler-plugins' CRD
        self.gang_api: gang_objects.GangApi = (
            gang_objects.NATIVE if options.scheduler == "kube-scheduler" else gang_objects.CRD
        )
        #: the Permit gauge's sampler while measuring a gang workload on asched
        self.gauge: gang_observe.GaugeSampler | None = None
        #: when the measured phase started, and when its pods were seen all created
        self.measure_origin = 0.0
        self._creation_done: float | None = None
        #: steps still running in the background (deletePods with skipWaitToCompletion)
        self._background: list[asyncio.Task[Any]] = []
        #: each deletePods step's record in the init figures and its progress
        self._deletions: list[tuple[dict[str, Any], loadgen.DeleteStats]] = []
        self._discovery: perf_objects.Discovery | None = None

    def _make_scheduler(self) -> SchedulerUnderTest:
        opts = self.options
        extenders = [self.extender.entry()] if self.extender is not None else []
        if opts.scheduler == "kube-scheduler":
            return KubeSchedulerProcess(
                self.backend.kubeconfig,
                self.workdir,
                percentage=opts.percentage,
                json_only=self.backend.name == "sim",
                extenders=extenders,
                profile=self.workload.scheduler_profile,
            )
        profile = self.workload.scheduler_profile
        if profile == "coscheduling" and COSCHEDULING not in installed():
            raise BenchmarkError(
                f"{self.workload.source or self.workload.name}: schedulerProfile coscheduling "
                f"needs the {COSCHEDULING} plugin, which this asched does not have"
            )
        return AschedProcess(
            self.backend.kubeconfig,
            self.workdir,
            percentage=opts.percentage,
            max_inflight_binds=opts.max_inflight_binds,
            seed=opts.seed,
            profiler=opts.profiler,
            profile_out=opts.profile_out,
            extenders=extenders,
            profile=profile,
        )

    async def main(self) -> RunResult:
        kubeconfig = self.backend.kubeconfig
        watch_rest = RestClient.from_kubeconfig(kubeconfig, connections=4, timeout=120)
        rest = RestClient.from_kubeconfig(
            kubeconfig, connections=self.options.in_flight + 8, timeout=60
        )
        writer = FastCreator(
            rest,
            read_kubeconfig(kubeconfig),
            connections=self.options.in_flight + 8,
            timeout=60,
        )
        async with watch_rest, rest, self.display, contextlib.aclosing(writer):
            self.rest = rest
            self.writer = writer
            self.observer = Observer(watch_rest)
            await self.observer.sync()
            async with asyncio.TaskGroup() as group:
                watching = group.create_task(self.observer.run(), name="observer")
                try:
                    result = await self._phases()
                finally:
                    self.scheduler.stop()
                    watching.cancel()
            if self.backend.name == "existing" and not self.options.keep:
                await self._cleanup()
        return result

    async def _phases(self) -> RunResult:
        await self._setup()
        await self._nodes()
        self.scheduler.start()
        try:
            init = await self._init()
            measured, churn = await self._measure()
            after = (
                self.workload.after if isinstance(self.workload, perf_steps.StepsWorkload) else ()
            )
            if after:
                init["after_measuring"] = (await self._steps(after))["steps"]
        finally:
            for task in self._background:
                await _finish(task)
            for record, stats in self._deletions:
                record.update(listed=stats.listed, deleted=stats.deleted)
        gangs = await self._gang_figures(measured) if self.workload.measured_gangs else None
        info = self._scheduler_info()
        ceiling_phase = await self._ceiling() if self.options.ceiling != "none" else None
        self.display.note("replaying bindings for placement quality")
        profile = load_config(asched_config(100), catalogue=installed().catalogue).profiles[0]
        replayed = await asyncio.to_thread(
            quality.replay,
            self.observer,
            profile,
            # The replay scores with the in-tree plugins only: with an extender its
            # regret would measure the extender's priorities, so only the invariants run.
            evaluate=self.options.quality and self.extender is None,
            order=self.options.replay_order,
        )
        result = RunResult(
            workload=self.workload.to_json(),
            options=self.options.to_json(),
            backend=self.backend.name,
            scheduler=info,
            measured=measured,
            ceiling=ceiling_phase,
            quality=replayed.quality,
            invariants=Invariants(
                overcommitted=replayed.overcommitted,
                rebinds=list(self.observer.rebinds),
                pods_on_missing_nodes=replayed.pods_on_missing_nodes,
                relists=self.observer.relists,
                pods_on_rejected_nodes=self._pods_on_rejected_nodes(),
                partial_gangs=gangs.partial if gangs is not None and self._gangs_enforced() else 0,
            ),
            churn=churn,
            init=init,
            versions=await self._versions(),
            machine=report.machine(),
            git=report.git_revision(),
            extender=self._extender_json(),
            gangs=gangs,
        )
        return result

    async def _setup(self) -> None:
        namespaces = [*self.workload.namespaces(), "bench-init", CEILING_NAMESPACE]
        if self.workload.churn is not None:
            namespaces.append("bench-churn")
        labelled = (
            [dict(o) for o in self.workload.namespace_objects]
            if isinstance(self.workload, perf_steps.StepsWorkload)
            else []
        )
        setup = [*labelled, *(objects.namespace(ns) for ns in dict.fromkeys(namespaces))]
        setup += [objects.priority_class(p) for p in sorted(self.workload.priorities())]
        setup += [volume_objects.storage_class(c) for c in self.workload.storage_classes]
        await loadgen.ensure(self.writer, setup)
        if self.workload.measured_gangs and self.gang_api == gang_objects.CRD:
            self.display.note("PodGroup CRD")
            try:
                await gang_objects.ensure_crd(self.rest)
            except gang_objects.CrdError as exc:
                raise BenchmarkError(f"setup: {exc}") from exc

    async def _nodes(self) -> None:
        if self.options.snapshot is not None or self.options.existing_nodes:
            return
        total = self.workload.n_nodes
        expected = self.observer.ready_nodes() + total
        task = self.display.add(
            "nodes", total, lambda: self.observer.ready_nodes() - expected + total
        )
        await loadgen.create_many(
            self.writer, loadgen.node_objects(self.workload.nodes), in_flight=self.options.in_flight
        )
        # CSINodes and local PVs: present before any pod is scheduled, as upstream's node
        # preparer makes them
        await loadgen.create_many(
            self.writer,
            loadgen.node_storage_objects(self.workload.nodes),
            in_flight=self.options.in_flight,
        )
        ok = await self.observer.wait_until(
            lambda: self.observer.ready_nodes() >= expected,
            self.observer.ready_nodes,
            within=120,
            stall=60,
        )
        self.display.finish(task)
        if not ok:
            raise BenchmarkError(
                f"nodes: the watch saw {self.observer.ready_nodes()} ready nodes, expected {expected}"
            )

    async def _init(self) -> dict[str, Any]:
        # A snapshot replaces the workload's init pods; with none, one warm-up pod proves
        # the scheduler is up before the clock starts.
        steps = self.workload.steps if isinstance(self.workload, perf_steps.StepsWorkload) else ()
        if steps and self.options.snapshot is None:
            if not any(isinstance(s, perf_steps.CreatePods) and s.wait for s in steps):
                await self._init_pods(())  # the warm-up pod
            return await self._steps(steps)
        groups = () if self.options.snapshot is not None else self.workload.init_pods
        return await self._init_pods(groups)

    async def _init_pods(self, groups: tuple[PodGroup, ...]) -> dict[str, Any]:
        """Create ``groups`` (none: one warm-up pod) and wait until all are bound."""
        groups = groups or (PodGroup(count=1, namespace="bench-init"),)
        total = sum(g.count for g in groups)
        observer = self.observer
        task = self.display.add("init pods (scheduled)", total, lambda: observer.bound["init"])
        started = time.monotonic()
        creating = asyncio.create_task(
            loadgen.create_many(
                self.writer,
                loadgen.pod_chains(groups, "init", scheduler_name=SCHEDULER_NAME),
                in_flight=self.options.in_flight,
            ),
            name="create init pods",
        )
        ok = await observer.wait_until(
            lambda: observer.bound["init"] >= total,
            lambda: observer.bound["init"],
            within=max(300.0, total / 5),
            stall=self.options.stall,
            abort=self._scheduler_died,
        )
        await _finish(creating)
        self.display.finish(task)
        if not ok:
            raise BenchmarkError(
                f"init pods: {observer.bound['init']} of {total} bound"
                f"{self._death()}; the scheduler's log is {self.scheduler.log}"
                f"\n--- last lines of the log ---\n{self.scheduler.log_tail()}"
            )
        return {
            "pods": total,
            "seconds": time.monotonic() - started,
            "nodes": observer.ready_nodes(),
        }

    async def _steps(self, steps: tuple[perf_steps.Step, ...]) -> dict[str, Any]:
        """Run a scheduler_perf workload's steps before measuring, in order (see
        :mod:`asched.tools.bench.perf_steps`)."""
        started = time.monotonic()
        done: list[dict[str, Any]] = []
        for step in steps:
            record = perf_steps.describe(step)
            done.append(record)
            if isinstance(step, perf_steps.Sleep):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, perf_steps.DeletePods):
                stats = loadgen.DeleteStats()
                self._deletions.append((record, stats))
                deleting = loadgen.delete_pods(
                    self.rest,
                    step.namespace,
                    step.label_selector,
                    per_second=step.per_second,
                    stats=stats,
                )
                if step.wait:
                    await deleting
                else:
                    self._background.append(
                        asyncio.create_task(deleting, name=f"deletePods op {step.op}")
                    )
            elif isinstance(step, perf_steps.Barrier):
                record["waited_seconds"] = await self._barrier(step)
            elif isinstance(step, perf_steps.CreateAny | perf_steps.UpdateAny):
                record.update(await self._any_step(step))
            else:
                await self._create_step(step)
        return {
            "pods": sum(s.count for s in steps if isinstance(s, perf_steps.CreatePods)),
            "seconds": time.monotonic() - started,
            "nodes": self.observer.ready_nodes(),
            "steps": done,
        }

    async def _any_step(self, step: perf_steps.CreateAny | perf_steps.UpdateAny) -> dict[str, int]:
        """Run a createAny or updateAny step (:mod:`asched.tools.bench.perf_objects`)."""
        if self._discovery is None:
            self._discovery = perf_objects.Discovery(self.rest)
        try:
            if isinstance(step, perf_steps.CreateAny):
                created = await perf_objects.create_any(self.rest, self._discovery, step, "any")
                return {"created": created}
            updated = await perf_objects.update_any(
                self.rest, self._discovery, step, scheduler_name=SCHEDULER_NAME
            )
            return {"updated": updated}
        except perf_objects.StepError as exc:
            raise BenchmarkError(f"op {step.op}: {exc}") from exc

    async def _barrier(self, step: perf_steps.Barrier) -> float:
        """Poll the pods of ``step.namespaces`` (matching its label selector) until each is
        bound, or (stage Attempted) bound or carrying a PodScheduled condition; seconds
        waited. Fails the run after the stall limit."""
        started = time.monotonic()
        done = _attempted if step.stage == "Attempted" else _bound
        while True:
            waiting = 0
            for namespace in step.namespaces:
                path = f"/api/v1/namespaces/{namespace}/pods"
                listed = await (
                    self.rest.list_all(path, label_selector=step.label_selector)
                    if step.label_selector
                    else self.rest.list_all(path)
                )
                waiting += sum(1 for pod in listed if not done(pod))
            if waiting == 0:
                return time.monotonic() - started
            if time.monotonic() - started > self.options.stall or self._scheduler_died():
                raise BenchmarkError(
                    f"barrier op {step.op}: {waiting} pods never {step.stage.lower()} within "
                    f"{self.options.stall:.0f} s{self._death()}"
                )
            await asyncio.sleep(0.2)

    async def _create_step(self, step: perf_steps.CreatePods) -> None:
        """Create one op's pods; with ``wait``, until the watch sees every one bound."""
        observer, total = self.observer, step.count
        keys: set[str] = set()

        def chains() -> Iterator[tuple[dict[str, Any], ...]]:
            for chain in loadgen.pod_chains(
                step.groups, "init", scheduler_name=SCHEDULER_NAME, name_prefix=step.name_prefix
            ):
                meta = chain[-1]["metadata"]
                keys.add(f"{meta['namespace']}/{meta['name']}")
                yield chain

        await loadgen.create_many(self.writer, chains(), in_flight=self.options.in_flight)
        if not step.wait:
            return

        def bound() -> int:
            return sum(1 for r in observer.pods.values() if r.bound is not None and r.key in keys)

        task = self.display.add(f"op {step.op} pods (scheduled)", total, bound)
        ok = await observer.wait_until(
            lambda: bound() >= total,
            bound,
            within=max(300.0, total / 5),
            stall=self.options.stall,
            abort=self._scheduler_died,
        )
        self.display.finish(task)
        if not ok:
            raise BenchmarkError(
                f"op {step.op} pods: {bound()} of {total} bound{self._death()}; the "
                f"scheduler's log is {self.scheduler.log}"
                f"\n--- last lines of the log ---\n{self.scheduler.log_tail()}"
            )

    def _scheduler_died(self) -> bool:
        return not self.scheduler.alive()

    def _death(self) -> str:
        return " (the scheduler exited)" if not self.scheduler.alive() else " in time"

    def _pids(self) -> dict[str, int]:
        pids = dict(self.backend.pids())
        if self.scheduler.pid is not None:
            pids["scheduler"] = self.scheduler.pid
        if self.extender is not None and self.extender.pid is not None:
            pids["extender"] = self.extender.pid
        return pids

    async def _measure(self) -> tuple[Phase, dict[str, int]]:
        observer, workload = self.observer, self.workload
        total = workload.n_measured
        timeout = self.options.timeout or workload.timeout or max(600.0, total / 20)
        task = self.display.add(
            "measured pods (scheduled)", total, lambda: observer.bound["measured"]
        )
        if workload.measured_gangs:
            await loadgen.create_many(
                self.writer,
                gang_objects.pod_groups(workload.measured_gangs, api=self.gang_api),
                in_flight=self.options.in_flight,
            )
        pids = self._pids()
        calls_before = await self.extender.stats() if self.extender is not None else None
        before = _cpu_now(pids)
        self.scheduler.measuring()
        origin = self.measure_origin = observer.mark("measure-start")
        self.gauge = self._permit_gauge()
        sampling = (
            asyncio.create_task(self.gauge.run(origin), name="permit gauge")
            if self.gauge is not None
            else None
        )
        churner = (
            loadgen.Churner(self.rest, workload.churn, SCHEDULER_NAME)
            if workload.churn is not None
            else None
        )
        churning = asyncio.create_task(churner.run(), name="churn") if churner else None
        creating = asyncio.create_task(
            loadgen.create_many(
                self.writer,
                itertools.chain(
                    loadgen.pod_chains(
                        workload.measured_pods, "measured", scheduler_name=SCHEDULER_NAME
                    ),
                    gang_objects.member_pods(
                        workload.measured_gangs,
                        "measured",
                        scheduler_name=SCHEDULER_NAME,
                        api=self.gang_api,
                    ),
                ),
                in_flight=self.options.in_flight,
            ),
            name="create measured pods",
        )
        settled = False

        def done() -> bool:
            nonlocal settled
            if observer.bound["measured"] >= total:
                return True
            settled = self._settled(creating, origin)
            return settled

        completed = await observer.wait_until(
            done,
            lambda: observer.bound["measured"],
            within=timeout,
            stall=self.options.stall,
            abort=self._scheduler_died,
        )
        completed = completed and not settled
        end = observer.mark("measure-end")
        if sampling is not None:
            await _finish(sampling)
        after = _cpu_now(pids)
        if self.extender is not None and calls_before is not None:
            self.extender_calls = call_figures(
                calls_before, await self.extender.stats(), observer.bound["measured"]
            )
        self.display.finish(task)
        create = await _finish(creating)
        if churning is not None:
            await _finish(churning)
        phase = self._phase("measured", total, origin, end, completed=completed, create=create)
        phase.settled = settled
        phase.cpu = {name: procstat.delta(before[name], after[name]) for name in before}
        churn = (
            {"created": churner.created, "deleted": churner.deleted, "failures": churner.failures}
            if churner is not None
            else {}
        )
        return phase, churn

    def _settled(self, creating: asyncio.Task[Any], origin: float) -> bool:
        """The workload's settle condition (see the module docstring)."""
        settle = self.workload.settle
        if settle is None or not creating.done():
            return False
        if self.gauge is not None and self.gauge.latest:
            return False  # pods wait at Permit: their timeout may still change things
        observer = self.observer
        if self._creation_done is None:
            self._creation_done = observer.clock()
        last = max(observer.last_bound.get("measured", origin), self._creation_done)
        return observer.clock() - last >= settle

    def _permit_gauge(self) -> gang_observe.GaugeSampler | None:
        """A sampler of asched's Permit gauge for a gang workload (None otherwise)."""
        scheduler = self.scheduler
        if not self.workload.measured_gangs or not isinstance(scheduler, AschedProcess):
            return None
        url = scheduler.metrics_url
        return gang_observe.GaugeSampler(url, clock=self.observer.clock) if url else None

    def _gangs_enforced(self) -> bool:
        """Gang scheduling was in force: asched with the Coscheduling profile."""
        return (
            isinstance(self.scheduler, AschedProcess)
            and self.workload.scheduler_profile == "coscheduling"
        )

    async def _gang_figures(self, measured: Phase) -> gang_figures.GangFigures:
        """The gang figures of the measured phase, from the watch, the gauge and the events."""
        specs = [
            gang_figures.GangSpec(f"{group.namespace}/{group.gang_name(i)}", group.min_member)
            for group in self.workload.measured_gangs
            for i in range(group.count)
        ]
        origin = self.measure_origin
        records = [r for r in self.observer.records("measured") if r.gang]
        members = [
            gang_figures.Member(r.gang, None if r.bound is None else r.bound - origin, r.cpu_milli)
            for r in records
        ]
        rejections = await gang_observe.timeout_rejections(
            self.rest,
            [group.namespace for group in self.workload.measured_gangs],
            {r.key: r.gang for r in records},
        )
        return gang_figures.figures(
            specs,
            members,
            duration=measured.duration,
            sample_width=measured.interval,
            permit_waiting=self.gauge.result() if self.gauge is not None else None,
            timeout_rejections=rejections,
        )

    def _phase(
        self,
        name: str,
        total: int,
        origin: float,
        end: float,
        *,
        completed: bool,
        create: CreateStats | None,
    ) -> Phase:
        records = self.observer.records(name)
        bound = [r for r in records if r.bound is not None and r.bound <= end]
        return Phase(
            name=name,
            pods=total,
            bind_times=[r.bound - origin for r in bound if r.bound is not None],
            latencies=[max(0.0, r.bound - r.added) for r in bound if r.bound is not None],
            duration=end - origin,
            create=create,
            completed=completed,
            sample_width=self.options.sample_interval,
        )

    def _scheduler_info(self) -> SchedulerInfo:
        pid = self.scheduler.pid
        usage = procstat.usage(pid) if pid is not None else procstat.Usage(None, None)
        exit_code = self.scheduler.stop()
        asched = isinstance(self.scheduler, AschedProcess)
        from asched import __version__

        return SchedulerInfo(
            kind=self.scheduler.kind,
            version=__version__ if asched else KUBE_SCHEDULER_VERSION,
            percentage=self.options.percentage,
            pid=pid,
            exit_code=exit_code,
            cpu_seconds_total=usage.cpu_seconds,
            peak_rss_bytes=usage.peak_rss_bytes,
            log=str(self.scheduler.log),
            profile=str(self.scheduler.profile_path)
            if isinstance(self.scheduler, AschedProcess) and self.scheduler.profile_path
            else None,
        )

    async def _ceiling(self) -> Phase:
        observer = self.observer
        total = self.options.ceiling_pods or min(self.workload.n_measured, DEFAULT_CEILING_PODS)
        shape = self.workload.measured_shape()
        # The ceiling binds pods without a scheduler: their claims would only slow the
        # creation it does not measure, so its pods have none.
        group = replace(
            shape,
            count=total,
            namespace=CEILING_NAMESPACE,
            bound_volumes=None,
            claim_templates=(),
        )
        pods = loadgen.pod_objects(
            [group], "ceiling", scheduler_name=ceiling.CEILING_SCHEDULER_NAME
        )
        mode = self.options.ceiling
        create: CreateStats | None = None
        if mode == "bind":
            task = self.display.add(
                "ceiling pods (created)", total, lambda: observer.created["ceiling"]
            )
            create = await loadgen.create_many(self.writer, pods, in_flight=self.options.in_flight)
            await observer.wait_until(
                lambda: observer.created["ceiling"] >= total,
                lambda: observer.created["ceiling"],
                within=120,
                stall=30,
            )
            self.display.finish(task)
        binder, ready = ceiling.start_binder(
            self.backend.kubeconfig, self.workdir, in_flight=self.options.max_inflight_binds
        )
        try:
            pids = {**self.backend.pids(), "binder": binder.pid}
            await _wait_file(binder, ready)
            before = _cpu_now(pids)
            task = self.display.add(
                f"ceiling ({mode}, bound)", total, lambda: observer.bound["ceiling"]
            )
            origin = observer.mark("ceiling-start")
            os.kill(binder.pid, signal.SIGUSR1)
            creating = (
                asyncio.create_task(
                    loadgen.create_many(self.writer, pods, in_flight=self.options.in_flight)
                )
                if mode == "pipeline"
                else None
            )
            completed = await observer.wait_until(
                lambda: observer.bound["ceiling"] >= total,
                lambda: observer.bound["ceiling"],
                within=max(300.0, total / 20),
                stall=self.options.stall,
            )
            end = observer.mark("ceiling-end")
            after = _cpu_now(pids)
            self.display.finish(task)
            if creating is not None:
                create = await _finish(creating)
        finally:
            binder.stop()
        phase = self._phase("ceiling", total, origin, end, completed=completed, create=create)
        phase.mode = mode
        phase.cpu = {name: procstat.delta(before[name], after[name]) for name in before}
        return phase

    def _pods_on_rejected_nodes(self) -> int:
        """Init and measured pods bound to a node the extender's filter rejects."""
        if self.extender is None:
            return 0
        return pods_on_rejected_nodes(self.extender.rule, self.observer.pods.values())

    def _extender_json(self) -> dict[str, Any] | None:
        """The extender's settings, where it listened, and its calls while measuring."""
        if self.extender is None:
            return None
        return {
            **self.extender.options.to_json(),
            "url": self.extender.url,
            "log": str(self.extender.log),
            "measured": self.extender_calls or None,
        }

    async def _versions(self) -> dict[str, str]:
        import platform

        import numpy

        from asched import __version__

        versions = {
            "asched": __version__,
            "python": platform.python_version(),
            "numpy": numpy.__version__,
        }
        try:
            server = await self.rest.get("/version")
            versions["api_server"] = str(server.get("gitVersion", ""))
        except (AschedError, OSError):
            versions["api_server"] = "unknown"
        versions["scheduler"] = (
            KUBE_SCHEDULER_VERSION if self.options.scheduler == "kube-scheduler" else __version__
        )
        return versions

    async def _cleanup(self) -> None:
        """Delete what we created in an existing cluster (pods by label, then our nodes)."""
        namespaces = [*self.workload.namespaces(), CEILING_NAMESPACE, "bench-churn"]
        for namespace in dict.fromkeys(namespaces):
            await self.rest.request(
                "DELETE",
                f"/api/v1/namespaces/{namespace}/pods",
                params={"labelSelector": PHASE_LABEL, "gracePeriodSeconds": 0},
                check=False,
            )
        for namespace in dict.fromkeys(g.namespace for g in self.workload.measured_gangs):
            await self.rest.request(
                "DELETE",
                gang_objects.podgroups_path(namespace, self.gang_api),
                params={"labelSelector": PHASE_LABEL},
                check=False,
            )
        await self.rest.request(
            "DELETE",
            "/api/v1/nodes",
            params={"labelSelector": f"{PHASE_LABEL} in (node,churn)"},
            check=False,
        )
        if self.workload.volumes_json() is not None:
            await self._cleanup_storage(namespaces)

    async def _cleanup_storage(self, namespaces: list[str]) -> None:
        """Delete the claims, PVs, CSINodes and StorageClasses we created (by label)."""
        for namespace in dict.fromkeys(namespaces):
            await self.rest.request(
                "DELETE",
                f"/api/v1/namespaces/{namespace}/persistentvolumeclaims",
                params={"labelSelector": PHASE_LABEL},
                check=False,
            )
        for path in (
            "/api/v1/persistentvolumes",
            "/apis/storage.k8s.io/v1/csinodes",
            "/apis/storage.k8s.io/v1/storageclasses",
        ):
            await self.rest.request(
                "DELETE", path, params={"labelSelector": PHASE_LABEL}, check=False
            )


def _cpu_now(pids: dict[str, int]) -> dict[str, float | None]:
    """CPU seconds so far of each process, and of this one (``harness``)."""
    now: dict[str, float | None] = {name: procstat.cpu_seconds(pid) for name, pid in pids.items()}
    now["harness"] = procstat.self_cpu_seconds()
    return now


async def _finish(task: asyncio.Task[Any]) -> Any:
    """The task's result if it is done; cancel it (and wait) if it is still running."""
    if not task.done():
        task.cancel()
    await asyncio.wait([task])
    if task.cancelled():
        return None
    return task.result()


async def _wait_file(child: Child, path: Path, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not await asyncio.to_thread(path.exists):
        if not child.alive():
            raise BenchmarkError(f"the ceiling binder exited early:\n{child.log_tail()}")
        if time.monotonic() > deadline:
            raise BenchmarkError("the ceiling binder did not get ready in time")
        await asyncio.sleep(0.05)


def _bound(pod: Mapping[str, Any]) -> bool:
    """Bound to a node (scheduler_perf's Scheduled stage)."""
    return bool((pod.get("spec") or {}).get("nodeName"))


def _attempted(pod: Mapping[str, Any]) -> bool:
    """Bound, or carrying a PodScheduled condition (scheduler_perf's Attempted stage)."""
    if (pod.get("spec") or {}).get("nodeName"):
        return True
    conditions = (pod.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "PodScheduled" for c in conditions)
