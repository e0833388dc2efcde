"""What the queue knows about a pending pod (upstream's QueuedPodInfo)."""

from __future__ import annotations

from dataclasses import dataclass, field

from asched.cluster.names import PodKey
from asched.cluster.records import PodInfo
from asched.framework.events import ClusterEvent


@dataclass(slots=True)
class QueuedPod:
    """A pending pod and its scheduling history.

    ``timestamp`` is the loop time it was last (re)added, which orders equal-priority
    pods; ``initial_attempt`` is when it first entered the active queue (for latency);
    ``attempts`` counts pops; ``rejected_by`` names the plugins that found it
    unschedulable last time (cluster events are matched against them).
    """

    pod: PodInfo
    timestamp: float
    initial_attempt: float | None = None
    attempts: int = 0
    rejected_by: frozenset[str] = frozenset()
    gated: bool = False
    generation: int = 0
    unschedulable_since: float = 0.0
    #: the pod changed in a way the scheduler reads while its attempt ran
    updated_in_flight: bool = False
    #: while parked: the events that may move it (the queue's index)
    waiting_for: frozenset[ClusterEvent] = frozenset()
    sequence: int = field(default=0, compare=False)

    @property
    def key(self) -> PodKey:
        return self.pod.key
