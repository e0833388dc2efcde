"""One benchmark, this checkout against an older commit, alternating runs in one session.

Usage::

    python bench/side_by_side.py --runs 3 --out bench/results/DIR -- \\
        run scheduling-basic-5000n-10000p --sim-tls --percentage 100 --ceiling none
    python bench/side_by_side.py --runs 3 --out DIR -- core --nodes 5000,50000 --seconds 4 --no-scalar

Everything after ``--`` is an ``asched bench`` command line (``run`` or ``core``; the
script adds ``--json``). Each round runs it once from the base commit's checkout, then
once from this one (``PYTHONPATH`` pointing at each; same Python, same venv), so slow
drifts of a shared machine hit both alike. The base checkout is a git worktree made on
first use under ``~/.cache/asched/worktrees/<commit>`` (``--base-checkout`` to give one).

It prints the median of every figure over the runs, with the runs themselves, and the
ratio new / base, as a markdown table, and keeps every run's JSON in ``--out``:

- ``run``: overall and average pods/s, and CPU per bound pod of the scheduler, the
  simulator (or kube-apiserver + etcd) and the harness (ms);
- ``core``: decisions per second per (nodes, percentage, pods) configuration.

Issue 14 compares against ``24a9163`` (the default), the main of the day it was filed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
DEFAULT_BASE = "24a9163"


def _checkout(commit: str, given: Path | None) -> Path:
    if given is not None:
        return given.resolve()
    place = Path.home() / ".cache" / "asched" / "worktrees" / commit
    if not (place / "asched").is_dir():
        place.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "-C", str(HERE), "worktree", "add", "--detach", "-f", str(place), commit],
            check=True,
        )
    return place


def commit_of(checkout: Path) -> str:
    """The short commit of ``checkout``, with ``+dirty`` when tracked files changed."""
    found = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    dirty = subprocess.run(
        ["git", "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _figures(kind: str, result: dict[str, Any]) -> dict[str, float]:
    """The comparable figures of one run's JSON."""
    if kind == "core":
        return {
            f"{row['nodes']} nodes, {row['percentage'] or 'adaptive'} %, {row['pods']} (decisions/s)": row[
                "decisions_per_second"
            ]
            for row in result["results"]
            if row["implementation"] == "vectorised"
        }
    measured = result["measured"]
    figures = {
        "overall pods/s": measured["throughput"]["overall"],
        "average pods/s": measured["throughput"]["average"],
    }
    for who, value in (measured.get("cpu_ms_per_pod") or {}).items():
        if value is not None:
            figures[f"{who} CPU ms/pod"] = value
    return figures


def _run(checkout: Path, bench_args: list[str], out: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "asched", "bench", *bench_args, "--json", str(out)]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    print(f"$ (cd {checkout}) {' '.join(command[1:])}", flush=True)
    subprocess.run(command, cwd=checkout, env=env, check=True, stdout=subprocess.DEVNULL)
    result: dict[str, Any] = json.loads(out.read_text())
    if bench_args[0] == "run" and not result.get("measured", {}).get("completed"):
        raise SystemExit(f"{out}: the run did not complete")
    return result


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", default=DEFAULT_BASE, help="the commit to compare against")
    parser.add_argument("--base-checkout", type=Path, help="an existing checkout of --base")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True, help="directory for every run's JSON")
    parser.add_argument("bench", nargs=argparse.REMAINDER, help="-- asched bench arguments")
    args = parser.parse_args()
    bench_args = [arg for arg in args.bench if arg != "--"]
    if not bench_args or bench_args[0] not in ("run", "core"):
        parser.error("give an `asched bench run ...` or `asched bench core ...` command after --")
    kind = bench_args[0]
    checkouts = {"base": _checkout(args.base, args.base_checkout), "new": HERE}
    commits = {side: commit_of(path) for side, path in checkouts.items()}
    args.out.mkdir(parents=True, exist_ok=True)
    figures: dict[str, dict[str, list[float]]] = {
        "base": defaultdict(list),
        "new": defaultdict(list),
    }
    for round_ in range(1, args.runs + 1):
        for side, checkout in checkouts.items():
            path = args.out / f"{kind}-{side}-{commits[side]}-r{round_}.json"
            for name, value in _figures(kind, _run(checkout, bench_args, path)).items():
                figures[side][name].append(value)
    print(f"\n`asched bench {' '.join(bench_args)}`, {args.runs} alternating runs each\n")
    print(
        f"| figure | base `{commits['base']}` (median; runs) | new `{commits['new']}` | new / base |"
    )
    print("|---|---|---|---|")
    for name, base_values in figures["base"].items():
        new_values = figures["new"].get(name, [])
        if not new_values:
            continue
        base_median, new_median = statistics.median(base_values), statistics.median(new_values)
        runs_base = ", ".join(map(_number, base_values))
        runs_new = ", ".join(map(_number, new_values))
        ratio = new_median / base_median if base_median else float("nan")
        print(
            f"| {name} | {_number(base_median)} ({runs_base}) | {_number(new_median)} ({runs_new}) "
            f"| {ratio:.2f}x |"
        )


if __name__ == "__main__":
    main()
