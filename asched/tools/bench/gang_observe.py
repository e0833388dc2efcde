"""What a gang run reads besides the watch: asched's Permit gauge and the timeout events.

* :class:`GaugeSampler` scrapes ``asched_permit_waiting_pods`` (pods waiting at Permit)
  from the scheduler's ``/metrics`` once a second while measuring. An asched that does
  not export it (or kube-scheduler, which is never scraped) gives None, not zeros.
* :func:`timeout_rejections` lists the events of the gangs' namespaces after measuring and
  counts, by gang, the FailedScheduling events whose message contains
  :data:`TIMEOUT_MARKER`: members the Permit timeout rejected, i.e. gangs that waited
  until their timeout broke the wait.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import aiohttp

from asched.tools.backends.errors import StatusError
from asched.tools.backends.rest import RestClient
from asched.tools.bench.gang_figures import rejections_by_gang

logger = logging.getLogger(__name__)

PERMIT_WAITING_GAUGE: Final = "asched_permit_waiting_pods"
#: What the framework writes when a Permit wait times out (upstream's wording).
TIMEOUT_MARKER: Final = "rejected due to timeout"
_SAMPLE: Final = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


def parse_gauge(text: str, name: str) -> float | None:
    """The sum of gauge ``name``'s samples (every label set) in Prometheus text; None
    when the exposition has no sample of it."""
    total: float | None = None
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        match = _SAMPLE.match(line)
        if match is None or match.group(1) != name:
            continue
        try:
            value = float(match.group(3))
        except ValueError:
            continue
        total = value if total is None else total + value
    return total


class GaugeSampler:
    """Scrape one gauge every ``interval`` seconds until cancelled.

    ``samples`` are (seconds after ``origin`` on ``clock``, value); :meth:`result` is None
    when no scrape ever found the gauge.
    """

    def __init__(
        self,
        url: str,
        name: str = PERMIT_WAITING_GAUGE,
        *,
        clock: Callable[[], float],
        interval: float = 1.0,
    ) -> None:
        self.url = url
        self.name = name
        self.clock = clock
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self.seen = False
        self.failures = 0
        self.latest: float | None = None

    async def run(self, origin: float) -> None:
        timeout = aiohttp.ClientTimeout(total=2.0)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while True:
                await self.scrape(session, origin)
                await asyncio.sleep(self.interval)

    async def scrape(self, session: aiohttp.ClientSession, origin: float) -> None:
        """One scrape; failures are counted and logged at debug level, never raised."""
        try:
            async with session.get(self.url) as response:
                text = await response.text() if response.status == 200 else ""
        except (OSError, TimeoutError, aiohttp.ClientError) as exc:
            self.failures += 1
            logger.debug("scraping %s failed: %s", self.url, exc)
            return
        value = parse_gauge(text, self.name)
        self.latest = value
        if value is not None:
            self.seen = True
            self.samples.append((self.clock() - origin, value))

    def result(self) -> list[tuple[float, float]] | None:
        return list(self.samples) if self.seen else None


async def timeout_rejections(
    rest: RestClient, namespaces: Iterable[str], pod_gang: Mapping[str, str]
) -> dict[str, Any] | None:
    """Permit-timeout rejections by gang (see the module docstring); None when the events
    cannot be listed."""
    events: list[Any] = []
    try:
        for namespace in dict.fromkeys(namespaces):
            events += await rest.list_all(f"/api/v1/namespaces/{namespace}/events")
    except (StatusError, OSError, TimeoutError, aiohttp.ClientError) as exc:
        logger.warning("cannot list events for the gang figures: %s", exc)
        return None
    return rejections_by_gang(events, pod_gang, TIMEOUT_MARKER)
