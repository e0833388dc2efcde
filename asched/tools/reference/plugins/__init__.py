"""The reference plugins by kube-scheduler name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from asched.tools.reference.plugins.balanced_allocation import BalancedAllocation
from asched.tools.reference.plugins.base import Plugin
from asched.tools.reference.plugins.image_locality import ImageLocality
from asched.tools.reference.plugins.inter_pod_affinity import InterPodAffinity
from asched.tools.reference.plugins.node_affinity import NodeAffinity
from asched.tools.reference.plugins.node_name import NodeName
from asched.tools.reference.plugins.node_ports import NodePorts
from asched.tools.reference.plugins.node_resources_fit import NodeResourcesFit
from asched.tools.reference.plugins.node_unschedulable import NodeUnschedulable
from asched.tools.reference.plugins.node_volume_limits import NodeVolumeLimits
from asched.tools.reference.plugins.pod_topology_spread import PodTopologySpread
from asched.tools.reference.plugins.taint_toleration import TaintToleration
from asched.tools.reference.plugins.volume_binding import VolumeBinding
from asched.tools.reference.plugins.volume_restrictions import VolumeRestrictions
from asched.tools.reference.plugins.volume_zone import VolumeZone

#: Every plugin with a PreFilter, Filter, PreScore or Score extension.
REGISTRY: Final[Mapping[str, Plugin]] = {
    "NodeUnschedulable": NodeUnschedulable(),
    "NodeName": NodeName(),
    "TaintToleration": TaintToleration(),
    "NodeAffinity": NodeAffinity(),
    "NodePorts": NodePorts(),
    "NodeResourcesFit": NodeResourcesFit(),
    "VolumeRestrictions": VolumeRestrictions(),
    "NodeVolumeLimits": NodeVolumeLimits(),
    "VolumeBinding": VolumeBinding(),
    "VolumeZone": VolumeZone(),
    "PodTopologySpread": PodTopologySpread(),
    "InterPodAffinity": InterPodAffinity(),
    "NodeResourcesBalancedAllocation": BalancedAllocation(),
    "ImageLocality": ImageLocality(),
}

__all__ = ["REGISTRY", "Plugin"]
