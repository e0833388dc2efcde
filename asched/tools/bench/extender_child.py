"""The benchmark's extender as the runner sees it: its settings, its process, its figures.

``asched bench run --extender-latency-ms MS`` starts :mod:`asched.tools.bench.hash_extender`
as a child process (:class:`ExtenderChild`) before the backend's scheduler, and gives
whichever scheduler runs the same ``extenders[]`` entry (:meth:`ExtenderChild.entry`):
filter and prioritize verbs, ``weight``, ``nodeCacheCapable: true`` (node names in and
out, as upstream recommends for large clusters), ``httpTimeout`` as a duration string
(its type in ``kubescheduler.config.k8s.io/v1``, which both schedulers read) and, over
HTTPS, the CA as ``tlsConfig.caData``. Both schedulers run on this host (kube-scheduler is
not in a pod), so a loopback URL reaches the extender from either.

:func:`call_figures` turns two readings of the extender's ``/stats`` (before and after a
phase) into the calls it answered and its CPU per call, in milliseconds;
:func:`pods_on_rejected_nodes` counts the pods a scheduler placed against the extender.
"""

from __future__ import annotations

import base64
import ssl
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import aiohttp
import orjson

from asched.tools.backends.process import Child
from asched.tools.bench.hash_extender import FILTER_VERB, PRIORITIZE_VERB, HashRule
from asched.tools.bench.observe import PodRecord

#: ``reject_every`` of ``asched bench run``: about one node in ten fails the filter.
DEFAULT_REJECT_EVERY: Final = 10
#: upstream's default ``httpTimeout``, written out.
DEFAULT_HTTP_TIMEOUT: Final = "5s"
_START_SECONDS: Final = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtenderOptions:
    """The extender of one run.

    Attributes
    ----------
    latency_ms : float
        Milliseconds every filter and prioritize call waits before its answer.
    reject_every : int
        The hash rule's modulus (0: no node fails); see :class:`HashRule`.
    tls : bool
        Serve HTTPS (a throw-away CA, passed to the scheduler as ``tlsConfig.caData``).
    weight : int
        The prioritize weight (upstream scales the 0..10 scores by 10 and by it).
    http_timeout : str
        The ``httpTimeout`` duration written into the configuration.
    """

    latency_ms: float
    reject_every: int = DEFAULT_REJECT_EVERY
    tls: bool = False
    weight: int = 1
    http_timeout: str = DEFAULT_HTTP_TIMEOUT

    def to_json(self) -> dict[str, Any]:
        return {
            "latency_ms": self.latency_ms,
            "reject_every": self.reject_every,
            "tls": self.tls,
            "weight": self.weight,
            "http_timeout": self.http_timeout,
            "node_cache_capable": True,
            "verbs": [FILTER_VERB, PRIORITIZE_VERB],
        }


def extender_entry(
    url: str, *, weight: int = 1, http_timeout: str = DEFAULT_HTTP_TIMEOUT, ca_pem: bytes | None
) -> dict[str, Any]:
    """One ``extenders[]`` entry for the benchmark extender at ``url``.

    The same fields are read by asched and by kube-scheduler v1.37, both from
    ``kubescheduler.config.k8s.io/v1``; ``enableHTTPS`` follows the URL's scheme.
    """
    entry: dict[str, Any] = {
        "urlPrefix": url,
        "filterVerb": FILTER_VERB,
        "prioritizeVerb": PRIORITIZE_VERB,
        "weight": weight,
        "enableHTTPS": url.startswith("https://"),
        "nodeCacheCapable": True,
        "httpTimeout": http_timeout,
    }
    if ca_pem is not None:
        entry["tlsConfig"] = {"caData": base64.b64encode(ca_pem).decode("ascii")}
    return entry


