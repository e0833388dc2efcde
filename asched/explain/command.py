"""``asched explain``: where would this pod go in this cluster, and why (or why nowhere).

Two forms, exclusive: a live cluster (read through a kubeconfig as kubectl reads it:
:mod:`asched.explain.live`), or a snapshot file (``--snapshot FILE``). The pod is ``POD``,
a pod of the cluster or the snapshot, or ``--pod FILE``, a pod not created yet (a pod of
the same name in the cluster is left out of it). Both build the same
:class:`~asched.cluster.snapshot.Snapshot` and run the same engine and renderers. This
module only parses, picks the form and wires the parts; ``kubectl asched explain``
(:mod:`asched.kubectl_plugin`) is the same command.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from asched import textfile
from asched.api import kubeconfig
from asched.api.client import KubeClient
from asched.api.objects import KubeObject
from asched.cluster.decode import decode_pod
from asched.cluster.records import PodInfo
from asched.cluster.snapshot import Snapshot, build_snapshot, objects_of
from asched.config.types import Profile, SchedulerConfig
from asched.engine.result import Evaluation
from asched.errors import DecodeError, InputError
from asched.explain import config_source, live, output
from asched.explain.config_source import ConfigChoice
from asched.explain.engine import evaluate, table_of
from asched.explain.extenders import explain_with_extenders
from asched.explain.output import Bound
from asched.extenders.client import ExtenderClient
from asched.framework.registry import reads_annotations

EPILOG: Final = """\
examples:
  asched explain web-7d9f -n shop            a pending pod of the live cluster (kubeconfig
                                             as kubectl finds it: --kubeconfig, $KUBECONFIG,
                                             ~/.kube/config; --context picks a context)
  asched explain shop/web-7d9f -o json --snapshot-out web.yaml
                                             ... and save what was read
  asched explain --snapshot web.yaml shop/web-7d9f
                                             replay a saved snapshot (same answer)
  asched explain --pod job.yaml              where would this pod go if created now
                                             (the live cluster; not created)
  kubectl get nodes,pods,namespaces,services,pdb -A -o yaml > cluster.yaml
  asched explain --snapshot cluster.yaml --pod pod.yaml

It runs the same filters and scores as `asched run` (and PostFilter preemption when no
node fits), changes nothing, and prints the nodes' verdicts and scores, under a line
naming the configuration used: --config FILE, else (live) the ConfigMap a deployed asched
runs with (kube-system/asched-config, key config.yaml; --config-map NAMESPACE/NAME),
else the default profile. The profile is the one the pod's schedulerName names (a pod of
no profile is refused: --scheduler-name picks one). A pod already bound is evaluated as
if it were pending: where asched would place it now. Every node is evaluated (no
sampling). The configuration's
extenders are called too (filter and prioritize, sent every node that passed the
in-tree filters); --no-extenders skips them. A gang member (a profile with
Coscheduling) gets its gang's verdict, as the scheduler gives it: the PodGroups and
Workloads are read too, and a gang that cannot be placed whole is refused. Against a live
cluster it only reads (GET and paged LIST).

