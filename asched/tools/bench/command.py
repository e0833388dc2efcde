"""``asched bench``: the core decision benchmark (``core``) and scheduler_perf-style workloads
(``run``; see ``docs/benchmarks.md``), and upstream scheduler_perf configs (``suite``). ``binder`` is internal: the bind-ceiling binder that
``run`` starts as a child process. ``extender`` is the benchmark's scheduler extender
(:mod:`asched.tools.bench.hash_extender`), which ``run --extender-latency-ms`` starts, and
which can be run by hand."""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
from pathlib import Path

import orjson
from rich.console import Console
from rich.table import Table

from asched.gcpause import tune_gc
from asched.tools.bench import core, hash_extender, perf_command, run_command


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="bench_command", metavar="BENCHMARK", required=True)
    run_command.configure(
        sub.add_parser(
            "run",
            help="run a workload and measure it the scheduler_perf way",
            description=run_command.DESCRIPTION,
            epilog=run_command.epilog(),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )
    perf_command.configure(
        sub.add_parser(
            "suite",
            help="run an upstream scheduler_perf config's workloads (label-filtered)",
            description=perf_command.DESCRIPTION,
            epilog=perf_command.EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )
    run_command.configure_binder(
        sub.add_parser(
            "binder",
            help="(internal) the bind-ceiling binder started by `run`",
            description="asched bench binder: (internal) the bind-ceiling binder that "
            "`asched bench run` starts as a child process.",
        )
    )
    hash_extender.configure(
        sub.add_parser(
            "extender",
            help="the benchmark's scheduler extender (filter + prioritize, added latency)",
            description="asched bench extender: a scheduler extender (filter and prioritize, "
            "extender/v1 JSON) answering from a fixed hash rule after --latency-ms; "
            "GET /stats gives its calls and CPU. `asched bench run --extender-latency-ms` "
            "starts one.",
        )
    )
    p = sub.add_parser(
        "core",
        help="decisions per second of the vectorised core",
        description="asched bench core: decisions per second of the vectorised core, "
        "in process (no API server), with the scalar reference for comparison.",
    )
    p.add_argument("--nodes", default="1000,5000,15000,50000", help="comma-separated node counts")
    p.add_argument("--seconds", type=float, default=3.0, help="time per configuration and round")
    p.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="rounds, interleaved (each round runs every configuration once); the table "
        "shows the median and the range (default 3)",
    )
    p.add_argument("--max-decisions", type=int, default=20000)
    p.add_argument("--scalar-seconds", type=float, default=5.0)
    p.add_argument("--no-scalar", action="store_true", help="skip the scalar reference")
    p.add_argument("--json", help="write the results here")


def run(args: argparse.Namespace) -> int:
    if args.bench_command == "core":
        return run_core(args)
    if args.bench_command == "run":
        tune_gc()  # the harness: load generator and watch, as long-running as the rest
        return run_command.run(args)
    if args.bench_command == "suite":
        tune_gc()
        return perf_command.run(args)
    if args.bench_command == "binder":
        return run_command.run_binder(args)
    if args.bench_command == "extender":
        return hash_extender.main(args)
    return 2


def run_core(args: argparse.Namespace) -> int:
    console = Console(stderr=True, quiet=not sys.stderr.isatty())
    node_counts = [int(n) for n in args.nodes.split(",") if n.strip()]
    results: list[core.CoreResult] = []
    plan = [
        (n, pct, kind) for n in node_counts for pct in (100, 0) for kind in ("uniform", "distinct")
    ]
    rounds = max(1, args.repeat)
    with console.status("benchmarking") as status:
        # interleaved: a drift of the machine's speed spreads over every configuration
        for round_ in range(rounds):
            for n, pct, kind in plan:
                status.update(
                    f"round {round_ + 1}/{rounds}, vectorised: {n} nodes, "
                    f"percentage {pct or 'adaptive'}, {kind} pods"
                )
                results.append(
                    core.run_vectorised(
                        n, pct, kind, seconds=args.seconds, max_decisions=args.max_decisions
                    )
                )
            if not args.no_scalar:
                for n in node_counts:
                    status.update(f"round {round_ + 1}/{rounds}, scalar reference: {n} nodes")
                    results.append(
                        core.run_scalar(
                            n, "uniform", seconds=args.scalar_seconds, max_decisions=200
                        )
                    )
    table = Table(
        title=f"asched bench core ({platform.processor() or platform.machine()}, "
        f"{rounds} interleaved round{'s' if rounds != 1 else ''})"
    )
    for column in (
        "nodes",
        "percentage",
        "implementation",
        "pods",
        "decisions/s (median)",
        "range",
        "table B/node",
    ):
        table.add_column(column, justify="right")
    for group in core.grouped(results):
        rates = sorted(r.decisions_per_second for r in group)
        first = group[0]
        table.add_row(
            str(first.nodes),
            str(first.percentage or "adaptive"),
            first.implementation,
            first.pods,
            f"{statistics.median(rates):,.0f}",
            f"{rates[0]:,.0f}-{rates[-1]:,.0f}" if len(rates) > 1 else "-",
            f"{first.table_bytes_per_node:,.0f}",
        )
    Console().print(table)
    if args.json:
        payload = {
            "rounds": rounds,
            "results": [r.to_json() for r in results],
            "machine": platform.uname()._asdict(),
        }
        Path(args.json).write_bytes(orjson.dumps(payload, option=orjson.OPT_INDENT_2))
    return 0
