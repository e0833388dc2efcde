"""``asched tune``: the percentageOfNodesToScore sweep, its table and its recommendation."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from asched.tools.bench import run_command

EPILOG: Final = """\
Percentages that make the scheduler look for the same number of nodes on the workload's
cluster are one setting (on 20 nodes, 10 %, 50 % and 100 % all score all 20): each distinct
setting runs --repeat times (default 3, round-robin over the settings), each run on a fresh
backend with the same seed, measuring throughput (scheduler_perf counting) and placement
quality (regret by replay). Prints one row per setting (medians over its runs, and the
run-to-run range), writes a plot of throughput against mean regret (--plot) and the
figures (--json), and recommends a value with the numbers it compared: a setting that
scores fewer nodes wins only when it is faster by more than the run-to-run noise and its
placements are good enough (the rule is in docs/benchmarks.md).

--snapshot FILE tunes on your cluster's shape: the simulator starts from a
`kubectl get nodes,pods -A -o yaml` export (its nodes and bound pods), and the workload's
measured pods are scheduled onto it.
"""

if TYPE_CHECKING:
    from rich.table import Table

    from asched.tools.bench.tune import Comparison, Measured, Metric, Point, Setting
    from asched.tools.bench.workload import Workload

DEFAULT_PERCENTAGES: Final = (0, 5, 10, 25, 50, 100)
DEFAULT_REPEAT: Final = 3
DEFAULT_MIN_GAIN: Final = 5.0
DEFAULT_MAX_REGRET: Final = 1.0


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


def non_negative(text: str) -> float:
    """A number >= 0 (a percent or a count of points)."""
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    """Options of ``asched tune``."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    run_command.add_common(parser)
    parser.add_argument(
        "--workload",
        dest="perf_workload",
        metavar="TESTCASE/WORKLOAD",
        help="WORKLOAD is an upstream scheduler_perf config with several workloads: tune "
        "this one of them (a config with one workload needs no --workload)",
    )
    sweep = parser.add_argument_group("sweep")
    sweep.add_argument(
        "--percentages",
        type=percentages,
        default=DEFAULT_PERCENTAGES,
        help="comma list; adaptive = 0 (default adaptive,5,10,25,50,100)",
    )
    sweep.add_argument(
        "--repeat",
        type=run_command.positive_int,
        default=DEFAULT_REPEAT,
        help=f"runs per distinct setting, to measure the run-to-run noise ({DEFAULT_REPEAT})",
    )
    sweep.add_argument("--scheduler", choices=run_command.SCHEDULERS, default="asched")
    rule = parser.add_argument_group("recommendation")
    rule.add_argument(
        "--min-gain",
        type=non_negative,
        default=DEFAULT_MIN_GAIN,
        help="percent: a setting scoring fewer nodes must beat the current choice's median "
        "throughput by more than this share of it, and by more than either run-to-run range "
        f"({DEFAULT_MIN_GAIN:g})",
    )
    rule.add_argument(
        "--max-regret",
        type=non_negative,
        default=DEFAULT_MAX_REGRET,
        help="largest acceptable mean regret of a setting scoring fewer nodes, in "
        f"total-score points ({DEFAULT_MAX_REGRET:g})",
    )
    out = parser.add_argument_group("output")
    out.add_argument("--json", type=Path, help="write every figure and the recommendation here")
    out.add_argument("--plot", type=Path, help="write throughput vs regret (PNG) here")


def run(args: argparse.Namespace) -> int:
    """Entry point of ``asched tune``."""
    from asched.tools.bench import plot, report, runner, tune

    loaded = run_command.load_workload(args)
    try:
        measured, nodes = _sweep(args, loaded)
    except runner.BenchmarkError as exc:
        print(f"asched tune: {exc}", file=sys.stderr)
        return 1
    metric = tune.metric_for([m for m in measured if m.completed])
    runs = f"{args.repeat} run{'s' if args.repeat > 1 else ''}"
    title = (
        f"{loaded.name}: percentageOfNodesToScore on {nodes:,} nodes ({args.scheduler}, "
        f"backend {args.backend}; medians of {runs} per setting)"
    )
    console = report.stdout_console()
    console.print(_table(measured, metric, title))
    try:
        choice = tune.recommend(measured, min_gain=args.min_gain, max_regret=args.max_regret)
    except ValueError as exc:
        print(f"asched tune: {exc}", file=sys.stderr)
        return 1
    console.print(
        f"recommended percentageOfNodesToScore: {tune.setting_value(choice.percentage)} "
        f"({choice.setting.label})\n  because " + "\n  - ".join(choice.clauses)
    )
    if args.plot is not None:
        fastest_first = sorted(measured, key=lambda m: -(m.speed(metric) or 0.0))
        rows = [
            {"label": m.setting.label, "average": m.speed(metric), "regret_mean": m.regret}
            for m in fastest_first
        ]
        plot.plot_tune(rows, args.plot, title)
    if args.json is not None:
        import orjson

        document = {
            "schema": "asched.tune/v2",
            "workload": loaded.to_json(),
            "backend": args.backend,
            "scheduler": args.scheduler,
            "snapshot": str(args.snapshot) if args.snapshot else None,
            "nodes": nodes,
            "rule": {
                "repeat": args.repeat,
                "min_gain_percent": args.min_gain,
                "max_regret_points": args.max_regret,
                "metric": metric,
            },
            "points": [_point_json(pct, measured, nodes) for pct in args.percentages],
            "settings": [_setting_json(m, metric) for m in measured],
            "recommendation": {
                "percentage": choice.percentage,
                "label": choice.setting.label,
                "nodes_scored": choice.setting.scored,
                "reason": choice.reason,
                "comparisons": [_comparison_json(c) for c in choice.comparisons],
            },
            "machine": report.machine(),
            "git": report.git_revision(),
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    return 0


def _sweep(args: argparse.Namespace, loaded: Workload) -> tuple[list[Measured], int]:
    """Run every distinct setting ``args.repeat`` times, round-robin; and the node count.

    Raises
    ------
    BenchmarkError
        A run failed before measuring; the message names the percentage and the run.
    """
    from asched.tools.bench import runner, tune

    def measure(pct: int, repeat: int) -> Point:
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
            workdir=args.workdir / f"pct-{pct}-run-{repeat}" if args.workdir else None,
        )
        try:
            return tune.point(pct, runner.run(options))
        except runner.BenchmarkError as exc:
            raise runner.BenchmarkError(f"percentage {pct}, run {repeat}: {exc}") from exc

    # Which percentages are one setting depends on the node count, and only a run shows it
    # (a snapshot or an existing cluster brings its own nodes): the first requested
    # percentage runs first and counts as the first run of its setting.
    first = args.percentages[0]
    probe = measure(first, 1)
    nodes = probe.nodes if probe.nodes is not None else loaded.n_nodes
    groups = tune.settings(args.percentages, nodes)
    print(
        f"asched tune: {nodes:,} nodes: {len(args.percentages)} percentages, "
        f"{len(groups)} distinct settings: " + "; ".join(s.label for s in groups),
        file=sys.stderr,
    )
    runs: dict[Setting, list[Point]] = {s: [] for s in groups}
    for repeat in range(1, args.repeat + 1):
        for setting in groups:
            took = repeat == 1 and first in setting.percentages
            result = probe if took else measure(setting.percentage, repeat)
            runs[setting].append(result)
            _progress(setting, result, repeat, args.repeat, nodes)
    return [tune.Measured(s, tuple(runs[s])) for s in groups], nodes


