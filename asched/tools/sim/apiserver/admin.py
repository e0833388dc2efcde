"""The admin endpoints: faults, restarts and statistics, at run time (token required).

``GET /admin/faults``      the current :class:`~asched.tools.sim.apiserver.faults.Faults` settings
``POST /admin/faults``     merge a JSON object of settings (400 on a bad one)
``POST /admin/restart``    ``{"downtimeSeconds": s}``: cut every connection (watches
                           included), forget the watch history, optionally stop
                           listening for ``s`` seconds; objects are kept
``POST /admin/compact``    forget the watch history (as ``etcdctl compact`` + a watch-cache
                           restart): older versions now get 410; connections stay
``GET /admin/stats``       counters, object counts, open watches, process CPU seconds

Answers are plain JSON (not Status objects) except errors.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import orjson
from aiohttp import web

from asched.tools.sim.apiserver import apierrors
from asched.tools.sim.apiserver.faults import Faults

JSON = dict[str, Any]
_HEADERS = {"Content-Type": "application/json"}


@dataclass(slots=True)
class Stats:
    """Request counters (plain ints: incremented on the hot path)."""

    requests: int = 0
    bindings: int = 0
    bind_faults: int = 0
    watches: int = 0
    restarts: int = 0


class Controls(Protocol):
    """What the admin endpoints may do to the running server."""

    def schedule_restart(self, downtime: float) -> None:
        """Restart soon (after this answer is sent)."""

    def compact(self) -> None:
        """Make every resourceVersion issued so far too old for watches and snapshots."""

    def apply_history(self, limit: int) -> None:
        """Set every resource's watch-history bound."""

    def snapshot(self) -> JSON:
        """Object counts, open watches and the current resourceVersion."""


async def handle(
    request: web.BaseRequest, controls: Controls, faults: Faults, stats: Stats
) -> web.Response:
    """Answer ``/admin/...``."""
    path, method = request.path, request.method
    if path == "/admin/faults" and method == "GET":
        return _ok(faults.as_json())
    if path == "/admin/faults" and method == "POST":
        try:
            faults.update(orjson.loads(await request.read() or b"{}"))
        except (ValueError, orjson.JSONDecodeError) as exc:
            raise apierrors.bad_request(str(exc)) from None
        if faults.history is not None:
            controls.apply_history(faults.history)
        return _ok(faults.as_json())
    if path == "/admin/restart" and method == "POST":
        try:
            body = orjson.loads(await request.read() or b"{}")
            downtime = float(body.get("downtimeSeconds", 0.0)) if isinstance(body, dict) else -1.0
        except (ValueError, TypeError, orjson.JSONDecodeError) as exc:
            raise apierrors.bad_request(str(exc)) from None
        if downtime < 0:
            raise apierrors.bad_request("downtimeSeconds must be a number >= 0")
        stats.restarts += 1
        controls.schedule_restart(downtime)
        return _ok({"restarting": True, "downtimeSeconds": downtime}, status=202)
    if path == "/admin/compact" and method == "POST":
        controls.compact()
        return _ok({"compacted": True})
    if path == "/admin/stats" and method == "GET":
        cpu = time.process_time()
        return _ok(
            {**asdict(stats), **controls.snapshot(), "cpuSeconds": cpu, "faults": faults.as_json()}
        )
    raise apierrors.path_not_found()


def _ok(body: JSON, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, headers=_HEADERS)
