"""asched bench run WORKLOAD: a scheduler_perf-style workload against a real API server.

Builds the workload's cluster on the chosen backend, runs the scheduler as a child
process, creates the measured pods (64 requests in flight) and counts them the way
scheduler_perf does: a pod counts when a watch sees its nodeName set; 1 s samples (finer
for a phase shorter than 6 s, with the width stated), the first skipped, empty intervals merged; Average / P50 / P90 / P99 pods/s. Then measures the
backend's bind ceiling and replays the bindings for placement quality.

WORKLOAD is a file, or the short name of a workload shipped in
``asched/tools/bench/workloads/`` (``bench/workloads`` links there); ``--help`` lists them
(:func:`epilog`). Exit status: 0 when every measured pod was bound and the invariants
hold, 1 otherwise, 2 for bad input. Figures: docs/benchmarks.md.

The help text is :data:`DESCRIPTION` and :func:`epilog`, not this docstring. This module
only parses arguments; the heavy imports happen when a run starts, so that
every other ``asched`` command stays quick to start.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from asched.tools.bench.runner import RunOptions
    from asched.tools.bench.workload import Workload

DESCRIPTION: Final = """\
asched bench run: build a workload's cluster on an API server, run a scheduler on it
and measure it the way kube-scheduler's scheduler_perf does (pods/s as Average, P50,
P90, P99), then the backend's bind ceiling and the placement quality."""

BACKENDS = ("sim", "kube-apiserver")
SCHEDULERS = ("asched", "kube-scheduler")
CEILINGS = ("bind", "pipeline", "none")
PROFILERS = ("py-spy", "cprofile")


def percentage(text: str) -> int:
    """A percentageOfNodesToScore: 0 (adaptive) to 100."""
    value = int(text)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be in 0..100 (0 = adaptive), got {value}")
    return value


def non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0:  # NaN too
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text}")
    return value


def epilog() -> str:
    """The end of ``asched bench run --help``: the shipped workloads, examples, exit status."""
    from asched.tools.bench import workload_files

    names = textwrap.fill(
        ", ".join(workload_files.shipped_workloads()),
        width=86,
        initial_indent="  ",
        subsequent_indent="  ",
        break_on_hyphens=False,
    )
    return (
        "shipped workloads (WORKLOAD may be one of these names, from any directory):\n"
        f"{names}\n\n"
        "examples:\n"
        "  asched bench run tiny\n"
        "  asched bench run scheduling-basic-500n --plot basic-500.png --json basic-500.json\n"
        "  asched bench run my-workload.yaml --backend kube-apiserver --scheduler kube-scheduler\n"
        "  asched bench run scheduling-basic-5000n-10000p --sim-tls --extender-latency-ms 10\n\n"
        "The workload format is in docs/workloads.md, the figures in docs/benchmarks.md.\n"
        "exit status: 0 when every measured pod was bound and the invariants hold,\n"
        "1 otherwise, 2 for bad input."
    )