def _progress(setting: Setting, point: Point, repeat: int, total: int, nodes: int) -> None:
    speed = point.overall if point.average is None else point.average
    shown = "-" if speed is None else f"{speed:,.0f}"
    saw = ""
    if point.nodes is not None and point.nodes != nodes:
        saw = f" (this run saw {point.nodes:,} nodes; the settings assume {nodes:,})"
    print(
        f"asched tune: {setting.label}: run {repeat}/{total} (at {point.percentage}): "
        f"{shown} pods/s{saw}",
        file=sys.stderr,
    )


def _num(value: float | None, fmt: str = "{:,.0f}") -> str:
    return "-" if value is None else fmt.format(value)


def _table(measured: list[Measured], metric: Metric, title: str) -> Table:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    columns = (
        "setting",
        "runs",
        f"{metric} pods/s",
        "range",
        "p50",
        "p99",
        "latency p50/p99 s",
        "regret mean/p99",
        "zero regret",
        "CPU std-dev",
        "sched ms/pod",
    )
    for column in columns:
        table.add_column(column, justify="right")
    for m in measured:
        zero = m.figure(lambda r: r.zero_regret)
        table.add_row(
            m.setting.label + ("" if m.completed else " (incomplete)"),
            str(len(m.runs)),
            _num(m.speed(metric)),
            _num(m.spread(metric)),
            _num(m.figure(lambda r: r.p50)),
            _num(m.figure(lambda r: r.p99)),
            f"{_num(m.figure(lambda r: r.latency_p50), '{:.2f}')}/"
            f"{_num(m.figure(lambda r: r.latency_p99), '{:.2f}')}",
            f"{_num(m.regret, '{:.2f}')}/{_num(m.figure(lambda r: r.regret_p99), '{:.0f}')}",
            _num(None if zero is None else 100 * zero, "{:.0f} %"),
            _num(m.figure(lambda r: r.balance), "{:.4f}"),
            _num(m.figure(lambda r: r.cpu_ms_per_pod), "{:.2f}"),
        )
    return table


def _point_json(pct: int, measured: list[Measured], nodes: int) -> dict[str, Any]:
    from asched.tools.bench import tune

    index = next(i for i, m in enumerate(measured) if pct in m.setting.percentages)
    return {
        "percentage": pct,
        "label": tune.percentage_text(pct, nodes),
        "nodes_scored": tune.nodes_scored(pct, nodes),
        "setting": index,
        "completed": measured[index].completed,
    }


def _setting_json(m: Measured, metric: Metric) -> dict[str, Any]:
    return {
        "percentages": list(m.setting.percentages),
        "percentage": m.setting.percentage,
        "label": m.setting.label,
        "nodes": m.setting.nodes,
        "nodes_scored": m.setting.scored,
        "completed": m.completed,
        "median_pods_per_second": m.speed(metric),
        "range_pods_per_second": m.spread(metric),
        "regret_mean": m.regret,
        "runs": [r.to_json() for r in m.runs],
    }


def _comparison_json(c: Comparison) -> dict[str, Any]:
    return {
        "lower": c.lower.label,
        "higher": c.higher.label,
        "lower_median": c.lower_speed,
        "higher_median": c.higher_speed,
        "lower_range": c.lower_range,
        "higher_range": c.higher_range,
        "gain": c.gain,
        "noise": c.noise,
        "lower_regret_mean": c.regret,
        "outcome": c.outcome,
    }
