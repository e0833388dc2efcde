"""The plugins asched knows, the extension points each implements, and the default list.

This is static knowledge about the plugin set (what upstream learns by reflection on
the plugin types), kept in the config layer so a configuration can be resolved and
validated before any plugin object exists. ``asched.framework.registry`` must provide
a factory for every name here; a test checks both agree.
"""

from __future__ import annotations

from typing import Final

#: Plugin name -> extension points it implements (camelCase, as in the YAML).
CAPABILITIES: Final[dict[str, frozenset[str]]] = {
    "SchedulingGates": frozenset({"preEnqueue"}),
    "PrioritySort": frozenset({"queueSort"}),
    "NodeUnschedulable": frozenset({"filter"}),
    "NodeName": frozenset({"filter"}),
    "TaintToleration": frozenset({"filter", "preScore", "score"}),
    "NodeAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "NodePorts": frozenset({"preFilter", "filter"}),
    "NodeResourcesFit": frozenset({"preFilter", "filter", "preScore", "score"}),
    "VolumeRestrictions": frozenset({"preFilter", "filter"}),
    "NodeVolumeLimits": frozenset({"preFilter", "filter"}),
    "VolumeBinding": frozenset({"preFilter", "filter", "reserve", "preBind"}),
    "VolumeZone": frozenset({"preFilter", "filter"}),
    "PodTopologySpread": frozenset({"preFilter", "filter", "preScore", "score"}),
    "InterPodAffinity": frozenset({"preFilter", "filter", "preScore", "score"}),
    "DefaultPreemption": frozenset({"postFilter"}),
    "NodeResourcesBalancedAllocation": frozenset({"preScore", "score"}),
    "ImageLocality": frozenset({"score"}),
    "DefaultBinder": frozenset({"bind"}),
}

#: The default multiPoint list in upstream order, with score weights (section 3.1).
DEFAULT_MULTIPOINT: Final[tuple[tuple[str, int], ...]] = (
    ("SchedulingGates", 0),
    ("PrioritySort", 0),
    ("NodeUnschedulable", 0),
    ("NodeName", 0),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", 0),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", 0),
)

#: Plugin name -> the ``kind`` of its args in pluginConfig.
ARGS_KINDS: Final[dict[str, str]] = {
    "NodeResourcesFit": "NodeResourcesFitArgs",
    "NodeResourcesBalancedAllocation": "NodeResourcesBalancedAllocationArgs",
    "NodeAffinity": "NodeAffinityArgs",
    "InterPodAffinity": "InterPodAffinityArgs",
    "PodTopologySpread": "PodTopologySpreadArgs",
    "DefaultPreemption": "DefaultPreemptionArgs",
    "VolumeBinding": "VolumeBindingArgs",
}