class ExtenderChild:
    """``asched bench extender`` as a child process; a context manager (start, stop).

    Parameters
    ----------
    options : ExtenderOptions
        Its latency, rule and transport.
    workdir : Path
        Where its log (``extender.log``) and ready file go.
    """

    def __init__(self, options: ExtenderOptions, workdir: Path) -> None:
        self.options = options
        self.workdir = workdir
        self.log = workdir / "extender.log"
        self.rule = HashRule(options.reject_every)
        self.url = ""
        self.ca_pem: bytes | None = None
        self._child: Child | None = None

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def start(self) -> None:
        """Start the process and wait (at most a minute) until it listens.

        Raises
        ------
        asched.tools.backends.errors.LaunchError
            When it exits first or does not listen in time (with its log's last lines).
        """
        ready = self.workdir / "extender.ready"
        ready.unlink(missing_ok=True)
        opts = self.options
        argv = [
            sys.executable,
            "-m",
            "asched",
            "bench",
            "extender",
            "--latency-ms",
            str(opts.latency_ms),
            "--reject-every",
            str(opts.reject_every),
            "--ready-file",
            str(ready),
        ]
        if opts.tls:
            argv.append("--tls")
        self._child = Child("bench extender", argv, self.log)
        self._child.wait_until(ready.exists, timeout=_START_SECONDS, what="listening")
        answer = orjson.loads(ready.read_bytes())
        self.url = str(answer["url"])
        self.ca_pem = answer["ca_pem"].encode("ascii") if answer["ca_pem"] else None

    def stop(self) -> None:
        """Stop it by PID (SIGTERM, then SIGKILL). Idempotent."""
        if self._child is not None:
            self._child.stop(timeout=10)

    def __enter__(self) -> ExtenderChild:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def entry(self) -> dict[str, Any]:
        """The ``extenders[]`` entry pointing at this process."""
        return extender_entry(
            self.url,
            weight=self.options.weight,
            http_timeout=self.options.http_timeout,
            ca_pem=self.ca_pem,
        )

    async def stats(self) -> dict[str, Any]:
        """Its ``GET /stats`` (see :class:`asched.tools.bench.hash_extender.Stats`)."""
        context: ssl.SSLContext | bool = (
            ssl.create_default_context(cadata=self.ca_pem.decode("ascii")) if self.ca_pem else True
        )
        connector = aiohttp.TCPConnector(ssl=context)
        timeout = aiohttp.ClientTimeout(total=30)
        async with (
            aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False) as session,
            session.get(self.url + "/stats") as response,
        ):
            response.raise_for_status()
            stats: dict[str, Any] = orjson.loads(await response.read())
            return stats


def pods_on_rejected_nodes(rule: HashRule, records: Iterable[PodRecord]) -> int:
    """How many init and measured pods the watch saw bound to a node ``rule`` rejects.

    Ceiling pods are left out: the trivial binder places them round-robin, on purpose
    without asking anything.
    """
    return sum(
        1
        for record in records
        if record.node and record.phase in ("init", "measured") and rule.rejects(record.node)
    )


def call_figures(before: dict[str, Any], after: dict[str, Any], pods: int) -> dict[str, Any]:
    """The calls the extender answered between two ``/stats`` readings, and their cost.

    Returns ``calls`` and ``names`` per verb, ``calls_per_pod`` (filter calls per bound
    pod; ``pods`` is that count), ``names_per_call`` (mean node names per filter call),
    ``cpu_seconds`` and ``cpu_ms_per_call`` (the extender's CPU over all its calls).
    """
    calls = {v: after["calls"][v] - before["calls"][v] for v in (FILTER_VERB, PRIORITIZE_VERB)}
    names = {v: after["names"][v] - before["names"][v] for v in (FILTER_VERB, PRIORITIZE_VERB)}
    cpu = after["cpu_seconds"] - before["cpu_seconds"]
    total = sum(calls.values())
    return {
        "calls": calls,
        "names": names,
        "calls_per_pod": calls[FILTER_VERB] / pods if pods else None,
        "names_per_call": names[FILTER_VERB] / calls[FILTER_VERB] if calls[FILTER_VERB] else None,
        "max_in_flight": after["max_in_flight"],
        "bad_requests": after["bad_requests"] - before["bad_requests"],
        "cpu_seconds": cpu,
        "cpu_ms_per_call": 1000.0 * cpu / total if total else None,
    }
