"""The test kit for plugin authors: run a plugin over a small cluster and a pod, the way
the scheduler runs it, and check its vectorised answers against a per-node definition.

Typical use (pytest)::

    from asched.plugin import testing

    CLUSTER = testing.cluster(
        testing.node("cheap", labels={"price": "0.10"}),
        testing.node("dear", labels={"price": "0.90"}),
    )

    def test_prefers_the_cheaper_node():
        result = testing.evaluate(PLUGIN, testing.pod("web"), CLUSTER, args={"priceLabel": "price"})
        assert result.selected == "cheap"

    def test_matches_its_definition():
        testing.check_score(PLUGIN, testing.pod("web"), CLUSTER, definition, args=...)

:func:`evaluate` builds a profile holding the plugin alone (with PrioritySort and
DefaultBinder, which every profile needs), reads ``args`` through the plugin's own args
reader (bad args raise :class:`asched.plugin.ConfigError` with the field paths a user
would see), and runs PreFilter, Filter, PreScore, Score and NormalizeScore through the
scheduler's runtime, contract checks included (a broken answer raises
:class:`asched.plugin.PluginContractError` saying what was expected). The answer is
``asched explain``'s :class:`~asched.engine.result.Evaluation`: per node, feasible or
the rejecting plugin and its reasons, and the normalized scores.

Annotations reach the plugin as they reach it in the scheduler: only when its
declaration says ``reads_annotations=True`` (otherwise ``PodInfo.annotations``,
``Node.annotations`` and ``Nodes.annotation_values`` read as empty, here as there).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from asched.cluster.decode import decode_pod
from asched.cluster.records import OwnerReference, PodInfo
from asched.cluster.snapshot import Snapshot, build_snapshot
from asched.config.load import load_config
from asched.config.types import Profile
from asched.engine.result import Evaluation
from asched.explain.engine import evaluate_table, table_of
from asched.framework.per_node import Node
from asched.framework.registry import in_tree
from asched.framework.spec import PluginSpec

Raw = dict[str, Any]

__all__ = [
    "check_filter",
    "check_score",
    "cluster",
    "evaluate",
    "node",
    "pod",
    "profile_for",
]


def node(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    cpu: str = "4",
    memory: str = "16Gi",
    pods: int = 110,
    extended: Mapping[str, str | int] | None = None,
    taints: Sequence[Mapping[str, str]] = (),
    unschedulable: bool = False,
    annotations: Mapping[str, str] | None = None,
) -> Raw:
    """A Node object (as the API server returns it) with the given allocatable and
    ``metadata.annotations``."""
    allocatable: Raw = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    allocatable.update({key: str(value) for key, value in (extended or {}).items()})
    metadata: Raw = {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}}
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata,
        "spec": {"unschedulable": unschedulable, "taints": [dict(t) for t in taints]},
        "status": {"allocatable": allocatable, "capacity": dict(allocatable)},
    }


def pod(
    name: str,
    *,
    namespace: str = "default",
    labels: Mapping[str, str] | None = None,
    requests: Mapping[str, str | int] | None = None,
    node_name: str = "",
    node_selector: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    owner_references: Sequence[OwnerReference | Mapping[str, Any]] = (),
) -> Raw:
    """A Pod object with one container requesting ``requests`` (limits equal), bound to
    ``node_name`` when given (a pod already running there, for :func:`cluster`), with
    ``metadata.annotations`` and ``metadata.ownerReferences`` (each an
    :class:`~asched.plugin.OwnerReference` or its JSON)."""
    resources = {key: str(value) for key, value in (requests or {}).items()}
    spec: Raw = {
        "containers": [
            {
                "name": "main",
                "image": "app",
                "resources": {"requests": resources, "limits": resources},
            }
        ]
    }
    if node_name:
        spec["nodeName"] = node_name
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    metadata: Raw = {
        "name": name,
        "namespace": namespace,
        "uid": f"uid-{namespace}-{name}",
        "labels": dict(labels or {}),
    }
    if annotations:
        metadata["annotations"] = dict(annotations)
    if owner_references:
        metadata["ownerReferences"] = [_owner_json(ref) for ref in owner_references]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def _owner_json(ref: OwnerReference | Mapping[str, Any]) -> Raw:
    if not isinstance(ref, OwnerReference):
        return dict(ref)
    return {
        "apiVersion": ref.api_version,
        "kind": ref.kind,
        "name": ref.name,
        "uid": ref.uid,
        "controller": ref.controller,
    }


def cluster(*objects: Mapping[str, Any]) -> Snapshot:
    """A cluster from Node, bound Pod and other objects (as a snapshot file holds them).

    Annotations are decoded; a plugin that does not declare ``reads_annotations`` sees
    none (:func:`evaluate` leaves them out for it, as the scheduler would)."""
    return build_snapshot(objects, "test cluster", keep_annotations=True)


def _without_annotations(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` as a scheduler none of whose plugins reads annotations decodes it."""
    return replace(
        snapshot,
        nodes=[replace(n, annotations={}) if n.annotations else n for n in snapshot.nodes],
        pods=[replace(p, annotations={}) if p.annotations else p for p in snapshot.pods],
    )


