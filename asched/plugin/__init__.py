"""asched's plugin API: everything a plugin author needs, and nothing else is promised.

Version :data:`API_VERSION` (MAJOR.MINOR). A plugin declares the version it was written
for (``declare(..., api_version="1.0")``); asched loads it when the major is the same
and its minor is not newer than asched's, and refuses it at load time otherwise, with
an error naming both versions. Names not exported here (``asched.framework``,
``asched.cluster``, ...) may change in any release.

A plugin is a class whose methods say which extension points it implements:

=============  ==========================================================
preEnqueue     ``pre_enqueue(pod) -> Status``
queueSort      ``sort_key(pod, timestamp) -> tuple`` (smaller pops first)
preFilter      ``pre_filter(state, pod, nodes) -> PreFilterResult``
filter         ``filter(state, pod, nodes, rows) -> bool[len(rows)]`` and
               ``explain(state, pod, nodes, row) -> Status``; or the per-node
               ``filter_node(state, pod, node) -> Status``
postFilter     ``post_filter(state, pod, nodes, statuses, framework)``
preScore       ``pre_score(state, pod, nodes) -> Status``
score          ``score(state, pod, nodes, rows) -> int64[len(rows)]`` and
               ``normalize(state, scores, taking_part)``; or the per-node
               ``score_node(state, pod, node) -> int``
reserve        ``reserve(state, pod, node_name) -> Status``, ``unreserve(...)``
permit         ``permit(state, pod, node_name) -> (Status, timeout_seconds)``
preBind        ``async pre_bind(state, pod, node_name) -> Status``
bind           ``async bind(state, pod, node_name) -> Status``
postBind       ``post_bind(state, pod, node_name)``
=============  ==========================================================

Optional declarations: ``events`` (:class:`EnqueueExtensions`: the cluster events that
may make a pod this plugin rejected schedulable again) with ``queueing_hint``
(:class:`QueueingHints`: whether one such event's object may help a given pod), ``sign`` (:class:`SignPlugin`:
the plugin's part of the pod signature, which lets pods of one shape share cached rows),
``explain_rows`` (:class:`ExplainsRows`), and for a PreFilter either
``pre_filter_reads_pods = False`` (its answer never depends on the pods counted on the
nodes) or the hooks ``pre_filter_add_pod``/``pre_filter_remove_pod``
(:class:`PreFilterExtensions`, upstream's AddPod/RemovePod; state the hooks change in
place must be :class:`StateData`): either lets preemption's node-by-node search run
PreFilter once per preemptor; for a Filter that is not ``row_local``,
``filter_reads_only_pod_volumes = True`` (other pods matter to it only through their
volumes, as to the volume plugins) lets preemption's vectorised search run past it.

Annotations (``PodInfo.annotations``, ``NodeInfo.annotations``, ``Node.annotations``,
``Nodes.annotation_values``) are decoded only when an enabled plugin declares
``declare(..., reads_annotations=True)``; otherwise they read as empty. Owner references
(``PodInfo.owner_references``, :class:`OwnerReference`) are always decoded.

Errors a plugin author meets: :class:`ConfigError` (bad ``pluginConfig`` args, every
field problem listed), :class:`PluginContractError` (an answer of the wrong type, shape,
dtype or range, naming the plugin and what was expected). See docs/plugins.md for the
tutorial and :mod:`asched.plugin.testing` for the test kit.
"""

from __future__ import annotations

from asched.cluster.columns import Rows
from asched.cluster.records import NodeInfo, OwnerReference, PodInfo, Taint, Toleration
from asched.config.catalogue import ArgsSpec
from asched.config.schema import Section as ArgsSection
from asched.errors import ConfigError, PluginContractError
from asched.framework.cycle_state import SCORED_ROWS, CycleState, StateData
from asched.framework.events import ClusterEvent
from asched.framework.interface import (
    MAX_SCORE,
    MIN_SCORE,
    BindPlugin,
    BoolMask,
    EnqueueExtensions,
    ExplainsRows,
    FilterPlugin,
    FilterRunner,
    Handle,
    PermitPlugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueingHints,
    QueueSortPlugin,
    ReservePlugin,
    ScoreArray,
    ScorePlugin,
    SignPlugin,
)
from asched.framework.normalize import default_normalize
from asched.framework.per_node import Node, NodeFilter, NodeScore
from asched.framework.spec import API_VERSION, PluginSpec, declare
from asched.framework.status import Code, Status
from asched.plugin.nodes import Nodes

__all__ = [
    "API_VERSION",
    "MAX_SCORE",
    "MIN_SCORE",
    "SCORED_ROWS",
    "ArgsSection",
    "ArgsSpec",
    "BindPlugin",
    "BoolMask",
    "ClusterEvent",
    "Code",
    "ConfigError",
    "CycleState",
    "EnqueueExtensions",
    "ExplainsRows",
    "FilterPlugin",
    "FilterRunner",
    "Handle",
    "Node",
    "NodeFilter",
    "NodeInfo",
    "NodeScore",
    "Nodes",
    "OwnerReference",
    "PermitPlugin",
    "PluginContractError",
    "PluginSpec",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "QueueingHints",
    "ReservePlugin",
    "Rows",
    "ScoreArray",
    "ScorePlugin",
    "SignPlugin",
    "StateData",
    "Status",
    "Taint",
    "Toleration",
    "declare",
    "default_normalize",
]
