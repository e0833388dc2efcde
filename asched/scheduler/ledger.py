"""Assumed pods: counted on a node before the API confirms the binding.

Upstream: pkg/scheduler/backend/cache/cache.go, AssumePod, FinishBinding and ForgetPod.

State machine of one assumed pod::

    assume ──> assumed ──(watch shows it bound to that node)──> confirmed (left the ledger;
       │          │                                               the table keeps counting it)
       │          ├─(watch shows it bound elsewhere)──> moved to the real node, left the ledger
       │          └─(bind failed / rejected / pod gone)──> forget: subtracted exactly, left
       └─ the pod's requests enter the node's row at once, so the next cycle sees them.

Assumed pods never expire (upstream's ttl is 0 since v1.23): every path ends in confirm
or forget. Forgetting a pod the watch already confirmed is a no-op, so the binder's
rollback and the watch may race freely: no double counting and no lost accounting.
"""

from __future__ import annotations

from dataclasses import dataclass

from asched.cluster.names import NodeName, PodKey
from asched.cluster.records import PodInfo, bound_to
from asched.cluster.table import NodeTable


@dataclass(frozen=True, slots=True)
class Assumed:
    pod: PodInfo
    node: NodeName


def _same_footprint(a: PodInfo, b: PodInfo) -> bool:
    return (
        a.requests == b.requests
        and a.nonzero_cpu == b.nonzero_cpu
        and a.nonzero_memory == b.nonzero_memory
        and a.host_ports == b.host_ports
    )


class Ledger:
    """The assumed pods of this scheduler, keyed by ``namespace/name``."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self._assumed: dict[PodKey, Assumed] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._assumed

    def __len__(self) -> int:
        return len(self._assumed)

    def assume(self, pod: PodInfo, node: NodeName) -> None:
        """Count ``pod`` on ``node`` now (its requests enter the row; a nomination ends)."""
        bound = bound_to(pod, node)
        self.table.nominations.clear(pod.key)
        self.table.add_pod(bound, node)
        self._assumed[pod.key] = Assumed(bound, node)

    def forget(self, key: PodKey) -> bool:
        """Undo an assumption; False when it was already confirmed or forgotten."""
        assumed = self._assumed.pop(key, None)
        if assumed is None:
            return False
        self.table.remove_pod(key)
        return True

    def confirm(self, key: PodKey) -> None:
        """The watch shows the assumed pod bound where we assumed it: it leaves the ledger."""
        self._assumed.pop(key, None)

    def observe_bound(self, pod: PodInfo) -> None:
        """The watch shows ``pod`` bound: confirm it, or count it where it really is."""
        self._assumed.pop(pod.key, None)
        counted = self.table.pods.get(pod.key)
        if (
            counted is not None
            and _same_footprint(counted.info, pod)
            and (self.table.row_of(pod.node_name) == counted.row)
        ):
            return  # already counted right (a confirmation, or a status-only update)
        self.table.add_pod(pod, pod.node_name)  # replaces any previous accounting

    def node_of(self, key: PodKey) -> NodeName | None:
        assumed = self._assumed.get(key)
        return None if assumed is None else assumed.node
