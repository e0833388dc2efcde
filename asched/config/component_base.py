"""``leaderElection`` and ``clientConnection``: the sections shared with every control-plane component.

Defaults are kube-scheduler's (component-base recommended leader election, the
scheduler's own lock name and QPS/burst). Validation follows component-base:

* when ``leaderElect`` is true, ``leaseDuration > renewDeadline > 1.2 x retryPeriod > 0``
  (1.2 is client-go's jitter factor; the comparison is done in float64 nanoseconds, as
  client-go does); when it is false the durations only have to parse;
* ``resourceLock`` must be ``leases``. Upstream only checks this when ``leaderElect`` is
  true; asched checks it always, since it implements no other lock;
* ``clientConnection.burst`` must not be negative. A ``qps`` or ``burst`` of 0 means
  "use the scheduler default" (50 and 100), exactly as upstream defaults them.
"""

from __future__ import annotations

from typing import Final

from asched.config.duration import read_duration_ns
from asched.config.schema import Section
from asched.config.types import ClientConnection, LeaderElection

LEADER_ELECTION_FIELDS: Final = frozenset(
    {
        "leaderElect",
        "leaseDuration",
        "renewDeadline",
        "retryPeriod",
        "resourceLock",
        "resourceName",
        "resourceNamespace",
    }
)
CLIENT_CONNECTION_FIELDS: Final = frozenset(
    {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"}
)
#: client-go's wait.JitterUntil factor for the retry loop.
JITTER_FACTOR: Final = 1.2
_NS_PER_SECOND: Final = 1_000_000_000


def read_leader_election(section: Section) -> LeaderElection:
    """Read and validate ``leaderElection`` (a Section built with LEADER_ELECTION_FIELDS)."""
    defaults = LeaderElection()
    leader_elect = section.boolean("leaderElect", default=defaults.leader_elect)
    lease = read_duration_ns(section, "leaseDuration", 15 * _NS_PER_SECOND, example="15s")
    renew = read_duration_ns(section, "renewDeadline", 10 * _NS_PER_SECOND, example="15s")
    retry = read_duration_ns(section, "retryPeriod", 2 * _NS_PER_SECOND, example="15s")
    lock = section.string("resourceLock") or defaults.resource_lock
    if lock != "leases":
        section.problems.add(
            section.at("resourceLock"), f'only "leases" is supported, got {lock!r}'
        )
    if leader_elect:
        problems = section.problems
        for key, value in (
            ("leaseDuration", lease),
            ("renewDeadline", renew),
            ("retryPeriod", retry),
        ):
            if value <= 0:
                problems.add(section.at(key), f"must be greater than 0, got {section.get(key)!r}")
        if renew > 0 and lease <= renew:
            problems.add(
                section.at("leaseDuration"),
                "must be greater than renewDeadline "
                f"({lease / _NS_PER_SECOND:g}s <= {renew / _NS_PER_SECOND:g}s)",
            )
        if retry > 0 and renew <= JITTER_FACTOR * retry:
            problems.add(
                section.at("renewDeadline"),
                f"must be greater than {JITTER_FACTOR} x retryPeriod "
                f"({renew / _NS_PER_SECOND:g}s <= {JITTER_FACTOR} x {retry / _NS_PER_SECOND:g}s)",
            )
    return LeaderElection(
        leader_elect=leader_elect,
        lease_duration_seconds=lease / _NS_PER_SECOND,
        renew_deadline_seconds=renew / _NS_PER_SECOND,
        retry_period_seconds=retry / _NS_PER_SECOND,
        resource_lock=lock,
        resource_name=section.string("resourceName") or defaults.resource_name,
        resource_namespace=section.string("resourceNamespace") or defaults.resource_namespace,
    )


def read_client_connection(section: Section) -> ClientConnection:
    """Read and validate ``clientConnection`` (a Section built with CLIENT_CONNECTION_FIELDS)."""
    defaults = ClientConnection()
    burst = section.integer("burst", 0)
    if burst < 0:
        section.problems.add(section.at("burst"), f"must not be negative, got {burst}")
    return ClientConnection(
        kubeconfig=section.string("kubeconfig"),
        accept_content_types=section.string("acceptContentTypes"),
        content_type=section.string("contentType") or defaults.content_type,
        qps=section.number("qps", 0.0) or defaults.qps,
        burst=burst or defaults.burst,
    )
