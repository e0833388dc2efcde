"""PrioritySort (QueueSort): higher priority first, then earlier queue time.

Upstream: pkg/scheduler/framework/plugins/queuesort/priority_sort.go, Less.
"""

from __future__ import annotations

from typing import Final

from asched.cluster.records import PodInfo
from asched.framework.interface import Handle
from asched.framework.spec import API_VERSION, declare

NAME: Final = "PrioritySort"


class PrioritySort:
    name: Final = NAME

    def sort_key(self, pod: PodInfo, timestamp: float) -> tuple[float, ...]:
        return (-pod.priority, timestamp)


def factory(args: object | None, handle: Handle | None) -> PrioritySort:
    return PrioritySort()


SPEC: Final = declare(PrioritySort, api_version=API_VERSION, factory=factory)
