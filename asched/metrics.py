"""Every Prometheus metric of asched, in one module, on one private registry.

Why one module: a metric's name, type, labels and buckets are an API that dashboards and
alerts depend on; keeping them together makes that API reviewable in one place and keeps
callers to one line (``metrics.observe_attempt("scheduled", profile, seconds)``).

Invariants:

* Names mirror kube-scheduler's (``pkg/scheduler/metrics/metrics.go``, subsystem
  ``scheduler_``) with the ``asched_`` prefix instead, and the same labels and buckets, so a
  kube-scheduler dashboard works after a prefix rewrite. The mapping is ``docs/metrics.md``.
* Everything is registered on :data:`REGISTRY`, not prometheus-client's global default:
  importing this module twice (tests) or next to another library never collides, and
  :mod:`asched.serving.health` serves exactly this registry on ``/metrics``.
* Label values are closed sets where upstream's are (``result``, ``queue``, the
  ``attempts`` label's ``15+`` cap): an unknown value is a bug and raises ``ValueError``
  instead of silently creating a new time series.
* Nothing here does I/O or reads configuration; observing is cheap enough for the cycle's
  hot path (one dict lookup per label set, then a lock-free-ish float add).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, Literal, get_args

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

AttemptResult = Literal["scheduled", "unschedulable", "error"]
Queue = Literal["active", "backoff", "unschedulable", "gated"]

RESULTS: Final[frozenset[str]] = frozenset(get_args(AttemptResult))
QUEUES: Final[tuple[str, ...]] = get_args(Queue)
#: Upstream's ``attempts`` label caps at 15: 16 and more attempts are all reported as "15+".
MAX_ATTEMPTS_LABEL: Final = 15


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Return ``count`` upper bounds ``start * factor**k`` (Go's ``ExponentialBuckets``)."""
    return tuple(start * factor**k for k in range(count))


REGISTRY: Final = CollectorRegistry(auto_describe=True)

