"""HTTPS for ``asched sim``: the server's SSL context and the CA clients must trust.

Plain HTTP needs nothing beyond the core dependencies; HTTPS needs ``cryptography`` (the
``sim`` extra) for its throw-away CA, imported here only when a server asks for TLS, so a
scheduler-only install still runs ``asched sim --plain-http``.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Final

from asched import extras

#: what needs the extra, as the one-line error names it.
FEATURE: Final = "HTTPS (--tls, or --kubeconfig-out without --plain-http)"


@dataclass(frozen=True, slots=True)
class ServingTLS:
    """The server's SSL context and the CA certificate clients must trust (PEM)."""

    context: ssl.SSLContext
    ca_pem: bytes


def require() -> None:
    """Raise :class:`~asched.extras.MissingExtra` unless HTTPS can be served."""
    extras.require("sim", FEATURE)


def generate(host: str) -> ServingTLS:
    """A fresh CA and a serving certificate for ``host``, valid for a year."""
    require()
    from asched.sim import certificates

    return certificates.generate(host)
