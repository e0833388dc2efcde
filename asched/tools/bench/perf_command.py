"""asched bench suite CONFIG: every matching workload of a scheduler_perf config, as a table.

Arguments only; the work is :mod:`asched.tools.bench.perf_suite`. Exit status: 0 when
every selected workload ran and held its invariants or is unsupported (listed with its
reason), 1 when one failed, 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Final

from asched.tools.bench import run_command

DESCRIPTION: Final = """\
asched bench suite: run the workloads of an upstream scheduler_perf config file
(performance-config.yaml, with its templates, unchanged) whose labels match, with asched,
kube-scheduler or both, and print SchedulingThroughput beside upstream's threshold."""

EPILOG: Final = """\
examples:
  asched bench suite ~/kubernetes/test/integration/scheduler_perf/misc/performance-config.yaml
  asched bench suite misc/performance-config.yaml --labels integration-test,short \\
      --scheduler both --json suite.json

--labels follows upstream's filter: a workload runs when it has every plain label and
none of the -labels (its test case's labels count too). Unsupported workloads are listed
with the reason; the accepted feature gates are in docs/benchmarks.md."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Options of ``asched bench suite``."""
    from asched.tools.bench.perf_suite import DEFAULT_LABELS

    parser.add_argument("config", type=Path, help="a scheduler_perf performance-config.yaml")
    parser.add_argument(
        "--labels",
        default=DEFAULT_LABELS,
        help=f"label filter, comma-separated; -label excludes (default {DEFAULT_LABELS!r}, "
        "upstream's integration tests)",
    )
    parser.add_argument(
        "--scheduler", choices=("asched", "kube-scheduler", "both"), default="asched"
    )
    parser.add_argument(
        "--workload",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only the workloads whose TestCase/Workload name matches this shell pattern "
        "(repeatable; e.g. 'SchedulingBasic/5000Nodes_10000Pods', '*/5000Nodes*')",
    )
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument(
        "--list",
        action="store_true",
        help="run nothing: list the matching workloads, each runnable or why not",
    )
    where = parser.add_argument_group("where")
    where.add_argument("--backend", choices=run_command.BACKENDS, default="sim")
    where.add_argument("--sim-tls", action="store_true", help="serve the simulator over HTTPS")
    how = parser.add_argument_group("how")
    how.add_argument("--percentage", type=run_command.percentage, default=0)
    how.add_argument("--in-flight", type=run_command.positive_int, default=64)
    how.add_argument("--max-inflight-binds", type=run_command.positive_int, default=64)
    how.add_argument("--seed", type=int, default=1)
    how.add_argument("--timeout", type=float, help="seconds allowed per measured phase")
    how.add_argument("--stall", type=float, default=120.0)
    how.add_argument("--workdir", type=Path, help="keep configs and process logs here")
    how.add_argument(
        "--ceiling",
        choices=run_command.CEILINGS,
        default="none",
        help="bind ceiling per workload (default none: the suite compares schedulers)",
    )
    how.add_argument("--no-quality", action="store_true", help="skip the regret replay")
    how.add_argument("--sample-interval", type=run_command.positive_float)
    parser.set_defaults(
        kubeconfig=None,
        snapshot=None,
        existing_nodes=False,
        keep=False,
        ceiling_pods=None,
        replay_order="queue",
    )


def run(args: argparse.Namespace) -> int:
    """Entry point of ``asched bench suite``."""
    from asched.tools.bench import perf_config, perf_suite, report, runner
    from asched.tools.bench.results import RunResult
    from asched.tools.bench.workload import Workload

    config = perf_config.load_config_file(args.config)
    schedulers = ["asched", "kube-scheduler"] if args.scheduler == "both" else [args.scheduler]
    console = report.stdout_console()

    def run_one(workload: Workload, scheduler: str) -> RunResult:
        return runner.run(run_command.run_options(args, workload, scheduler))

    def progress(entry: perf_suite.SuiteEntry) -> None:
        reason = f": {entry.reason}" if entry.reason else ""
        print(f"{entry.name}: {entry.status}{reason}", file=sys.stderr)

    if args.list:
        schedulers = []  # translate only
    entries = perf_suite.run_suite(
        config,
        args.labels.split(","),
        schedulers,
        run_one,
        on_entry=None if args.list else progress,
        patterns=args.workload,
    )
    if not entries:
        patterns = "".join(f" and {p!r}" for p in args.workload)
        print(f"asched bench suite: no workload of {args.config} matches {args.labels!r}{patterns}")
        return 2
    if args.list:
        console.print(perf_suite.listing(entries))
        return 1 if any(e.status == "failed" for e in entries) else 0
    console.print(perf_suite.table(entries, schedulers))
    if args.json is not None:
        perf_suite.write_json(entries, config, args.json)
        print(f"results (JSON): {args.json}")
    return 1 if any(e.status == "failed" for e in entries) else 0
