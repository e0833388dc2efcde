"""Secure serving, as kube-scheduler does it: TLS and delegated authentication/authorization.

The pieces, each usable on its own (the health and metrics server uses them all; any other
listener that serves more than probes puts the same middleware in front of its handlers):

* :func:`plan`: plain HTTP or TLS for a bind address and the flags (a pure decision; the
  table is in :mod:`asched.serving.plan`).
* :func:`ssl_context_for`: the server's SSL context, from ``--tls-cert-file`` and
  ``--tls-private-key-file`` or a certificate generated at startup (:mod:`.certificates`).
* :func:`delegated_auth`: an aiohttp middleware that checks bearer tokens with TokenReviews
  and permissions with SubjectAccessReviews through the scheduler's own client, cached
  briefly, always allowing ``/healthz``, ``/readyz`` and ``/livez``.
"""

from __future__ import annotations

from asched.serving.middleware import ALWAYS_ALLOW, delegated_auth
from asched.serving.plan import Plan, is_loopback, plan
from asched.serving.tls import ServerTLS, self_signed_hosts, ssl_context_for

__all__ = [
    "ALWAYS_ALLOW",
    "Plan",
    "ServerTLS",
    "delegated_auth",
    "is_loopback",
    "plan",
    "self_signed_hosts",
    "ssl_context_for",
]
