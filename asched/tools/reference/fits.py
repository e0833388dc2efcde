"""A ``fits(node, pods_on_node)`` callback for preemption, built from the reference filters.

:func:`filter_chain` runs a profile's Filter plugins in order for the preemptor on one
node whose pods are replaced by ``pods_on_node`` (every other node keeps its pods),
and returns the first rejection, attributed to its plugin. InterPodAffinity and
PodTopologySpread are evaluated with :mod:`asched.tools.reference.interpod` and
:mod:`asched.tools.reference.topologyspread` over the modified cluster, which is what
upstream's AddPod/RemovePod PreFilter extensions amount to; so is VolumeRestrictions
(whether its ReadWriteOncePod claims are in use depends on every node's pods), whose
PreFilter and Filter run per call on it. The other plugins come
from :data:`asched.tools.reference.plugins.REGISTRY`: their PreFilter runs once, on the
unmodified cluster (none of them depends on other pods), and their Filter per call on
a freshly accounted node.

Nominated pods (upstream: RunFilterPluginsWithNominatedPods): when ``nominated`` is given,
the pods nominated to the node with a priority at least the preemptor's are added for a
first pass; if that pass fits and any pod was added, a second pass runs without them and
both must fit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from asched.cluster.records import NodeInfo, PodInfo
from asched.cluster.volumes import VolumeCatalog
from asched.config.types import PodTopologySpreadArgs, Profile
from asched.framework.status import Code, Status
from asched.tools.reference import interpod, topologyspread
from asched.tools.reference.crosspod import NamespaceLabels, PodsByNode
from asched.tools.reference.cycle import Cycle, node_state
from asched.tools.reference.plugins import REGISTRY
from asched.tools.reference.preemption import FitsFn
from asched.tools.reference.topologyspread import Extras


def filter_chain(
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    pods_by_node: PodsByNode,
    profile: Profile,
    *,
    namespace_labels: NamespaceLabels | None = None,
    extras: Extras | None = None,
    nominated: Sequence[PodInfo] = (),
    volumes: VolumeCatalog | None = None,
) -> FitsFn:
    """Return ``fits(node, pods_on_node) -> Status`` for ``pod`` under ``profile``
    (``volumes``: the storage objects the volume plugins read)."""
    ns_labels: NamespaceLabels = namespace_labels or {}
    raw_extras: Extras = extras or {}
    spread_args = profile.plugin_args.get(topologyspread.NAME)
    if not isinstance(spread_args, PodTopologySpreadArgs):
        spread_args = PodTopologySpreadArgs()
    catalog = volumes if volumes is not None else VolumeCatalog()
    cycle = Cycle(pod=pod, profile=profile, nodes=(), image_spread={}, volumes=catalog)
    pre: dict[str, Status] = {}
    allowed: dict[str, frozenset[str] | None] = {}
    for name in profile.resolved.filter:
        if name in (interpod.NAME, topologyspread.NAME, _VOLUME_RESTRICTIONS):
            continue
        if name not in REGISTRY:
            continue
        outcome = REGISTRY[name].pre_filter(cycle)
        pre[name] = outcome.status
        allowed[name] = outcome.node_names

    def one_pass(node: NodeInfo, pods: Sequence[PodInfo]) -> Status:
        cluster: Mapping[str, Sequence[PodInfo]] = {**pods_by_node, node.name: tuple(pods)}
        for name in profile.resolved.filter:
            if name == interpod.NAME:
                status = interpod.filter_nodes(nodes, cluster, ns_labels, pod).nodes[node.name]
            elif name == topologyspread.NAME:
                status = topologyspread.filter_nodes(
                    nodes, cluster, pod, spread_args, raw_extras
                ).nodes[node.name]
            elif name == _VOLUME_RESTRICTIONS and name in REGISTRY:
                status = _cluster_wide(name, cycle, nodes, cluster, node)
                if status.code == Code.SKIP:
                    continue
            elif name not in REGISTRY or pre[name].code == Code.SKIP:
                continue
            elif not pre[name].ok:
                status = pre[name]
            elif (names := allowed[name]) is not None and node.name not in names:
                status = Status.unresolvable(f"node(s) didn't satisfy plugin {name}")
            else:
                status = REGISTRY[name].filter(cycle, node_state(node, tuple(pods)))
            if not status.ok:
                return status.with_plugin(name)
        return Status.success()

    def fits(node: NodeInfo, pods_on_node: Sequence[PodInfo]) -> Status:
        extra = [
            p
            for p in nominated
            if p.nominated_node_name == node.name
            and p.priority >= pod.priority
            and p.key != pod.key
        ]
        first = one_pass(node, [*pods_on_node, *extra])
        if not first.ok or not extra:
            return first
        return one_pass(node, pods_on_node)

    return fits


_VOLUME_RESTRICTIONS = "VolumeRestrictions"


def _cluster_wide(
    name: str,
    cycle: Cycle,
    nodes: Sequence[NodeInfo],
    cluster: Mapping[str, Sequence[PodInfo]],
    node: NodeInfo,
) -> Status:
    """PreFilter then Filter of a plugin that reads every node's pods, on ``cluster``."""
    states = tuple(node_state(n, tuple(cluster.get(n.name, ()))) for n in nodes)
    whole = dataclasses.replace(cycle, nodes=states, scratch={})
    plugin = REGISTRY[name]
    pre = plugin.pre_filter(whole).status
    if not pre.ok:
        return pre
    return plugin.filter(whole, node_state(node, tuple(cluster.get(node.name, ()))))
