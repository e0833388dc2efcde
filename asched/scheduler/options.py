"""Run-time options of ``asched run`` that are not part of KubeSchedulerConfiguration."""

from __future__ import annotations

import socket
import ssl
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from asched.debug import server as debug_server
from asched.debug.recorder import DEFAULT_DECISIONS


@dataclass(slots=True)
class Options:
    """Run-time options that are not part of KubeSchedulerConfiguration."""

    max_in_flight_binds: int = 64
    seed: int | None = None
    identity: str = field(default_factory=lambda: f"{socket.gethostname()}_{uuid.uuid4()}")
    watch_timeout: int = 300
    #: ``HOST:PORT`` of the read-only debug pages (None: off, and nothing is recorded)
    debug_address: str | None = None
    #: decisions the debug pages keep (the ring's size)
    debug_decisions: int = DEFAULT_DECISIONS
    #: TLS for the debug listener (required with authorization off loopback)
    debug_ssl_context: ssl.SSLContext | None = None
    #: aiohttp middlewares authorizing debug requests (required off loopback)
    debug_middlewares: Sequence[debug_server.Middleware] = ()
