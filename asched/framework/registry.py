"""The explicit plugin registry: name -> factory (no import-time self-registration).

Every name in :data:`asched.config.plugins.CAPABILITIES` must have a factory here; a
test checks that both lists agree and that every plugin implements exactly the
extension points the config layer believes it does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from asched.config.types import PluginArgs
from asched.framework.interface import Handle
from asched.framework.plugins import (
    default_binder,
    default_preemption,
    image_locality,
    inter_pod_affinity,
    node_affinity,
    node_name,
    node_ports,
    node_resources_balanced_allocation,
    node_resources_fit,
    node_unschedulable,
    pod_topology_spread,
    priority_sort,
    scheduling_gates,
    taint_toleration,
    unsupported,
)

Factory = Callable[[PluginArgs | None, Handle | None], object]

REGISTRY: Final[Mapping[str, Factory]] = {
    scheduling_gates.NAME: scheduling_gates.factory,
    priority_sort.NAME: priority_sort.factory,
    node_unschedulable.NAME: node_unschedulable.factory,
    node_name.NAME: node_name.factory,
    taint_toleration.NAME: taint_toleration.factory,
    node_affinity.NAME: node_affinity.factory,
    node_ports.NAME: node_ports.factory,
    node_resources_fit.NAME: node_resources_fit.factory,
    default_preemption.NAME: default_preemption.factory,
    node_resources_balanced_allocation.NAME: node_resources_balanced_allocation.factory,
    image_locality.NAME: image_locality.factory,
    inter_pod_affinity.NAME: inter_pod_affinity.factory,
    pod_topology_spread.NAME: pod_topology_spread.factory,
    default_binder.NAME: default_binder.factory,
    **{name: unsupported.factory_for(name) for name in unsupported.NAMES},
}
