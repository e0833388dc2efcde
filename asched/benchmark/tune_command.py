"""asched tune WORKLOAD: measure percentageOfNodesToScore settings and recommend one.

Runs the workload once per percentage (default: adaptive, 5, 10, 25, 50, 100), each on a
fresh backend with the same seed, and measures throughput (scheduler_perf counting) and
placement quality (regret by replay). Prints a table, writes a plot of throughput
against mean regret (--plot) and the figures (--json), and recommends a value with its
reasoning (the rule is in docs/benchmarks.md).

--snapshot FILE tunes on your cluster's shape: the simulator starts from a
`kubectl get nodes,pods -A -o yaml` export (its nodes and bound pods), and the workload's
measured pods are scheduled onto it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from asched.benchmark import run_command


def percentages(text: str) -> tuple[int, ...]:
    """``adaptive,5,10`` (``adaptive`` = 0) as integers in 0..100."""
    values: list[int] = []
    for part in text.split(","):
        word = part.strip()
        if not word:
            continue
        values.append(0 if word == "adaptive" else run_command.percentage(word))
    if not values:
        raise argparse.ArgumentTypeError("give at least one percentage")
    return tuple(dict.fromkeys(values))


def configure(parser: argparse.ArgumentParser) -> None:
    """Options of ``asched tune``."""
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    run_command.add_common(parser)
    sweep = parser.add_argument_group("sweep")
    sweep.add_argument(
        "--percentages",
        type=percentages,
        default=(0, 5, 10, 25, 50, 100),
        help="comma list; adaptive = 0 (default adaptive,5,10,25,50,100)",
    )
    sweep.add_argument("--scheduler", choices=run_command.SCHEDULERS, default="asched")
    rule = parser.add_argument_group("recommendation")
    rule.add_argument(
        "--within",
        type=float,
        default=10.0,
        help="percent of the best throughput that still counts as as fast (10)",
    )
    rule.add_argument(
        "--max-regret",
        type=float,
        default=1.0,
        help="largest acceptable mean regret, in total-score points (1.0)",
    )
    out = parser.add_argument_group("output")
    out.add_argument("--json", type=Path, help="write every figure and the recommendation here")
    out.add_argument("--plot", type=Path, help="write throughput vs regret (PNG) here")


def run(args: argparse.Namespace) -> int:
    """Entry point of ``asched tune``."""
    import orjson
    from rich.table import Table

    from asched.benchmark import plot, report, runner, tune, workload

    loaded = workload.load_workload_file(workload.resolve(args.workload))
    console = report.stdout_console()
    points: list[tune.Point] = []
    for pct in args.percentages:
        options = runner.RunOptions(
            workload=loaded,
            backend=args.backend,
            kubeconfig=args.kubeconfig,
            snapshot=args.snapshot,
            sim_tls=args.sim_tls,
            scheduler=args.scheduler,
            percentage=pct,
            in_flight=args.in_flight,
            max_inflight_binds=args.max_inflight_binds,
            seed=args.seed,
            ceiling="none",
            existing_nodes=args.existing_nodes,
            timeout=args.timeout,
            stall=args.stall,
            workdir=args.workdir / f"pct-{pct}" if args.workdir else None,
        )
        try:
            result = runner.run(options)
        except runner.BenchmarkError as exc:
            print(f"asched tune: percentage {pct}: {exc}", file=sys.stderr)
            return 1
        nodes = int(result.init.get("nodes", loaded.n_nodes))
        points.append(tune.point(pct, result, nodes))
        speed = points[-1].speed
        print(
            f"asched tune: {points[-1].label}: {'-' if speed is None else f'{speed:,.0f}'} pods/s",
            file=sys.stderr,
        )
    title = f"{loaded.name}: percentageOfNodesToScore ({args.scheduler}, backend {args.backend})"
    table = Table(title=title, title_justify="left")
    for column in (
        "percentage",
        "average",
        "p50",
        "p99",
        "overall",
        "latency p50/p99 s",
        "regret mean/p99",
        "zero regret",
        "CPU std-dev",
        "sched ms/pod",
    ):
        table.add_column(column, justify="right")

    def num(value: float | None, fmt: str = "{:,.0f}") -> str:
        return "-" if value is None else fmt.format(value)

    for p in points:
        table.add_row(
            p.label + ("" if p.completed else " (incomplete)"),
            num(p.average),
            num(p.p50),
            num(p.p99),
            num(p.overall),
            f"{num(p.latency_p50, '{:.2f}')}/{num(p.latency_p99, '{:.2f}')}",
            f"{num(p.regret_mean, '{:.2f}')}/{num(p.regret_p99, '{:.0f}')}",
            num(None if p.zero_regret is None else 100 * p.zero_regret, "{:.0f} %"),
            num(p.balance, "{:.4f}"),
            num(p.cpu_ms_per_pod, "{:.2f}"),
        )
    console.print(table)
    try:
        choice = tune.recommend(points, within=args.within, max_regret=args.max_regret)
    except ValueError as exc:
        print(f"asched tune: {exc}", file=sys.stderr)
        return 1
    value = "0 (adaptive)" if choice.percentage == 0 else str(choice.percentage)
    console.print(f"recommended percentageOfNodesToScore: {value}\n  because {choice.reason}")
    if args.plot is not None:
        rows = [
            {"label": p.label, "average": p.speed, "regret_mean": p.regret_mean} for p in points
        ]
        plot.plot_tune(rows, args.plot, title)
    if args.json is not None:
        document = {
            "schema": "asched.tune/v1",
            "workload": loaded.to_json(),
            "backend": args.backend,
            "scheduler": args.scheduler,
            "snapshot": str(args.snapshot) if args.snapshot else None,
            "rule": {"within_percent": args.within, "max_regret_points": args.max_regret},
            "points": [p.to_json() for p in points],
            "recommendation": {
                "percentage": choice.percentage,
                "label": choice.label,
                "rule": choice.rule,
                "reason": choice.reason,
            },
            "machine": report.machine(),
            "git": report.git_revision(),
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return 0