SCHEDULE_ATTEMPTS: Final = Counter(
    "asched_schedule_attempts_total",
    "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could"
    " not be scheduled, while 'error' means an internal scheduler problem.",
    ["result", "profile"],
    registry=REGISTRY,
)
SCHEDULING_ATTEMPT_DURATION: Final = Histogram(
    "asched_scheduling_attempt_duration_seconds",
    "Scheduling attempt latency in seconds (scheduling algorithm + binding).",
    ["result", "profile"],
    buckets=exponential_buckets(0.001, 2, 15),
    registry=REGISTRY,
)
POD_SCHEDULING_SLI_DURATION: Final = Histogram(
    "asched_pod_scheduling_sli_duration_seconds",
    "E2e latency for a pod being scheduled, from the time the pod enters the scheduling"
    " queue (first attempt) until it is bound; may include multiple attempts.",
    ["attempts"],
    buckets=exponential_buckets(0.01, 2, 20),
    registry=REGISTRY,
)
POD_SCHEDULING_ATTEMPTS: Final = Histogram(
    "asched_pod_scheduling_attempts",
    "Number of attempts to successfully schedule a pod.",
    buckets=exponential_buckets(1, 2, 5),
    registry=REGISTRY,
)
PENDING_PODS: Final = Gauge(
    "asched_pending_pods",
    "Number of pending pods, by the queue type: 'active' (activeQ), 'backoff' (backoffQ),"
    " 'unschedulable' (unschedulable pods) and 'gated' (scheduling-gated pods).",
    ["queue"],
    registry=REGISTRY,
)
FRAMEWORK_EXTENSION_POINT_DURATION: Final = Histogram(
    "asched_framework_extension_point_duration_seconds",
    "Latency for running all plugins of a specific extension point.",
    ["extension_point", "status", "profile"],
    buckets=exponential_buckets(0.0001, 2, 12),
    registry=REGISTRY,
)
EXTENDER_REQUEST_DURATION: Final = Histogram(
    "asched_extender_request_duration_seconds",
    "Latency of the calls to scheduler extenders, by extender (urlPrefix), verb and result"
    " ('ok' or 'error'); the cycle does not wait for them (docs/extenders.md).",
    ["extender", "verb", "result"],
    buckets=exponential_buckets(0.0005, 2, 14),
    registry=REGISTRY,
)
PERMIT_WAITING: Final = Gauge(
    "asched_permit_waiting_pods",
    "Pods assumed and waiting at Permit (gang members waiting for their siblings); they"
    " hold their node's resources but no binding slot"
    " (upstream: scheduler_permit_wait_duration_seconds measures the wait instead).",
    registry=REGISTRY,
)
EXTENDERS_INFLIGHT: Final = Gauge(
    "asched_extender_consultations_inflight",
    "Pods whose extenders are being asked (each holds a binding slot).",
    registry=REGISTRY,
)
BINDS_INFLIGHT: Final = Gauge(
    "asched_binds_inflight",
    "Number of binding cycles in flight (upstream: scheduler_goroutines{operation='binding'}).",
    registry=REGISTRY,
)
SCHEDULER_CACHE_SIZE: Final = Gauge(
    "asched_scheduler_cache_size",
    "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
    ["type"],
    registry=REGISTRY,
)
PREEMPTION_ATTEMPTS: Final = Counter(
    "asched_preemption_attempts_total",
    "Total preemption attempts in the cluster till now.",
    registry=REGISTRY,
)
PREEMPTION_VICTIMS: Final = Histogram(
    "asched_preemption_victims",
    "Number of selected preemption victims.",
    buckets=(1, 2, 4, 8, 16, 32, 64),
    registry=REGISTRY,
)
EVENTS: Final = Counter(
    "asched_events_total",
    "Kubernetes Events emitted by the scheduler, by event type and reason.",
    ["type", "reason"],
    registry=REGISTRY,
)
UNDECODABLE: Final = Counter(
    "asched_undecodable_objects_total",
    "Watched objects asched could not decode (a pod of its own is also reported on the pod),"
    " by kind.",
    ["kind"],
    registry=REGISTRY,
)
INTERNAL_ERRORS: Final = Counter(
    "asched_internal_errors_total",
    "Unexpected exceptions caught while handling one pod or one watch event (each is logged"
    " with its object; the pod is retried with backoff), by phase.",
    ["phase"],
    registry=REGISTRY,
)
LEADER: Final = Gauge(
    "asched_leader",
    "1 while this replica holds the leader lease, else 0"
    " (upstream: leader_election_master_status).",
    registry=REGISTRY,
)


def attempts_label(attempts: int) -> str:
    """Return upstream's ``attempts`` label: ``"1"`` .. ``"15"``, then ``"15+"``."""
    if attempts < 1:
        raise ValueError(f"attempts must be >= 1, got {attempts}")
    return str(attempts) if attempts <= MAX_ATTEMPTS_LABEL else f"{MAX_ATTEMPTS_LABEL}+"


def observe_attempt(result: AttemptResult, profile: str, seconds: float) -> None:
    """Count one scheduling attempt and observe its latency (upstream ``observeScheduleAttemptAndLatency``).

    Parameters
    ----------
    result : {"scheduled", "unschedulable", "error"}
    profile : str
        The profile's schedulerName.
    seconds : float
        Attempt latency in seconds, measured on loop time.
    """
    children = _attempt_children.get((result, profile))
    if children is None:
        if result not in RESULTS:
            raise ValueError(f"result must be one of {sorted(RESULTS)}, got {result!r}")
        children = _attempt_children[(result, profile)] = (
            SCHEDULE_ATTEMPTS.labels(result=result, profile=profile).inc,
            SCHEDULING_ATTEMPT_DURATION.labels(result=result, profile=profile).observe,
        )
    count, observe = children
    count()
    observe(seconds)


