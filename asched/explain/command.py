"""``asched explain``: where would this pod go in this cluster, and why (or why nowhere)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Mapping
from typing import Any, Final

import orjson

from asched import terminal, textfile
from asched.api.extender import ExtenderClient
from asched.cluster.decode import decode_pod
from asched.cluster.snapshot import load_snapshot, objects_of
from asched.config.types import Profile, SchedulerConfig
from asched.errors import DecodeError, InputError
from asched.explain.engine import evaluate, table_of
from asched.explain.extenders import explain_with_extenders
from asched.explain.render import render
from asched.framework.registry import configuration

EPILOG: Final = """\
example:
  kubectl get nodes,pods,namespaces,services,pdb -A -o yaml > cluster.yaml
  asched explain --snapshot cluster.yaml --pod pod.yaml
  asched explain --snapshot cluster.yaml --pod <(kubectl get pod web -o yaml) -o json

It runs the same filters and scores as `asched run` (and PostFilter preemption when no
node fits) against the snapshot, changes nothing, and prints the nodes' verdicts and scores.
Every node is evaluated (no sampling). The configuration's extenders are called too (filter
and prioritize, sent every node that passed the in-tree filters); --no-extenders skips them.

exit status: 0 when explained (placeable or not); 2 for bad input (one line naming the
file, object and field).
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--snapshot", required=True, help="nodes, pods, ... as a List or YAML stream"
    )
    parser.add_argument("--pod", required=True, help="the pod to place (YAML or JSON)")
    parser.add_argument(
        "--config", help="a KubeSchedulerConfiguration (default: the default profile)"
    )
    parser.add_argument(
        "--scheduler-name", help="the profile to use (default: the pod's schedulerName)"
    )
    parser.add_argument(
        "--no-extenders",
        action="store_true",
        help="do not call the configuration's extenders (the in-tree answer only)",
    )
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table")
    parser.add_argument("--seed", type=int, default=0, help="tie-break seed (default 0)")
    parser.add_argument("--limit", type=int, default=20, help="table rows per section (0 = all)")


def _read_pod(path: str) -> Mapping[str, Any]:
    objects = objects_of(textfile.read_text(path, "the pod"), path)
    pods = [obj for obj in objects if obj.get("kind", "Pod") == "Pod"]
    if len(pods) != 1:
        raise InputError(f"{path}: expected exactly one Pod, found {len(pods)}")
    return pods[0]


def choose_profile(config: SchedulerConfig, requested: str | None, pod_scheduler: str) -> Profile:
    """``--scheduler-name``, else the pod's schedulerName if a profile has it, else the first."""
    if requested is not None:
        profile = config.profile(requested)
        if profile is None:
            names = ", ".join(p.scheduler_name for p in config.profiles)
            raise InputError(
                f"--scheduler-name: no profile named {requested!r} (profiles: {names})"
            )
        return profile
    return config.profile(pod_scheduler) or config.profiles[0]


def run(args: argparse.Namespace) -> int:
    config = configuration(args.config)
    snapshot = load_snapshot(args.snapshot)
    raw_pod = _read_pod(args.pod)
    try:
        pod = decode_pod(raw_pod)
    except DecodeError as exc:
        raise DecodeError(f"{args.pod}: {exc.obj}", exc.path, exc.message) from None
    profile = choose_profile(config, args.scheduler_name, pod.scheduler_name)
    if config.extenders and not args.no_extenders:
        evaluation = asyncio.run(
            explain_with_extenders(
                config.extenders,
                ExtenderClient,
                table_of(snapshot),
                pod,
                raw_pod,
                profile,
                snapshot.raw_nodes.__getitem__,
                seed=args.seed,
            )
        )
    else:
        evaluation = evaluate(snapshot, pod, profile, seed=args.seed)
    if args.output == "json":
        sys.stdout.write(
            orjson.dumps(evaluation.to_json(), option=orjson.OPT_INDENT_2).decode() + "\n"
        )
    else:
        render(evaluation, terminal.console(), limit=args.limit)
    return 0