def profile_for(
    plugin: PluginSpec, *, args: Mapping[str, Any] | None = None, weight: int = 1
) -> Profile:
    """A profile running ``plugin`` alone (plus PrioritySort and DefaultBinder), its args
    read as a configuration's ``pluginConfig`` would be (ConfigError on bad args)."""
    entry: Raw = {"name": plugin.name}
    if "score" in plugin.points:
        entry["weight"] = weight
    document: Raw = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "test",
                "plugins": {
                    "multiPoint": {"disabled": [{"name": "*"}], "enabled": [entry]},
                    "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                    "bind": {"enabled": [{"name": "DefaultBinder"}]},
                },
                "pluginConfig": [] if args is None else [{"name": plugin.name, "args": dict(args)}],
            }
        ],
    }
    catalogue = in_tree().adding(plugin).catalogue
    config = load_config(document, catalogue=catalogue, source=f"{plugin.name} test")
    return config.profiles[0]


def _run(
    plugin: PluginSpec,
    pending: Mapping[str, Any] | PodInfo,
    nodes: Snapshot,
    args: Mapping[str, Any] | None,
) -> tuple[Evaluation, PodInfo, dict[str, Node]]:
    """The evaluation, the decoded pod, and each node's per-node view (one table)."""
    reads = plugin.reads_annotations
    if isinstance(pending, PodInfo):
        info = pending if reads or not pending.annotations else replace(pending, annotations={})
    else:
        info = decode_pod(pending, keep_annotations=reads)
    table = table_of(nodes if reads else _without_annotations(nodes))
    registry = in_tree().adding(plugin)
    result = evaluate_table(table, info, profile_for(plugin, args=args), registry=registry)
    views = {name: Node.at(table, row) for name, row in table.index.items()}
    return result, info, views


def evaluate(
    plugin: PluginSpec,
    pending: Mapping[str, Any] | PodInfo,
    nodes: Snapshot,
    *,
    args: Mapping[str, Any] | None = None,
) -> Evaluation:
    """Every node's verdict for ``pending`` with ``plugin`` alone (see the module docstring)."""
    result, _, _ = _run(plugin, pending, nodes, args)
    return result


def check_filter(
    plugin: PluginSpec,
    pending: Mapping[str, Any] | PodInfo,
    nodes: Snapshot,
    definition: Callable[[PodInfo, Node], bool],
    *,
    args: Mapping[str, Any] | None = None,
) -> Evaluation:
    """Assert that the plugin's Filter passes exactly the nodes ``definition`` accepts;
    the AssertionError lists every node where they disagree, with the plugin's reasons."""
    result, info, views = _run(plugin, pending, nodes, args)
    wrong = []
    for name, view in views.items():
        verdict = result.nodes[name]
        passed = verdict.feasible or verdict.plugin != plugin.name
        if passed != definition(info, view):
            reasons = "; ".join(verdict.reasons) or "-"
            wrong.append(f"{name}: plugin says {'pass' if passed else 'reject'} ({reasons})")
    assert not wrong, f"{plugin.name} disagrees with its definition on " + ", ".join(wrong)
    return result


def check_score(
    plugin: PluginSpec,
    pending: Mapping[str, Any] | PodInfo,
    nodes: Snapshot,
    definition: Callable[[PodInfo, Node], int],
    *,
    args: Mapping[str, Any] | None = None,
) -> Evaluation:
    """Assert that the plugin's normalized score on every feasible node equals
    ``definition``'s; the AssertionError lists each node where they differ."""
    result, info, views = _run(plugin, pending, nodes, args)
    wrong = []
    for name, view in views.items():
        verdict = result.nodes[name]
        if not verdict.feasible or plugin.name not in verdict.scores:
            continue
        want = definition(info, view)
        if verdict.scores[plugin.name] != want:
            wrong.append(f"{name}: plugin {verdict.scores[plugin.name]}, definition {want}")
    assert not wrong, f"{plugin.name} disagrees with its definition on " + ", ".join(wrong)
    return result
