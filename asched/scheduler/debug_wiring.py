"""How a run feeds its metrics and, when they are on, the debug pages.

Every run observes each attempt and each bound pod in the metrics. With the debug
listener on (``Options.debug_address``), the same two callbacks also feed the pages'
rates, a :class:`~asched.debug.recorder.Recorder` keeps the last decisions, and
:meth:`DebugPages.serve` serves the pages for as long as the run lasts. The address is
checked when the run is built, so a listener exposed without TLS and authorization fails
before anything starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from asched import metrics
from asched.debug import server as debug_server
from asched.debug.rates import Rates
from asched.debug.recorder import Recorder
from asched.debug.views import Sources
from asched.framework.waiting import WaitingPods
from asched.metrics import AttemptResult
from asched.queue.scheduling_queue import SchedulingQueue
from asched.scheduler.binder import Binder, BindJob
from asched.scheduler.leader import LeaderElector

OnAttempt = Callable[[AttemptResult, str, float], None]
OnBound = Callable[[BindJob, float], None]


def observe_bound(job: BindJob, now: float) -> None:
    """The end-to-end metrics of a bound pod (from its first attempt, else its start)."""
    first = job.qp.initial_attempt if job.qp.initial_attempt is not None else job.started
    metrics.observe_scheduled(job.framework.name, job.qp.attempts, now - first)


class DebugPages:
    """The debug pages of one run: where they listen, what they record, what they rate.

    Raises (from the constructor) what :func:`~asched.debug.server.check_exposure` raises
    for an address exposed without TLS or authorization."""

    def __init__(
        self,
        address: str,
        *,
        decisions: int,
        clock: Callable[[], float],
        ssl_context: ssl.SSLContext | None,
        middlewares: Sequence[debug_server.Middleware],
    ) -> None:
        host, port = debug_server.parse_address(address)
        debug_server.check_exposure(host, port, ssl_context=ssl_context, middlewares=middlewares)
        self._at = host, port
        self._ssl_context = ssl_context
        self._middlewares = middlewares
        self.recorder = Recorder(decisions)
        self.rates = Rates(clock=clock)

    def on_attempt(self, result: AttemptResult, profile: str, seconds: float) -> None:
        metrics.observe_attempt(result, profile, seconds)
        self.rates.attempt(result, seconds)

    def on_bound(self, job: BindJob, now: float) -> None:
        observe_bound(job, now)
        first = job.qp.initial_attempt
        self.rates.bound(now - (first if first is not None else job.started))

    @contextlib.asynccontextmanager
    async def serve(
        self,
        *,
        queue: SchedulingQueue,
        waiting: WaitingPods,
        binder: Binder,
        identity: str,
        leader: Callable[[], LeaderElector | None],
    ) -> AsyncIterator[debug_server.Listening]:
        """Serve the pages over the run's queue, Permit waits and binder while the block
        runs; ``leader()`` is the run's elector (None: no election)."""
        sources = Sources(
            queue=queue,
            waiting=waiting,
            binder=binder,
            recorder=self.recorder,
            rates=self.rates,
            identity=identity,
            loop_time=asyncio.get_running_loop().time,
            leader=lambda: leader_view(leader()),
        )
        host, port = self._at
        async with debug_server.serve(
            sources,
            host,
            port,
            ssl_context=self._ssl_context,
            middlewares=self._middlewares,
        ) as listening:
            yield listening


def callbacks(pages: DebugPages | None) -> tuple[OnAttempt, OnBound]:
    """``(on_attempt, on_bound)`` of a run: the metrics, and the pages' rates when on."""
    if pages is None:
        return metrics.observe_attempt, observe_bound
    return pages.on_attempt, pages.on_bound


def leader_view(elector: LeaderElector | None) -> dict[str, Any]:
    """Who leads, as this replica knows it (for the debug pages)."""
    if elector is None:
        return {"election": False}
    return {
        "election": True,
        "lease": elector.lease_name,
        "leading": elector.is_leader,
        "holder": elector.observed_holder,
    }
