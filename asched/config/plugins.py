"""The default plugin list of a profile (upstream's ``getDefaultPlugins``).

What each plugin implements and how its args are read is not written here: the plugins
declare it, and the configuration reads it from the catalogue
(:mod:`asched.config.catalogue`). Every name here is an in-tree plugin.
"""

from __future__ import annotations

from typing import Final

#: The default multiPoint list in upstream order, with score weights (upstream:
#: pkg/scheduler/apis/config/v1/default_plugins.go).
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
