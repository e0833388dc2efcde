"""What the cross-row Filters of a cycle read of the other pods, from their declarations.

A what-if (the nominated pods counted for a first pass, preemption's victims taken off)
changes only the pods on the nodes. A cross-row Filter that declares it never reads them
for this pod (:data:`~asched.framework.interface.PODS_MATTER`), or reads them only
through their volumes (:data:`~asched.framework.interface.READS_ONLY_POD_VOLUMES`),
answers such a what-if as it answers now, or does so unless a pod with volumes moves:
its mask is computed once instead of once per what-if.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from asched.cluster.records import PodInfo
from asched.cluster.table import NodeTable
from asched.framework.contain import PluginFailure
from asched.framework.cycle_state import CycleState
from asched.framework.interface import PODS_MATTER, READS_ONLY_POD_VOLUMES, FilterPlugin

Asks = Callable[[CycleState, PodInfo, NodeTable], bool]


def only_pod_volumes(plugins: Sequence[FilterPlugin]) -> bool:
    """Whether every one of ``plugins`` sees the other pods only through their volumes."""
    return all(getattr(p, READS_ONLY_POD_VOLUMES, False) is True for p in plugins)


def pods_matter(
    plugins: Sequence[FilterPlugin], state: CycleState, pod: PodInfo, table: NodeTable
) -> bool:
    """Whether counting or removing pods may change any of ``plugins``' answers for
    ``pod`` (True unless each declares it does not; a plugin that raises is a
    :class:`~asched.framework.contain.PluginFailure` naming it)."""
    for plugin in plugins:
        asks: Asks | None = getattr(plugin, PODS_MATTER, None)
        if asks is None:
            return True
        try:
            matters = asks(state, pod, table)
        except Exception as exc:
            raise PluginFailure("Filter", plugin.name, exc) from exc
        if matters:
            return True
    return False