exit status: 0 when explained (placeable or not); 1 when the cluster cannot be read
(forbidden, unreachable); 2 for bad input (one line naming the file, object and field,
or the pod that is not there).
"""

#: Options of the live form only: (dest, flag).
LIVE_ONLY: Final = (
    ("kubeconfig", "--kubeconfig"),
    ("context", "--context"),
    ("config_map", "--config-map"),
    ("snapshot_out", "--snapshot-out"),
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "pod_name",
        nargs="?",
        metavar="POD",
        help="the pod to explain, NAME or NAMESPACE/NAME (live, or a pod of --snapshot)",
    )
    parser.add_argument(
        "-n", "--namespace", help="the pod's namespace (default: the context's, else default)"
    )
    cluster = parser.add_argument_group("a live cluster (kubectl's conventions)")
    cluster.add_argument(
        "--kubeconfig", metavar="FILE", help="kubeconfig file (default: as kubectl finds it)"
    )
    cluster.add_argument("--context", help="the kubeconfig context to use")
    cluster.add_argument(
        "--config-map",
        metavar="NAMESPACE/NAME",
        help="read the configuration from this ConfigMap's config.yaml "
        "(default: kube-system/asched-config when it exists)",
    )
    cluster.add_argument(
        "--snapshot-out", metavar="FILE", help="save what was read as a snapshot file"
    )
    files = parser.add_argument_group("a snapshot file instead")
    files.add_argument(
        "--snapshot", metavar="FILE", help="nodes, pods, ... as a List or YAML stream"
    )
    files.add_argument(
        "--pod",
        metavar="FILE",
        help="the pod to place (YAML or JSON), in the snapshot or the live cluster",
    )
    answer = parser.add_argument_group("the answer")
    answer.add_argument(
        "--config", metavar="FILE", help="a KubeSchedulerConfiguration (default: see below)"
    )
    answer.add_argument(
        "--scheduler-name", help="the profile to use (default: the pod's schedulerName)"
    )
    answer.add_argument(
        "--no-extenders",
        action="store_true",
        help="do not call the configuration's extenders (the in-tree answer only)",
    )
    answer.add_argument(
        "-o",
        "--output",
        choices=output.FORMATS,
        default="table",
        help="table (default), wide (every row and plugin column), json, or yaml",
    )
    answer.add_argument("--seed", type=int, default=0, help="tie-break seed (default 0)")
    answer.add_argument(
        "--limit", type=int, default=20, help="table rows per section (0 = all; wide: all)"
    )


def _read_pod(path: str) -> Mapping[str, Any]:
    objects = objects_of(textfile.read_text(path, "the pod"), path)
    pods = [obj for obj in objects if obj.get("kind", "Pod") == "Pod"]
    if len(pods) != 1:
        raise InputError(f"{path}: expected exactly one Pod, found {len(pods)}")
    return pods[0]


def choose_profile(config: SchedulerConfig, requested: str | None, pod_scheduler: str) -> Profile:
    """``--scheduler-name``, else the profile named by the pod's schedulerName.

    Raises
    ------
    InputError
        When ``--scheduler-name`` names no profile, or when it is not given and the pod's
        schedulerName names none: such a pod is not asched's to schedule, and an answer
        under another profile would mislead.
    """
    names = ", ".join(p.scheduler_name for p in config.profiles)
    if requested is not None:
        profile = config.profile(requested)
        if profile is None:
            raise InputError(
                f"--scheduler-name: no profile named {requested!r} (profiles: {names})"
            )
        return profile
    profile = config.profile(pod_scheduler)
    if profile is None:
        raise InputError(
            f"the pod's schedulerName {pod_scheduler!r} names no profile of the configuration"
            f" (profiles: {names}): asched does not schedule it; --scheduler-name PROFILE"
            " explains it under one of them"
        )
    return profile


def as_pending(pod: PodInfo) -> tuple[PodInfo, Bound | None]:
    """The pod to evaluate, and where it is bound when it is: a bound pod is evaluated as
    if it were pending (its ``spec.nodeName`` cleared), which is where asched would place
    it now. What bound it: a scheduler when its PodScheduled condition is True, else its
    ``spec.nodeName`` was set when it was created."""
    if not pod.node_name:
        return pod, None
    condition = pod.scheduled_condition
    if condition is not None and condition[0] == "True":
        by = f"placed by the scheduler {pod.scheduler_name!r}"
    else:
        by = "its spec.nodeName was set when it was created: no scheduler placed it"
    return dataclasses.replace(pod, node_name=""), Bound(pod.node_name, by)


def pod_target(text: str, namespace: str | None, default_namespace: str) -> tuple[str, str]:
    """``POD`` (``NAME`` or ``NAMESPACE/NAME``) and ``-n`` -> (namespace, name)."""
    given, slash, name = text.rpartition("/")
    if not name or (slash and not given) or "/" in given:
        raise InputError(f"POD: expected NAME or NAMESPACE/NAME, got {text!r}")
    if given and namespace is not None and given != namespace:
        raise InputError(f"POD {text!r} is in namespace {given!r}, but -n says {namespace!r}")
    return given or namespace or default_namespace, name


def check_form(args: argparse.Namespace) -> None:
    """The live and snapshot forms are exclusive; a usage error names the clash."""
    if args.snapshot is None:
        if (args.pod is None) == (args.pod_name is None):
            raise InputError(
                "give POD (a pod of the live cluster) or --pod FILE (a pod to place in it),"
                " or --snapshot FILE with either"
            )
        if args.pod is not None and args.namespace is not None:
            raise InputError("-n names the namespace of POD; --pod FILE holds its own")
        return
    for dest, flag in LIVE_ONLY:
        if getattr(args, dest) is not None:
            raise InputError(f"{flag} reads a live cluster; --snapshot reads a file: give one")
    if (args.pod is None) == (args.pod_name is None):
        raise InputError("with --snapshot, give the pod either as --pod FILE or as POD")
    if args.pod is not None and args.namespace is not None:
        raise InputError("-n names the namespace of POD; --pod FILE holds its own")


@dataclass(frozen=True, slots=True)
class Question:
    """What to evaluate: the cluster's objects (and how errors name where they come
    from), the pod (as JSON, and how errors name it), the configuration."""

    objects: Sequence[Mapping[str, Any]]
    source: str
    raw_pod: Mapping[str, Any]
    pod_source: str
    choice: ConfigChoice

    def snapshot(self, *, keep_annotations: bool = False) -> Snapshot:
        """The objects decoded (with their annotations when the profile's plugins read
        them, as the scheduler decodes them)."""
        return build_snapshot(self.objects, self.source, keep_annotations=keep_annotations)


def _from_snapshot(args: argparse.Namespace) -> Question:
    choice = config_source.from_file(args.config)
    objects = objects_of(textfile.read_text(args.snapshot, "the snapshot"), str(args.snapshot))
    if args.pod is not None:
        pod = _read_pod(args.pod)
        namespace, name = _key_of(pod)
        rest = [
            obj for obj in objects if not (obj.get("kind") == "Pod" and _is(obj, namespace, name))
        ]
        return Question(rest, str(args.snapshot), pod, args.pod, choice)
    namespace, name = pod_target(args.pod_name, args.namespace, "default")
    pods = [obj for obj in objects if obj.get("kind") == "Pod" and _is(obj, namespace, name)]
    if not pods:
        raise InputError(f'{args.snapshot}: pods "{name}" not found in namespace "{namespace}"')
    rest = [obj for obj in objects if not any(obj is pod for pod in pods)]
    return Question(rest, args.snapshot, pods[0], f"{args.snapshot}", choice)


def _key_of(pod: Mapping[str, Any]) -> tuple[str, str]:
    """(namespace, name) of a pod read from a file (namespace ``default`` when absent)."""
    meta = pod.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def _is(obj: Mapping[str, Any], namespace: str, name: str) -> bool:
    meta = obj.get("metadata") or {}
    return bool(meta.get("name") == name and (meta.get("namespace") or "default") == namespace)


async def _from_cluster(args: argparse.Namespace) -> Question:
    source = kubeconfig.resolve_kubectl(args.kubeconfig)
    if source.kubeconfig is not None:
        context = kubeconfig.check_kubeconfig(source.kubeconfig, context=args.context)
        default_namespace = context.namespace or "default"
    elif args.context is not None:
        raise InputError("--context: no kubeconfig found (in-cluster configuration)")
    else:
        default_namespace = kubeconfig.in_cluster_namespace() or "default"
    given = cast("KubeObject", dict(_read_pod(args.pod))) if args.pod is not None else None
    if given is not None:
        namespace, name = _key_of(given)
    else:
        namespace, name = pod_target(args.pod_name, args.namespace, default_namespace)
    client = await KubeClient.connect(source.kubeconfig, context=args.context)
    try:
        read = await live.read_cluster(client, namespace, name, given=given)
        choice = await config_source.from_cluster(client, args.config, args.config_map)
    finally:
        await client.close()
    if args.snapshot_out is not None:
        output.save_snapshot(args.snapshot_out, read.document())
    pod_source = args.pod if args.pod is not None else f"{read.source}: pods {namespace}/{name}"
    return Question(read.objects, read.source, read.pod, pod_source, choice)


async def _evaluate(
    args: argparse.Namespace, question: Question
) -> tuple[Evaluation, Bound | None]:
    config = question.choice.config
    try:
        pod = decode_pod(question.raw_pod)
        profile = choose_profile(config, args.scheduler_name, pod.scheduler_name)
        # annotations as the scheduler decodes them: only for a profile whose plugins read them
        keep_annotations = reads_annotations([profile])
        if keep_annotations:
            pod = decode_pod(question.raw_pod, keep_annotations=True)
    except DecodeError as exc:
        raise DecodeError(f"{question.pod_source}: {exc.obj}", exc.path, exc.message) from None
    pod, bound = as_pending(pod)
    snapshot = question.snapshot(keep_annotations=keep_annotations)
    if config.extenders and not args.no_extenders:
        raw_pod = dict(question.raw_pod)
        if bound is not None:  # the extenders are sent the pod as evaluated: pending
            raw_pod["spec"] = {**dict(raw_pod.get("spec") or {}), "nodeName": ""}
        evaluation = await explain_with_extenders(
            config.extenders,
            ExtenderClient,
            table_of(snapshot),
            pod,
            raw_pod,
            profile,
            snapshot.raw_nodes.__getitem__,
            seed=args.seed,
            gangs=snapshot.gangs,
        )
        return evaluation, bound
    return evaluate(snapshot, pod, profile, seed=args.seed), bound


async def _explain(args: argparse.Namespace) -> tuple[Evaluation, Bound | None, ConfigChoice]:
    if args.snapshot is not None:
        question = _from_snapshot(args)
    else:
        question = await _from_cluster(args)
    evaluation, bound = await _evaluate(args, question)
    return evaluation, bound, question.choice


def run(args: argparse.Namespace) -> int:
    check_form(args)
    try:
        evaluation, bound, choice = asyncio.run(_explain(args))
    except live.LiveReadError as exc:
        print(f"{getattr(args, '_prog', 'asched explain')}: error: {exc}", file=sys.stderr)
        return 1
    output.emit(evaluation, choice, args.output, limit=args.limit, bound=bound)
    return 0
