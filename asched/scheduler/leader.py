"""Leader election on a ``coordination.k8s.io/v1`` Lease, with kube-scheduler's semantics.

Why our own loop: kubernetes-asyncio's bundled election returns after losing the lease,
never releases it, and measures local deadlines on the wall clock. kube-scheduler (client-go
``tools/leaderelection``) needs three things that one does not give: a renew deadline on a
monotonic clock, ``LeadershipLost`` raised to the owner of the scheduling tasks, and a
release on graceful stop so the standby takes over in one retry period, not a lease period.

Layout: :func:`decide` is the whole of ``tryAcquireOrRenew``'s decision as a pure function
(lease record and last observation in, action and record to write out), table-tested
without I/O. :class:`LeaderElector` is the I/O loop around it: GET, then create or PUT.

States of one elector::

    follower --acquire(): create / PUT won--> leader --hold(): renew every retryPeriod--+
       ^                                        |  ^________________________________|
       |                                        |
       +--- release(): PUT holder "" -----------+--- no renew for renewDeadline,
       |                                        |    or another holder seen --> LeadershipLost
       +----------------------------------------+

Invariants:

1. Remote timestamps are never compared with local time (clock skew is irrelevant). A lease
   held by another identity is taken over only after this process has seen the *same*
   record, unchanged, for the record's ``leaseDurationSeconds`` of its own loop time.
2. Every write is conditional: PUT carries the resourceVersion that was read, create fails
   with 409 if the Lease exists. A 409 means another writer won and is "not acquired".
3. A leader's belief is bounded in time: :attr:`LeaderElector.is_leader` turns False once
   ``renewDeadline`` has passed since the *start* of the last successful write, even if the
   renew loop is stuck. A competitor starts counting ``leaseDuration`` no earlier than the
   moment that write became visible, which is after its start, and
   ``leaseDuration > renewDeadline`` (checked), so two electors never believe they lead at
   the same time while their clocks run at the same rate (skew of *rate* is not tolerated,
   as upstream says).
4. Every deadline is on ``loop.time()`` (or the injected clock); the wall clock only fills
   ``acquireTime``/``renewTime`` (MicroTime, UTC, ``%Y-%m-%dT%H:%M:%S.%fZ``), which nobody
   reads back.
5. :meth:`LeaderElector.release` stops believing before it writes, and writes with the
   last resourceVersion it wrote: if someone else already took the lease the PUT gets a
   409 and nothing is clobbered. Call it only after the work the lease guards has stopped
   (upstream's ``ReleaseOnCancel`` warning).

Deliberate differences from client-go: no optimistic "renew without GET" fast path (one
extra GET per retry period is cheap and keeps one code path); a record whose
``leaseDurationSeconds`` is missing or 0 is judged with our own lease duration instead of
being treated as already expired; ``leaseDurationSeconds`` is written rounded *up* to whole
seconds so competitors never wait less than configured.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import math
import random
import socket
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, NoReturn, Protocol
from urllib.parse import quote

from asched import metrics
from asched.api.client import Response
from asched.config.types import LeaderElection
from asched.errors import RETRYABLE, LeadershipLost

logger = logging.getLogger(__name__)

#: client-go's JitterFactor: the acquire loop waits ``retry * (1 + U[0, 1.2))``.
JITTER_FACTOR: Final = 1.2
#: leaseDurationSeconds written on release (recent client-go), so a reader that ignores an
#: empty holder still sees the lease expire quickly.
RELEASED_LEASE_SECONDS: Final = 1
MICRO_TIME_FORMAT: Final = "%Y-%m-%dT%H:%M:%S.%fZ"

Action = Literal["create", "update", "wait"]
Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """The election-relevant part of a Lease's spec, as stored (MicroTime strings kept raw).

    Two records compare equal exactly when the election state is unchanged; that equality
    is what "the holder renewed" means (invariant 1).
    """

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str = ""
    renew_time: str = ""
    lease_transitions: int = 0

    @classmethod
    def from_lease(cls, lease: Mapping[str, Any]) -> LeaseRecord:
        """Read a Lease object's spec; absent fields take the API's zero values."""
        spec = lease.get("spec") or {}
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=str(spec.get("acquireTime") or ""),
            renew_time=str(spec.get("renewTime") or ""),
            lease_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        """The Lease spec to write; empty MicroTimes are omitted (the API rejects "")."""
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.lease_transitions,
        }
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return spec


@dataclass(frozen=True, slots=True)
class Observation:
    """A record and the local time (loop seconds) at which it was first seen unchanged."""

    record: LeaseRecord
    time: float


@dataclass(frozen=True, slots=True)
class Decision:
    """What :func:`decide` tells the loop to do.

    Attributes
    ----------
    action : {"create", "update", "wait"}
        ``create`` the Lease, ``update`` it (PUT with the resourceVersion read), or ``wait``:
        another identity holds an unexpired lease.
    record : LeaseRecord
        The record to write (create/update), or the record as read (wait).
    observation : Observation
        What the elector must remember as last seen.
    expires_at : float or None
        For ``wait``: the loop time from which the holder's lease may be taken over,
        provided the record stays unchanged until then.
    """

    action: Action
    record: LeaseRecord
    observation: Observation
    expires_at: float | None = None


def micro_time(moment: dt.datetime) -> str:
    """Format an aware datetime as a Kubernetes MicroTime in UTC (``...T12:00:00.000000Z``)."""
    return moment.astimezone(dt.UTC).strftime(MICRO_TIME_FORMAT)


def decide(
    current: LeaseRecord | None,
    observed: Observation | None,
    *,
    identity: str,
    now: float,
    stamp: str,
    lease_duration_seconds: int,
) -> Decision:
    """Decide one round of ``tryAcquireOrRenew`` (pure: no I/O, no clock).

    Parameters
    ----------
    current : LeaseRecord or None
        The record just read; None when the Lease does not exist (404).
    observed : Observation or None
        What this elector saw last, with the loop time it was first seen.
    identity : str
        This elector's holder identity.
    now : float
        Loop time of this round, seconds.
    stamp : str
        Wall-clock MicroTime to write as renewTime (and acquireTime when acquiring).
    lease_duration_seconds : int
        Our lease duration: written to the record, and used to judge a record that has none.
    """
    if current is None:
        created = LeaseRecord(identity, lease_duration_seconds, stamp, stamp, 0)
        return Decision("create", created, Observation(created, now))
    if observed is None or observed.record != current:
        observed = Observation(current, now)
    duration = current.lease_duration_seconds or lease_duration_seconds
    expires_at = observed.time + duration
    holder = current.holder_identity
    if holder and holder != identity and expires_at > now:
        return Decision("wait", current, observed, expires_at)
    if holder == identity:
        record = LeaseRecord(
            identity, lease_duration_seconds, current.acquire_time, stamp, current.lease_transitions
        )
    else:
        record = LeaseRecord(
            identity, lease_duration_seconds, stamp, stamp, current.lease_transitions + 1
        )
    return Decision("update", record, observed)


def released(record: LeaseRecord, stamp: str) -> LeaseRecord:
    """The record a graceful stop writes: no holder, 1 s duration, transitions kept."""
    return LeaseRecord("", RELEASED_LEASE_SECONDS, stamp, stamp, record.lease_transitions)


def default_identity() -> str:
    """``<hostname>_<uuid4>``: unique even for two processes on one host (kube-scheduler's form)."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaseClient(Protocol):
    """The three calls the elector makes; :class:`asched.api.client.KubeClient` has them."""

    async def get(self, path: str) -> Response: ...

    async def create(self, path: str, body: Mapping[str, Any]) -> Response: ...

    async def replace(self, path: str, body: Mapping[str, Any]) -> Response: ...


#: Failures of one attempt that mean "try again later", not "bug": the per-attempt
#: deadline (``asyncio.timeout``) and what :data:`asched.errors.RETRYABLE` says (the
#: client maps transport failures to ApiUnavailable, an ApiError).
_RETRYABLE: Final[tuple[type[Exception], ...]] = (TimeoutError, *RETRYABLE)


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


class LeaderElector:
    """One candidate for the leadership of ``settings.resource_namespace/resource_name``.

    Parameters
    ----------
    client : LeaseClient
        A :class:`~asched.api.client.KubeClient` (or a fake with the same three calls).
    settings : LeaderElection
        Durations in seconds; ``lease > renewDeadline > 1.2 * retryPeriod > 0`` is required.
    identity : str, optional
        Holder identity; default ``<hostname>_<uuid4>``.
    clock : callable, optional
        Seconds on a monotonic clock; default the running loop's ``time()``. Per-request
        timeouts always use the loop's clock, so a fake clock must only be used with a
        client that answers without waiting.
    sleep : callable, optional
        Awaitable sleep in seconds on the same clock; default ``asyncio.sleep``.
    rng : random.Random, optional
        Jitter source of the acquire loop.

    Usage (the owner keeps every task; see invariant 5 for release)::

        await elector.acquire()
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(elector.hold())      # raises LeadershipLost -> cancels the group
                tg.create_task(schedule_forever())
        finally:
            await elector.release()                 # only after the work has stopped
    """

    def __init__(
        self,
        client: LeaseClient,
        settings: LeaderElection,
        *,
        identity: str | None = None,
        clock: Clock | None = None,
        sleep: Sleep | None = None,
        rng: random.Random | None = None,
    ) -> None:
        lease, renew, retry = (
            settings.lease_duration_seconds,
            settings.renew_deadline_seconds,
            settings.retry_period_seconds,
        )
        if not lease > renew > JITTER_FACTOR * retry > 0:
            raise ValueError(
                "leader election needs leaseDuration > renewDeadline > 1.2 * retryPeriod > 0,"
                f" got {lease}s, {renew}s, {retry}s"
            )
        self._client = client
        self._settings = settings
        self._identity = identity or default_identity()
        self._clock = clock or _loop_time
        self._sleep = sleep or asyncio.sleep
        self._rng = rng or random.Random()
        self._lease_seconds = math.ceil(lease)
        namespace, name = quote(settings.resource_namespace), quote(settings.resource_name)
        self._collection = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self._path = f"{self._collection}/{name}"
        self._observed: Observation | None = None
        #: The Lease object as last written by us (its resourceVersion guards release()).
        self._written: dict[str, Any] | None = None
        #: Loop time at the start of the last successful acquire/renew; None = not leading.
        self._renewed_at: float | None = None
        #: Why the last acquire/renew attempt failed (None after a success), for the log
        #: line saying why this replica is not leading yet.
        self.last_failure: str | None = None

    @property
    def identity(self) -> str:
        """This elector's holderIdentity."""
        return self._identity

    @property
    def lease_name(self) -> str:
        """``namespace/name`` of the Lease, for log lines."""
        return f"{self._settings.resource_namespace}/{self._settings.resource_name}"

    @property
    def is_leader(self) -> bool:
        """True while leading and within ``renewDeadline`` of the last successful renew."""
        renewed_at = self._renewed_at
        if renewed_at is None:
            return False
        return self._clock() < renewed_at + self._settings.renew_deadline_seconds

    @property
    def last_renewed(self) -> float | None:
        """Loop time of the last successful acquire/renew while leading; None when not leading.

        Not None means "this process believes it leads" for the healthz watchdog: if it
        grows older than ``leaseDuration + 20 s`` the renew loop is wedged.
        """
        return self._renewed_at

    @property
    def observed_holder(self) -> str:
        """The holderIdentity last read or written ("" before the first read)."""
        return self._observed.record.holder_identity if self._observed else ""

    async def acquire(self) -> None:
        """Return once this elector holds the lease; retry every retryPeriod with jitter."""
        logger.info("attempting to acquire leader lease %s as %s", self.lease_name, self._identity)
        retry = self._settings.retry_period_seconds
        while True:
            if await self._attempt(self._settings.renew_deadline_seconds):
                logger.info("acquired leader lease %s as %s", self.lease_name, self._identity)
                metrics.set_leader(leading=True)
                return
            await self._sleep(retry * (1.0 + JITTER_FACTOR * self._rng.random()))

    async def hold(self) -> NoReturn:
        """Renew every retryPeriod until renewal fails for renewDeadline; then raise.

        Raises
        ------
        LeadershipLost
            No successful renew for ``renewDeadline`` seconds, another identity was seen
            holding the lease, or this elector was not leading when called.
        """
        if self._renewed_at is None:
            raise LeadershipLost(f"not leading lease {self.lease_name}")
        retry, deadline = self._settings.retry_period_seconds, self._settings.renew_deadline_seconds
        try:
            while True:
                await self._sleep(retry)
                while True:
                    remaining = self._renew_remaining(deadline)
                    if remaining <= 0:
                        raise LeadershipLost(
                            f"failed to renew lease {self.lease_name} within {deadline}s"
                        )
                    if await self._attempt(remaining):
                        break
                    holder = self.observed_holder
                    if holder and holder != self._identity:
                        raise LeadershipLost(f"lease {self.lease_name} is now held by {holder}")
                    await self._sleep(min(retry, self._renew_remaining(deadline)))
        except LeadershipLost as exc:
            self._renewed_at = None
            metrics.set_leader(leading=False)
            logger.error("leadership lost: %s", exc)
            raise

    def _renew_remaining(self, deadline: float) -> float:
        """Seconds left before ``deadline`` since the last renew (<= 0 if not leading)."""
        renewed_at = self._renewed_at
        return -1.0 if renewed_at is None else renewed_at + deadline - self._clock()

    async def release(self) -> bool:
        """Give the lease up (holder "", 1 s, transitions kept); True if the write succeeded.

        Stops believing first, whatever the outcome. A 409 means someone else already holds
        the lease: nothing to release. Failures are logged, not raised: a failed release
        only delays the standby by one lease duration.
        """
        was_leading, self._renewed_at = self._renewed_at is not None, None
        metrics.set_leader(leading=False)
        written = self._written
        if not was_leading or written is None:
            return False
        record = released(LeaseRecord.from_lease(written), micro_time(dt.datetime.now(dt.UTC)))
        try:
            async with asyncio.timeout(self._settings.renew_deadline_seconds):
                response = await self._client.replace(
                    self._path, {**written, "spec": record.to_spec()}
                )
        except _RETRYABLE as exc:
            logger.warning("failed to release lease %s: %r", self.lease_name, exc)
            return False
        if not response.ok:
            logger.warning("failed to release lease %s: HTTP %d", self.lease_name, response.status)
            return False
        self._remember_written(response, record, self._clock())
        logger.info("released leader lease %s", self.lease_name)
        return True

    async def _attempt(self, budget: float) -> bool:
        """One tryAcquireOrRenew bounded by ``budget`` seconds; False on any failure."""
        try:
            async with asyncio.timeout(budget):
                return await self._try_acquire_or_renew()
        except _RETRYABLE as exc:
            self.last_failure = f"attempt failed: {exc!r}"
            logger.warning("lease %s: %s", self.lease_name, self.last_failure)
            return False

    async def _try_acquire_or_renew(self) -> bool:
        now = self._clock()
        got = await self._client.get(self._path)
        lease: dict[str, Any] | None = None
        if got.ok and isinstance(got.body, dict):
            lease = got.body
        elif got.status != 404:
            self.last_failure = f"GET: HTTP {got.status}"
            logger.warning("lease %s: %s", self.lease_name, self.last_failure)
            return False
        decision = decide(
            LeaseRecord.from_lease(lease) if lease is not None else None,
            self._observed,
            identity=self._identity,
            now=now,
            stamp=micro_time(dt.datetime.now(dt.UTC)),
            lease_duration_seconds=self._lease_seconds,
        )
        self._observed = decision.observation
        if decision.action == "wait":
            self.last_failure = f"held by {decision.record.holder_identity}"
            logger.debug(
                "lease %s is held by %s until at least loop time %.3f",
                self.lease_name,
                decision.record.holder_identity,
                decision.expires_at,
            )
            return False
        if lease is None:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": self._settings.resource_name,
                    "namespace": self._settings.resource_namespace,
                },
                "spec": decision.record.to_spec(),
            }
            response = await self._client.create(self._collection, body)
        else:
            response = await self._client.replace(
                self._path, {**lease, "spec": decision.record.to_spec()}
            )
        if response.status == 409:
            self.last_failure = "another candidate wrote first (409)"
            logger.info("lease %s: %s", self.lease_name, self.last_failure)
            return False
        if not response.ok:
            self.last_failure = f"{decision.action}: HTTP {response.status}"
            logger.warning("lease %s: %s", self.lease_name, self.last_failure)
            return False
        self._remember_written(response, decision.record, now)
        self._renewed_at = now
        self.last_failure = None
        return True

    def _remember_written(self, response: Response, record: LeaseRecord, now: float) -> None:
        """Keep the server's copy of what we wrote (resourceVersion for release, record)."""
        if isinstance(response.body, dict) and response.body.get("kind") == "Lease":
            self._written = response.body
            record = LeaseRecord.from_lease(response.body)
        self._observed = Observation(record, now)