def add_common(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``asched bench run`` and ``asched tune``."""
    parser.add_argument(
        "workload",
        help="a workload file, or the short name of a shipped workload "
        "(`asched bench run --help` lists them)",
    )
    target = parser.add_argument_group("where")
    target.add_argument(
        "--backend",
        choices=BACKENDS,
        default="sim",
        help="API server to start: the simulator (default) or the genuine kube-apiserver v1.37",
    )
    target.add_argument(
        "--sim-tls",
        action="store_true",
        help="serve the simulator over HTTPS (always on with --scheduler kube-scheduler: "
        "client-go sends no token over plain HTTP)",
    )
    target.add_argument(
        "--kubeconfig", type=Path, help="use this existing cluster instead of starting a backend"
    )
    target.add_argument(
        "--existing-nodes",
        action="store_true",
        help="with --kubeconfig: use the cluster's nodes, create none",
    )
    target.add_argument(
        "--snapshot",
        type=Path,
        help="sim only: start from a `kubectl get nodes,pods -A -o yaml` export "
        "(replaces the workload's nodes and init pods)",
    )
    how = parser.add_argument_group("how")
    how.add_argument("--in-flight", type=positive_int, default=64, help="creates in flight (64)")
    how.add_argument(
        "--max-inflight-binds", type=positive_int, default=64, help="binds in flight (64)"
    )
    how.add_argument("--seed", type=int, default=1, help="asched's tie-breaking seed (1)")
    how.add_argument("--timeout", type=float, help="seconds allowed for the measured phase")
    how.add_argument(
        "--stall", type=float, default=120.0, help="fail after this many seconds without a bind"
    )
    how.add_argument("--workdir", type=Path, help="keep configs and process logs here")


def configure(parser: argparse.ArgumentParser) -> None:
    """Options of ``asched bench run``."""
    add_common(parser)
    parser.add_argument(
        "--workload",
        dest="perf_workload",
        metavar="TESTCASE/WORKLOAD",
        help="WORKLOAD is an upstream scheduler_perf config (performance-config.yaml) with "
        "several workloads: run this one of them (a config with one workload needs no "
        "--workload)",
    )
    who = parser.add_argument_group("scheduler")
    who.add_argument("--scheduler", choices=SCHEDULERS, default="asched")
    who.add_argument(
        "--percentage",
        type=percentage,
        default=0,
        help="percentageOfNodesToScore for either scheduler (0 = adaptive, the default)",
    )
    who.add_argument(
        "--profile", choices=PROFILERS, help="profile asched while measuring (py-spy or cProfile)"
    )
    who.add_argument("--profile-out", type=Path, help="where the profile goes")
    ext = parser.add_argument_group("extender")
    ext.add_argument(
        "--extender-latency-ms",
        type=non_negative_float,
        metavar="MS",
        help="start the benchmark extender (`asched bench extender`: filter + prioritize, "
        "nodeCacheCapable) with MS milliseconds of latency per call, and configure the "
        "scheduler to call it",
    )
    ext.add_argument(
        "--extender-reject-every",
        type=non_negative_int,
        default=10,
        metavar="N",
        help="its filter rejects nodes whose name's CRC-32 is 0 modulo N (10; 0: none)",
    )
    ext.add_argument(
        "--extender-tls",
        action="store_true",
        help="serve it over HTTPS (a throw-away CA, given to the scheduler as tlsConfig.caData)",
    )
    extra = parser.add_argument_group("what else")
    extra.add_argument(
        "--ceiling",
        choices=CEILINGS,
        default="bind",
        help="bind ceiling: pre-created pods (bind, default), created while binding "
        "(pipeline), or none",
    )
    extra.add_argument(
        "--ceiling-pods", type=positive_int, help="ceiling pods (default: measured, at most 10,000)"
    )
    extra.add_argument("--no-quality", action="store_true", help="skip the regret replay")
    extra.add_argument(
        "--replay-order",
        choices=("queue", "bind"),
        default="queue",
        help="place replayed pods where they entered the queue (default) or where their "
        "binding was seen",
    )
    extra.add_argument(
        "--keep", action="store_true", help="existing cluster: leave the created objects"
    )
    out = parser.add_argument_group("output")
    out.add_argument(
        "--sample-interval",
        type=positive_float,
        help="throughput sample width in seconds (default: scheduler_perf's 1 s when a phase "
        "lasts 6 s or more, else the widest of 0.5 ... 0.01 s giving 10 samples)",
    )
    out.add_argument("--json", type=Path, help="write every figure here")
    out.add_argument("--plot", type=Path, help="write throughput and latency plots (PNG) here")


def configure_binder(parser: argparse.ArgumentParser) -> None:
    """Options of the internal ``asched bench binder``."""
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--scheduler-name", default="bench-ceiling")
    parser.add_argument("--in-flight", type=positive_int, default=64)
    parser.add_argument("--ready-file", type=Path, help="written once the watch is open")


def load_workload(args: argparse.Namespace) -> Workload:
    """The workload ``bench run`` (or ``tune``) was given: a file or shipped name, in
    upstream's scheduler_perf format (its one workload, or ``--workload TestCase/Workload``
    of several) or the home-grown one
    (:func:`asched.tools.bench.workload_files.load_workload_file` tells them apart).

    Raises
    ------
    InputError
        Bad file, unknown workload, or a workload asched cannot run (the reason given).
    """
    from asched.tools.bench import workload_files

    perf_name: str | None = getattr(args, "perf_workload", None)
    return workload_files.load_workload_file(
        workload_files.resolve(args.workload), perf_workload=perf_name
    )


def run_options(args: argparse.Namespace, loaded: Workload, scheduler: str) -> RunOptions:
    """The runner's options from ``bench run`` / ``bench suite`` flags."""
    from asched.tools.bench import runner
    from asched.tools.bench.extender_child import ExtenderOptions

    extender = (
        ExtenderOptions(
            latency_ms=args.extender_latency_ms,
            reject_every=args.extender_reject_every,
            tls=args.extender_tls,
        )
        if getattr(args, "extender_latency_ms", None) is not None
        else None
    )
    return runner.RunOptions(
        workload=loaded,
        backend=args.backend,
        kubeconfig=args.kubeconfig,
        snapshot=args.snapshot,
        sim_tls=args.sim_tls,
        scheduler="kube-scheduler" if scheduler == "kube-scheduler" else "asched",
        percentage=args.percentage,
        in_flight=args.in_flight,
        max_inflight_binds=args.max_inflight_binds,
        seed=args.seed,
        ceiling=args.ceiling,
        ceiling_pods=args.ceiling_pods,
        quality=not args.no_quality,
        replay_order=args.replay_order,
        existing_nodes=args.existing_nodes,
        keep=args.keep,
        profiler=getattr(args, "profile", None),
        profile_out=getattr(args, "profile_out", None),
        timeout=args.timeout,
        stall=args.stall,
        workdir=args.workdir,
        extender=extender,
        sample_interval=args.sample_interval,
    )