#: attempts (16 and more as 16) -> the SLI histogram's child for its label (see :data:`_attempt_children`)
_sli_children: dict[int, Callable[[float], None]] = {}

#: (result, profile) -> the attempt counter's and histogram's children: ``labels()``
#: costs a lock and a few dict lookups, and this runs for every attempt
_attempt_children: dict[tuple[str, str], tuple[Callable[[], None], Callable[[float], None]]] = {}


def observe_scheduled(profile: str, attempts: int, seconds_since_first_attempt: float) -> None:
    """Record a pod that was bound after ``attempts`` attempts.

    Observes the SLI latency (first attempt to bound, seconds) under the ``attempts`` label
    and the attempt count histogram. ``profile`` is accepted so every helper reads the same
    at the call site, but, as upstream, neither histogram has a profile label; the attempt
    itself is counted by :func:`observe_attempt`.
    """
    del profile  # not a label of these two metrics upstream (see docstring)
    key = min(attempts, MAX_ATTEMPTS_LABEL + 1)  # 16 and more: one label, one child
    observe = _sli_children.get(key)
    if observe is None:
        label = attempts_label(attempts)
        observe = _sli_children[key] = POD_SCHEDULING_SLI_DURATION.labels(attempts=label).observe
    observe(seconds_since_first_attempt)
    POD_SCHEDULING_ATTEMPTS.observe(attempts)


def set_pending(counts: Mapping[str, int]) -> None:
    """Set ``asched_pending_pods`` for every queue; a queue missing from ``counts`` is 0.

    Raises ``ValueError`` for a queue name that is not one of :data:`QUEUES`.
    """
    unknown = set(counts) - set(QUEUES)
    if unknown:
        raise ValueError(f"unknown queue(s) {sorted(unknown)}, expected a subset of {QUEUES}")
    for queue in QUEUES:
        PENDING_PODS.labels(queue=queue).set(counts.get(queue, 0))


def observe_extension_point(point: str, status: str, profile: str, seconds: float) -> None:
    """Observe the latency of running every plugin at one extension point.

    ``point`` uses upstream's spelling (``PreFilter``, ``Filter``, ``Score``, ...) and
    ``status`` the framework Code's name (``Success``, ``Unschedulable``, ``Error``, ...).
    """
    FRAMEWORK_EXTENSION_POINT_DURATION.labels(
        extension_point=point, status=status, profile=profile
    ).observe(seconds)


def set_cache_size(nodes: int, pods: int, assumed: int) -> None:
    """Set ``asched_scheduler_cache_size`` for nodes, pods and assumed_pods."""
    SCHEDULER_CACHE_SIZE.labels(type="nodes").set(nodes)
    SCHEDULER_CACHE_SIZE.labels(type="pods").set(pods)
    SCHEDULER_CACHE_SIZE.labels(type="assumed_pods").set(assumed)


def count_event(event_type: str, reason: str) -> None:
    """Count one emitted Kubernetes Event (``type`` Normal/Warning, ``reason`` e.g. Scheduled)."""
    EVENTS.labels(type=event_type, reason=reason).inc()


def count_preemption_attempt() -> None:
    """Count one PostFilter preemption attempt."""
    PREEMPTION_ATTEMPTS.inc()


def observe_preemption_victims(count: int) -> None:
    """Record how many victims one preemption selected."""
    PREEMPTION_VICTIMS.observe(count)


def count_undecodable(kind: str) -> None:
    """Count one watched object that failed to decode (``kind`` e.g. ``pods``)."""
    UNDECODABLE.labels(kind=kind).inc()


def count_internal_error(phase: str) -> None:
    """Count one unexpected exception caught in ``phase`` (e.g. ``Filter``, ``ingest``)."""
    INTERNAL_ERRORS.labels(phase=phase).inc()


def set_leader(*, leading: bool) -> None:
    """Set ``asched_leader`` to 1 while this replica leads, else 0."""
    LEADER.set(1 if leading else 0)
