"""Resource names and their classes, as kube-scheduler sees them.

``cpu`` is millicores; ``memory``, ``ephemeral-storage`` and ``hugepages-*`` are bytes;
``pods`` is a count; any other name is a *scalar* resource in whole units. Extended
resources (``example.com/foo``) are the scalar resources that ``ignoredResources`` and
``ignoredResourceGroups`` may exclude.
"""

from __future__ import annotations

from typing import Final

CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
PODS: Final = "pods"

#: The resources every node row carries, in column order.
BASE_RESOURCES: Final = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)

#: Requests assumed for scoring when a container leaves cpu/memory unset (upstream:
#: pkg/scheduler/util/pod_resources.go).
DEFAULT_MILLI_CPU_REQUEST: Final = 100
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024


def is_scalar(name: str) -> bool:
    """True for hugepages, extended and other resources beyond cpu, memory, storage, pods."""
    return name not in BASE_RESOURCES


def is_extended(name: str) -> bool:
    """True for an extended resource name (``v1helper.IsExtendedResourceName``).

    An extended resource has a domain prefix (contains ``/``) that is not in the
    ``kubernetes.io`` namespace, and is not a ``requests.`` quota name.
    """
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def group_of(name: str) -> str:
    """The part of a resource name before its ``/`` (its group for ``ignoredResourceGroups``)."""
    return name.split("/", 1)[0]