def run(args: argparse.Namespace) -> int:
    """Entry point of ``asched bench run``."""
    from asched.tools.bench import plot, report, runner
    from asched.tools.bench.schedulers import py_spy

    if getattr(args, "profile", None) == "py-spy" and py_spy() is None:
        print(
            "asched bench run: --profile py-spy: no py-spy on PATH or beside this Python"
            " (pip install py-spy)",
            file=sys.stderr,
        )
        return 2
    loaded = load_workload(args)
    options = run_options(args, loaded, args.scheduler)
    try:
        result = runner.run(options)
    except runner.BenchmarkError as exc:
        print(f"asched bench run: {exc}", file=sys.stderr)
        return 1
    report.print_summary(result, report.stdout_console())
    if args.json is not None:
        report.write_json(result, args.json)
    if args.plot is not None:
        plot.plot_run(result, args.plot)
        print(f"plot: {args.plot}")
    if args.json is not None:
        print(f"figures (JSON): {args.json}")
    if result.scheduler.profile:
        _profile_summary(Path(result.scheduler.profile), args.profile)
    if not result.ok:
        print(
            "asched bench run: FAILED (measured pods not all bound, invariants broken, "
            f"or the scheduler exited with {result.scheduler.exit_code}); log: {result.scheduler.log}",
            file=sys.stderr,
        )
        return 1
    return 0


def _profile_summary(path: Path, kind: str | None) -> None:
    from asched.tools.bench import profiles

    if not path.is_file():
        print(f"asched bench run: no profile was written to {path}", file=sys.stderr)
        return
    text = profiles.summary(path, kind=kind)
    out = path.with_name(path.name + ".summary.txt")
    out.write_text(text + "\n")
    print(f"profile: {path} (summary: {out})")
    print("\n".join(text.splitlines()[:20]))


def run_binder(args: argparse.Namespace) -> int:
    """Entry point of ``asched bench binder``."""
    from asched.tools.bench import ceiling

    return ceiling.run(args)
