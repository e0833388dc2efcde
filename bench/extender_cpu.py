"""What asched's CPU per extender-consulted pod goes to, part by part (issue 12's targets).

Usage::

    PYTHONPATH=. python bench/extender_cpu.py [--nodes 5000] [--pods 400] [--depth 20]
        [--calls 300] [--concurrency 20] [--parts abcdef]

Six parts, each timed in CPU time of this process (``time.process_time``; (e) in the
extender's), so the figures hold on a machine shared with other work; printed as the
median and p90 microseconds per pod (or per call), or the mean:

(a) **the cycle's two synchronous halves** on the real :class:`Scheduler` over a table of
    ``--nodes`` default nodes (scheduler_perf's shape, 3 zones), the default profile,
    adaptive sampling (500 candidates at 5,000 nodes) and one ``nodeCacheCapable``
    filter + prioritize extender: ``schedule_one`` (the in-tree half, up to the
    consultation) and ``conclude`` (the second in-tree pass, the extender scores, select,
    assume, Reserve, Permit). The extenders' answers are made by the benchmark's hash
    rule and put into the consultation without HTTP. ``--depth`` consultations are
    pending at once, as in a live run (pod ``i`` concludes after pod ``i + depth`` was
    decided), so each conclusion sees ``depth`` pods assumed since its decision.
(b) **the wire format**: building and encoding ``ExtenderArgs`` for the 500 names, and
    decoding + checking the filter answer and the 450-entry prioritize answer, as
    :class:`~asched.extenders.extender.Extender` does.
(c) **one ``ExtenderClient.post`` round trip** per verb to the benchmark extender
    (``asched bench extender``, its own process on loopback, no latency): the client's
    CPU only; ``--concurrency`` calls in flight at once, as the consultations are.

(d) **the whole consultation in one loop**: ``schedule_one``, both calls over loopback HTTP
    to the benchmark extender (10 ms by default), ``conclude``; CPU per bound pod.
(e) **the benchmark extender's own CPU** per call (its ``/stats``).
(f) **one consultation's synchronous CPU**, no HTTP: ``schedule_one``, both answers read
    through a transport that speaks bytes (the fast path, as over HTTP) and answers by the
    benchmark's hash rule (its own CPU left out), and the conclusion of the consultation
    ``--depth`` pods earlier; median and mean per pod after a warm-up of 200, and a digest
    of the nodes chosen (two checkouts that decide alike print the same). Two checkouts
    compare best run at once, one core each, so that the machine's drift touches both::

        taskset -c 0 python bench/extender_cpu.py --parts f --pods 3000 &
        (cd ../other && taskset -c 1 python bench/extender_cpu.py --parts f --pods 3000)

Nothing here asserts a speed; it prints figures for bench/RESULTS.md's reader.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if "asched" not in sys.modules and not any(Path(p, "asched").is_dir() for p in sys.path[1:]):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson

from asched.cluster.decode import decode_pod
from asched.config.load import load_config
from asched.engine.algorithm import Algorithm
from asched.extenders import protocol
from asched.extenders.client import ExtenderClient, _plain
from asched.extenders.consult import Consultation
from asched.extenders.extender import (
    EXTENDER_NAME,
    Extender,
    any_filter,
    any_prioritizer,
    build_extenders,
)
from asched.extenders.filter_score import ExtenderScores, FilterOutcome
from asched.framework.events import ANY
from asched.framework.registry import installed
from asched.framework.runtime import Framework
from asched.framework.status import Status
from asched.queue.queued import QueuedPod
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.binder import Binder, BindJob
from asched.scheduler.cycle import Scheduler
from asched.scheduler.ledger import Ledger
from asched.scheduler.parts import ProfileRuntime
from asched.scheduler.raw import RawObjects
from asched.tools.bench import templates
from asched.tools.bench.core import build_table
from asched.tools.bench.hash_extender import HashRule

SCHEDULER = "default-scheduler"
REJECT_EVERY = 10
TYPE_META = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _figures(label: str, samples: list[float], unit: str = "pod") -> None:
    micro = sorted(s * 1e6 for s in samples)
    p90 = micro[min(len(micro) - 1, int(0.9 * len(micro)))]
    print(
        f"  {label:<44} median {statistics.median(micro):8.1f} µs   p90 {p90:8.1f} µs"
        f"   ({len(micro)} {unit}s)"
    )


def _extenders(url: str) -> tuple[Extender, ...]:
    entry = {
        "urlPrefix": url,
        "filterVerb": "filter",
        "prioritizeVerb": "prioritize",
        "weight": 1,
        "nodeCacheCapable": True,
        "httpTimeout": "5s",
    }
    config = load_config({**TYPE_META, "extenders": [entry]}, catalogue=installed().catalogue)
    return build_extenders(config.extenders, ExtenderClient)


def _scheduler(n_nodes: int, extenders: tuple[Extender, ...]) -> Scheduler:
    config = load_config(
        {**TYPE_META, "profiles": [{"schedulerName": SCHEDULER}]},
        catalogue=installed().catalogue,
    )
    framework = Framework(config.profiles[0])
    table = build_table(n_nodes)
    algorithm = Algorithm(
        framework,
        table,
        seed=1,
        extender_filters=any_filter(extenders),
        extender_scores=any_prioritizer(extenders),
    )
    return Scheduler(
        profiles={SCHEDULER: ProfileRuntime(framework, algorithm)},
        queue=SchedulingQueue(clock=time.monotonic, interests={EXTENDER_NAME: ANY}),
        ledger=Ledger(table),
        binder_factory=lambda s: Binder(s),
        extenders=extenders,
        raw=RawObjects(nodes=False),
    )


def _queued(scheduler: Scheduler, index: int) -> QueuedPod:
    """Pod ``pod-{index}`` (scheduler_perf's template) added to the queue and popped."""
    raw = templates.pod(f"pod-{index}", scheduler_name=SCHEDULER)
    pod = decode_pod(raw)
    scheduler.raw.pods[pod.key] = raw
    scheduler.queue.add(pod)
    qp = scheduler.queue.pop()
    assert qp is not None
    return qp


def _answer(rule: HashRule, extender: Extender, consultation: Consultation) -> None:
    """Fill ``consultation`` as :func:`asched.extenders.consult.ask` would, without HTTP."""
    passed, failed = rule.split(consultation.names)
    statuses = {name: Status.unschedulable("rejected", plugin=extender.name) for name in failed}
    consultation.outcome = FilterOutcome(tuple(passed), statuses, (), bool(failed))
    scores = {name: rule.priority(name) * 10 for name in passed}
    consultation.scores = ExtenderScores(((extender.name, scores),))


def part_cycle(n_nodes: int, pods: int, depth: int) -> None:
    extenders = _extenders("http://127.0.0.1:9/unused")
    scheduler = _scheduler(n_nodes, extenders)
    rule = HashRule(REJECT_EVERY)
    decide: list[float] = []
    conclude: list[float] = []
    pending: list[Consultation] = []
    bound = 0

    def finish(consultation: Consultation) -> None:
        nonlocal bound
        _answer(rule, extenders[0], consultation)
        started = time.process_time()
        job = scheduler.conclude(consultation)
        conclude.append(time.process_time() - started)
        assert isinstance(job, BindJob), job
        bound += 1

    for index in range(pods + depth):
        qp = _queued(scheduler, index)
        started = time.process_time()
        outcome = scheduler.schedule_one(qp)
        elapsed = time.process_time() - started
        assert isinstance(outcome, Consultation), outcome
        if index >= depth:
            decide.append(elapsed)
        pending.append(outcome)
        if len(pending) > depth:
            finish(pending.pop(0))
    print(f"(a) the cycle, {n_nodes} nodes, {len(pending[0].names)} candidates, depth {depth}")
    _figures("schedule_one (in-tree half, to the consultation)", decide)
    _figures("conclude (second pass, scores, assume ...)", conclude[depth:])


class _Canned:
    """A transport that encodes the body as the HTTP client does and answers canned JSON."""

    def __init__(self, answers: dict[str, bytes]) -> None:
        self.answers = answers

    def url(self, verb: str) -> str:
        return f"http://canned/{verb}"

    async def post(self, verb: str, body: Any) -> Any:
        orjson.dumps(body, default=_plain)
        return orjson.loads(self.answers[verb])

    async def post_bytes(self, verb: str, data: bytes) -> bytes:
        """The HTTP client's bytes path (an asched that has one takes it)."""
        return self.answers[verb]

    async def close(self) -> None:
        pass


def _now(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends, without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise RuntimeError("the coroutine suspended")


def part_wire(n_nodes: int, repeat: int) -> None:
    rule = HashRule(REJECT_EVERY)
    names = tuple(f"node-{i}" for i in range(0, n_nodes, max(1, n_nodes // 500)))[:500]
    passed, failed = rule.split(names)
    pod_json = templates.pod("pod-0", scheduler_name=SCHEDULER)
    answers = {
        "filter": orjson.dumps(
            {"NodeNames": passed, "FailedNodes": dict.fromkeys(failed, "no"), "Error": ""}
        ),
        "prioritize": rule.priorities(passed),
    }
    config = _extenders("http://canned")[0].config
    extender = Extender(config, _Canned(answers))
    timings: dict[str, list[float]] = {"filter": [], "prioritize": []}
    unused = dict[str, Any]().__getitem__
    for _ in range(repeat):
        started = time.process_time()
        _now(extender.filter(pod_json, names, unused))
        timings["filter"].append(time.process_time() - started)
        started = time.process_time()
        _now(extender.prioritize(pod_json, passed, unused))
        timings["prioritize"].append(time.process_time() - started)
    print(f"(b) the wire format, {len(names)} names sent, {len(passed)} scored")
    _figures("Extender.filter: encode, decode, check", timings["filter"], "call")
    _figures("Extender.prioritize: encode, decode, check", timings["prioritize"], "call")


def _call_bodies() -> dict[str, Any]:
    """The filter and prioritize arguments the client parts send: 500 names, and the
    ones the rule passes."""
    names = [f"node-{i}" for i in range(0, 5000, 10)]
    passed, _ = HashRule(REJECT_EVERY).split(names)
    pod_json = templates.pod("pod-0", scheduler_name=SCHEDULER)
    return {
        "filter": protocol.extender_args(pod_json, names, None),
        "prioritize": protocol.extender_args(pod_json, passed, None),
    }


async def _round_trips(url: str, calls: int, concurrency: int) -> dict[str, float]:
    extender = _extenders(url)[0]
    client = extender.transport
    bodies = _call_bodies()
    out: dict[str, float] = {}
    try:
        for verb, body in bodies.items():
            await asyncio.gather(*(client.post(verb, body) for _ in range(concurrency)))  # warm
            started = time.process_time()
            for _ in range(calls // concurrency):
                await asyncio.gather(*(client.post(verb, body) for _ in range(concurrency)))
            done = (calls // concurrency) * concurrency
            out[verb] = (time.process_time() - started) / done
    finally:
        await extender.close()
    return out


@contextmanager
def _extender_process(latency_ms: float) -> Iterator[str]:
    """``asched bench extender`` as a child process: its URL while the block runs."""
    with tempfile.TemporaryDirectory() as directory:
        ready = Path(directory) / "ready.json"
        command = [sys.executable, "-m", "asched", "bench", "extender"]
        command += ["--reject-every", str(REJECT_EVERY), "--ready-file", str(ready)]
        command += ["--latency-ms", str(latency_ms)]
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not ready.exists():
                if time.monotonic() > deadline or child.poll() is not None:
                    raise SystemExit("the benchmark extender did not start")
                time.sleep(0.05)
            yield orjson.loads(ready.read_bytes())["url"]
        finally:
            child.terminate()
            child.wait(10)


def part_http(calls: int, concurrency: int) -> None:
    import uvloop

    with _extender_process(0.0) as url:
        figures = uvloop.run(_round_trips(url, calls, concurrency))
    print(f"(c) ExtenderClient.post, {concurrency} in flight, client CPU per call (with decoding)")
    for verb, seconds in figures.items():
        print(f"  {verb:<44} mean   {seconds * 1e6:8.1f} µs")


async def _extender_calls(url: str, calls: int, concurrency: int) -> dict[str, float]:
    """The benchmark extender's own CPU seconds per call (its ``/stats``), per verb."""
    extender = _extenders(url)[0]
    client = extender.transport
    bodies = _call_bodies()

    def cpu() -> float:
        with urllib.request.urlopen(f"{url}/stats", timeout=10) as answer:
            return float(orjson.loads(answer.read())["cpu_seconds"])

    out: dict[str, float] = {}
    try:
        for verb, body in bodies.items():
            await asyncio.gather(*(client.post(verb, body) for _ in range(concurrency)))  # warm
            rounds = max(1, calls // concurrency)
            before = cpu()
            for _ in range(rounds):
                await asyncio.gather(*(client.post(verb, body) for _ in range(concurrency)))
            out[verb] = (cpu() - before) / (rounds * concurrency)
    finally:
        await extender.close()
    return out


def part_extender(calls: int, concurrency: int, latency_ms: float) -> None:
    import uvloop

    with _extender_process(latency_ms) as url:
        figures = uvloop.run(_extender_calls(url, calls, concurrency))
    print(
        f"(e) the benchmark extender's own CPU per call ({latency_ms:g} ms latency, "
        f"{concurrency} in flight; its /stats, one GET included)"
    )
    for verb, seconds in figures.items():
        print(f"  {verb:<44} mean   {seconds * 1e6:8.1f} µs")


async def _consult_all(url: str, n_nodes: int, pods: int, depth: int) -> tuple[float, int]:
    """Every pod through schedule_one, ask (HTTP) and conclude, ``depth`` at a time; the
    CPU seconds of the whole and the pods bound."""
    extenders = _extenders(url)
    scheduler = _scheduler(n_nodes, extenders)
    slots = asyncio.Semaphore(depth)
    bound = 0

    async def consult(consultation: Consultation) -> None:
        nonlocal bound
        try:
            await scheduler.ask(consultation)
            if isinstance(scheduler.conclude(consultation), BindJob):
                bound += 1
        finally:
            slots.release()

    try:
        async with asyncio.TaskGroup() as group:
            started = time.process_time()
            for index in range(pods):
                await slots.acquire()
                qp = _queued(scheduler, index)
                outcome = scheduler.schedule_one(qp)
                assert isinstance(outcome, Consultation), outcome
                group.create_task(consult(outcome))
        return time.process_time() - started, bound
    finally:
        for extender in extenders:
            await extender.close()


def part_whole(n_nodes: int, pods: int, depth: int, latency_ms: float) -> None:
    import uvloop

    with _extender_process(latency_ms) as url:
        seconds, bound = uvloop.run(_consult_all(url, n_nodes, pods, depth))
    print(
        f"(d) the whole consultation in one loop (decide, ask over HTTP, conclude), "
        f"{latency_ms:g} ms extender, {depth} in flight"
    )
    print(f"  {'CPU per pod':<44} mean   {seconds / max(bound, 1) * 1e6:8.1f} µs ({bound} bound)")


class _RuleTransport:
    """Answers a nodeCacheCapable call's bytes by the benchmark's hash rule, as the
    benchmark extender does; the CPU spent here is counted in ``spent`` (left out)."""

    def __init__(self) -> None:
        self.rule = HashRule(REJECT_EVERY)
        self.spent = 0.0

    def url(self, verb: str) -> str:
        return f"http://rule/{verb}"

    async def post(self, verb: str, body: Any) -> Any:
        raise AssertionError("the bytes path is expected")

    async def post_bytes(self, verb: str, data: bytes) -> bytes:
        started = time.process_time()
        names = orjson.loads(data)["NodeNames"]
        if verb == "filter":
            passed, failed = self.rule.split(names)
            reasons = dict.fromkeys(failed, "rejected by the benchmark extender")
            answer = orjson.dumps({"NodeNames": passed, "FailedNodes": reasons, "Error": ""})
        else:
            answer = self.rule.priorities(names)
        self.spent += time.process_time() - started
        return answer

    async def close(self) -> None:
        pass


def part_sync(n_nodes: int, pods: int, depth: int) -> None:
    transport = _RuleTransport()
    extenders = (Extender(_extenders("http://rule")[0].config, transport),)
    scheduler = _scheduler(n_nodes, extenders)
    pending: list[Consultation] = []
    chosen: list[str] = []
    samples: list[float] = []
    for index in range(pods + depth):
        qp = _queued(scheduler, index)
        transport.spent = 0.0
        started = time.process_time()
        consultation = scheduler.schedule_one(qp)
        assert isinstance(consultation, Consultation), consultation
        pending.append(consultation)
        _now(scheduler.ask(consultation))
        if len(pending) > depth:
            job = scheduler.conclude(pending.pop(0))
            assert isinstance(job, BindJob), job
            chosen.append(job.node)
        samples.append(time.process_time() - started - transport.spent)
    kept = [s * 1e6 for s in samples[200:]]
    digest = hashlib.sha256(",".join(chosen).encode()).hexdigest()[:12]
    print(f"(f) one consultation, synchronous CPU, no HTTP, {n_nodes} nodes, depth {depth}")
    print(
        f"  {'decide + both answers read + a conclusion':<44} median "
        f"{statistics.median(kept):8.1f} µs   mean {statistics.mean(kept):8.1f} µs"
        f"   ({len(kept)} pods, choices {digest})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=400)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--latency-ms", type=float, default=10.0, help="part (d)'s extender")
    parser.add_argument("--parts", default="abcd", help="which parts to run (abcdef)")
    args = parser.parse_args()
    if "a" in args.parts:
        part_cycle(args.nodes, args.pods, args.depth)
    if "b" in args.parts:
        part_wire(args.nodes, args.pods)
    if "c" in args.parts:
        part_http(args.calls, args.concurrency)
    if "d" in args.parts:
        part_whole(args.nodes, args.pods, args.depth, args.latency_ms)
    if "e" in args.parts:
        part_extender(args.calls, args.concurrency, args.latency_ms)
    if "f" in args.parts:
        part_sync(args.nodes, args.pods, args.depth)


if __name__ == "__main__":
    main()
