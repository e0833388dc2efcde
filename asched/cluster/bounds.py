"""The range of amounts asched schedules, and how values beyond it enter the model.

Kubernetes quantities are unbounded strings; the API server caps each at int64's
maximum in its base unit, and nothing bounds their *sums* (two containers of ``7Ei``
are each valid, together beyond int64). asched's columns are ``int64`` and its score
arithmetic multiplies amounts by up to 100, so every amount that enters the table is
held to one declared range:

``0 <= amount <= MAX_AMOUNT`` with ``MAX_AMOUNT = 2**53 - 1`` (9,007,199,254,740,991:
8 PiB of memory, 9 billion cores in millicores). It is the largest integer a float64
holds exactly, so BalancedAllocation's fractions stay exact; ``100 * MAX_AMOUNT`` fits
int64, so no score product overflows; and a node's summed requests stay in int64 for
1,024 pods at the maximum each.

* A **pod** whose request of any resource (one container's, or the effective total of
  :mod:`asched.cluster.requests`) exceeds the range is *out of range*: it is decoded with
  its amounts clamped (so it can still be counted on a node someone else bound it to) and
  carries a message naming the field; the scheduler reports it unschedulable with that
  message.
* A **node** capacity beyond the range is clamped to it: no pod in range can tell the
  difference.
* Image sizes are clamped the same way.
"""

from __future__ import annotations

from typing import Final

#: The largest amount (in canonical units) asched schedules or counts.
MAX_AMOUNT: Final = 2**53 - 1
#: The plugin name an out-of-range pod's status carries (no cluster event can help it).
OUT_OF_RANGE_PLUGIN: Final = "PodRequestRange"


def clamp(amount: int) -> int:
    """``amount`` held to ``0..MAX_AMOUNT``."""
    return 0 if amount < 0 else min(amount, MAX_AMOUNT)


def describe(amount: int, resource: str) -> str:
    """``amount`` with its unit, for messages (``9007199254740991 millicores``)."""
    if resource == "cpu":
        return f"{amount} millicores"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return f"{amount} bytes"
    return str(amount)


def too_large(path: str, text: str, amount: int, resource: str) -> str:
    """The message for one quantity beyond the range."""
    return (
        f"{path}: {text!r} ({describe(amount, resource)}) is more than asched can "
        f"schedule (at most {describe(MAX_AMOUNT, resource)})"
    )


def total_too_large(resource: str, amount: int) -> str:
    """The message for a pod whose effective total request is beyond the range."""
    return (
        f"spec: the pod's total {resource} request ({describe(amount, resource)}, summed "
        f"over its containers, init containers and overhead) is more than asched can "
        f"schedule (at most {describe(MAX_AMOUNT, resource)})"
    )
