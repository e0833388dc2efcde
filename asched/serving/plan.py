"""Whether the health and metrics port is served over TLS with delegated auth, or plain HTTP.

A pure decision (no I/O), from the bind address and three flags, as a table::

    bind address   --tls-cert-file/-key   --insecure-serving   served as
    -------------  ---------------------  -------------------  ------------------------------
    any            given                  given                error (they exclude each other)
    not loopback   -                      -                    HTTPS, self-signed, delegated auth
    any            given                  -                    HTTPS from the files, delegated auth
    loopback       -                      -                    plain HTTP (only this host reaches it)
    loopback       -                      given                plain HTTP
    not loopback   -                      given                plain HTTP, with a warning

Loopback is ``localhost`` or an address in 127.0.0.0/8 or ``::1``; any other host name is
not resolved and counts as reachable from elsewhere. Plain HTTP on a non-loopback address
is allowed because the user asked for it explicitly (a cluster whose network policy already
guards the port, a scrape through a sidecar), but it is logged as a warning at startup:
anyone who can reach the port reads ``/metrics``.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from asched.errors import InputError


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address) is reachable from this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Plan:
    """How to serve: ``secure`` means TLS plus delegated authentication and authorization.

    ``warning`` is the line to log at startup (empty when there is nothing to warn about).
    """

    secure: bool
    warning: str = ""


def plan(
    host: str,
    *,
    cert_file: str | None = None,
    key_file: str | None = None,
    insecure: bool = False,
) -> Plan:
    """Decide how ``host`` is served (see the module's table).

    Raises
    ------
    InputError
        ``--insecure-serving`` with a certificate or key file.
    """
    has_files = cert_file is not None or key_file is not None
    if insecure and has_files:
        raise InputError(
            "--insecure-serving: cannot be used with --tls-cert-file or --tls-private-key-file"
        )
    if has_files:
        return Plan(secure=True)
    if insecure:
        if is_loopback(host):
            return Plan(secure=False)
        where = host or "every address"
        return Plan(
            secure=False,
            warning=(
                f"--insecure-serving: {where} is not loopback: /metrics is served over plain "
                "HTTP without authentication to anyone who can reach the port"
            ),
        )
    return Plan(secure=not is_loopback(host))
