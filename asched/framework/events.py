"""Cluster events that can make an unschedulable pod schedulable (upstream's ClusterEvent).

A plugin that rejects pods declares the events that may turn its rejection into a fit
(upstream's ``EnqueueExtensions.EventsToRegister``): the class attribute ``events`` of the
:class:`~asched.framework.interface.EnqueueExtensions` protocol. The scheduling queue
moves a parked pod back only for an event one of the plugins that rejected it declares;
a pod rejected for reasons no event can fix (an unsupported feature, a request beyond
asched's range) waits for its own update or the 5-minute flush.
"""

from __future__ import annotations

import enum
from typing import Final


class ClusterEvent(enum.Enum):
    NODE_ADD = "NodeAdd"
    NODE_ALLOCATABLE = "NodeAllocatableChange"
    NODE_LABEL = "NodeLabelChange"
    NODE_TAINT = "NodeTaintChange"
    NODE_SCHEDULABLE = "NodeSchedulableChange"
    #: a node's annotations changed (raised only when a plugin reads annotations)
    NODE_ANNOTATION = "NodeAnnotationChange"
    ASSIGNED_POD_DELETE = "AssignedPodDelete"
    ASSIGNED_POD_ADD = "AssignedPodAdd"
    #: a pod that is not bound yet was added (a gang's sibling may have arrived)
    UNSCHEDULED_POD_ADD = "UnscheduledPodAdd"
    #: a PodGroup or a Workload was added, changed or deleted
    GANG_CHANGE = "PodGroupChange"
    #: storage objects (the volume plugins' events; ``changed`` is the new record)
    PVC_ADD = "PersistentVolumeClaimAdd"
    PVC_UPDATE = "PersistentVolumeClaimUpdate"
    PV_ADD = "PersistentVolumeAdd"
    PV_UPDATE = "PersistentVolumeUpdate"
    STORAGE_CLASS_ADD = "StorageClassAdd"
    STORAGE_CLASS_UPDATE = "StorageClassUpdate"
    CSI_NODE_ADD = "CSINodeAdd"
    CSI_NODE_UPDATE = "CSINodeUpdate"
    CSI_DRIVER_ADD = "CSIDriverAdd"
    CSI_DRIVER_UPDATE = "CSIDriverUpdate"
    CSI_CAPACITY_ADD = "CSIStorageCapacityAdd"
    CSI_CAPACITY_UPDATE = "CSIStorageCapacityUpdate"
    UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"
    FORCE_ACTIVATE = "ForceActivate"


#: Events that move every parked pod regardless of who rejected it.
UNIVERSAL: Final = frozenset({ClusterEvent.UNSCHEDULABLE_TIMEOUT, ClusterEvent.FORCE_ACTIVATE})
#: Every event a node or pod change raises: what a pod with no recorded rejector (an error,
#: or zero nodes) waits for.
ANY: Final = frozenset(ClusterEvent) - UNIVERSAL
